"""Text, JSON and GitHub reporters on hand-built findings; baselines."""
from __future__ import annotations

import json

from conftest import BUGGY_PTX, DIVERGENT_PTX, assert_valid_sarif

from warplint.findings import Edit, Finding, Fix, Step
from warplint.ir import Diagnostic, Loc
from warplint.report import Report, display_path, render
from warplint.report.github import command, escape_data, escape_property
from warplint.report.text import summary


def _findings(root):
    p = str(root / "src" / "k.cu")
    return [
        Finding("WL003", "error", "lanes 16-31 execute __shfl_sync outside membermask 0x0000ffff",
                Loc(p, 4, 5, 4, 30), details=["active lanes: all 32 lanes", "membermask: lanes 0-15"],
                flow=[Step(Loc(p, 2, 5), "lanes diverge here: lanes 0-15 take the path")],
                fix=Fix("use membermask 0xffffffff", [Edit(p, 4, 17, 4, 27, "0xffffffff")]),
                targets=("sm_70",), function="kern"),
        Finding("WL005", "warning", "may read lane 31, which may have exited", Loc(p, 9, 1),
                certainty="possible", function="kern"),
        Finding("WL001", "note", "hidden", Loc(p, 10, 1), suppressed=True),
    ]


def test_text(project):
    fs = _findings(project.root)
    out = render(Report(findings=fs, files=["src/k.cu"]), "text")
    assert out.splitlines() == [
        "src/k.cu:4:5: error: lanes 16-31 execute __shfl_sync outside membermask 0x0000ffff [WL003]",
        "  active lanes: all 32 lanes",
        "  membermask: lanes 0-15",
        "  at src/k.cu:2:5: lanes diverge here: lanes 0-15 take the path",
        "  fix: use membermask 0xffffffff",
        "src/k.cu:9:1: warning: may read lane 31, which may have exited [WL005]",
    ]
    assert summary(Report(findings=fs, files=["src/k.cu"])) == \
        "2 findings (1 error, 1 warning, 0 notes) in 1 file; 1 suppressed"


def test_text_color():
    f = Finding("WL003", "error", "m", Loc("a.cu", 1, 1))
    out = render(Report(findings=[f]), "text", color=True)
    assert "\033[1;31merror:" in out


def test_summary_counts_failed_files():
    r = Report(files=["a", "b"], diagnostics=[Diagnostic(Loc("b", 1, 1), "error", "bad")])
    assert summary(r) == "0 findings (0 errors, 0 warnings, 0 notes) in 2 files; 1 file could not be analysed"


def test_display_path(project, tmp_path_factory):
    assert display_path(str(project.root / "a" / "b.cu")) == "a/b.cu"
    other = tmp_path_factory.mktemp("other")
    assert display_path(str(other / "x.cu")) == str(other / "x.cu")


def test_json(project):
    fs = _findings(project.root)
    diags = [Diagnostic(Loc(str(project.root / "bad.ptx"), 2, 3), "error", "unexpected token")]
    data = json.loads(render(Report(findings=fs, diagnostics=diags, files=["src/k.cu", "bad.ptx"]), "json"))
    assert data["version"] == 1 and data["tool"]["name"] == "warplint"
    f = data["findings"][0]
    assert f == {
        "rule_id": "WL003", "slug": "lane-not-in-membermask", "severity": "error", "certainty": "definite",
        "message": "lanes 16-31 execute __shfl_sync outside membermask 0x0000ffff", "path": "src/k.cu",
        "line": 4, "column": 5, "end_line": 4, "end_column": 30,
        "details": ["active lanes: all 32 lanes", "membermask: lanes 0-15"], "targets": ["sm_70"],
        "function": "kern", "flow": [{"path": "src/k.cu", "line": 2, "column": 5,
                                      "message": "lanes diverge here: lanes 0-15 take the path"}],
        "related": [],
        "fix": {"description": "use membermask 0xffffffff", "edits": [
            {"path": "src/k.cu", "line": 4, "column": 17, "end_line": 4, "end_column": 27, "text": "0xffffffff"}]},
        "suppressed": False}
    assert data["findings"][2]["suppressed"] is True  # JSON keeps suppressed findings, flagged
    assert data["diagnostics"] == [{"path": "bad.ptx", "line": 2, "column": 3, "severity": "error",
                                    "message": "unexpected token"}]


def test_github_escaping():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%") == "a%2Cb%3Ac%25"
    assert command("error", "m: x, y", file="dir,1/a:b.cu", line=3) == "::error file=dir%2C1/a%3Ab.cu,line=3::m: x, y"


def test_github(project):
    fs = _findings(project.root)
    diags = [Diagnostic(Loc("bad.ptx", 2, 3), "error", "unexpected token")]
    out = render(Report(findings=fs, diagnostics=diags), "github").splitlines()
    assert out[0] == ("::error file=src/k.cu,line=4,col=5,endLine=4,endColumn=30,title=WL003 lane-not-in-membermask::"
                      "lanes 16-31 execute __shfl_sync outside membermask 0x0000ffff%0Aactive lanes: all 32 lanes"
                      "%0Amembermask: lanes 0-15%0Afix: use membermask 0xffffffff")
    # most severe first (GitHub shows 10 per level), then the summary as the first notice
    assert out[1] == "::error file=bad.ptx,line=2,col=3,title=warplint::unexpected token"
    assert out[2].startswith("::warning file=src/k.cu,line=9,col=1,title=WL005 shfl-source-invalid::")
    assert out[3] == "::notice title=warplint summary::2 findings (1 error, 1 warning, 0 notes) in 0 files; 1 suppressed, " \
                     "1 file could not be analysed"
    assert len(out) == 4  # the suppressed finding is not annotated


def test_baseline_end_to_end(project, run_cli, sarif_validator):
    project.write("div.ptx", DIVERGENT_PTX)
    status, _, _ = run_cli("--format", "sarif", "-o", "base.sarif", "div.ptx")
    assert status == 1
    # unrelated edits above the finding: still in the baseline
    project.write("div.ptx", DIVERGENT_PTX.replace(".address_size 64\n", ".address_size 64\n// a comment\n\n"))
    status, out, err = run_cli("--baseline", "base.sarif", "div.ptx")
    assert status == 0 and out == "", err
    status, out, _ = run_cli("--baseline", "base.sarif", "--format", "sarif", "div.ptx")
    doc = json.loads(out)
    assert_valid_sarif(sarif_validator, doc)
    assert {r["baselineState"] for r in doc["runs"][0]["results"]} == {"unchanged"}
    # a new finding fails the run
    project.write("bad.ptx", BUGGY_PTX)
    status, out, _ = run_cli("--baseline", "base.sarif", "div.ptx", "bad.ptx")
    assert status == 1 and "bad.ptx:11:5" in out and "div.ptx" not in out


def test_baseline_errors(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    project.write("bad.sarif", "{not json")
    status, _, err = run_cli("--baseline", "bad.sarif", "div.ptx")
    assert status == 2 and "baseline is not valid JSON" in err
    status, _, err = run_cli("--baseline", "missing.sarif", "div.ptx")
    assert status == 2 and "cannot read baseline" in err
