"""`warplint server`: a Language Server Protocol server over stdio (diagnostics while you type,
quick fixes, hover with the lanes of a warp primitive).  It needs the `server` extra
(pygls 2, which brings lsprotocol); nothing else in warplint imports
this package, so the CLI's other commands never load pygls."""
from __future__ import annotations

import logging
import sys

EXIT_ERROR = 2
MISSING = ("warplint: error: 'warplint server' needs pygls 2 (the 'server' extra of warplint): "
           "pip install 'pygls>=2,<3' ({why})")


def main(argv: list[str]) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="warplint server",
                                description="Language Server Protocol server for editors (speaks LSP on stdin/stdout).")
    p.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)")
    p.parse_args(argv)
    try:
        import lsprotocol.types  # noqa: F401
        import pygls.lsp.server  # noqa: F401 (pygls 2; pygls 1 has no pygls.lsp.server)
    except ImportError as e:
        sys.stderr.write(MISSING.format(why=e) + "\n")
        return EXIT_ERROR
    _log_briefly()
    from .lsp import make_server
    make_server().start_io()
    return 0


class _OneLine(logging.Formatter):
    """A log record as one line; an exception as its type and message, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"warplint server: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        return text


def _log_briefly() -> None:
    """Warnings and errors of the server and pygls on stderr (editors show it as the log)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
