"""The fixpoint's shortcuts in `dependence` and `domain` give what the long way gives: the lanes
of an edge kept while its block's lanes and condition are the very same sets, a branch's sides
kept while the lanes taking it are the same, one forward edge's environment taken as it is."""
from __future__ import annotations

from pathlib import Path

import pytest

from warplint.analysis import dependence, domain
from warplint.analysis.lanes import forget_memos
from warplint.options import Options
from warplint.pipeline import analyse, parse_variants

CUDA = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "cuda").glob("*.cu"))
WITH_LOOPS = [p for p in CUDA if "for (" in p.read_text() or "while" in p.read_text()][:40]


def _long_way(monkeypatch) -> None:
    def taking(self, m, p, b):
        c = self.edge_cond.get((p, b))
        return None if m is None or c is None else m.and_(c)

    def guarded_branch(self, ev, b, term, v):
        taken = ev.pred_lanes(v, term.guard[0], term.loc) if v is not None else dependence.FULL_SET
        return self._sides(b, term, taken)

    monkeypatch.setattr(dependence.ControlDependence, "_taking", taking)
    monkeypatch.setattr(dependence.ControlDependence, "_guarded_branch", guarded_branch)
    monkeypatch.setattr(domain.Joins, "environments",
                        lambda self, block, incoming, lanes, lw: self.merge(block, incoming, lw) if incoming else {})


def _facts(path: Path) -> list:
    forget_memos()
    out = []
    for module, _targets in parse_variants(path.read_text(), path.name, Options()):
        for fa in analyse(module, Options()):
            out.append((fa.function.name, sorted(fa.masks.items(), key=repr), sorted(fa.edge_cond.items(), key=repr),
                        [(op.kind, op.block, op.active, op.member) for op in fa.warp_ops],
                        [(bar.block, bar.active) for bar in fa.barriers], fa.notes))
    return out


@pytest.mark.parametrize("path", WITH_LOOPS, ids=lambda p: p.name)
def test_shortcuts_give_the_long_way(path, monkeypatch):
    short = _facts(path)
    _long_way(monkeypatch)
    assert _facts(path) == short
