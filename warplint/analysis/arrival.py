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
from .calls import may_wait
from .dependence import can_end_normally, only_aborts
from .divergence import FunctionAnalysis
from .lanes import FULL, LaneSet

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
                kernel: bool, released_on_exit: bool = False,
                block_wide: bool = False) -> list[Divergence]:
    """The divergent branches `block` depends on, and where their other lanes go.  Past
    MAX_DIVERGENCES branches the walk stops: the next one is taken as "mixed" (some lanes
    may skip), an over-approximation, with a note.  `block_wide` (block barriers): branches
    on block-uniform conditions are passed over, as they send all threads the same way.

    `released_on_exit` (block barriers on sm_70+): lanes that run to the kernel's end without
    reaching another block barrier exit, and a barrier held up only by exiting threads is
    released (spec/exit-and-barriers.md), so they count as "exit" even when they store or vote
    on the way.  Otherwise only lanes that exit at once, doing nothing observable, do.

    Lanes that `trap` abort the whole grid: they are neither missing nor waited for, so a
    branch whose other side only traps is passed over, and paths into a trap are dropped."""
    out = []
    ends = _normal_ends(fa.cfg)
    for x, s in fa.control_deps(block):
        cond = fa.edge_cond.get((x, s))
        if cond is None or _sends_all_one_way(cond, fa.lits, block_wide) \
                or only_aborts(fa.cfg, x, s, ends):
            continue
        others = [o for o in fa.cfg.succs(x) if o != s]
        if len(out) == MAX_DIVERGENCES:
            if BOUND_NOTE not in fa.notes:
                fa.notes.append(BOUND_NOTE)
            out.append(Divergence(x, s, others, "mixed", cond))
            return out
        fate = _fate(fa, x, others, block, matches, kernel, released_on_exit, ends)
        out.append(Divergence(x, s, others, fate, cond))
    return out


_ENDS: tuple = (None, frozenset())  # the last CFG asked about, and its blocks that can end normally


def _normal_ends(cfg) -> set[int]:
    """Blocks from which the function can end other than by `trap` (kept for the last CFG:
    the checks ask about one function's instructions in a row; one tuple, read and replaced
    whole, so that threads (the language server) never see a CFG with another's blocks)."""
    global _ENDS
    last, ends = _ENDS
    if last is not cfg:
        ends = can_end_normally(cfg)
        _ENDS = (cfg, ends)
    return ends


def _sends_all_one_way(cond: LaneSet, lits, block_wide: bool) -> bool:
    """Is the branch condition the same in every lane of the warp (for a warp primitive), or
    of the block (`block_wide`: a kernel parameter, the counter of a uniform loop nested in a
    divergent one)?  Then every thread that reaches the branch goes the same way: it does not
    separate the threads missing at the instruction from those that arrive (the `s > 0` test
    of a reduction loop after an early return: the missing lanes exited before the loop)."""
    scopes = ("block",) if block_wide else ("block", "warp")
    return all(bits == FULL and all(lits[x].kind == "uniform" and lits[x].scope in scopes
                                    for x in cube) for bits, cube in cond.cubes)


_OBSERVABLE = frozenset({"st", "atom", "red", "vote", "shfl", "match", "redux", "bar", "barrier",
                         "call", "activemask", "cp", "mbarrier", "membar", "fence", "trap"})


def _exits_at_once(cfg, start: int, target: int, ends: set[int]) -> bool:
    """Do all paths from `start` reach the kernel's end doing nothing observable?  That is
    the early-`return` idiom (nvcc branches to the final `ret` block): such lanes have
    exited, and exited lanes are not waited for.  Lanes that first store, vote or wait have
    skipped the instruction instead (CUDA: the result is undefined).  Paths that trap end
    the grid: they are not followed."""
    seen, stack = set(), [start]
    while stack:
        b = stack.pop()
        if b == EXIT or b in seen or b not in ends:
            continue
        if b == target or len(seen) > 256:
            return False
        seen.add(b)
        if any(i.op in _OBSERVABLE for i in cfg.blocks[b].instrs):
            return False
        stack.extend(cfg.succs(b))
    return True


def is_block_barrier(ins: Instr) -> bool:
    """bar.sync / barrier.sync / bar.red / bar.arrive (with or without a thread count), not
    bar.warp.sync."""
    return ins.op in ("bar", "barrier") and "warp" not in ins.mods


def _may_hold_barrier(ins: Instr) -> bool:
    return is_block_barrier(ins) or (ins.op == "call" and may_wait(ins))  # an opaque callee may


def _polls(ins: Instr) -> bool:
    """A load that sees other threads' writes while it runs: what a wait loop spins on."""
    if ins.op == "atom":  # a lock or flag: compare-and-swap, exchange, or an acquiring atomic
        return any(m in ins.mods for m in ("cas", "exch", "acquire", "acq_rel"))
    return ins.op in ("ld", "ldu") and any(m in ins.mods for m in ("volatile", "acquire", "relaxed"))


def _runs_to_exit(cfg, start: int, target: int, ends: set[int]) -> bool:
    """Do all paths from `start` reach the kernel's end without a block barrier (or an opaque
    call, which may hold one), without coming back to `target`, and without spinning in a
    loop that polls memory (waiting for the others)?  Threads on such paths exit (paths that
    trap abort the grid: not followed)."""
    seen, stack = set(), [start]
    while stack:
        b = stack.pop()
        if b == EXIT or b in seen or b not in ends:
            continue
        if b == target or len(seen) > MAX_VISIT:
            return False
        seen.add(b)
        if any(_may_hold_barrier(i) for i in cfg.blocks[b].instrs):
            return False
        stack.extend(cfg.succs(b))
    return not _spins(cfg, seen)


def _spins(cfg, blocks: set[int]) -> bool:
    """Is one of `blocks` in a loop that polls memory?"""
    return any(body & blocks and any(_polls(i) for x in body for i in cfg.blocks[x].instrs)
               for body in cfg.loops.values())


def _passed_by_all(cfg, b: int, target: int) -> bool:
    """Is block `b` on every path to `target`, outside loops?  Then the lanes at `target` passed
    its barrier too, and lanes that reach it from the other side of a branch meet them there
    (nvcc's `if (i < n && flag) { ...; return; }` keeps the early return's `tid < n` test apart
    from the join, so the lanes of the flag test come by the common barrier of a later call)."""
    if any(b in body for body in cfg.loops.values()):
        return False
    idom, x, steps = cfg.idom, target, 0
    while x in idom and idom[x] != x and steps < MAX_VISIT:
        x, steps = idom[x], steps + 1
        if x == b:
            return True
    return False


def _fate(fa: FunctionAnalysis, x: int, starts: list[int], target: int,
          matches: Callable[[Instr], bool], kernel: bool, released_on_exit: bool,
          ends: set[int]) -> str:
    cfg = fa.cfg

    def exits_from(b: int) -> bool:
        if not kernel:
            return False
        walk = _runs_to_exit if released_on_exit else _exits_at_once
        return walk(cfg, b, target, ends)

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
            outcomes.add("exit" if exits_from(b) else "skip")
            continue
        block = cfg.blocks[b]
        hit = next((i for i in block.instrs if matches(i)), None)
        if hit is None and b not in ends:
            continue  # these lanes trap: the grid ends
        if released_on_exit and hit is None and any(_may_hold_barrier(i) for i in block.instrs):
            if not _passed_by_all(cfg, b, target):
                outcomes.add("skip")  # alive, at another barrier
                continue
        if hit is not None and hit.guard is None:
            outcomes.add("arrive")
            continue
        if hit is not None:
            outcomes.add("arrive")
        stack.extend(cfg.succs(b))
    if not outcomes:
        return "skip"
    if released_on_exit and "exit" in outcomes and _spins(cfg, seen):
        outcomes.add("skip")  # some may wait in a loop before they get to exit
    if outcomes <= {"arrive", "exit"}:
        return "arrive" if "arrive" in outcomes else "exit"
    if "unknown" in outcomes:
        return "unknown"
    if outcomes == {"skip"}:
        return "skip"
    return "mixed"
