"""Where do the lanes go that are missing from an instruction?

For an instruction in block B that some lanes of its membermask (or of the block) do not
execute, look at each divergent branch B depends on: the lanes that took the other side
either execute a matching instruction there, exit, or reach the branch's reconvergence
point without doing either ("skip": they never arrive).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..cfg import EXIT
from ..ir import Instr
from .divergence import FunctionAnalysis
from .lanes import FULL_SET, LaneSet

MAX_VISIT = 5000
MAX_DIVERGENCES = 64  # divergent branches followed per instruction
BOUND_NOTE = (f"analysis work bound reached: for instructions under more than {MAX_DIVERGENCES} "
              "divergent branches, the lanes of the others are assumed to possibly skip them")


@dataclass
class Divergence:
    branch: int  # block of the divergent branch
    taken: int  # successor leading to the instruction
    others: list[int]  # successors the missing lanes took
    fate: str  # "arrive" | "exit" | "skip" | "mixed" | "unknown"
    cond: LaneSet  # lanes (of the branch's lanes) that go towards the instruction


def divergences(fa: FunctionAnalysis, block: int, matches: Callable[[Instr], bool],
                kernel: bool) -> list[Divergence]:
    """The divergent branches `block` depends on, and where their other lanes go.  Past
    MAX_DIVERGENCES branches the walk stops: the next one is taken as "mixed" (some lanes
    may skip), an over-approximation, with a note."""
    out = []
    for x, s in fa.control_deps(block):
        cond = fa.edge_cond.get((x, s))
        if cond is None or cond == FULL_SET:
            continue
        others = [o for o in fa.cfg.succs(x) if o != s]
        if len(out) == MAX_DIVERGENCES:
            if BOUND_NOTE not in fa.notes:
                fa.notes.append(BOUND_NOTE)
            out.append(Divergence(x, s, others, "mixed", cond))
            return out
        fate = _fate(fa, x, others, block, matches, kernel)
        out.append(Divergence(x, s, others, fate, cond))
    return out


_OBSERVABLE = frozenset({"st", "atom", "red", "vote", "shfl", "match", "redux", "bar", "barrier",
                         "call", "activemask", "cp", "mbarrier", "membar", "fence", "trap"})


def _exits_at_once(cfg, start: int, target: int) -> bool:
    """Do all paths from `start` reach the kernel's end doing nothing observable?  That is
    the early-`return` idiom (nvcc branches to the final `ret` block): such lanes have
    exited, and exited lanes are not waited for.  Lanes that first store, vote or wait have
    skipped the instruction instead (CUDA: the result is undefined)."""
    seen, stack = set(), [start]
    while stack:
        b = stack.pop()
        if b == EXIT or b in seen:
            continue
        if b == target or len(seen) > 256:
            return False
        seen.add(b)
        if any(i.op in _OBSERVABLE for i in cfg.blocks[b].instrs):
            return False
        stack.extend(cfg.succs(b))
    return True


def _fate(fa: FunctionAnalysis, x: int, starts: list[int], target: int,
          matches: Callable[[Instr], bool], kernel: bool) -> str:
    cfg = fa.cfg
    stop = cfg.ipdom.get(x, EXIT)
    outcomes = set()
    seen = set()
    stack = list(starts)
    visits = 0
    while stack:
        b = stack.pop()
        visits += 1
        if visits > MAX_VISIT:
            return "unknown"
        if b in seen:
            continue
        seen.add(b)
        if b == EXIT:
            outcomes.add("exit" if kernel else "unknown")
            continue
        if b == target:
            outcomes.add("arrive")
            continue
        if b == stop:
            outcomes.add("exit" if kernel and _exits_at_once(cfg, b, target) else "skip")
            continue
        block = cfg.blocks[b]
        hit = next((i for i in block.instrs if matches(i)), None)
        if hit is not None and hit.guard is None:
            outcomes.add("arrive")
            continue
        if hit is not None:
            outcomes.add("arrive")
        stack.extend(cfg.succs(b))
    if not outcomes:
        return "skip"
    if outcomes <= {"arrive", "exit"}:
        return "arrive" if "arrive" in outcomes else "exit"
    if "unknown" in outcomes:
        return "unknown"
    if outcomes == {"skip"}:
        return "skip"
    return "mixed"
