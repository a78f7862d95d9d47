"""In-process memories of texts (warplint/memo.py): a header's tokens and an item's AST are
reused within a run, and nothing a file gives depends on what the process linted before."""
from __future__ import annotations

from warplint.frontends.cuda import frontend, lexer
from warplint.memo import TextMemo
from warplint.options import Options
from warplint.pipeline import lint_file

HEADER = """#pragma once
__device__ float warp_sum(float v) {
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffff, v, off);
  return v;
}
""" + "".join(f"__device__ int helper{i}(int x) {{ return x * {i} + threadIdx.x; }}\n" for i in range(4)) + \
    "// padding so that the memo keeps this text (files of 2,000 characters and more)\n" * 30

UNGUARDED = """__device__ int twice_included(int x) { return x + 1; }
""" + "// padding so that the memo keeps this text\n" * 60

KERNEL = """#include "common.cuh"
{extra}
__global__ void {name}(float *out, int n) {{
  float v = out[threadIdx.x];
  if (threadIdx.x % 32 < 16)
    v = warp_sum(v);
  out[threadIdx.x] = v;
}}
"""


def _clear_memos():
    lexer.TOKENIZED.clear()
    frontend.PARSED.clear()


def _outcome(path):
    r = lint_file(str(path), Options(use_cache=False, show_masks=True))
    return ([(f.rule_id, f.loc, f.message, f.certainty, f.details) for f in r.findings],
            [(d.loc, d.severity, d.message) for d in r.diagnostics], r.masks)


def test_memo_keeps_the_most_recent_texts_within_its_bound():
    memo = TextMemo(max_chars=10)
    memo.put("aaaa", 1, 4)
    memo.put("bbbb", 2, 4)
    assert memo.get("aaaa") == 1  # now the most recent
    memo.put("cccc", 3, 4)  # 12 characters: the least recently used goes
    assert memo.get("bbbb") is None and memo.get("aaaa") == 1 and memo.get("cccc") == 3
    assert memo.chars == 8
    memo.put("x" * 11, 4, 11)  # larger than the bound: not kept
    assert memo.get("x" * 11) is None and memo.chars == 8


def test_tokens_are_fresh_on_every_call_and_carry_the_callers_path():
    text = "int x;\n" * 400
    first = lexer.tokenize(text, "a.cuh")
    again = lexer.tokenize(text, "b.cuh")
    assert lexer.TOKENIZED.get(text) is not None
    assert all(a is not b for a, b in zip(first, again))
    assert [(t.kind, t.text, t.line, t.col, t.bol) for t in first] == \
        [(t.kind, t.text, t.line, t.col, t.bol) for t in again]
    assert {t.path for t in first} == {"a.cuh"} and {t.path for t in again} == {"b.cuh"}


def test_files_sharing_a_header_give_what_each_gives_alone(tmp_path):
    (tmp_path / "common.cuh").write_text(HEADER)
    (tmp_path / "twice.cuh").write_text(UNGUARDED)
    files = []
    for i, extra in enumerate(["", '#include "twice.cuh"\n#include "twice.cuh"', "// other"]):
        f = tmp_path / f"k{i}.cu"
        f.write_text(KERNEL.format(extra=extra, name=f"k{i}"))
        files.append(f)
    alone = []
    for f in files:
        _clear_memos()
        alone.append(_outcome(f))
    _clear_memos()
    in_one_run = [_outcome(f) for f in files] + [_outcome(f) for f in reversed(files)][::-1]
    assert lexer.TOKENIZED.get(HEADER) is not None and lexer.TOKENIZED.get(UNGUARDED) is not None
    assert frontend.PARSED.entries  # the memories were used
    assert in_one_run == alone + alone
    assert [rule for rule, *_ in alone[0][0]] == ["WL002", "WL004"]  # the helper's shuffle, lanes 0-15 only
