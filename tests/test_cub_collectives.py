"""CUB's block and warp collectives (frontends/cuda/cub.py): the calls stay opaque (CUB's headers
are not read; they may hold barriers), but their outputs get the spread CUB documents: a scan's
output per thread, BlockScan's block aggregate the same in the whole block, a reduction's result
valid in one thread only (per thread)."""
from __future__ import annotations

import pytest

from warplint.frontends.cuda.cxx import desugar
from warplint.frontends.cuda.preprocess import preprocess
from warplint.options import Options
from warplint.pipeline import lint_text, parse_text

HEAD = "template <int N> __global__ void k(int *p, int w) {\n"


def _calls(body: str) -> list[str]:
    module = parse_text(HEAD + body + "}\n", "k.cu", Options())
    return [f"{i.opcode} {i.srcs[0]}" for f in module.functions for i in f.body
            if getattr(i, "op", None) == "call"]


def _rules(body: str) -> list[tuple[str, int]]:
    result = lint_text(HEAD + body + "}\n", "k.cu", Options(targets=["sm_70"]))
    return sorted((f.rule_id, f.loc.line) for f in result.findings)


def test_a_functional_cast_keeps_the_object_it_makes_before_a_member_call():
    toks, _ = preprocess("void f() { S(t).g(a); h = S(t); }", "k.cu", {}, [], None)
    text = " ".join(t.text for t in desugar(toks, {"S"})[0])
    assert text == "void f ( ) { ( ( S ) ( t ) ) . g ( a ) ; h = ( S ) ( t ) ; }"


@pytest.mark.parametrize("body, want", [
    # the object made in place, through a using-alias or a typedef, or a variable of the type
    ("using S = cub::BlockScan<int, N>; int a = p[threadIdx.x], b, c; S(*p).ExclusiveSum(a, b, c);",
     ["call.lane.block cub::BlockScan::ExclusiveSum"]),
    ("typedef cub::BlockScan<int, N> S; int a = 1, b, c; S s(*p); s.InclusiveScan(a, b, op, c);",
     ["call.lane.block cub::BlockScan::InclusiveScan"]),
    # a prefix callback or a scan operator in the last place is no aggregate
    ("using S = cub::BlockScan<int, N>; int a = 1, b; Prefix f; S(*p).ExclusiveSum(a, b, f);",
     ["call.lane cub::BlockScan::ExclusiveSum"]),
    ("using S = cub::BlockScan<int, N>; int a = 1, b, c; S(*p).ExclusiveScan(a, b, c, op);",
     ["call.lane cub::BlockScan::ExclusiveScan"]),
    ("using S = cub::BlockScan<int, N>; auto a = 1, b = 2; auto f = Prefix(0); S(*p).InclusiveSum(a, b, f);",
     ["call Prefix", "call.lane cub::BlockScan::InclusiveSum"]),
    # a warp scan's aggregate spans a logical warp, which may be narrower than the warp
    ("using W = cub::WarpScan<int>; int a = 1, b, c; W(*p).InclusiveSum(a, b, c);",
     ["call.lane.lane cub::WarpScan::InclusiveSum"]),
    # reductions: the result valid in one thread; array outputs are not written
    ("using R = cub::BlockReduce<int, N>; int s = R(*p).Sum(w);", ["call.lane cub::BlockReduce::Sum"]),
    ("using S = cub::BlockScan<int, N>; int a[4], b[4]; S(*p).InclusiveSum(a, b);",
     ["call cub::BlockScan::InclusiveSum"]),
    # not CUB's: a method call as any other
    ("using S = mylib::BlockScan<int, N>; int a = 1, b, c; S(*p).ExclusiveSum(a, b, c);",
     ["call ExclusiveSum"]),
])
def test_cub_collectives_are_calls_with_the_scope_of_each_output(body, want):
    assert _calls(body) == want


LOOP = ("  using S = cub::BlockScan<int, N>;\n"
        "  int mine = p[threadIdx.x], rank = 0, total = 0;\n"
        "  S(*p).ExclusiveSum(mine, rank, total);\n"
        "  for (int j = 0; j < {bound}; ++j)\n"
        "    __syncthreads();\n"
        "  __syncthreads();\n")  # the threads that skip the loop's barriers wait here


def test_block_aggregate_is_the_same_in_every_thread():
    assert _rules(LOOP.replace("{bound}", "total")) == []


def test_scan_output_is_each_threads_own_even_where_it_was_initialised():
    assert _rules(LOOP.replace("{bound}", "rank")) == [("WL009", 6)]


def test_block_reduce_result_is_valid_in_thread_0_only():
    body = ("  using R = cub::BlockReduce<int, N>;\n"
            "  int total = R(*p).Sum(w);\n"
            "  if (total > 4)\n"
            "    __syncthreads();\n"
            "  __syncthreads();\n")
    assert _rules(body) == [("WL009", 5)]


def test_a_collective_still_separates_the_accesses_around_it():
    """The call may hold a barrier (CUB's block collectives do): no race is reported across it."""
    body = ("  __shared__ int s[N];\n"
            "  using R = cub::BlockReduce<int, N>;\n"
            "  s[threadIdx.x] = w;\n"
            "  int total = R(*p).Sum(w);\n"
            "  p[threadIdx.x] = s[N - 1 - threadIdx.x] + total;\n")
    assert _rules(body) == []
