"""warplint: a static analyzer for warp-synchronous GPU code."""
__version__ = "0.1.0"
