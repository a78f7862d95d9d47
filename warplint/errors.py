"""Errors about the input or the invocation; the CLI turns them into `path:line:col: error:` + exit 2."""
from __future__ import annotations

from .locations import Loc


class InputError(Exception):
    """The input cannot be analysed; `loc` says where."""
    severity = "error"  # of its diagnostic; "note" for a limit the user chose (a compile's time limit)

    def __init__(self, loc: Loc, message: str):
        super().__init__(f"{loc}: error: {message}")
        self.loc = loc
        self.message = message


class UsageError(Exception):
    """Bad command line or configuration."""
