"""The warplint command: arguments, exit status, formats, files, errors."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import BUGGY_PTX, CLEAN_PTX, DIVERGENT_PTX, ROOT, cli_env

from warplint import __version__


def test_version(run_cli):
    status, out, _ = run_cli("--version")
    assert status == 0 and out.strip() == f"warplint {__version__}"


def test_help(run_cli):
    status, out, _ = run_cli("--help")
    assert status == 0 and "--fail-on" in out and "--baseline" in out


def test_version_starts_fast_without_heavy_imports():
    code = ("import sys; from warplint.cli import main; main(['--version']); "
            "print(sorted(m for m in ('networkx', 'lark', 'pycparser', 'sarif_om', 'jschema_to_python', "
            "'warplint.pipeline', 'warplint.ir', 'concurrent.futures') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_python_dash_m(project):
    project.write("a.ptx", BUGGY_PTX)
    r = subprocess.run([sys.executable, "-m", "warplint", "a.ptx"], capture_output=True, text=True,
                       env=cli_env(), timeout=60)
    assert r.returncode == 1
    assert r.stdout.startswith("a.ptx:11:5: error: ")
    assert "[WL001]" in r.stdout


def test_program_exits_at_once_with_everything_written(project):
    """`warplint.cli.program` skips the interpreter's teardown (os._exit): the output must
    still be complete (a large report through a pipe, and one written with --output) and the
    exit status main's."""
    body = "".join("    vote.any.pred %p2, %p1;\n" for _ in range(3000))
    project.write("many.ptx", BUGGY_PTX.replace("    vote.any.pred %p2, %p1;\n", body))
    r = subprocess.run([sys.executable, "-m", "warplint", "--format", "json", "--no-cache", "many.ptx",
                        "--output", "out.json"], capture_output=True, text=True, env=cli_env(), timeout=120)
    piped = subprocess.run([sys.executable, "-m", "warplint", "--format", "json", "--no-cache", "many.ptx"],
                           capture_output=True, text=True, env=cli_env(), timeout=120)
    assert r.returncode == piped.returncode == 1
    written = json.loads((project.root / "out.json").read_text())
    assert json.loads(piped.stdout) == written and len(written["findings"]) > 1000


def test_program_into_a_closed_pipe_exits_with_error_and_no_traceback(project):
    body = "".join("    vote.any.pred %p2, %p1;\n" for _ in range(3000))
    project.write("many.ptx", BUGGY_PTX.replace("    vote.any.pred %p2, %p1;\n", body))
    p = subprocess.Popen([sys.executable, "-m", "warplint", "--no-cache", "many.ptx"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=cli_env())
    p.stdout.close()  # the reader is gone (`warplint ... | head -0`)
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 2 and "Traceback" not in err


def test_rules_table(run_cli):
    from warplint.catalog import catalog
    status, out, _ = run_cli("rules")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["ID", "SLUG", "SEVERITY"]
    for rid, doc in catalog().items():
        row = next(line for line in lines if line.startswith(rid + " "))
        assert doc.slug in row and doc.severity in row and doc.summary in row


def test_rules_json(run_cli):
    status, out, _ = run_cli("rules", "--format", "json")
    data = json.loads(out)
    assert status == 0 and {"id", "slug", "severity", "summary"} <= set(data[0])


@pytest.mark.parametrize("name", ["WL001", "wl001", "deprecated-non-sync"])
def test_explain(run_cli, name):
    status, out, _ = run_cli("--explain", name)
    assert status == 0
    assert out.startswith("WL001 deprecated-non-sync")
    assert "## " in out


def test_explain_unknown(run_cli):
    status, _, err = run_cli("--explain", "WL777")
    assert status == 2 and "unknown rule 'WL777'" in err


def test_findings_exit_1_clean_exit_0(project, run_cli):
    project.write("bad.ptx", BUGGY_PTX)
    project.write("good.ptx", CLEAN_PTX)
    status, out, err = run_cli("bad.ptx")
    assert status == 1
    assert out.splitlines()[0].startswith("bad.ptx:11:5: error: ")
    assert out.splitlines()[0].endswith("[WL001]")
    assert "  fix: " in out
    status, out, err = run_cli("good.ptx")
    assert status == 0 and out == ""
    assert "0 findings (0 errors, 0 warnings, 0 notes) in 1 file" in err


def test_fail_on(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)  # one WL002 error
    project.write("bad.ptx", BUGGY_PTX.replace(".target sm_70", ".target sm_60"))  # WL001 warning on sm_60
    assert run_cli("bad.ptx")[0] == 1
    assert run_cli("--fail-on", "error", "bad.ptx")[0] == 0
    assert run_cli("--fail-on", "error", "div.ptx")[0] == 1
    assert run_cli("--fail-on", "note", "bad.ptx")[0] == 1


def test_text_order_and_details(project, run_cli):
    project.write("z.ptx", BUGGY_PTX)
    project.write("a/div.ptx", DIVERGENT_PTX)
    status, out, _ = run_cli("--jobs", "1", "z.ptx", "a")
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert heads[0].startswith("a/div.ptx:20:2: error:") and heads[1].startswith("z.ptx:11:5:")
    assert "  active lanes: lanes 0-15" in out
    assert re.search(r"^  at a/div\.ptx:17:2: lanes diverge here", out, re.M)


def test_missing_path_exit_2(project, run_cli):
    project.write("bad.ptx", BUGGY_PTX)
    status, out, err = run_cli("bad.ptx", "nope.ptx")
    assert status == 2
    assert "nope.ptx:1:1: error: no such file or directory" in err
    assert "[WL001]" in out  # the other file is still reported


def test_unparsable_file_exit_2_with_location(project, run_cli):
    project.write("broken.ptx", ".version 6.4\n.target sm_70\n.visible .entry k( {\n")
    status, out, err = run_cli("broken.ptx")
    assert status == 2
    assert re.search(r"^broken\.ptx:\d+:\d+: error: ", err, re.M)
    assert "Traceback" not in err


def test_binary_file_exit_2(project, run_cli):
    project.write("bin.ptx", b"\x00\x01\x02\xff", mode="wb")
    status, _, err = run_cli("bin.ptx")
    assert status == 2 and re.search(r"^bin\.ptx:1:\d+: error: ", err, re.M)


@pytest.mark.parametrize("argv, needle", [
    (["--target", "gfx90a", "a.ptx"], "not a target name"),
    (["--select", "WL777", "a.ptx"], "unknown rule 'WL777'"),
    (["--ignore", "no-such-rule", "a.ptx"], "unknown rule 'no-such-rule'"),
    (["--format", "xml", "a.ptx"], "invalid choice"),
    (["--block-dim", "0", "a.ptx"], "--block-dim"),
    ([], "no paths given"),
])
def test_usage_errors(project, run_cli, argv, needle):
    project.write("a.ptx", BUGGY_PTX)
    status, _, err = run_cli(*argv)
    assert status == 2 and needle in err


def test_internal_error_in_analysis_is_a_diagnostic(project, run_cli, monkeypatch):
    import warplint.pipeline
    project.write("a.ptx", BUGGY_PTX)

    def boom(path, options=None):
        raise ZeroDivisionError("simulated bug")
    monkeypatch.setattr(warplint.pipeline, "lint_file", boom)
    status, _, err = run_cli("a.ptx")
    assert status == 2
    assert "a.ptx:1:1: error: internal error while analysing: ZeroDivisionError: simulated bug" in err
    assert "Traceback" not in err


def test_internal_error_at_top_level(project, run_cli, monkeypatch):
    import warplint.pipeline
    project.write("a.ptx", BUGGY_PTX)

    def boom(*a, **k):
        raise RuntimeError("simulated")
    monkeypatch.setattr(warplint.pipeline, "lint_paths", boom)
    status, _, err = run_cli("a.ptx")
    assert status == 2 and err.startswith("warplint: internal error: RuntimeError: simulated")


def test_select_ignore(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    assert run_cli("div.ptx")[0] == 1
    assert run_cli("--ignore", "WL002", "div.ptx")[0] == 0
    assert run_cli("--ignore", "pre-volta-mask-mismatch", "div.ptx")[0] == 0
    assert run_cli("--select", "WL001", "div.ptx")[0] == 0
    assert run_cli("--select", "WL00", "div.ptx")[0] == 1
    assert run_cli("--select", "WL001,WL002", "div.ptx")[0] == 1


def test_target_option(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)  # WL002 is a pre-Volta rule
    assert run_cli("--select", "WL002", "--target", "sm_80", "div.ptx")[0] == 0
    status, out, _ = run_cli("--format", "json", "--target", "sm_60,sm_61", "--target", "sm_80", "div.ptx")
    assert status == 1
    fs = json.loads(out)["findings"]
    assert {t for f in fs if f["rule_id"] == "WL002" for t in f["targets"]} == {"sm_60", "sm_61"}


def test_json_format(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    status, out, err = run_cli("--format", "json", "div.ptx")
    data = json.loads(out)
    assert status == 1 and data["version"] == 1
    f = data["findings"][0]
    assert set(f) >= {"rule_id", "slug", "severity", "certainty", "message", "path", "line", "column",
                      "end_line", "end_column", "details", "targets", "function", "flow", "fix", "suppressed"}
    assert (f["rule_id"], f["slug"], f["path"], f["line"], f["column"]) == \
        ("WL002", "pre-volta-mask-mismatch", "div.ptx", 20, 2)
    assert f["flow"][0] == {"path": "div.ptx", "line": 17, "column": 2, "message": f["flow"][0]["message"]}
    assert data["diagnostics"] == []


def test_output_file_is_atomic(project, run_cli, monkeypatch):
    project.write("a.ptx", BUGGY_PTX)
    status, out, err = run_cli("--format", "sarif", "--output", "out/report.sarif", "a.ptx")
    assert status == 2 and "cannot write" in err  # directory does not exist: clear error, no traceback
    os.mkdir("out")
    status, out, err = run_cli("--format", "sarif", "--output", "out/report.sarif", "a.ptx")
    assert status == 1 and out == ""
    assert json.loads(open("out/report.sarif").read())["runs"][0]["results"]
    # a failure while writing leaves the previous report intact and no temp file behind
    before = open("out/report.sarif").read()
    import warplint.fixer

    def broken_write(fd, data):
        os.write(fd, data[:10])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(warplint.fixer, "_write", broken_write)
    status, out, err = run_cli("--format", "sarif", "--output", "out/report.sarif", "a.ptx")
    assert status == 2 and "No space left" in err
    assert open("out/report.sarif").read() == before
    assert os.listdir("out") == ["report.sarif"]


def test_github_format(project, run_cli):
    project.write("a.ptx", BUGGY_PTX)
    status, out, _ = run_cli("--format", "github", "a.ptx")
    assert status == 1
    line = out.splitlines()[0]
    assert line.startswith("::error file=a.ptx,line=11,col=5,endLine=11,endColumn=28,title=WL001 deprecated-non-sync::")
    assert "%0A" in line  # detail lines are escaped newlines


def test_parallel_same_as_serial(project, run_cli):
    for i in range(6):
        project.write(f"d/f{i}.ptx", BUGGY_PTX if i % 2 else DIVERGENT_PTX)
    s1 = run_cli("--format", "json", "--no-cache", "--jobs", "1", "d")
    s2 = run_cli("--format", "json", "--no-cache", "--jobs", "3", "d")
    assert s1[0] == s2[0] == 1
    assert s1[1] == s2[1]


def test_single_file_never_starts_a_pool(project, run_cli, monkeypatch):
    import warplint.workers
    project.write("a.ptx", BUGGY_PTX)

    def no_pool(*a, **k):
        raise AssertionError("pool started")
    monkeypatch.setattr(warplint.workers, "run_all", no_pool)
    assert run_cli("--jobs", "8", "a.ptx")[0] == 1


def test_show_masks(project, run_cli):
    project.write("div.ptx", DIVERGENT_PTX)
    status, out, _ = run_cli("--show-masks", "div.ptx")
    assert "kernel low_half_vote:" in out
    assert "active: 0x0000ffff (lanes 0-15)" in out
    assert status == 1


def test_show_masks_unavailable(project, run_cli, monkeypatch):
    project.write("div.ptx", DIVERGENT_PTX)
    monkeypatch.setitem(sys.modules, "warplint.analysis.show", None)
    status, _, err = run_cli("--show-masks", "div.ptx")
    assert status == 2 and "--show-masks is not available" in err


def test_no_possible_and_possible_severity(project, run_cli):
    from conftest import DATA_PTX  # branch on loaded data: the finding is "possible"
    project.write("p.ptx", DATA_PTX)
    status, out, _ = run_cli("--format", "json", "p.ptx")
    fs = json.loads(out)["findings"]
    assert fs and all(f["certainty"] == "possible" for f in fs)
    status, out, _ = run_cli("--format", "json", "--no-possible", "p.ptx")
    assert json.loads(out)["findings"] == [] and status == 0
    status, out, _ = run_cli("--format", "json", "--possible-severity", "note", "p.ptx")
    assert {f["severity"] for f in json.loads(out)["findings"]} == {"note"} and status == 0


def test_color_only_when_asked_or_tty(project, run_cli, monkeypatch):
    project.write("a.ptx", BUGGY_PTX)
    assert "\033[" not in run_cli("a.ptx")[1]
    assert "\033[" in run_cli("--color", "always", "a.ptx")[1]
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in run_cli("a.ptx")[1]


def test_cuda_file(project, run_cli):
    project.write("k.cu", "__global__ void k(float *out)\n{\n    float v = out[threadIdx.x];\n"
                          "    v += __shfl_xor(v, 16);\n    out[threadIdx.x] = v;\n}\n")
    status, out, err = run_cli("--target", "sm_70", "k.cu")
    assert status == 1, err
    assert out.startswith("k.cu:4:") and "[WL001]" in out


def test_defines_reach_the_cuda_front_end(project, run_cli):
    project.write("k.cu", "__global__ void k(float *out)\n{\n    float v = out[threadIdx.x];\n"
                          "#ifdef OLD\n    v += __shfl_xor(v, 16);\n#endif\n    out[threadIdx.x] = v;\n}\n")
    assert run_cli("--target", "sm_70", "k.cu")[0] == 0
    assert run_cli("--target", "sm_70", "-D", "OLD", "k.cu")[0] == 1


def test_bundled_fixtures_have_findings(monkeypatch, run_cli):
    """The README's first command: `warplint fixtures/` exits 1 (the fixtures contain bugs)."""
    monkeypatch.chdir(ROOT)
    status, out, err = run_cli("--no-cache", "fixtures/")
    assert status == 1, err[-2000:]
    assert re.search(r"^fixtures/\S+:\d+:\d+: (error|warning): .* \[WL0\d\d\]$", out, re.M)


def _readme_rule_rows() -> dict[str, str]:
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    return {m[1]: m[0] for m in re.finditer(r"^\| \[(WL\d{3})\]\(rules/[^)]+\) \|.*$", text, re.M)}


def test_readme_rules_table_is_current():
    from warplint.catalog import catalog
    from warplint.cli import rules_markdown
    rows = _readme_rule_rows()
    docs = catalog()
    assert sorted(rows) == sorted(docs), "README rules table out of date: run `warplint rules --format markdown`"
    expected = {line.split("]")[0][3:]: line for line in rules_markdown(docs.values()).splitlines()[2:]}
    for rid, row in rows.items():
        assert row == expected[rid], f"README row for {rid} differs from the catalogue"


def test_random_command_lines_never_raise(tmp_path, monkeypatch):
    """Whatever the arguments, main() returns 0, 1 or 2 and never raises."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from warplint.cli import main
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.ptx").write_text(BUGGY_PTX)
    (tmp_path / "b.ptx").write_text("garbage {{{")
    vocab = ["a.ptx", "b.ptx", "missing.ptx", ".", "--format", "json", "sarif", "github", "text", "--target",
             "sm_60", "sm_x", "--select", "WL001", "WL9", "--ignore", "--fail-on", "note", "error", "-D", "X=1",
             "--jobs", "0", "2", "-1", "--no-possible", "--possible-severity", "--baseline", "--config",
             "--explain", "--show-masks", "--diff", "--block-dim", "32,2", "--", "-", "rules", "", "\x00",
             "-o", "out.json", "--srcroot", "--fix", "--report-unused-suppressions"]

    @settings(max_examples=int(os.environ.get("WARPLINT_FUZZ_EXAMPLES", "40")), deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(vocab), max_size=6))
    def check(argv):
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            status = main(argv)
        assert status in (0, 1, 2), (argv, status)
        assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), (argv, err.getvalue())
    check()


def test_ptx_locations(project, run_cli):
    project.write("src/kernel.cu", "// the kernel's source\n" * 10)
    src = BUGGY_PTX.replace(".address_size 64\n", ".address_size 64\n.file 1 \"src/kernel.cu\"\n").replace(
        "    vote.any.pred", "    .loc 1 7 3\n    vote.any.pred")
    project.write("a.ptx", src)
    status, out, _ = run_cli("a.ptx")
    assert out.startswith("src/kernel.cu:7:3: error:")
    status, out, _ = run_cli("--ptx-locations", "ptx", "a.ptx")
    assert out.startswith("a.ptx:13:5: error:")
    # a .loc naming a file this machine does not have falls back to the PTX line
    project.write("b.ptx", src.replace("src/kernel.cu", "/nowhere/kernel.cu"))
    status, out, _ = run_cli("b.ptx")
    assert out.startswith("b.ptx:13:5: error:")


def test_worker_crash_is_a_diagnostic_not_a_traceback(project, run_cli, monkeypatch):
    """A worker that dies costs only its own file: the files queued behind it are analysed."""
    import warplint.pipeline
    names = [f"f{i:02}.ptx" for i in range(30)]
    for name in names:
        project.write(name, BUGGY_PTX)
    real = warplint.pipeline.lint_file

    def crashing(path, options=None):
        if path.endswith("f03.ptx"):
            os._exit(3)  # a worker dying hard (segfault, OOM kill)
        return real(path, options)
    monkeypatch.setattr(warplint.pipeline, "lint_file", crashing)
    status, out, err = run_cli("--jobs", "2", "--no-cache", *names)
    assert status == 2
    assert "f03.ptx:1:1: error: not analysed: the worker process died (exit status 3)" in err
    assert err.count("not analysed") == 1
    assert all(f"{name}:11:5: error:" in out for name in names if name != "f03.ptx")
    assert "Traceback" not in err
