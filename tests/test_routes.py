"""The same kernel linted as CUDA-C source and through nvcc's PTX (`--via-nvcc`) gives the same
findings at the same .cu lines (columns may differ: nvcc's .loc names the statement)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from warplint.pipeline import lint_file
from warplint.options import Options

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cuda"
# legacy intrinsics (__any, __shfl, ...) do not compile for sm_80 at all
LEGACY = ("wl001_",)
# Known disagreement classes (issue 13's differential test), each a strict xfail so a fix shows:
NO_CODE = ("nvcc emits no code for a template nothing instantiates or a device function nothing "
           "calls; the direct route analyses it for any instantiation or caller")
ROW_EXIT = ("PTX route: nvcc turns the row test of 8-lane groups into an early exit, and the group "
            "shuffle after it is judged as reading exited lanes (WL005): the lanes of a group exit "
            "together, which the exited-lane rules do not know yet")
ROTATED_BOUND = ("PTX route: nvcc rotates the lane-strided loop (a test before it, one at its bottom on "
                 "the next index), so the per-lane bound test is on another value than the per-warp "
                 "test `i < n rounded down to 32` in the body, and that the warp test implies it "
                 "(analysis/bounds.py) is not seen: the tail warp's lanes are taken as missing")
MERGED_RETURN = ("PTX route: nvcc sends an early `return` to the kernel's one `ret` at its end, so the "
                 "lanes that return are inactive lanes that rejoin there, not exited ones, and the "
                 "full-mask shuffles of the lanes left are not judged as reading exited lanes (the "
                 "direct route reports them, WL005; the same for the shuffles unrolled)")
DISAGREE = {
    "cxx_class_template_static.cu": NO_CODE,
    "cxx_template_id.cu": NO_CODE,
    "cxx_type_alias.cu": NO_CODE,
    "cxx_parameter_pack.cu": NO_CODE,
    "wl007_helper_alone_tail_race.cu": NO_CODE,
    "wl007_helper_lane_indexed_race.cu": NO_CODE,
    "wl007_helper_pointer_passed_on_race.cu": NO_CODE,
    "wl007_member_shared_slot.cu": NO_CODE,
    "wl009_helper_alone_thread_condition.cu": NO_CODE,
    "wl009_helper_alone_acquire_flag.cu": NO_CODE,
    "wl009_offset_bound_warp_step.cu": NO_CODE,
    "wl004_static_assert_weaker_facts.cu": NO_CODE,
    "cxx_cg_this_group_sync.cu": (
        "PTX route: nvcc lowers a cooperative-groups sync to `barrier.sync 0` without .aligned, "
        "which any other `barrier.sync 0` may meet, so a grid.sync() under a data condition is "
        "taken as met by the block sync after it; that every thread must call grid.sync() is "
        "not visible in PTX"),
    "wl009_first_iteration_lane_threshold.cu": (
        "both routes report the barrier after the lane-dependent break; nvcc rotates the loop "
        "and the PTX route also reports the barrier at line 20, which in later iterations is "
        "reached only by the threads still in the loop (true, a second symptom of one bug)"),
    "uniformity_row_groups_clean.cu": ROW_EXIT,
    "uniformity_grid_stride_aligned_chunk_clean.cu": ROTATED_BOUND,
    "uniformity_broadcast_countdown_in_stride_loop_clean.cu": ROTATED_BOUND,
    "uniformity_whole_warp_chunks_in_token_loop_clean.cu": ROTATED_BOUND,
    "wl002_exited_lanes_before_reduction.cu": MERGED_RETURN,
    "wl009_cub_block_reduce_then_exit.cu": (
        "PTX route: the CUB collective is inlined as plain barriers and warp shuffles, and threads "
        "that exit release a plain barrier; that every thread of the block must call the "
        "collective is not visible in PTX (the direct route reports the call, WL009)"),
    "wl009_cub_block_scan_part_of_warp.cu": (
        "PTX route: the collective's inlined full-mask warp shuffles are also reported (WL004, a "
        "second symptom: the lanes that skip the call skip them); the direct route sees the call"),
    "wl005_return_then_loop_reduce.cu": MERGED_RETURN,
    "uniformity_uniform_choice_of_lane_offsets_clean.cu": (
        "PTX route: nvcc turns the if/else into a selp of two per-lane values on a block-uniform "
        "predicate, which the evaluator takes as a per-lane unknown (the direct route joins the "
        "two paths, a block-wide choice, and keeps lane * 4 plus a multiple of 128)"),
    "wl009_skip_then_spin.cu": (
        "PTX route extra WL007 between warp 0's flag write and the other warps' spin reads"),
}


def _cases():
    for path in sorted(FIXTURES.glob("*.cu")):
        if path.name.startswith(LEGACY):
            continue
        marks = [pytest.mark.xfail(reason=DISAGREE[path.name], strict=True)] if path.name in DISAGREE else []
        yield pytest.param(path, id=path.name, marks=marks)


@pytest.mark.parametrize("path", list(_cases()))
def test_same_findings_through_both_routes(path: Path):
    direct = lint_file(str(path), Options(targets=["sm_80"]))
    via = lint_file(str(path), Options(targets=["sm_80"], via_nvcc=True))
    errors = [d for d in via.diagnostics if d.severity == "error"]
    if errors:
        pytest.skip(f"nvcc rejects this fixture for sm_80: {errors[0].message[:120]}")
    a = sorted({(f.rule_id, f.loc.line) for f in direct.findings})
    b = sorted({(f.rule_id, f.loc.line) for f in via.findings})
    assert a == b
    assert all(Path(f.loc.path).name == path.name for f in via.findings)
