"""`compare` and `definite_bits` decide every valuation of the conditions at once with truth
tables held in ints (issue 17: mmcv's filtered_lrelu.cu spent half its time evaluating
valuations one by one).  They must give what the valuation-by-valuation search gives."""
from __future__ import annotations

import random
from itertools import product

import pytest

from warplint.analysis import lanes
from warplint.analysis.lanes import FULL, Comparison, LaneSet, Literals, compare, definite_bits


def _holds(formula, val) -> bool:
    return any(all(val[abs(x)] == (x > 0) for x in cube) for cube in formula)


def _reference_compare(active: LaneSet, member: LaneSet, lits) -> Comparison:
    ex = lanes._exec_formula(active, lits)
    masks = [0, 0, 0, 0]
    for lane in range(32):
        fa, fm = active.lane_formula(lane), member.lane_formula(lane)
        vars_ = sorted({abs(x) for f in (fa, fm, ex) for c in f for x in c})
        some_a = some_m = seen = False
        every_a = every_m = True
        for values in product((False, True), repeat=len(vars_)):
            val = dict(zip(vars_, values))
            if not _holds(ex, val):
                continue
            seen = True
            a, m = _holds(fa, val), _holds(fm, val)
            some_a |= a and not m
            some_m |= m and not a
            every_a &= a and not m
            every_m &= m and not a
        for k, hit in enumerate((some_a, seen and every_a, some_m, seen and every_m)):
            if hit:
                masks[k] |= 1 << lane
    return Comparison(*masks)


def _reference_definite(s: LaneSet, lits) -> int:
    ex = lanes._exec_formula(s, lits)
    out = 0
    for lane in range(32):
        f = s.lane_formula(lane)
        vars_ = sorted({abs(x) for g in (f, ex) for c in g for x in c})
        if f and all(_holds(f, dict(zip(vars_, v))) for v in product((False, True), repeat=len(vars_))
                     if _holds(ex, dict(zip(vars_, v)))):
            out |= 1 << lane
    return out


def _random_set(rng: random.Random, ids: list[int]) -> LaneSet:
    cubes = []
    for _ in range(rng.randint(0, 4)):
        bits = rng.choice([FULL, 0xFFFF, 0xFFFF0000, 0x0F0F0F0F, rng.getrandbits(32)])
        cube = frozenset(rng.choice([x, -x]) for x in rng.sample(ids, rng.randint(0, 3)))
        cubes.append((bits, cube))
    return LaneSet.union([LaneSet([c]) for c in cubes]) if cubes else LaneSet()


@pytest.mark.parametrize("seed", range(40))
def test_tables_agree_with_every_valuation(seed):
    rng = random.Random(seed)
    lits = Literals()
    ids = [lits.get(i, rng.choice(["lane", "uniform"]), "lane", f"c{i}") for i in range(5)]
    active, member = _random_set(rng, ids), _random_set(rng, ids)
    if active.is_empty():
        active = LaneSet([(FULL, frozenset([ids[0]]))])
    for with_lits in (None, lits):
        assert compare(active, member, with_lits) == _reference_compare(active, member, with_lits)
        assert definite_bits(active, with_lits) == _reference_definite(active, with_lits)


def test_a_condition_table_is_true_where_its_bit_is_set():
    for n in range(4):
        for k in range(n):
            table = lanes._var_table(k, n)
            assert [table >> v & 1 for v in range(1 << n)] == [v >> k & 1 for v in range(1 << n)]
