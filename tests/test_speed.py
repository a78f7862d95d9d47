"""Work the analysis saves (issue 17) without changing what it finds: remembered lane-set
operations, the per-lane-arguments analysis made only for functions with findings, library
frames looked up only for reported call sites."""
from __future__ import annotations

from warplint.analysis import lanes
from warplint.analysis.lanes import STATS, LaneSet, Literals, forget_memos
from warplint.options import Options
from warplint.pipeline import lint_text


def _two_groups(lits: Literals) -> tuple[LaneSet, LaneSet]:
    a, b, c = (lits.get(n, "lane", "lane", n) for n in "abc")
    x = LaneSet.union([LaneSet.lit(a, 0xFFFF), LaneSet.lit(b, 0xFFFF0000)])
    y = LaneSet.union([LaneSet.lit(c, 0x00FF00FF), LaneSet.lit(-a, 0xFF00FF00)])
    return x, y


def test_a_remembered_intersection_is_the_one_computed_afresh():
    forget_memos()
    x, y = _two_groups(Literals())
    first = x.and_(y)
    assert x.and_(y) is first  # the same operands: remembered
    forget_memos()
    assert x.and_(y) == first and x.and_(y).cubes == first.cubes


def test_a_remembered_widening_counts_again():
    """The solver notes approximate results from the widening count: a remembered set that
    was widened must count as widened each time it is used."""
    forget_memos()
    lits = Literals()
    ids = [lits.get(i, "lane", "lane", f"c{i}") for i in range(120)]
    cubes = [(1 << (i % 32), frozenset([ids[i]])) for i in range(lanes.PRODUCT_CAP + 4)]
    counts = []
    for _ in range(2):
        before = STATS["widened"]
        lanes._simplify(list(cubes))
        counts.append(STATS["widened"] - before)
    assert counts[0] == counts[1] > 0


def test_a_remembered_complement_is_the_one_computed_afresh():
    """`not_` is kept by the cubes in their order: a remembered complement lists the cubes that
    computing it afresh lists, in the same order, counts its widenings again, and a complement
    too large to represent stays None."""
    import random
    rng = random.Random(9)
    lits = Literals()
    ids = [lits.get(i, "lane", "lane", f"c{i}") for i in range(40)]
    for _ in range(300):
        s = LaneSet.union([LaneSet.lit(rng.choice((1, -1)) * rng.choice(ids), rng.getrandbits(32) | 1)
                           for _ in range(rng.randrange(1, 7))])
        forget_memos()
        before = STATS["widened"]
        fresh = s._complement()
        fresh_widened = STATS["widened"] - before
        forget_memos()
        first = s.not_()
        before = STATS["widened"]
        again = s.not_()
        assert again is first and STATS["widened"] - before == fresh_widened
        assert (fresh is None and first is None) or tuple(first.cubes) == tuple(fresh.cubes)
    many = LaneSet.union([LaneSet.lit(ids[i], 1 << i) for i in range(30)])
    assert many.not_() is None and many.not_() is None


DEVICE_HELPERS = """
__device__ float quiet(float v, int k) {
  return v * k;
}
__device__ float half_warp_sum(float v, int k) {
  if (threadIdx.x % 32 < 16)
    v += __shfl_down_sync(0xffffffff, v, k);
  return v;
}
"""


def test_per_lane_arguments_are_analysed_only_for_functions_with_findings():
    result = lint_text(DEVICE_HELPERS, "helpers.cu", Options(targets=["sm_70"]))
    by_name = {fa.function.name: fa for fa in result.analyses}
    quiet, summed = by_name["quiet"], by_name["half_warp_sum"]
    assert quiet.has_any_arguments and summed.has_any_arguments
    assert "any_arguments" not in vars(quiet)  # no finding: never needed, never made
    assert "any_arguments" in vars(summed)  # its findings are checked with per-lane arguments too
    assert [f.rule_id for f in result.findings] == ["WL004"]


def test_library_names_are_decoded_only_for_the_labels_asked():
    from warplint.callsite import function_names
    ptx = "".join(f"$L__info_string{i}:\n.b8 " + ",".join(str(b) for b in f"f{i}".encode() + b"\0") + "\n"
                  for i in range(3))
    assert function_names(ptx) == {f"$L__info_string{i}": f"f{i}" for i in range(3)}
    assert function_names(ptx, {"$L__info_string1"}) == {"$L__info_string1": "f1"}


def test_no_pointers_into_variables_without_an_address_taken():
    from warplint.analysis.local_objects import pointers_to_locals
    from warplint.cfg import build_cfg
    from warplint.frontends.ptx import parse_ptx
    ptx = """.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p];
  add.s64 %rd2, %rd1, 4;
  st.global.u32 [%rd2], 1;
  ret;
}
"""
    module = parse_ptx(ptx, "k.ptx")
    assert pointers_to_locals(build_cfg(module.functions[0]), module.state_spaces) == {}
