"""WL009: block barriers reached by only part of a warp or by only some warps."""
from __future__ import annotations

from ..analysis.arrival import divergences
from ..analysis.calls import block_collective
from ..analysis.lanes import FULL_SET, compare
from ..findings import Step
from ..messages import BarrierDivergence, instr_name
from . import Context, rule


def _barrier_id(ins):
    return ins.srcs[0] if ins.srcs and "red" not in ins.mods else (ins.srcs[1] if len(ins.srcs) > 1 else None)


def _aligned(ins) -> bool:
    """PTX: `bar.sync`/`bar.red` are `barrier.sync.aligned`/`barrier.red.aligned`; every thread
    of the block must execute the same aligned barrier instruction.  `barrier.sync` without
    .aligned may be met at different instructions with the same barrier id.  A block collective
    waits at `__syncthreads()` (aligned) inside it."""
    return ins.op == "bar" or "aligned" in ins.mods or block_collective(ins) is not None


def _is_barrier(ins) -> bool:
    return ins.op in ("bar", "barrier") and "warp" not in ins.mods or block_collective(ins) is not None


_HOW_TO_FIX = {
    False: "move the barrier out of the conditional code, or make the condition uniform across the block",
    True: "call the collective in every thread of the block, outside the conditional code (give the "
          "threads that must not count the operator's identity, or use the overload that takes a "
          "number of valid items)",
}


def _same_source(a, b) -> bool:
    return a.loc is not None and b.loc is not None and (a.loc.path, a.loc.line) == (b.loc.path, b.loc.line)


@rule("WL009")
def barrier_divergence(ctx: Context) -> None:
    fa = ctx.analysis
    for bar in fa.barriers:
        if bar.counted or bar.active.is_empty():
            continue
        cmp = compare(bar.active, FULL_SET, fa.lits)
        lanes_missing = cmp.only_member_possible
        warp_lits = [x for x in bar.active.lits if fa.lits[x].scope == "warp"]
        if not lanes_missing and not warp_lits:
            continue
        bid, aligned = _barrier_id(bar.instr), _aligned(bar.instr)

        def matches(ins, bid=bid, here=bar.instr):
            # an aligned barrier (bar.sync, __syncthreads) must be the same instruction in every
            # thread: another one only matches as the compiler's copy of the same source barrier
            return (_is_barrier(ins) and ins is not here
                    and _barrier_id(ins) == bid and (not aligned or _same_source(ins, here)))

        # Exited threads release a barrier; before Volta a warp arrives as a whole, so a warp
        # split at the barrier is only fine when its other lanes exit at once.
        released = ctx.target.independent_scheduling or not lanes_missing
        divs = divergences(fa, bar.block, matches, ctx.kernel, released_on_exit=released,
                           block_wide=True)
        # a block collective needs every thread of the block: those that exit are missing too
        collective = block_collective(bar.instr) is not None
        missing = ("skip", "exit") if collective else ("skip",)
        bad = [d for d in divs if d.fate in missing or d.fate == "mixed"]
        if not bad:
            continue
        data_dependent = any(fa.lits[x].kind == "lane" and fa.lits[x].scope == "lane"
                             for d in bad for x in d.cond.lits)
        definite = all(d.fate in missing for d in divs) and not data_dependent
        related = [Step(fa.cfg.blocks[d.branch].terminator.loc,
                        "threads that take the other side of this branch skip the barrier")
                   for d in bad if fa.cfg.blocks[d.branch].terminator is not None]
        ctx.report(bar.instr, BarrierDivergence(instr_name(bar.instr), lanes_missing, definite, collective),
                   certainty="definite" if definite else "possible",
                   details=[f"lanes here: {ctx.describe(bar.active)}", _HOW_TO_FIX[collective]],
                   related=related, block=bar.block)
