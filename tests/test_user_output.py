"""What a user reads and the CI glue (issue 14): source excerpts, CI formats, SARIF details for
GitHub, command-line conventions, configuration per file, stdin, suppressions, non-UTF-8."""
from __future__ import annotations

import io
import json
import os
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import BUGGY_PTX, DIVERGENT_PTX

LEGACY_CU = """__global__ void k(int *out)
{
    int v = out[threadIdx.x];
    if (v > 3)
        v = __ballot(v & 1);
    out[threadIdx.x] = __shfl(v, 0);
}
"""


# -- source excerpts ----------------------------------------------------------------------------

def test_text_shows_the_source_line_with_a_caret_and_the_diverging_branch(project, run_cli):
    project.write("k.cu", LEGACY_CU)
    _, out, _ = run_cli("--target", "sm_70", "k.cu")
    lines = out.splitlines()
    i = lines.index("  5 |         v = __ballot(v & 1);")
    assert lines[i + 1] == "    |             ^~~~~~~~~~~~~~~"
    assert "  at k.cu:4:9: lanes diverge here: the lanes where v > 3 take the path to the instruction" in lines
    assert "    4 |     if (v > 3)" in lines
    assert "      |         ^" in lines


def test_tabs_keep_the_caret_aligned():
    from warplint.ir import Loc
    from warplint.report.text import source_excerpt
    assert source_excerpt("\tx = __shfl(v, 0);", Loc("k.cu", 7, 6, 7, 12)) == [
        "7 | \tx = __shfl(v, 0);", "  | \t    ^~~~~~"]


def test_no_show_source_by_flag_and_by_configuration(project, run_cli):
    project.write("k.cu", LEGACY_CU)
    _, out, _ = run_cli("--no-show-source", "k.cu")
    assert " | " not in out
    project.write("warplint.toml", "show-source = false\n")
    _, out, _ = run_cli("k.cu")
    assert " | " not in out


# -- CI formats ---------------------------------------------------------------------------------

def test_gitlab_code_quality(project, run_cli):
    project.write("k.cu", LEGACY_CU)
    status, out, _ = run_cli("--format", "gitlab", "k.cu")
    assert status == 1
    issues = json.loads(out)
    assert {i["check_name"] for i in issues} == {"WL001"}
    first = issues[0]
    assert set(first) == {"description", "check_name", "fingerprint", "severity", "location"}
    assert first["location"] == {"path": "k.cu", "lines": {"begin": 5, "end": 5}}
    assert first["severity"] == "critical"
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_junit(project, run_cli):
    project.write("k.cu", LEGACY_CU)
    project.write("clean.ptx", BUGGY_PTX.replace("vote.any.pred %p2, %p1;", "vote.sync.any.pred %p2, %p1, 0xffffffff;"))
    status, out, _ = run_cli("--format", "junit", "k.cu", "clean.ptx")
    assert status == 1
    root = ET.fromstring(out.split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "2", "0")
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == ["clean.ptx", "k.cu", "k.cu"]
    assert cases[1].find("failure").get("type") == "WL001"


# -- SARIF for GitHub code scanning --------------------------------------------------------------

def test_sarif_has_what_github_reads(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    _, out, _ = run_cli("--format", "sarif", "div.ptx")
    run = json.loads(out)["runs"][0]
    result = run["results"][0]
    assert set(result["partialFingerprints"]) == {"warplint/v1", "primaryLocationLineHash"}
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["WL002"]["properties"]["problem.severity"] == "error"
    assert rules["WL900"]["properties"]["problem.severity"] == "warning"
    help_ = rules["WL002"]["help"]
    assert "```" in help_["markdown"] and "```" not in help_["text"] and "`" not in help_["text"]


def test_line_hash_survives_lines_added_above(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    _, before, _ = run_cli("--format", "sarif", "div.ptx")
    project.write("div.ptx", DIVERGENT_PTX.replace(".address_size 64\n", ".address_size 64\n\n// a comment\n"))
    _, after, _ = run_cli("--format", "sarif", "div.ptx")

    def hashes(doc):
        return [r["partialFingerprints"]["primaryLocationLineHash"] for r in json.loads(doc)["runs"][0]["results"]]
    assert hashes(before) == hashes(after)


def test_fixture_sarif_regions_all_have_ends_and_uris_are_relative(run_cli, monkeypatch):
    from conftest import ROOT
    monkeypatch.chdir(ROOT)
    _, out, _ = run_cli("--format", "sarif", "--no-cache", "fixtures")
    run = json.loads(out)["runs"][0]
    assert run["results"]
    for r in run["results"]:
        for loc in r["locations"] + r.get("relatedLocations", []):
            region = loc["physicalLocation"]["region"]
            assert "endLine" in region and "endColumn" in region, r["ruleId"]
            assert not loc["physicalLocation"]["artifactLocation"]["uri"].startswith("file:")


def test_show_masks_goes_inside_json_and_sarif(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    for fmt, where in (("json", lambda d: d["masks"]), ("sarif", lambda d: d["runs"][0]["properties"]["masks"])):
        _, out, _ = run_cli("--format", fmt, "--show-masks", "div.ptx")
        doc = json.loads(out)  # nothing printed before the document
        assert "div.ptx" in where(doc)


def test_report_files_honour_the_umask(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    old = os.umask(0o022)
    try:
        run_cli("--format", "sarif", "-o", "report.sarif", "div.ptx")
    finally:
        os.umask(old)
    assert os.stat("report.sarif").st_mode & 0o777 == 0o644


# -- command line --------------------------------------------------------------------------------

def test_statistics_exit_zero_quiet(project, run_cli):
    project.write("k.cu", LEGACY_CU)
    status, out, err = run_cli("--statistics", "--exit-zero", "--quiet", "k.cu")
    assert status == 0
    assert out == "2\tWL001\tdeprecated-non-sync\n"
    assert err == ""


def test_help_documents_color_and_the_formats(run_cli):
    _, out, _ = run_cli("--help")
    assert "--color {auto,always,never}" in out and "gitlab" in out and "junit" in out


@pytest.mark.parametrize("args,words", [
    (["--target", "sm_1000"], "unknown architecture 'sm_1000'"),
    (["--jobs", "-1"], "--jobs must be a positive number"),
    (["-", "k.cu"], "'-' (lint stdin) takes --stdin-filename"),
    (["--stdin-filename", "k.cu", "k.cu"], "--stdin-filename goes with the path '-'"),
])
def test_bad_arguments_are_usage_errors(project, run_cli, args, words):
    project.write("k.cu", LEGACY_CU)
    status, _, err = run_cli(*args, "k.cu") if "-" not in args and "--stdin-filename" not in args else run_cli(*args)
    assert status == 2
    assert words in err


def test_jobs_zero_means_all_cores(project, run_cli):
    project.write("a.ptx", BUGGY_PTX)
    project.write("b.ptx", BUGGY_PTX)
    status, _, _ = run_cli("--jobs", "0", "a.ptx", "b.ptx")
    assert status == 1


def test_baseline_must_be_a_sarif_log(project, run_cli):
    project.write("a.ptx", BUGGY_PTX)
    project.write("base.json", '{"findings": []}')
    status, _, err = run_cli("--baseline", "base.json", "a.ptx")
    assert status == 2
    assert "base.json: not a SARIF log" in err


def test_stdin_with_a_file_name(project, run_cli, monkeypatch):
    project.write("warplint.toml", 'targets = ["sm_60"]\n')  # found from the --stdin-filename
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(LEGACY_CU.encode())))
    status, out, _ = run_cli("-", "--stdin-filename", "src/never_read.cu")
    assert status == 1
    assert out.startswith("src/never_read.cu:5:13: warning: '__ballot' without a membermask is deprecated")
    assert not os.path.exists("src")


# -- configuration per file ----------------------------------------------------------------------

def test_configuration_is_found_per_file_in_any_order(project, run_cli):
    project.write(".git/HEAD", "")
    project.write("a/warplint.toml", 'targets = ["sm_60"]\n')
    project.write("a/k.cu", LEGACY_CU)
    project.write("b/warplint.toml", 'ignore = ["WL001"]\n')
    project.write("b/k.cu", LEGACY_CU)
    first = run_cli("a/k.cu", "b/k.cu")
    second = run_cli("b/k.cu", "a/k.cu")
    assert first == second
    status, out, err = first
    assert "warp code: 2 of 2 functions analysed" in err  # the groups' coverage added up
    assert status == 1
    assert "a/k.cu:6:24: warning: '__shfl' without a membermask is deprecated" in out
    assert "b/k.cu" not in out


def test_configuration_discovery_stops_at_the_repository_root(project, run_cli):
    project.write("warplint.toml", 'ignore = ["WL001"]\n')  # above the repository: not its configuration
    project.write("repo/.git/HEAD", "")
    project.write("repo/k.cu", LEGACY_CU)
    status, out, _ = run_cli("repo/k.cu")
    assert status == 1 and "WL001" in out


# -- suppressions and encodings ------------------------------------------------------------------

def test_block_comment_suppressions_and_unknown_rules(project, run_cli):
    project.write("k.cu", LEGACY_CU.replace("__shfl(v, 0);", "__shfl(v, 0); /* warplint: ignore[WL001] */")
                  .replace("__ballot(v & 1);", "__ballot(v & 1); // warplint: ignore[WL999]"))
    status, out, _ = run_cli("--no-show-source", "--target", "sm_70", "k.cu")
    assert status == 1
    assert "k.cu:6:" not in out  # suppressed by the block comment
    assert ("k.cu:5:30: warning: suppression names unknown rule 'WL999' (see 'warplint rules'): it suppresses "
            "nothing [WL900]") in out


def test_unused_block_suppression_fix_removes_only_the_comment(project, run_cli):
    project.write("k.cu", "/* warplint: ignore[WL003] */ __global__ void k(int *o) { o[0] = 1; }\n")
    status, _, _ = run_cli("--report-unused-suppressions", "--fix", "k.cu")
    assert (project.root / "k.cu").read_text() == " __global__ void k(int *o) { o[0] = 1; }\n"


def test_latin1_source_is_analysed_with_a_note(project, run_cli):
    project.write("k.cu", ("// caf\xe9\n" + LEGACY_CU).encode("latin-1"), mode="wb")
    status, out, err = run_cli("--no-show-source", "k.cu")
    assert status == 1
    assert "k.cu:1:7: note: file is not valid UTF-8 text: read as Latin-1" in err
    assert "k.cu:7:24: error: '__shfl' without a membermask" in out


# -- fixture expectations with message text ------------------------------------------------------

def test_expectations_may_carry_message_text():
    from fixture_harness import Run, compare, parse_spec
    from warplint.findings import Finding
    from warplint.ir import Loc
    spec = parse_spec('x;  // expect: WL003 "lanes 0-15 execute", WL004(possible); expect[sm_70]: WL005 "a b"\n')
    assert [(e.rule, e.certainty, e.targets, e.text) for e in spec.expectations] == [
        ("WL003", None, (), "lanes 0-15 execute"), ("WL004", "possible", (), None), ("WL005", None, ("sm_70",), "a b")]

    def run(msg):
        return Run("sm_60", [Finding("WL003", "error", msg, Loc("k.cu", 1, 1)),
                             Finding("WL004", "warning", "m", Loc("k.cu", 1, 1), "possible")], [])
    assert compare(spec, run("lanes 0-15 execute '__shfl_sync'")) == []
    assert compare(spec, run("lanes 16-31 execute")) == [
        "[sm_60] no WL003 message on line 1 contains 'lanes 0-15 execute'"]


# -- README truth --------------------------------------------------------------------------------

def test_readme_install_and_ci_instructions_can_work():
    import re
    from conftest import ROOT
    for name in ("README.md", ".github/workflows/example-warplint.yml"):
        text = open(os.path.join(ROOT, name), encoding="utf-8").read()
        assert not re.search(r"^\s*(- run: |run: )?pip install warplint\b", text, re.M), name  # no release yet
        assert "upload-sarif@v4" in text and "upload-sarif@v3" not in text, name
        assert "actions: read" in text, name
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert "pip install git+https://github.com/warplint/warplint" in readme
    revs = re.findall(r"^\s*rev: (\S+)", readme, re.M)
    assert revs and all(re.fullmatch(r"[0-9a-f]{40}", r) for r in revs)  # a commit: no tag exists yet


def test_fixture_ptx_names_its_sources_relative_to_the_repository():
    """A `.file` with the build machine's absolute path maps nowhere in another checkout (and gave
    absolute SARIF URIs); the mask fixtures name their sources relative to the repository root."""
    import re
    from pathlib import Path
    from conftest import ROOT
    for ptx in Path(ROOT, "fixtures").rglob("*.ptx"):
        for name in re.findall(r'^\s*\.file\s+\d+\s+"([^"]*)"', ptx.read_text(encoding="utf-8"), re.M):
            assert not (os.path.isabs(name) and "/fixtures/" in name), f"{ptx.name}: {name}"


def test_latin1_stdin_is_analysed_with_a_note(project, run_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(("// caf\xe9\n" + LEGACY_CU).encode("latin-1"))))
    status, _, err = run_cli("--no-show-source", "-", "--stdin-filename", "k.cu")
    assert status == 1
    assert "k.cu:1:7: note: file is not valid UTF-8 text: read as Latin-1" in err
