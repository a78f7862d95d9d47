"""The speed benchmarks' own logic (bench/): the complexity chart without matplotlib, the batch
benchmark's copies."""
from __future__ import annotations

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench(name: str):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "bench", f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.pop(0)


ROWS = {"switch": [{"size": 100, "cpu": 0.3}, {"size": 1000, "cpu": 0.9}],
        "macros": [{"size": 5, "cpu": 0.2}]}


def test_complexity_chart_says_so_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    said = _bench("complexity").chart(ROWS, tmp_path / "c.png")
    assert "matplotlib is not installed" in said and not (tmp_path / "c.png").exists()


def test_complexity_chart_is_a_png_with_matplotlib(tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        return  # the bench extra is not installed here: the test above covers this machine
    path = tmp_path / "out" / "c.png"
    assert _bench("complexity").chart(ROWS, path) == f"chart: {path}"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_batch_copies_are_the_same_text_or_each_its_own(tmp_path):
    batch = _bench("bench_batch")
    (tmp_path / "same").mkdir()
    (tmp_path / "own").mkdir()
    same = [open(p).read() for p in batch.write_copies(tmp_path / "same", 3, own_text=False)]
    own = [open(p).read() for p in batch.write_copies(tmp_path / "own", 3, own_text=True)]
    assert len(set(same)) == 1 and len(set(own)) == 3
    assert all(t.count("\n") == same[0].count("\n") >= 300 for t in own)
