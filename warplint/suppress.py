"""In-source suppressions (`//` comments in .cu, .cuh and .ptx files):

    vote.any.pred %p2, %p1;   // warplint: ignore[WL001]
    // warplint: ignore-next-line[WL003, WL005]
    x = __shfl_sync(m, v, 0); // warplint: ignore        (every rule)

A code is a rule id, a slug or an id prefix.  Suppressed findings are kept (`suppressed=True`):
SARIF shows them as in-source suppressions; text output and the exit status ignore them.
With `--report-unused-suppressions` a suppression that suppressed nothing is a WL900 finding.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .catalog import code_matches, default_severity
from .findings import Edit, Finding, Fix
from .ir import Loc
from .messages import UnusedSuppression

UNUSED_RULE = "WL900"
_COMMENT = re.compile(r"//\s*warplint\s*:\s*(ignore-next-line|ignore)(?![\w-])(?:\s*\[([^\]]*)\])?")


@dataclass
class Suppression:
    path: str
    line: int  # the line the comment is on
    col: int  # column of the `//`
    end_col: int  # column after the comment directive
    target: int  # the line it applies to
    codes: list[str] | None  # None: every rule
    own_line: bool  # the comment is alone on its line
    used: set = field(default_factory=set)  # codes (or "*") that suppressed something

    @property
    def text(self) -> str:
        kind = "ignore-next-line" if self.target != self.line else "ignore"
        return f"warplint: {kind}" + (f"[{', '.join(self.codes)}]" if self.codes else "")


def parse(text: str, path: str) -> list[Suppression]:
    out = []
    if "warplint" not in text:
        return out
    for i, line in enumerate(text.split("\n"), 1):
        if "warplint" not in line:
            continue
        for m in _COMMENT.finditer(line):
            codes = None
            if m[2] is not None:
                codes = [c.strip() for c in m[2].split(",") if c.strip()] or None
            target = i + 1 if m[1] == "ignore-next-line" else i
            own = not line[:m.start()].strip()
            out.append(Suppression(path, i, m.start() + 1, m.end() + 1, target, codes, own))
    return out


def apply(findings: list[Finding], sources, *, files=(), enabled=lambda code: True,
          report_unused: bool = False) -> tuple[dict[int, str], list[Finding]]:
    """Mark suppressed findings.  Returns (id(finding) -> justification text, WL900 findings for
    the unused suppressions in `files` and in the files the findings point at)."""
    import os
    by_file: dict[str, list[Suppression]] = {}
    by_target: dict[str, dict[int, list[Suppression]]] = {}  # file -> target line -> suppressions
    justifications: dict[int, str] = {}

    def supps(path: str) -> list[Suppression]:
        key = os.path.abspath(path)
        if key not in by_file:
            text = sources.text(path)
            by_file[key] = parse(text, path) if text else []
            by_target[key] = {}
            for s in by_file[key]:
                by_target[key].setdefault(s.target, []).append(s)
        return by_file[key]

    for f in findings:
        if f.suppressed:
            continue
        supps(f.loc.path)
        for s in by_target[os.path.abspath(f.loc.path)].get(f.loc.line, ()):
            if s.codes is None:
                s.used.add("*")
            else:
                hit = [c for c in s.codes if code_matches(c, f.rule_id)]
                if not hit:
                    continue
                s.used.update(hit)
            f.suppressed = True
            justifications[id(f)] = s.text
            break
    unused: list[Finding] = []
    if report_unused:
        for path in files:
            supps(path)
        for key in sorted(by_file):
            for s in by_file[key]:
                if s.codes is None:
                    stale = [] if s.used else ["*"]
                else:
                    stale = [c for c in s.codes if c not in s.used and enabled(c)]
                if not stale:
                    continue
                loc = Loc(s.path, s.line, s.col, s.line, s.end_col)
                if s.own_line:
                    edit = Edit(s.path, s.line, 1, s.line + 1, 1, "")
                else:
                    line = sources.line(s.path, s.line)
                    start = len(line[:s.col - 1].rstrip()) + 1
                    end = len(line.rstrip("\r")) + 1
                    edit = Edit(s.path, s.line, start, s.line, end, "")
                fix = Fix("remove the unused suppression comment", [edit]) \
                    if stale == ["*"] or len(stale) == len(s.codes or []) else None
                message = UnusedSuppression(tuple(stale), s.target)
                unused.append(Finding(UNUSED_RULE, default_severity(UNUSED_RULE), str(message), loc,
                                      details=[f"comment: // {s.text}"], fix=fix))
    return justifications, unused
