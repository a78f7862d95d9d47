"""`path:line:col: severity: message [WL003]`, detail lines, `fix:` line."""
from __future__ import annotations

from . import Report, display_path, printable

_COLORS = {"error": "\033[1;31m", "warning": "\033[1;35m", "note": "\033[1;36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def format_finding(f, *, color: bool = False) -> list[str]:
    path = display_path(f.loc.path)
    sev = f.severity
    if color:
        head = f"{_BOLD}{path}:{f.loc.line}:{f.loc.col}:{_RESET} {_COLORS.get(sev, '')}{sev}:{_RESET} " \
               f"{f.message} {_DIM}[{f.rule_id}]{_RESET}"
    else:
        head = f"{path}:{f.loc.line}:{f.loc.col}: {sev}: {f.message} [{f.rule_id}]"
    lines = [head]
    lines += [f"  {d}" for d in f.details]
    for step in f.flow:
        lines.append(f"  at {display_path(step.loc.path)}:{step.loc.line}:{step.loc.col}: {step.message}")
    if f.fix is not None:
        lines.append(f"  fix: {f.fix.description}")
    return lines


def format_diagnostic(d) -> str:
    return printable(f"{display_path(d.loc.path)}:{d.loc.line}:{d.loc.col}: {d.severity}: {d.message}")


def summary(report: Report) -> str:
    vis = report.visible
    counts = {s: sum(1 for f in vis if f.severity == s) for s in ("error", "warning", "note")}
    n = len(vis)
    files = len(report.files)
    extra = []
    hidden = len(report.findings) - n
    if hidden:
        extra.append(f"{hidden} suppressed")
    failed = len({d.loc.path for d in report.diagnostics if d.severity == "error"})
    if failed:
        extra.append(f"{failed} {'file' if failed == 1 else 'files'} could not be analysed")
    s = (f"{n} {'finding' if n == 1 else 'findings'} ({counts['error']} "
         f"{'error' if counts['error'] == 1 else 'errors'}, {counts['warning']} "
         f"{'warning' if counts['warning'] == 1 else 'warnings'}, {counts['note']} "
         f"{'note' if counts['note'] == 1 else 'notes'}) in {files} {'file' if files == 1 else 'files'}")
    return s + ("; " + ", ".join(extra) if extra else "")


def render_text(report: Report, *, color: bool = False) -> str:
    out = []
    for f in report.visible:
        out.extend(format_finding(f, color=color))
    return "".join(line + "\n" for line in out)
