"""The hazard search's shortcuts (issue 17) find what the long way finds: a block where nothing
happens passes its one incoming state on (not a copy), and what one search asks of a pair of
accesses (whether they are compared, whether they conflict) is answered once."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_memory_pairs import RACE_FIXTURES, _hazards

from warplint.analysis import memory
from warplint.options import Options
from warplint.pipeline import lint_text


def _found(path: Path) -> list[tuple]:
    return _hazards(path, notes=True)


def _long_way(monkeypatch) -> None:
    monkeypatch.setattr(memory, "_passes_through", lambda ins_b, run: False)
    monkeypatch.setattr(memory, "_walked_with", lambda last, seen: False)

    def partners(self, acc):
        return frozenset(id(p.instr) for p in self.by_instr.values()
                         if memory._base(p) == memory._base(acc) and memory._may_race(p, acc)
                         and not memory._exclusive(p, acc, self.lits, self.in_loop))
    monkeypatch.setattr(memory._Pairs, "partners", partners)
    monkeypatch.setattr(memory._Pairs, "conflict",
                        lambda self, a, b: memory._ordered_conflict(a, b, self.lits, self.caller_pointers))


@pytest.mark.parametrize("path", RACE_FIXTURES, ids=lambda p: p.name)
def test_shortcuts_find_what_the_long_way_finds(path, monkeypatch):
    assert RACE_FIXTURES
    short = _found(path)
    _long_way(monkeypatch)
    assert short == _found(path)


def test_shortcuts_past_the_work_bound(monkeypatch):
    """A function past MAX_PENDING accesses, with branches and a loop: the same races and note."""
    body = "".join(f"  if (in[{k}] > 0) out[threadIdx.x + {32 * k}] = s[threadIdx.x ^ {k % 3 + 1}];\n"
                   f"  s[threadIdx.x] = in[{k}];\n" for k in range(memory.MAX_PENDING // 2 + 4))
    src = ("__global__ void k(float *out, const float *in, int n) {\n  __shared__ float s[64];\n"
           "  for (int i = 0; i < n; i++) {\n" + body + "  }\n}\n")
    path = Path("k.cu")
    result = lint_text(src, str(path), Options(targets=["sm_70"]))
    assert any(memory.PENDING_NOTE in d.message for d in result.diagnostics)

    def found():
        r = lint_text(src, str(path), Options(targets=["sm_70"]))
        return [(f.rule_id, f.loc.line, f.message, f.certainty) for f in r.findings], \
            [d.message for d in r.diagnostics]
    short = found()
    _long_way(monkeypatch)
    assert short == found()
    assert short[0]


@pytest.mark.parametrize("path", RACE_FIXTURES, ids=lambda p: p.name)
def test_partners_are_the_pairs_that_may_race_and_are_not_exclusive(path):
    """`_Pairs.partners` (from indexes by base, kind and space, and by required literal) against
    `_may_race` and `_exclusive` asked of every pair."""
    result = lint_text(path.read_text(), str(path), Options(targets=["sm_70"]))
    for fa in result.analyses:
        accesses = [a for a in fa.accesses if a.instr.op not in ("atom", "red")]
        in_loop = set().union(*fa.cfg.loops.values())
        pairs = memory._Pairs(fa, accesses, in_loop)
        for acc in accesses:
            expected = {id(p.instr) for p in accesses if memory._may_race(p, acc)
                        and not memory._exclusive(p, acc, fa.lits, in_loop)}
            assert pairs.partners(acc) == expected
