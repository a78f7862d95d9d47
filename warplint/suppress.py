"""In-source suppressions (`//` or `/* */` comments in .cu, .cuh and .ptx files):

    vote.any.pred %p2, %p1;   // warplint: ignore[WL001]
    // warplint: ignore-next-line[WL003, WL005]
    x = __shfl_sync(m, v, 0); // warplint: ignore        (every rule)
    x = __shfl(v, 0); /* warplint: ignore[WL001] */

A code is a rule id, a slug or an id prefix; a code that names no rule is a WL900 warning
(a misspelt code would otherwise silently suppress nothing).  Suppressed findings are kept (`suppressed=True`):
SARIF shows them as in-source suppressions; text output and the exit status ignore them.
With `--report-unused-suppressions` a suppression that suppressed nothing is a WL900 finding.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .catalog import code_matches, default_severity
from .findings import Edit, Finding, Fix
from .locations import Loc

UNUSED_RULE = "WL900"
_COMMENT = re.compile(r"(?://|(/\*))\s*warplint\s*:\s*(ignore-next-line|ignore)(?![\w-])(?:\s*\[([^\]]*)\])?"
                      r"(?(1)\s*\*/)")  # a block comment holds only the directive


@dataclass
class Suppression:
    path: str
    line: int  # the line the comment is on
    col: int  # column of the `//` or `/*`
    end_col: int  # column after the comment directive (after `*/` for a block comment)
    target: int  # the line it applies to
    codes: list[str] | None  # None: every rule
    own_line: bool  # the comment is alone on its line
    block: bool = False  # a `/* */` comment (code may follow it on the line)
    used: set = field(default_factory=set)  # codes (or "*") that suppressed something

    @property
    def text(self) -> str:
        kind = "ignore-next-line" if self.target != self.line else "ignore"
        return f"warplint: {kind}" + (f"[{', '.join(self.codes)}]" if self.codes else "")

    @property
    def comment(self) -> str:
        return f"/* {self.text} */" if self.block else f"// {self.text}"


def parse(text: str, path: str) -> list[Suppression]:
    out = []
    if "warplint" not in text:
        return out
    for i, line in enumerate(text.split("\n"), 1):
        if "warplint" not in line:
            continue
        for m in _COMMENT.finditer(line):
            codes = None
            if m[3] is not None:
                codes = [c.strip() for c in m[3].split(",") if c.strip()] or None
            target = i + 1 if m[2] == "ignore-next-line" else i
            block = m[1] is not None
            own = not line[:m.start()].strip() and not (block and line[m.end():].strip())
            out.append(Suppression(path, i, m.start() + 1, m.end() + 1, target, codes, own, block))
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
    for path in files:
        supps(path)
    unused += _unknown_codes(by_file)
    if report_unused:
        for path in files:
            supps(path)
        for key in sorted(by_file):
            for s in by_file[key]:
                if s.codes is None:
                    stale = [] if s.used else ["*"]
                else:
                    stale = [c for c in s.codes if c not in s.used and enabled(c) and _known(c)]
                if not stale:
                    continue
                loc = Loc(s.path, s.line, s.col, s.line, s.end_col)
                if s.own_line:
                    edit = Edit(s.path, s.line, 1, s.line + 1, 1, "")
                elif s.block:
                    edit = Edit(s.path, s.line, s.col, s.line, s.end_col, "")
                else:
                    line = sources.line(s.path, s.line)
                    start = len(line[:s.col - 1].rstrip()) + 1
                    end = len(line.rstrip("\r")) + 1
                    edit = Edit(s.path, s.line, start, s.line, end, "")
                fix = Fix("remove the unused suppression comment", [edit]) \
                    if stale == ["*"] or len(stale) == len(s.codes or []) else None
                from .messages import UnusedSuppression  # (the message classes: only when reporting)
                message = UnusedSuppression(tuple(stale), s.target)
                unused.append(Finding(UNUSED_RULE, default_severity(UNUSED_RULE), str(message), loc,
                                      details=[f"comment: {s.comment}"], fix=fix))
    return justifications, unused


def _known(code: str) -> bool:
    from .catalog import known_rules
    return any(code_matches(code, rid) for rid in known_rules())


def _unknown_codes(by_file: dict) -> list[Finding]:
    """A WL900 warning for each code in a suppression that names no rule."""
    out = []
    for key in sorted(by_file):
        for s in by_file[key]:
            unknown = tuple(c for c in s.codes or () if not _known(c))
            if unknown:
                from .messages import UnknownRuleInSuppression
                out.append(Finding(UNUSED_RULE, "warning", str(UnknownRuleInSuppression(unknown)),
                                   Loc(s.path, s.line, s.col, s.line, s.end_col), details=[f"comment: {s.comment}"]))
    return out
