"""WL007's hazard search walks a function with no loop once (issue 17): its blocks' predecessors
all come before them, so a second pass would only confirm the first."""
from __future__ import annotations

import warplint.analysis.memory as memory
from warplint.options import Options
from warplint.pipeline import lint_text

NO_LOOP = """\
__global__ void k(int *out, int flag) {
  __shared__ int s[32];
  unsigned lane = threadIdx.x % 32;
  if (flag) s[lane] = out[threadIdx.x]; else s[lane] = 1;
  out[threadIdx.x] = s[lane ^ 1]; // expect: WL007
}
"""


def _walks(monkeypatch) -> list[int]:
    blocks = []
    real = memory._incoming

    def counting(fa, b, *args):
        blocks.append(b)
        return real(fa, b, *args)
    monkeypatch.setattr(memory, "_incoming", counting)
    return blocks


def test_a_function_without_loops_is_walked_once(monkeypatch):
    blocks = _walks(monkeypatch)
    r = lint_text(NO_LOOP, "k.cu", Options(targets=["sm_70"]))
    assert [f.rule_id for f in r.findings] == ["WL007"]
    assert blocks and len(blocks) == len(set(blocks))


def test_a_loop_is_walked_until_nothing_changes(monkeypatch):
    blocks = _walks(monkeypatch)
    looped = NO_LOOP.replace("  if (flag)", "  for (int i = 0; i < flag; i++)\n    if (flag)")
    r = lint_text(looped, "k.cu", Options(targets=["sm_70"]))
    assert "WL007" in [f.rule_id for f in r.findings]
    assert len(blocks) >= 2 * len(set(blocks))  # a pass that changes something, one that confirms
