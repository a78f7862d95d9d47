"""Microsoft's SARIF Multitool validates the fixtures' SARIF log with the SARIF rules and GitHub
code scanning's ("Sarif;Gh"): no error and no warning.  Slow (the tool takes ~15 s); skipped
where the tool is absent.  .ci/run installs it (npm @microsoft/sarif-multitool) and names its
binary in SARIF_MULTITOOL; the binary is called directly: the npm wrapper runs it through a
shell, which splits "Sarif;Gh" at the `;`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT


def _multitool() -> str | None:
    path = os.environ.get("SARIF_MULTITOOL") or shutil.which("Sarif.Multitool")
    return path if path and os.access(path, os.X_OK) else None


@pytest.mark.slow
def test_fixture_sarif_passes_the_sarif_multitool(tmp_path, run_cli, monkeypatch):
    tool = _multitool()
    if tool is None:
        pytest.skip("SARIF Multitool not installed (npm @microsoft/sarif-multitool; set SARIF_MULTITOOL)")
    monkeypatch.chdir(ROOT)
    log = tmp_path / "fixtures.sarif"
    run_cli("--format", "sarif", "--no-cache", "-o", log, "fixtures")
    out = tmp_path / "validation.sarif"
    proc = subprocess.run([tool, "validate", "--rule-kind", "Sarif;Gh", "--level", "Error;Warning",
                           "--output", str(out), str(log)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))["runs"][0].get("results", [])
    problems = [f"{r['ruleId']} {r.get('level')}: {r['message'].get('arguments', r['message'])}" for r in results
                if r.get("level", "warning") in ("error", "warning")]
    assert not problems, "\n".join(problems[:20])
