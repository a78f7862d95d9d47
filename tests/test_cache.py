"""The content-hash cache: a warm run reuses results; a change in content, options or any file
the result depends on misses; entries carry no paths and a malformed entry is a miss."""
import json
import os

import pytest
from conftest import BUGGY_PTX, CLEAN_PTX

from warplint import cache
from warplint.pipeline import lint_file
from warplint.findings import Edit, Finding, Fix, Step
from warplint.ir import Diagnostic, Loc
from warplint.options import Options


def test_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path / "c"))
    f = Finding("WL003", "error", "m", Loc("a.ptx", 3, 4), "possible", ["d"], [Step(Loc("a.ptx", 1), "s")], [],
                Fix("x", [Edit("a.ptx", 3, 4, 3, 9, "y")]), ("sm_70",), "k")
    k = cache.key(b"text", Options())
    cache.store(k, "a.ptx", [f], [Diagnostic(Loc("a.ptx", 1), "note", "n")], {})
    findings, diags, _ = cache.load(k, "a.ptx")
    assert findings == [f] and diags[0].message == "n"
    assert cache.key(b"text2", Options()) != k
    assert cache.key(b"text", Options(targets=["sm_60"])) != k
    # the results are attached to the path being linted, whatever it was called when stored
    findings, diags, _ = cache.load(k, "other/b.ptx")
    assert {findings[0].loc.path, findings[0].flow[0].loc.path, findings[0].fix.edits[0].path,
            diags[0].loc.path} == {"other/b.ptx"}
    assert "a.ptx" not in (tmp_path / "c" / f"{k}.json").read_text()


def test_warm_run_uses_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path / "c"))
    src = tmp_path / "k.ptx"
    src.write_text(".version 7.0\n.target sm_80\n.address_size 64\n")
    opts = Options(use_cache=True)
    lint_file(str(src), opts)
    assert len(list((tmp_path / "c").glob("*.json"))) == 1
    calls = []
    monkeypatch.setattr("warplint.pipeline.lint_text", lambda *a, **k: calls.append(a))
    lint_file(str(src), opts)
    assert calls == []


# -- item 3: cached results carry no paths ------------------------------------------------------

def test_fix_from_another_directory_fixes_the_linted_file(project, run_cli, monkeypatch):
    p = project.write("sub/k.ptx", BUGGY_PTX)
    run_cli("sub/k.ptx")  # warms the cache
    monkeypatch.chdir(project.root / "sub")
    status, out, err = run_cli("--fix", "k.ptx")
    assert p.read_text() == CLEAN_PTX
    assert not (project.root / "sub" / "sub").exists()
    status, out, err = run_cli("k.ptx")
    assert "sub/k.ptx" not in out + err


HOSTILE_ENTRIES = [
    b"", b"not json", b"[]", b'{"format": 2}', b"[" * 100000 + b"]" * 100000,
    json.dumps({"format": 2, "deps": {}, "where": None, "findings": [{"rule_id": 1}], "diagnostics": []}).encode(),
    json.dumps({"format": 2, "deps": {}, "where": None, "findings": [],
                "diagnostics": [[[None, "one", 1, None, None], "error", "m"]]}).encode(),
    json.dumps({"format": 2, "deps": {}, "where": None, "findings": [],
                "diagnostics": [[[None, 10 ** 30, 1, None, None], "fatal", "m"]]}).encode(),
    json.dumps({"format": 2, "deps": {"/etc/passwd": 1}, "where": None, "findings": [],
                "diagnostics": []}).encode(),
    json.dumps({"format": 2, "deps": {}, "where": None, "findings": [{
        "rule_id": "WL001", "severity": "warning", "message": "m", "loc": [None, 1, 1, None, None],
        "certainty": "definite", "details": [], "flow": [], "related": [], "targets": [], "function": "k",
        "suppressed": False, "fix": ["x", [[None, True, 1, 1, 2, "y"]]]}], "diagnostics": []}).encode(),
]


@pytest.mark.parametrize("entry", HOSTILE_ENTRIES, ids=range(len(HOSTILE_ENTRIES)))
def test_malformed_entry_is_a_miss(project, run_cli, entry):
    p = project.write("k.ptx", BUGGY_PTX)
    k = cache.key(BUGGY_PTX.encode(), Options(use_cache=True))
    path = cache.cache_dir() / f"{k}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(entry)
    r = lint_file(str(p), Options(use_cache=True))
    assert [f.rule_id for f in r.findings] == ["WL001"] and not r.diagnostics


def test_fifo_or_directory_as_entry_is_a_miss(project):
    p = project.write("k.ptx", BUGGY_PTX)
    k = cache.key(BUGGY_PTX.encode(), Options(use_cache=True))
    path = cache.cache_dir() / f"{k}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)  # opening it for reading would block
    assert [f.rule_id for f in lint_file(str(p), Options(use_cache=True)).findings] == ["WL001"]
    os.unlink(path)
    path.mkdir()
    assert [f.rule_id for f in lint_file(str(p), Options(use_cache=True)).findings] == ["WL001"]


def test_cached_fix_cannot_edit_another_file(project, run_cli):
    p = project.write("k.ptx", BUGGY_PTX)
    victim = project.write("victim.cu", "int important;\n")
    run_cli("k.ptx")
    k = cache.key(BUGGY_PTX.encode(), Options(use_cache=True))
    path = cache.cache_dir() / f"{k}.json"
    entry = json.loads(path.read_text())
    entry["findings"][0]["fix"][1][0][0] = str(victim)  # a hostile entry's edit points elsewhere
    entry["findings"][0]["fix"][1][0][1:6] = [1, 1, 1, 5, ""]
    path.write_text(json.dumps(entry))
    status, out, err = run_cli("--fix", "k.ptx")
    assert victim.read_text() == "int important;\n"  # the entry is a miss: k.ptx analysed afresh
    assert p.read_text() == CLEAN_PTX


# -- item 6: results depend on every file the front ends looked at ------------------------------

INCLUDE_FORMS = ['#include "h.cuh"', '# include "h.cuh"', '#include  "h.cuh"', '#include\t"h.cuh"',
                 '#define HDR "h.cuh"\n#include HDR', '#include \\\n"h.cuh"', '#include /* c */ "h.cuh"']
BALLOT = "#define BODY d[threadIdx.x] = __ballot(1);\n"
CLEAN = "#define BODY d[0] = 1;\n"


@pytest.mark.parametrize("form", INCLUDE_FORMS)
def test_header_edit_is_not_served_stale(project, run_cli, form):
    project.write("m.cu", form + "\n__global__ void k(unsigned *d) { BODY }\n")
    h = project.write("h.cuh", BALLOT)
    assert "WL001" in run_cli("m.cu")[1]
    h.write_text(CLEAN)
    assert "WL001" not in run_cli("m.cu")[1]
    h.write_text(BALLOT)
    assert "WL001" in run_cli("m.cu")[1]


def test_header_created_later_is_read(project, run_cli):
    project.write("m.cu", '#include "h.cuh"\n__global__ void k(unsigned *d) { BODY }\n')
    project.write("inc/h.cuh", BALLOT)
    run_cli("-I", "inc", "m.cu")
    project.write("h.cuh", CLEAN)  # found first, next to the file
    assert "WL001" not in run_cli("-I", "inc", "m.cu")[1]


def test_unchanged_header_hits(project, monkeypatch):
    project.write("m.cu", '#include "h.cuh"\n__global__ void k(unsigned *d) { BODY }\n')
    project.write("h.cuh", BALLOT)
    first = lint_file("m.cu", Options(use_cache=True))
    monkeypatch.setattr("warplint.pipeline.lint_text", lambda *a, **k: pytest.fail("not cached"))
    assert lint_file("m.cu", Options(use_cache=True)).findings == first.findings


LOC_PTX = BUGGY_PTX.replace("    vote.any.pred", "    .loc 1 2 3\n    vote.any.pred") + '.file 1 "src.cu"\n'


def test_ptx_loc_source_appearing_is_not_served_stale(project, run_cli):
    project.write("k.ptx", LOC_PTX)
    assert "k.ptx:12:" in run_cli("k.ptx")[1]  # src.cu absent: reported at the PTX line
    project.write("src.cu", "// the source\n__global__ void k() {}\n")
    assert "src.cu:2:3:" in run_cli("k.ptx")[1]


def test_entry_naming_a_file_it_does_not_depend_on_is_a_miss(project):
    p = project.write("k.ptx", BUGGY_PTX)
    opts = Options(use_cache=True)
    lint_file(str(p), opts)
    path = cache.cache_dir() / f"{cache.key(BUGGY_PTX.encode(), opts)}.json"
    entry = json.loads(path.read_text())
    entry["findings"][0]["loc"][0] = "/etc/passwd"  # suppressions and fingerprints would read it
    path.write_text(json.dumps(entry))
    assert lint_file(str(p), opts).findings[0].loc.path == str(p)


def test_temp_files_of_killed_runs_are_removed(project, monkeypatch):
    import subprocess
    import sys
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    d = cache.cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    (d / f".{dead}.abc.tmp").write_text("partial")
    (d / f".{os.getpid()}.live.tmp").write_text("ours, still running")
    monkeypatch.setattr(cache, "_swept", False)
    lint_file(str(project.write("k.ptx", BUGGY_PTX)), Options(use_cache=True))
    assert sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp")) == [f".{os.getpid()}.live.tmp"]


def test_code_fingerprint_lists_the_package_code_and_documents(tmp_path):
    (tmp_path / "sub" / "__pycache__").mkdir(parents=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.lark").write_text("start: x\n")
    (tmp_path / "sub" / "c.md").write_text("doc\n")
    (tmp_path / "sub" / "__pycache__" / "b.py").write_text("")
    (tmp_path / "data.json").write_text("{}")
    listed = cache._package_files(str(tmp_path))
    assert sorted(x.split(":")[0] for x in listed) == ["a.py", os.path.join("sub", "b.lark"), os.path.join("sub", "c.md")]
    (tmp_path / "a.py").write_text("x = 10\n")  # an edit changes the size: another key
    assert sorted(cache._package_files(str(tmp_path))) != sorted(listed)
