"""SARIF 2.1.0 output: schema-valid, with code flows, fixes, suppressions, notifications,
relative URIs under %SRCROOT%, stable fingerprints and baselines."""
from __future__ import annotations

import json

import pytest
from conftest import BUGGY_PTX, DIVERGENT_PTX, assert_valid_sarif

from warplint.findings import Edit, Finding, Fix, Step
from warplint.ir import Diagnostic, Loc
from warplint.report import Report
from warplint.fingerprint import FINGERPRINT_KEY, fingerprints
from warplint.report.sarif import render_sarif
from warplint.sources import Sources


def _findings(path: str) -> list[Finding]:
    f1 = Finding("WL003", "error", "lane 16-31 execute __shfl_sync outside membermask 0x0000ffff",
                 Loc(path, 4, 5, 4, 30), details=["active lanes: all 32 lanes", "membermask: lanes 0-15"],
                 flow=[Step(Loc(path, 2, 5), "lanes diverge here: lanes 0-15 take the path"),
                       Step(Loc(path, 3, 9), "lanes 0-7 continue")],
                 related=[Step(Loc(path, 1, 1), "membermask computed here")],
                 fix=Fix("use membermask 0xffffffff", [Edit(path, 4, 17, 4, 27, "0xffffffff")]),
                 targets=("sm_70", "sm_80"), function="kern")
    f2 = Finding("WL001", "warning", "deprecated __any", Loc(path, 6, 1), certainty="possible",
                 function="kern", suppressed=True)
    f3 = Finding("WL999", "note", "a rule without a document", Loc(path, 7, 2), function="kern")
    return [f1, f2, f3]


SOURCE = "int m = 0xffff;\nif (lane < 16) {\n  if (lane < 8) {\n    v = __shfl_sync(0x0000ffff, v, 0);\n  }\n  x = __any(p); // warplint: ignore[WL001]\n  y;\n}\n"


def _report(tmp_path, findings=None, **kw):
    src = tmp_path / "src" / "k.cu"
    src.parent.mkdir(exist_ok=True)
    src.write_text(SOURCE)
    fs = findings if findings is not None else _findings(str(src))
    sources = Sources()
    sources.add(str(src), SOURCE)
    diags = [Diagnostic(Loc(str(tmp_path / "broken.ptx"), 3, 7), "error", "unexpected token '}'"),
             Diagnostic(Loc(str(src), 1, 1), "note", "function 'kern': work bound hit; results partial")]
    r = Report(findings=fs, diagnostics=diags, files=[str(src), str(tmp_path / "broken.ptx")],
               srcroot=str(tmp_path), fingerprints=fingerprints(fs, sources),
               justifications={id(fs[1]): "warplint: ignore[WL001]"}, success=False,
               tool_notes=["k.cu:4:5: fix for WL003 skipped: it overlaps another fix"], **kw)
    return r, fs


def test_schema_valid_with_everything(tmp_path, sarif_validator):
    r, fs = _report(tmp_path)
    r.baseline = {id(fs[0]): "new", id(fs[1]): "unchanged", id(fs[2]): "new"}
    doc = json.loads(render_sarif(r))
    assert_valid_sarif(sarif_validator, doc)
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0"
    results = run["results"]
    assert [x["ruleId"] for x in results] == ["WL003", "WL001", "WL999"]
    # every feature is really present
    res = results[0]
    assert res["codeFlows"][0]["threadFlows"][0]["locations"]
    assert res["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "0xffffffff"
    assert res["relatedLocations"][0]["message"]["text"] == "membermask computed here"
    assert results[1]["suppressions"] == [{"kind": "inSource", "justification": "warplint: ignore[WL001]"}]
    assert results[1]["baselineState"] == "unchanged"
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    levels = [n["level"] for n in inv["toolExecutionNotifications"]]
    assert levels == ["error", "note", "note"]


def test_rules_metadata_and_rule_index(tmp_path):
    from warplint.catalog import catalog
    r, fs = _report(tmp_path)
    doc = json.loads(render_sarif(r))
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "warplint" and driver["version"]
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    ids = [x["id"] for x in rules]
    for rid, d in catalog().items():
        rule = rules[ids.index(rid)]
        assert rule["name"] == d.slug
        assert rule["shortDescription"]["text"] == d.summary
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"].endswith(f"/rules/{d.doc_name}")
        assert rule["defaultConfiguration"]["level"] == d.severity
        assert rule["properties"]["tags"]
    for res in doc["runs"][0]["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]


def test_locations_relative_to_srcroot(tmp_path):
    r, fs = _report(tmp_path)
    run = json.loads(render_sarif(r))["runs"][0]
    loc = run["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "src/k.cu", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 30}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    # a point location covers one character: GitHub needs endLine/endColumn on every region
    assert run["results"][1]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 6, "startColumn": 1, "endLine": 6, "endColumn": 2}


def test_code_flow_is_branches_then_finding(tmp_path):
    r, fs = _report(tmp_path)
    res = json.loads(render_sarif(r))["runs"][0]["results"][0]
    locs = res["codeFlows"][0]["threadFlows"][0]["locations"]
    lines = [x["location"]["physicalLocation"]["region"]["startLine"] for x in locs]
    assert lines == [2, 3, 4]
    msgs = [x["location"]["message"]["text"] for x in locs]
    assert msgs[0].startswith("lanes diverge here") and msgs[-1] == "active lanes: all 32 lanes"


def test_fingerprint_survives_edits_above(tmp_path):
    from warplint.findings import Finding
    p = str(tmp_path / "a.cu")
    text1 = "x;\n  v = __shfl_sync(0xffff, v, 0);\n"
    text2 = "// new comment\n\n\nx;\nv   =  __shfl_sync(0xffff, v, 0);   // warplint: note\n"
    s1, s2 = Sources(), Sources()
    s1.add(p, text1)
    s2.add(p, text2)
    f1 = Finding("WL003", "error", "m", Loc(p, 2, 7), function="k")
    f2 = Finding("WL003", "error", "m", Loc(p, 5, 9), function="k")
    assert fingerprints([f1], s1)[id(f1)] == fingerprints([f2], s2)[id(f2)]
    # a different rule or function gives a different fingerprint; repeats get an occurrence index
    f3 = Finding("WL005", "error", "m", Loc(p, 2, 7), function="k")
    f4 = Finding("WL003", "error", "m", Loc(p, 2, 7), function="other")
    fp = fingerprints([f1, f3, f4], s1)
    assert len({fp[id(f1)], fp[id(f3)], fp[id(f4)]}) == 3
    text3 = "v = __shfl_sync(0xffff, v, 0);\nv = __shfl_sync(0xffff, v, 0);\n"
    s3 = Sources()
    s3.add(p, text3)
    a = Finding("WL003", "error", "m", Loc(p, 1, 1), function="k")
    b = Finding("WL003", "error", "m", Loc(p, 2, 1), function="k")
    fp = fingerprints([b, a], s3)
    assert fp[id(a)].endswith(":0") and fp[id(b)].endswith(":1")
    assert fp[id(a)].split(":")[0] == fp[id(b)].split(":")[0]


def test_outside_srcroot_uses_absolute_uri(tmp_path, sarif_validator):
    other = tmp_path / "elsewhere"
    other.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    f = Finding("WL001", "warning", "m", Loc(str(other / "x.ptx"), 1, 1))
    r = Report(findings=[f], srcroot=str(root), files=[str(other / "x.ptx")])
    doc = json.loads(render_sarif(r))
    assert_valid_sarif(sarif_validator, doc)
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (other / "x.ptx").as_uri()}


def test_uri_escapes_spaces(tmp_path):
    d = tmp_path / "my dir"
    d.mkdir()
    f = Finding("WL001", "warning", "m", Loc(str(d / "a b.ptx"), 1, 1))
    doc = json.loads(render_sarif(Report(findings=[f], srcroot=str(tmp_path))))
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "my%20dir/a%20b.ptx"


def test_empty_run_valid(tmp_path, sarif_validator):
    doc = json.loads(render_sarif(Report(srcroot=str(tmp_path))))
    assert_valid_sarif(sarif_validator, doc)
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_cli_sarif_end_to_end(project, run_cli, sarif_validator):
    project.write("k/bad.ptx", BUGGY_PTX)
    project.write("k/div.ptx", DIVERGENT_PTX)
    project.write("k/broken.ptx", ".version 6.4\n.target sm_70\n.visible .entry k( {\n")
    status, out, err = run_cli("--format", "sarif", "--jobs", "1", "k")
    assert status == 2  # broken.ptx could not be analysed
    doc = json.loads(out)
    assert_valid_sarif(sarif_validator, doc)
    run = doc["runs"][0]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["WL001"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k/bad.ptx"
    assert by_rule["WL001"]["fixes"]
    assert by_rule["WL002"]["codeFlows"][0]["threadFlows"][0]["locations"]
    assert FINGERPRINT_KEY in by_rule["WL002"]["partialFingerprints"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any(n["level"] == "error" and "broken.ptx" in json.dumps(n) for n in notes)
    assert run["invocations"][0]["executionSuccessful"] is False


def test_cli_sarif_imports_sarif_om_only_when_needed(project):
    import subprocess
    import sys

    from conftest import cli_env
    project.write("a.ptx", BUGGY_PTX)
    code = ("import sys; from warplint.cli import main; rc = main(['--no-cache', 'a.ptx']); "
            "print(sorted(m for m in ('sarif_om', 'jschema_to_python', 'networkx', 'pycparser', 'lark') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    loaded = out.stdout.strip().splitlines()[-1]
    assert "sarif_om" not in loaded and "jschema_to_python" not in loaded


def test_cli_srcroot(project, run_cli):
    project.write("repo/k/bad.ptx", BUGGY_PTX)
    status, out, _ = run_cli("--format", "sarif", "--srcroot", "repo", "repo/k/bad.ptx")
    run = json.loads(out)["runs"][0]
    loc = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "k/bad.ptx", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (project.root / "repo").as_uri() + "/"


def test_broken_rule_catalogue_is_an_error_not_a_run_without_rules(monkeypatch, tmp_path):
    """Issue 11: no broad except turns a programming or packaging error into quiet output."""
    import warplint.catalog

    def broken():
        raise ValueError("rule document WL001: severity must be one of note, warning, error")
    monkeypatch.setattr(warplint.catalog, "catalog", broken)
    path = str(tmp_path / "k.ptx")
    with pytest.raises(ValueError, match="rule document WL001"):
        render_sarif(Report(findings=_findings(path)))


def test_repo_url_from_the_checkout_when_not_installed(monkeypatch):
    import importlib.metadata

    from warplint.report import sarif

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "metadata", not_installed)
    assert sarif.repo_url() == "https://github.com/warplint/warplint"  # pyproject's Homepage

    def bug(name):
        raise TypeError("a bug, not a missing package")
    monkeypatch.setattr(importlib.metadata, "metadata", bug)
    with pytest.raises(TypeError):
        sarif.repo_url()
