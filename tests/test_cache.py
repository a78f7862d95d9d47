"""The content-hash cache: a warm run reuses results; a change in content or options misses."""
from warplint import cache
from warplint.engine import lint_file
from warplint.findings import Edit, Finding, Fix, Step
from warplint.ir import Diagnostic, Loc
from warplint.options import Options


def test_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path / "c"))
    f = Finding("WL003", "error", "m", Loc("a.ptx", 3, 4), "possible", ["d"], [Step(Loc("a.ptx", 1), "s")], [],
                Fix("x", [Edit("a.ptx", 3, 4, 3, 9, "y")]), ("sm_70",), "k")
    k = cache.key("a.ptx", b"text", Options())
    cache.store(k, [f], [Diagnostic(Loc("a.ptx", 1), "note", "n")])
    findings, diags = cache.load(k)
    assert findings == [f] and diags[0].message == "n"
    assert cache.key("a.ptx", b"text2", Options()) != k
    assert cache.key("a.ptx", b"text", Options(targets=["sm_60"])) != k


def test_warm_run_uses_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path / "c"))
    src = tmp_path / "k.ptx"
    src.write_text(".version 7.0\n.target sm_80\n.address_size 64\n")
    opts = Options(use_cache=True)
    lint_file(str(src), opts)
    assert len(list((tmp_path / "c").glob("*.json"))) == 1
    calls = []
    monkeypatch.setattr("warplint.engine.lint_text", lambda *a, **k: calls.append(a))
    lint_file(str(src), opts)
    assert calls == []
