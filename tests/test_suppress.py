"""`// warplint: ignore[...]` and `ignore-next-line` comments; unused suppressions (WL900)."""
from __future__ import annotations

import json

from conftest import BUGGY_PTX, DIVERGENT_PTX, assert_valid_sarif

from warplint.findings import Finding
from warplint.ir import Loc
from warplint.sources import Sources
from warplint.suppress import apply, parse

LINE = "    vote.any.pred %p2, %p1;"


def test_parse_forms():
    text = ("a; // warplint: ignore[WL003]\n"
            "// warplint: ignore-next-line[WL003, lane-not-in-membermask]\n"
            "b;\n"
            "c; //warplint:ignore\n"
            "d; // warplint: ignored-by-nobody\n"
            "e; // warplint: ignore []\n")
    s = parse(text, "f.cu")
    assert [(x.line, x.target, x.codes, x.own_line) for x in s] == [
        (1, 1, ["WL003"], False), (2, 3, ["WL003", "lane-not-in-membermask"], True),
        (4, 4, None, False), (6, 6, None, False)]


def _f(rule, line, path="f.cu"):
    return Finding(rule, "error", "m", Loc(path, line, 1), function="k")


def _apply(text, findings, **kw):
    src = Sources()
    src.add("f.cu", text)
    return apply(findings, src, **kw)


def test_apply_marks_findings():
    text = "x; // warplint: ignore[WL003]\n// warplint: ignore-next-line[shfl-source-invalid]\ny;\nz; // warplint: ignore\nw;\n"
    fs = [_f("WL003", 1), _f("WL005", 1), _f("WL005", 3), _f("WL001", 4), _f("WL002", 4), _f("WL003", 5)]
    just, unused = _apply(text, fs)
    assert [f.suppressed for f in fs] == [True, False, True, True, True, False]
    assert just[id(fs[0])] == "warplint: ignore[WL003]"
    assert unused == []


def test_prefix_code():
    fs = [_f("WL003", 1)]
    _apply("x; // warplint: ignore[WL00]\n", fs)
    assert fs[0].suppressed


def test_unused_reported_with_fix():
    text = "x; // warplint: ignore[WL003]\n// warplint: ignore-next-line\ny;\nz; // warplint: ignore[WL001,WL003]\n"
    fs = [_f("WL001", 4)]
    _, unused = _apply(text, fs, report_unused=True)
    assert [(u.rule_id, u.loc.line) for u in unused] == [("WL900", 1), ("WL900", 2), ("WL900", 4)]
    assert "WL003" in unused[0].message
    # whole comment unused: the fix removes it; partly used: no automatic fix
    assert unused[0].fix.edits[0].col == 3 and unused[0].fix.edits[0].end_col == len("x; // warplint: ignore[WL003]") + 1
    assert (unused[1].fix.edits[0].line, unused[1].fix.edits[0].end_line) == (2, 3)
    assert unused[2].fix is None


def test_unused_only_for_enabled_rules():
    text = "x; // warplint: ignore[WL003]\n"
    _, unused = _apply(text, [], report_unused=True, enabled=lambda c: c != "WL003")
    assert unused == []


def test_cli_suppression_ptx(project, run_cli, sarif_validator):
    project.write("a.ptx", BUGGY_PTX.replace(LINE, LINE + " // warplint: ignore[WL001]"))
    status, out, err = run_cli("a.ptx")
    assert status == 0 and out == ""
    assert "1 suppressed" in err
    status, out, _ = run_cli("--format", "sarif", "a.ptx")
    doc = json.loads(out)
    assert_valid_sarif(sarif_validator, doc)
    res = doc["runs"][0]["results"][0]
    assert res["suppressions"][0]["kind"] == "inSource"
    status, out, _ = run_cli("--format", "json", "a.ptx")
    assert json.loads(out)["findings"][0]["suppressed"] is True


def test_cli_ignore_next_line_and_other_rule(project, run_cli):
    project.write("a.ptx", BUGGY_PTX.replace(LINE, "    // warplint: ignore-next-line[WL001]\n" + LINE))
    assert run_cli("a.ptx")[0] == 0
    project.write("b.ptx", BUGGY_PTX.replace(LINE, LINE + " // warplint: ignore[WL003]"))
    assert run_cli("b.ptx")[0] == 1


def test_cli_unused_suppressions(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX.replace("\tret;", "\tret; // warplint: ignore[WL002]"))
    status, out, _ = run_cli("--format", "json", "div.ptx")
    assert "WL900" not in out
    status, out, _ = run_cli("--format", "json", "--report-unused-suppressions", "div.ptx")
    rules = [f["rule_id"] for f in json.loads(out)["findings"]]
    assert rules == ["WL002", "WL900"] and status == 1
    status, out, _ = run_cli("--report-unused-suppressions", "--ignore", "WL900", "--format", "json", "div.ptx")
    assert [f["rule_id"] for f in json.loads(out)["findings"]] == ["WL002"]
    # with the rule deselected the suppression is not judged
    status, out, _ = run_cli("--report-unused-suppressions", "--select", "WL001", "div.ptx")
    assert status == 0 and out == ""
    # --fix removes the stale comment and nothing else
    status, out, err = run_cli("--report-unused-suppressions", "--fix", "div.ptx")
    assert "fixed 1 finding in 1 file" in err
    assert open("div.ptx").read() == DIVERGENT_PTX
    assert "[WL900]" not in out and "[WL002]" in out


def test_cuda_suppression(project, run_cli):
    src = ("__global__ void k(float *out)\n{\n    float v = out[threadIdx.x];\n"
           "    v += __shfl_xor(v, 16); // warplint: ignore[deprecated-non-sync]\n    out[threadIdx.x] = v;\n}\n")
    project.write("k.cu", src)
    assert run_cli("--target", "sm_70", "k.cu")[0] == 0


def test_wl900_document_examples(project, run_cli):
    from warplint.catalog import catalog
    doc = catalog()["WL900"]
    assert doc.slug == "unused-suppression" and doc.severity == "warning"
    examples = doc.examples
    assert {kind for _, kind, _ in examples} == {"bad", "good"}
    for lang, kind, code in examples:
        name = f"{kind}.{'cu' if lang == 'cuda' else 'ptx'}"
        project.write(name, code)
        status, out, _ = run_cli("--format", "json", "--report-unused-suppressions", name)
        rules = [f["rule_id"] for f in json.loads(out)["findings"]]
        assert rules == (["WL900"] if kind == "bad" else []), (kind, rules)


def test_unused_in_file_without_findings():
    src = Sources()
    src.add("clean.cu", "x; // warplint: ignore[WL003]\n")
    _, unused = apply([], src, files=["clean.cu"], report_unused=True)
    assert [(u.rule_id, u.loc.path, u.loc.line) for u in unused] == [("WL900", "clean.cu", 1)]
