"""`warplint server`: a Language Server Protocol server over stdio (diagnostics while you type,
quick fixes, hover with the lanes of a warp primitive).  It needs the `server` extra
(`pip install 'warplint[server]'`: pygls 2 and lsprotocol); nothing else in warplint imports
this package, so the CLI's other commands never load pygls."""
from __future__ import annotations

import sys

EXIT_ERROR = 2
MISSING = ("warplint: error: 'warplint server' needs the language server packages "
           "(pygls 2 and lsprotocol): pip install 'warplint[server]' ({why})")


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
    from .lsp import make_server
    make_server().start_io()
    return 0
