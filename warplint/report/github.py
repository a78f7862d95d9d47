"""GitHub Actions workflow commands: `::error file=...,line=...::message`."""
from __future__ import annotations

from . import Report, display_path
from .text import summary

_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}
_RANK = {"error": 3, "warning": 2, "notice": 1}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **props) -> str:
    ps = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{level} {ps}::{escape_data(message)}" if ps else f"::{level}::{escape_data(message)}"


def render_github(report: Report) -> str:
    """The annotations most severe first, the summary first among the notices: GitHub shows at
    most 10 annotations per level and step, so errors must not drown among notes and the summary
    must not be cut."""
    from ..catalog import slug
    out = []  # (rank, command); sorted stably, so by place within a rank
    for f in report.visible:
        msg = f.message
        if f.details:
            msg += "\n" + "\n".join(f.details)
        if f.fix is not None:
            msg += f"\nfix: {f.fix.description}"
        props = {"file": display_path(f.loc.path), "line": f.loc.line, "col": f.loc.col}
        if f.loc.end_line:
            props["endLine"] = f.loc.end_line
            if f.loc.end_col:
                props["endColumn"] = f.loc.end_col
        props["title"] = f"{f.rule_id} {slug(f.rule_id) or ''}".strip()
        level = _LEVEL.get(f.severity, "warning")
        out.append((_RANK[level], command(level, msg, **props)))
    for d in report.diagnostics:
        level = "error" if d.severity == "error" else "notice"
        out.append((_RANK[level], command(level, d.message, file=display_path(d.loc.path), line=d.loc.line,
                                          col=d.loc.col, title="warplint")))
    out.append((_RANK["notice"] + 0.5, command("notice", summary(report), title="warplint summary")))
    return "".join(line + "\n" for _, line in sorted(out, key=lambda x: -x[0]))
