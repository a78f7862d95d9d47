"""Where things are: a source location and a diagnostic about the input.  Their own module
(re-exported by `ir`) so that a cache hit, which reads findings and diagnostics back, need not
build the IR's classes."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Loc:
    path: str
    line: int  # 1-based
    col: int = 1  # 1-based
    end_line: int | None = None  # optional span end (inclusive line, exclusive col)
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(slots=True, eq=False)
class Diagnostic:
    """A problem with the input itself (not a rule finding): parse errors, skipped code."""
    loc: Loc
    severity: str  # "error" (file unusable, exit 2) or "note" (part skipped)
    message: str
