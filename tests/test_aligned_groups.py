"""Aligned groups of lanes (issue 12, class 1): a per-lane value compared with a uniform one,
both with unknown parts that are multiples of a power of two g, is one warp-uniform condition
per aligned group of g lanes."""
from warplint.analysis.lanes import FULL, LaneSet, Literals, describe, together
from warplint.analysis.transfer import Evaluator, _lane_groups
from warplint.analysis.values import LANES, ZEROS, Aff, Terms


def _evaluator():
    return Evaluator(Terms(), Literals(), kernel=True, params=set())


def test_lane_groups_blocks_of_g_offsets():
    # B + lane < C + 0 with B, C multiples of 4: one truth value per 4 aligned lanes
    known, groups = _lane_groups(LANES, 0, 4, "lt")
    assert known == 0 and sorted(groups.values()) == sorted(0xF << (4 * k) for k in range(8))
    # `<=` shifts the blocks by one: offsets 1..4 share a truth value, 0 is the previous block
    _, groups = _lane_groups(LANES, 0, 4, "le")
    assert groups[1] == 0x1E and groups[-3] == 0x1
    # `==` cannot hold where off - c is not a multiple of g
    known, groups = _lane_groups(LANES, 0, 4, "ne")
    assert known == FULL & ~0x11111111 and sorted(groups) == list(range(0, 32, 4))


def test_counter_against_multiple_of_four_is_uniform_per_group():
    ev = _evaluator()
    idx = Aff(ev.terms.get(("t",), "idx"), LANES, 32, "warp")  # threadIdx.x + k * blockDim.x
    n4 = Aff(ev.terms.get(("n4",), "n4"), ZEROS, 4, "block")  # (n + 3) & ~3
    lanes = ev.compare("lt", idx, n4, 32, True, "idx < n4", None).lanes
    assert len(lanes.lits) == 8
    assert all(ev.lits[x].kind == "uniform" for x in lanes.lits)
    assert together(lanes, 4, 7, ev.lits) and not together(lanes, 3, 4, ev.lits)


def test_bound_not_a_multiple_of_the_group_is_per_lane():
    ev = _evaluator()
    idx = Aff(ev.terms.get(("t",), "idx"), LANES, 32, "warp")
    n = Aff(ev.terms.get(("n",), "n"), ZEROS, 1, "block")
    lanes = ev.compare("lt", idx, n, 32, True, "idx < n", None).lanes
    assert not together(lanes, 4, 5, ev.lits)


def test_and_with_low_bits_cleared_rounds_a_uniform_value():
    ev = _evaluator()
    n = Aff(ev.terms.get(("n",), "n"), ZEROS, 1, "block")
    n4 = ev.arith("and", ev.arith("add", n, Aff(0, (3,) * 32), 32), Aff(0, (~3 & FULL,) * 32), 32)
    assert isinstance(n4, Aff) and n4.uniform and n4.align == 4


def test_together_needs_uniform_conditions():
    lits = Literals()
    p = lits.get("p", "lane", "lane", "x[lane] > 0")
    u = lits.get("u", "uniform", "warp", "w < n")
    assert not together(LaneSet.lit(p, 0xF), 0, 1, lits)  # a per-lane condition: each lane its own
    assert together(LaneSet.lit(u, 0xF), 0, 1, lits)
    assert not together(LaneSet.lit(u, 0x1), 0, 1, lits)


def test_groups_of_two_lanes_intersect_group_by_group():
    # two conditions with one literal per pair of lanes: 16 x 16 cube pairs, 16 of them overlap
    lits = Literals()
    a = LaneSet.union(LaneSet.lit(lits.get(("a", k), "uniform", "warp", "idx < n2"), 3 << 2 * k) for k in range(16))
    b = LaneSet.union(LaneSet.lit(lits.get(("b", k), "uniform", "warp", "half < limit"), 3 << 2 * k) for k in range(16))
    both = a.and_(b)
    assert len(both.cubes) == 16 and all(len(l) == 2 for _, l in both.cubes)
    assert together(both, 6, 7, lits)


def test_one_condition_per_group_reads_once():
    lits = Literals()
    rows = LaneSet.union(LaneSet.lit(lits.get(("row", k), "uniform", "warp", "row < rows"), 0xFF << 8 * k)
                         for k in range(4))
    assert describe(rows, lits) == "the lanes where row < rows (per group of 8 lanes)"
    assert describe(rows.and_bits(0xFFFF), lits) == "lanes 0-15 where row < rows (per group of 8 lanes)"


def test_a_group_of_32_aligned_lanes_is_the_warp():
    ev = _evaluator()
    idx = Aff(ev.terms.get(("t",), "idx"), LANES, 32, "warp")
    n32 = Aff(ev.terms.get(("n32",), "n32"), ZEROS, 64, "block")  # (n + 31) & ~31, or coarser
    lanes = ev.compare("lt", idx, n32, 32, True, "idx < n32", None).lanes
    assert len(lanes.lits) == 1 and lanes.warp_exact(ev.lits) == FULL


def test_the_same_words_on_the_same_lanes_are_no_groups():
    lits = Literals()
    a = LaneSet.lit(lits.get(("i", 1), "uniform", "warp", "idx < n4"), 0xF)
    b = LaneSet.lit(lits.get(("i", 2), "uniform", "warp", "idx < n4"), 0xF)
    assert describe(a.or_(b), lits) == "lanes 0-3 where idx < n4"


def test_thread_index_over_warp_groups():
    # tid = B + lane with B a multiple of 32: tid / 128 (or >> 7) is the same in the whole warp;
    # tid % 128 (or & 127) keeps the lane offsets on a new multiple of 32; tid / 16 does not
    ev = _evaluator()
    tid = Aff(ev.terms.get(("t",), "tid"), LANES, 32, "warp")
    for op, c in (("div", 128), ("shr", 7)):
        assert ev.arith(op, tid, Aff(0, (c,) * 32), 32).uniform
    for op, c in (("rem", 128), ("and", 127)):
        r = ev.arith(op, tid, Aff(0, (c,) * 32), 32)
        assert r.off == LANES and r.align == 32 and ev.arith("div", r, Aff(0, (32,) * 32), 32).uniform
    assert not ev.arith("div", tid, Aff(0, (16,) * 32), 32).uniform


def test_group_values_keep_their_lane_symmetry():
    # a max over aligned groups of 4 (butterfly 2, 1 as `a > b ? a : b`), then a test of it, a
    # 1/0 select and an AND across the groups (4, 8, 16): the same in the whole warp
    from warplint.analysis.values import Unk
    ev = _evaluator()
    x = Unk(ev.terms.get(("x",), "x"))

    def partner(v, m):
        t = ev.terms.get(("bfly", v.term, m), "partner")
        ev.terms.partners[t] = (v.term, m)
        return Unk(t)

    for m in (2, 1):
        p = partner(x, m)
        x = ev.select(x, p, ev.compare("gt", x, p, 32, True, "x > p", None), "", None)
    assert ev.symmetry(x) == 0b1111
    flag = ev.select(Aff(0, (1,) * 32), Aff(0, ZEROS), ev.compare("lt", x, Aff(0, ZEROS), 32, True, "x < 0", None),
                     "", None)
    assert ev.symmetry(flag) == 0b1111
    for m in (4, 8, 16):
        flag = ev.arith("and", flag, partner(flag, m), 32)
    assert flag.uniform
