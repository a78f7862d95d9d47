"""Stores and loads through pointers into a thread's own variables (analysis/local_objects.py)."""
from __future__ import annotations

import pytest

from warplint.options import Options
from warplint.pipeline import lint_file

PAIR_LOOP = """
struct Pair { int first; int second; };
__global__ void drain(const int *flags, int *counts, int first, int second) {
  int lane = threadIdx.x % 32;
  Pair r;
  r.first = first;
  r.second = second;
  int *words = reinterpret_cast<int *>(&r);
  words[INDEX] = __shfl_sync(0xffffffffu, second, 0) + 1;
  for (int row = r.first; row < r.second; ++row) {
    unsigned set = __ballot_sync(0xffffffffu, flags[row * 32 + lane] != 0);
    if (lane == 0) counts[row] = __popc(set);
  }
  __syncwarp();
}
"""


def _rules(tmp_path, source: str) -> list:
    path = tmp_path / "k.cu"
    path.write_text(source)
    return sorted((f.rule_id, f.loc.line) for f in lint_file(str(path), Options(targets=["sm_80"])).findings)


def test_a_store_at_an_offset_every_lane_shares_keeps_the_variable_uniform(tmp_path):
    assert _rules(tmp_path, PAIR_LOOP.replace("INDEX", "1")) == []


def test_a_store_at_a_lane_dependent_offset_makes_the_variable_differ_between_lanes(tmp_path):
    assert _rules(tmp_path, PAIR_LOOP.replace("INDEX", "lane % 2")) == [("WL004", 11)]


def test_a_load_through_the_pointer_reads_what_was_stored(tmp_path):
    source = PAIR_LOOP.replace("int *words", "volatile int *words").replace(
        "for (int row = r.first; row < r.second;", "for (int row = words[0]; row < words[1];")
    assert _rules(tmp_path, source.replace("INDEX", "1")) == []
    assert _rules(tmp_path, source.replace("INDEX", "lane % 2")) == [("WL004", 11)]


@pytest.mark.parametrize("call", ["fill(words);", "fill(&end);"])
def test_a_variable_whose_pointer_is_passed_on_is_not_tracked(tmp_path, call):
    """What a call does through the pointer is unknown: the variable stays per-lane (lightseq's
    decompose_5dim(..., &batch_id, ...) from a header not read: the index stays per-lane)."""
    source = """
__device__ void fill(int *p);
__global__ void drain(const int *flags, int *counts) {
  int lane = threadIdx.x % 32;
  int end;
  int *words = &end;
  fill(words);
  for (int row = 0; row < end; ++row) {
    unsigned set = __ballot_sync(0xffffffffu, flags[row * 32 + lane] != 0);
    if (lane == 0) counts[row] = __popc(set);
  }
  __syncwarp();
}
"""
    assert _rules(tmp_path, source.replace("fill(words);", call)) == [("WL004", 9)]
