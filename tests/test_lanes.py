"""The symbolic lane-set domain and the per-lane comparison the rules rely on."""
from warplint.analysis.lanes import (EMPTY, FULL, FULL_SET, LaneSet, Literals, compare, definite_bits,
                                     describe, lane_ranges)


def test_lane_ranges_words():
    assert lane_ranges(0x0000FFFF) == "lanes 0-15"
    assert lane_ranges(FULL) == "all 32 lanes"
    assert lane_ranges(0x00010001) == "lanes 0, 16"
    assert lane_ranges(1 << 5) == "lane 5"
    assert lane_ranges(0) == "no lanes"


def test_branch_halves_reconverge():
    lits = Literals()
    p = lits.get("p", "lane", "lane", "x > 0")
    then = FULL_SET.and_(LaneSet.lit(p))
    other = FULL_SET.and_(LaneSet.lit(-p))
    assert then.or_(other) == FULL_SET
    assert LaneSet.lit(p).not_() == LaneSet.lit(-p)
    assert LaneSet.const(0xFF).not_() == LaneSet.const(FULL & ~0xFF)
    assert LaneSet.const(0xF0).and_(LaneSet.const(0x3C)) == LaneSet.const(0x30)
    assert LaneSet.const(0).is_empty() and EMPTY.is_empty()


def test_ballot_mask_equals_branch_mask():
    lits = Literals()
    p = lits.get("p", "lane", "lane", "i < n")
    active = FULL_SET.and_(LaneSet.lit(p))
    member = LaneSet.lit(p)  # __ballot_sync(full, p) as a lane set
    cmp = compare(active, member, lits)
    assert cmp.only_active_possible == 0 and cmp.only_member_possible == 0


def test_data_dependent_subset_is_possible_not_definite():
    lits = Literals()
    p = lits.get("p", "lane", "lane", "x > 0")
    cmp = compare(LaneSet.lit(p), FULL_SET, lits)
    assert cmp.only_member_possible == FULL and cmp.only_member_definite == 0


def test_uniform_condition_keeps_whole_warp():
    lits = Literals()
    u = lits.get("u", "uniform", "block", "n > 4")
    cmp = compare(LaneSet.lit(u), FULL_SET, lits)
    assert cmp.only_member_possible == 0
    assert definite_bits(LaneSet.lit(u), lits) == FULL


def test_remembered_comparison_is_for_its_own_literal_table():
    """The same cube sets over two literal tables: literal 1 is per-lane in one, uniform in the
    other, so the comparisons differ (compare remembers its answers per table)."""
    lane_lits, uniform_lits = Literals(), Literals()
    p = lane_lits.get("c", "lane", "lane", "x > 0")
    assert uniform_lits.get("c", "uniform", "block", "n > 4") == p
    first = compare(LaneSet.lit(p), FULL_SET, lane_lits)
    assert compare(LaneSet.lit(p), FULL_SET, uniform_lits).only_member_possible == 0
    assert compare(LaneSet.lit(p), FULL_SET, lane_lits) == first and first.only_member_possible == FULL


def test_warp_case_masks():
    lits = Literals()
    w0 = lits.get("w0", "uniform", "warp", "warp 0")
    w1 = lits.get("w1", "uniform", "warp", "warp 1")
    # threadIdx.x < 48: warp 0 all lanes, warp 1 lanes 0-15
    active = LaneSet.lit(w0).or_(LaneSet.lit(w1, 0xFFFF))
    cmp = compare(active, FULL_SET, lits)
    assert cmp.only_member_possible == 0xFFFF0000 and cmp.only_member_definite == 0
    assert "lanes 0-15" in describe(active, lits)
