"""Shortcuts the checks take for speed (issue 17, session 11) find what the long way finds:
WL005's decision on bit sets that no lane of a shuffle reads from a lane it may lack."""
from __future__ import annotations

from pathlib import Path

import pytest

from warplint.checks import Context, shuffle
from warplint.options import Options
from warplint.pipeline import lint_text
from warplint.targets import Target

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SHUFFLES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".ptx") and "shfl" in p.read_text()
                  and ("WL005" in p.read_text() or "WL002" in p.read_text()))  # (readers found, and not)


def _shuffle_reads(path: Path, target: str) -> list:
    """`_reads` of every shuffle and lane argument of the fixture's analyses, as WL005 asks."""
    result = lint_text(path.read_text(), str(path), Options(targets=[target]))
    out = []
    for fa in result.analyses:
        ctx = Context(result.module, fa, Target.parse(target), Options(), "WL005")
        for op in fa.warp_ops:
            if op.kind != "shfl" or len(op.srcs) < 3 or op.active.is_empty():
                continue
            c = shuffle._const(op.srcs[2])
            if c is None:
                continue
            for b in shuffle._lane_arguments(fa, op)[0]:
                exits = shuffle._Exits(fa, op, ctx.kernel)
                out.append((op.instr.loc.line, b.off, shuffle._reads(ctx, op, b, c, exits)))
    return out


@pytest.mark.parametrize("target", ["sm_60", "sm_70"])
@pytest.mark.parametrize("path", SHUFFLES, ids=lambda p: p.name)
def test_sources_decided_on_bit_sets_read_what_lane_by_lane_reads(path, target, monkeypatch):
    assert SHUFFLES
    quick = _shuffle_reads(path, target)
    monkeypatch.setattr(shuffle, "_sources_sure", lambda *args: False)
    assert quick == _shuffle_reads(path, target)


def test_hazards_are_searched_once_for_every_target(monkeypatch):
    """WL007 on several sm_70+ targets: one search per analysis, the same findings per target."""
    from warplint.analysis import memory
    from warplint.checks import memory as wl007
    path = next(p for p in sorted(FIXTURES.rglob("*.cu")) if "WL007" in p.read_text())
    calls = []

    def counted(fa):
        calls.append(fa)
        return memory.find_hazards(fa)
    monkeypatch.setattr(wl007, "find_hazards", counted)
    one = lint_text(path.read_text(), str(path), Options(targets=["sm_70"]))
    searched = len(calls)
    three = lint_text(path.read_text(), str(path), Options(targets=["sm_70", "sm_80", "sm_90"]))
    assert searched and len(calls) == 2 * searched
    assert [(f.loc, f.message) for f in one.findings] == [(f.loc, f.message) for f in three.findings]
    assert all(f.targets == ("sm_70", "sm_80", "sm_90") for f in three.findings if f.rule_id == "WL007")
