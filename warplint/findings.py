"""What checks produce and reporters consume."""
from __future__ import annotations

from dataclasses import dataclass, field

from .locations import Loc
from .severity import SEVERITIES, severity_rank  # noqa: F401 (the one list, re-exported)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text between (line, col) and (end_line, end_col) (1-based, end exclusive)."""
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass(slots=True)
class Fix:
    description: str
    edits: list[Edit]


@dataclass(slots=True)
class Step:
    """One step of the divergence path (a SARIF code-flow location)."""
    loc: Loc
    message: str


@dataclass(slots=True)
class Finding:
    rule_id: str  # e.g. "WL001"
    severity: str  # "error" | "warning" | "note"
    message: str  # one line, already says definite/possible where it matters
    loc: Loc
    certainty: str = "definite"  # "definite" | "possible"
    details: list[str] = field(default_factory=list)  # extra lines: lanes, branch, hint
    flow: list[Step] = field(default_factory=list)  # divergence path, branch first
    related: list[Step] = field(default_factory=list)
    fix: Fix | None = None
    targets: tuple[str, ...] = ()  # the targets the finding holds for
    function: str = ""
    suppressed: bool = False
    facts: object = field(default=None, compare=False)  # the `messages.Message` it was rendered from (merging targets; not cached)

    def sort_key(self):
        return (self.loc.path, self.loc.line, self.loc.col, self.rule_id, self.message)
