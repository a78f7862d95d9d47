"""Reporters: text, json, sarif (sarif-om), github annotations.

Every reporter takes a `Report` (the findings of a whole run, already sorted, suppressed and
baselined) and returns a string.  Reporters never touch the file system.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..findings import Finding, severity_rank
from ..locations import Diagnostic

FORMATS = ("text", "json", "sarif", "github", "gitlab", "junit")


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)  # all of them, suppressed ones included
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the files analysed
    srcroot: str = ""  # directory SARIF URIs are relative to (default: cwd)
    fingerprints: dict[int, str] = field(default_factory=dict)  # id(finding) -> partial fingerprint
    line_hashes: dict[int, str] = field(default_factory=dict)  # id(finding) -> primaryLocationLineHash
    baseline: dict[int, str] = field(default_factory=dict)  # id(finding) -> "unchanged" | "new"
    justifications: dict[int, str] = field(default_factory=dict)  # id(finding) -> suppression text
    fail_on: str = "warning"
    tool_notes: list[str] = field(default_factory=list)  # run-level notes (skipped fix edits, ...)
    success: bool = True  # every file analysed
    masks: dict[str, str] = field(default_factory=dict)  # path -> `--show-masks` text (json, sarif)
    sources: object = None  # `sources.Sources` of the run: the text reporter's source excerpts
    show_source: bool = True  # text: the source line under each finding (`--no-show-source`)
    coverage: object = None  # coverage.Coverage: the warp code analysed (json `coverage`, sarif run properties)

    def __post_init__(self):
        if not self.srcroot:
            self.srcroot = os.getcwd()

    def hidden(self, f: Finding) -> bool:
        """Not shown in text/github output and not counted for the exit status."""
        return f.suppressed or self.baseline.get(id(f)) == "unchanged"

    @property
    def visible(self) -> list[Finding]:
        return [f for f in self.findings if not self.hidden(f)]

    @property
    def failing(self) -> list[Finding]:
        lvl = severity_rank(self.fail_on)
        return [f for f in self.visible if severity_rank(f.severity) >= lvl]


def merge_runs(runs: list) -> tuple:
    """One (Report, Sources) from the runs of several configurations (their files are
    disjoint): findings and diagnostics sorted as one run's, the strictest --fail-on."""
    from ..findings import severity_rank
    report, sources = runs[0]
    for other, other_sources in runs[1:]:
        report.findings += other.findings
        report.diagnostics += other.diagnostics
        report.files += other.files
        for name in ("fingerprints", "baseline", "justifications", "masks"):
            getattr(report, name).update(getattr(other, name))
        report.tool_notes += [n for n in other.tool_notes if n not in report.tool_notes]
        report.success = report.success and other.success
        if report.coverage is not None and other.coverage is not None:
            report.coverage.add(other.coverage)
        report.fail_on = min(report.fail_on, other.fail_on, key=severity_rank)
        sources.update(other_sources)
    if len(runs) > 1:
        report.findings.sort(key=lambda f: (display_path(f.loc.path), f.loc.line, f.loc.col, f.rule_id, f.message))
        report.diagnostics.sort(key=lambda d: (display_path(d.loc.path), d.loc.line, d.loc.col))
    return report, sources


def printable(s: str) -> str:
    """`s` as text that encodes as UTF-8: the bytes of a non-UTF-8 file name (which Python
    carries as lone surrogates) are spelled `\\xNN`."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        pass
    try:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        return s.encode("utf-8", "backslashreplace").decode("utf-8")


def printable_data(obj):
    """`printable` applied to every string in a JSON-like document."""
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, list):
        return [printable_data(x) for x in obj]
    if isinstance(obj, dict):
        return {printable(k): printable_data(v) for k, v in obj.items()}
    return obj


def display_path(path: str, base: str | None = None) -> str:
    """`path` relative to `base` (default cwd) when it lies under it, else as absolute path.
    Always with forward slashes and printable (see `printable`) on output."""
    base = base or os.getcwd()
    ap = os.path.abspath(path)
    try:
        rel = os.path.relpath(ap, base)
    except ValueError:  # other drive on Windows
        return printable(ap.replace(os.sep, "/"))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return printable(ap.replace(os.sep, "/"))
    return printable(rel.replace(os.sep, "/"))


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    """The report as text that always encodes as UTF-8."""
    if fmt == "text":
        from .text import render_text
        return printable(render_text(report, color=color))
    if fmt == "json":
        from .json import render_json
        return render_json(report)
    if fmt == "sarif":
        from .sarif import render_sarif
        return render_sarif(report)
    if fmt == "github":
        from .github import render_github
        return printable(render_github(report))
    if fmt == "gitlab":
        from .gitlab import render_gitlab
        return render_gitlab(report)
    if fmt == "junit":
        from .junit import render_junit
        return printable(render_junit(report))
    raise ValueError(f"unknown format {fmt!r}")
