"""`path:line:col: severity: message [WL003]`, the source line with a caret under the construct
(like clang and ruff), detail lines, the divergence path (each branch with its source line),
and the `fix:` line."""
from __future__ import annotations

from ..severity import SEVERITIES
from . import Report, display_path, printable

_COLORS = {"error": "\033[1;31m", "warning": "\033[1;35m", "note": "\033[1;36m"}
_BOLD, _DIM, _GREEN, _RESET = "\033[1m", "\033[2m", "\033[1;32m", "\033[0m"


def source_excerpt(line_text: str, loc, *, indent: str = "", color: bool = False) -> list[str]:
    """The source line and a caret line under `loc` (`^~~~` to its end when it ends on that
    line), with a gutter holding the line number:

         12 |     v = __shfl_sync(m, v, 1);
            |         ^~~~~~~~~~~
    """
    text = line_text.rstrip("\r\n")
    if not text.strip():
        return []
    start = max(loc.col - 1, 0)
    end = loc.end_col - 1 if loc.end_line in (None, loc.line) and loc.end_col else start + 1
    end = min(max(end, start + 1), max(len(text), start + 1))
    pad = "".join(c if c == "\t" else " " for c in text[:start])  # tabs kept: the caret lines up
    mark = "^" + "~" * (end - start - 1)
    if color:
        mark = f"{_GREEN}{mark}{_RESET}"
    number = str(loc.line)
    gutter = " " * len(number)
    return [f"{indent}{number} | {text}", f"{indent}{gutter} | {pad}{mark}"]


def _excerpt(report: Report, loc, indent: str, color: bool) -> list[str]:
    if not report.show_source or report.sources is None:
        return []
    return source_excerpt(report.sources.line(loc.path, loc.line), loc, indent=indent, color=color)


def format_finding(f, report: Report | None = None, *, color: bool = False) -> list[str]:
    report = report or Report()
    path = display_path(f.loc.path)
    sev = f.severity
    if color:
        head = f"{_BOLD}{path}:{f.loc.line}:{f.loc.col}:{_RESET} {_COLORS.get(sev, '')}{sev}:{_RESET} " \
               f"{f.message} {_DIM}[{f.rule_id}]{_RESET}"
    else:
        head = f"{path}:{f.loc.line}:{f.loc.col}: {sev}: {f.message} [{f.rule_id}]"
    lines = [head]
    lines += _excerpt(report, f.loc, "  ", color)
    lines += [f"  {d}" for d in f.details]
    for step in f.flow:
        lines.append(f"  at {display_path(step.loc.path)}:{step.loc.line}:{step.loc.col}: {step.message}")
        lines += _excerpt(report, step.loc, "    ", color)
    if f.fix is not None:
        lines.append(f"  fix: {f.fix.description}")
    return lines


def format_diagnostic(d) -> str:
    return printable(f"{display_path(d.loc.path)}:{d.loc.line}:{d.loc.col}: {d.severity}: {d.message}")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(report: Report) -> str:
    vis = report.visible
    by_severity = ", ".join(_count(sum(1 for f in vis if f.severity == sev), sev) for sev in reversed(SEVERITIES))
    extra = []
    hidden = len(report.findings) - len(vis)
    if hidden:
        extra.append(f"{hidden} suppressed")
    failed = len({d.loc.path for d in report.diagnostics if d.severity == "error"})
    if failed:
        extra.append(f"{_count(failed, 'file')} could not be analysed")
    s = f"{_count(len(vis), 'finding')} ({by_severity}) in {_count(len(report.files), 'file')}"
    return s + ("; " + ", ".join(extra) if extra else "")


def statistics(report: Report) -> str:
    """`--statistics`: the visible findings counted per rule, most frequent first (like ruff)."""
    from ..catalog import slug
    counts: dict[str, int] = {}
    for f in report.visible:
        counts[f.rule_id] = counts.get(f.rule_id, 0) + 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    width = max([len(str(n)) for _, n in rows] + [1])
    return "".join(f"{n:>{width}}\t{rule}\t{slug(rule) or ''}\n" for rule, n in rows)


def render_text(report: Report, *, color: bool = False) -> str:
    out = []
    for f in report.visible:
        out.extend(format_finding(f, report, color=color))
    return "".join(line + "\n" for line in out)
