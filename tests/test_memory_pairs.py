"""The memory hazard search compares only pairs of accesses that may race (a write and a read
of one base in spaces that can meet) and follows only such accesses where the work bound cannot
be reached (issue 17): it finds what comparing every pair finds."""
from __future__ import annotations

from pathlib import Path

import pytest

from warplint.analysis import memory
from warplint.options import Options
from warplint.pipeline import lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RACE_FIXTURES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".ptx") and "WL007" in p.read_text())


def _hazards(path: Path, notes: bool = False) -> list[tuple]:
    """Every hazard of the fixture's analyses (and, with `notes`, each analysis's notes)."""
    result = lint_text(path.read_text(), str(path), Options(targets=["sm_70"]))
    out = []
    for fa in result.analyses:
        for h in memory.find_hazards(fa):
            skipped = h.skipped_barrier.loc.line if h.skipped_barrier is not None else None
            out.append((fa.function.name, h.first.instr.loc.line, h.second.instr.loc.line, h.kind,
                        h.writer, h.reader, h.definite, skipped))
        if notes:
            out.append((fa.function.name, tuple(fa.notes)))
    return out


@pytest.mark.parametrize("path", RACE_FIXTURES, ids=lambda p: p.name)
def test_only_pairs_that_may_race_are_compared(path, monkeypatch):
    assert RACE_FIXTURES
    filtered = _hazards(path)
    monkeypatch.setattr(memory, "_racing", lambda accesses: accesses)
    monkeypatch.setattr(memory, "_may_race", lambda first, then: True)
    assert filtered == _hazards(path)  # every pair compared: the same races, in the same order


def _kernel(body: str) -> str:
    return ("__global__ void k(float *out, const float *in) {\n"
            "  __shared__ float s[64];\n" + body + "}\n")


def test_accesses_that_race_with_nothing_are_not_followed():
    body = "".join(f"  out[threadIdx.x + {32 * k}] = in[threadIdx.x + {32 * k}];\n" for k in range(4))
    body += "  s[threadIdx.x] = 1.0f;\n  out[0] = s[threadIdx.x ^ 1];\n"
    result = lint_text(_kernel(body), "k.cu", Options(targets=["sm_70"]))
    accesses = [a for fa in result.analyses for a in fa.accesses]
    racing = memory._racing(accesses)
    assert [a.instr.loc.line for a in racing] == [7, 8]  # the shared write and read only
    assert [(f.rule_id, f.loc.line) for f in result.findings] == [("WL007", 8)]


def test_the_work_bound_still_counts_every_access():
    """Past MAX_PENDING accesses every one is followed, so the bound and its note stay."""
    body = "".join(f"  out[threadIdx.x + {32 * k}] = in[{k}];\n" for k in range(memory.MAX_PENDING // 2 + 2))
    result = lint_text(_kernel(body), "k.cu", Options(targets=["sm_70"]))
    assert any(memory.PENDING_NOTE in d.message for d in result.diagnostics)
    assert not result.findings
