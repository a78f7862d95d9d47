"""WL005's search for a valuation where a shuffle's reader runs and its source does not
(`checks.shuffle._can_lack`) is remembered per question: the 32 lanes of a shuffle ask the same
few (issue 17: nccl's low_latency.cu spent 5 of its 8 s there, 1,152 searches for 44 questions).
Remembering changes no finding."""
from __future__ import annotations

from pathlib import Path

import pytest

from warplint.checks import shuffle
from warplint.options import Options
from warplint.pipeline import lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SHUFFLE_FIXTURES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".ptx")
                          and ("WL005" in p.read_text() or "activemask" in p.read_text()))

TAIL = """__global__ void k(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = out[i];
  unsigned m = __activemask();
  v += __shfl_down_sync(m, v, 1);
  out[i] = v;
}
"""


def _findings(text: str, path: str) -> list[tuple]:
    result = lint_text(text, path, Options(targets=["sm_70"]))
    return [(f.rule_id, f.loc.line, f.certainty, f.message) for f in result.findings]


@pytest.mark.parametrize("path", SHUFFLE_FIXTURES, ids=lambda p: p.name)
def test_remembered_answers_are_the_searched_ones(path, monkeypatch):
    assert SHUFFLE_FIXTURES
    remembered = _findings(path.read_text(), str(path))
    monkeypatch.setattr(shuffle, "_can_lack", shuffle._search_lack)
    assert remembered == _findings(path.read_text(), str(path))


def test_lanes_asking_the_same_question_search_once(monkeypatch):
    searches = []
    search = shuffle._search_lack

    def counted(*args):
        searches.append(args[2:4])
        return search(*args)
    monkeypatch.setattr(shuffle, "_search_lack", counted)
    shuffle._LACKS.clear()
    findings = _findings(TAIL, "tail.cu")
    assert [(rule, line) for rule, line, *_ in findings] == [("WL005", 6)]
    assert 0 < len(searches) < 4  # 31 readers, one or two questions (which lane is lower)
