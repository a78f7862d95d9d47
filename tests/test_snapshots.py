"""Snapshot of what a user reads: the full text report (messages, source excerpts, details,
divergence paths, fixes) of every rule fixture, pinned in tests/snapshots/fixtures.txt, so
that wording and columns cannot drift unseen (ruff's `.snap` habit).

A change to a message, a check or a fixture shows up here as a diff.  Review it, then rewrite
the snapshot and commit it with the change:

    WARPLINT_UPDATE_SNAPSHOTS=1 python -m pytest -q tests/test_snapshots.py

Each fixture is linted once for all the targets its runs use (see fixture_harness), so the
findings merged over targets are what the snapshot shows, as `warplint --target ...` would.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

from fixture_harness import ROOT, fixture_files, options_for, parse_spec, target_runs
from warplint.pipeline import lint_file
from warplint.report import Report
from warplint.report.text import render_text
from warplint.sources import Sources

SNAPSHOT = Path(__file__).parent / "snapshots" / "fixtures.txt"
UPDATE = "WARPLINT_UPDATE_SNAPSHOTS"


def render_fixture(path: Path) -> str:
    spec = parse_spec(path.read_text(encoding="utf-8"))
    targets = [t for t in target_runs(path, spec) if t is not None]
    options = options_for(path, None, spec)
    options.targets = targets or None
    result = lint_file(str(path), options)
    sources = Sources()
    sources.add(result.path, result.text)
    findings = [f for f in result.findings if not f.suppressed]
    text = render_text(Report(findings=findings, sources=sources))
    return text or "(no findings)\n"


def render_all() -> str:
    old = os.getcwd()
    os.chdir(ROOT)  # paths as a user at the repository root sees them
    try:
        parts = [f"## {p.relative_to(ROOT).as_posix()}\n{render_fixture(p)}" for p in fixture_files()]
    finally:
        os.chdir(old)
    return "\n".join(parts)


def test_fixture_reports_match_the_snapshot():
    actual = render_all()
    if os.environ.get(UPDATE):
        SNAPSHOT.write_text(actual, encoding="utf-8")
        return
    expected = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "snapshot", "now", lineterm="", n=2)
        shown = "\n".join(list(diff)[:80])
        raise AssertionError(f"the fixtures' reports differ from {SNAPSHOT.name}; review, then regenerate with "
                             f"{UPDATE}=1 python -m pytest -q tests/test_snapshots.py\n{shown}")
