"""WL007: cross-lane shared/global memory traffic with no __syncwarp in between."""
from __future__ import annotations

import weakref

from ..analysis.memory import find_hazards
from ..findings import Step
from ..messages import ReadAfterWriteRace, WriteAfterReadRace
from . import Context, rule

@rule("WL007")
def missing_syncwarp(ctx: Context) -> None:
    if not ctx.target.independent_scheduling:
        return  # lockstep warps (with volatile) made this work before Volta
    reported = set()
    for h in _hazards(ctx.analysis):
        first, second = h.first, h.second
        where = (second.instr.loc.path, second.instr.loc.line)
        if where in reported:  # one finding per racing statement
            continue
        reported.add(where)
        race = ReadAfterWriteRace if h.kind == "RAW" else WriteAfterReadRace
        msg = race(h.reader, h.writer, second.space, first.instr.loc.line, h.definite)
        details = ["lanes of a warp are not in lockstep on sm_70+: insert __syncwarp() "
                   "(bar.warp.sync) between the write and the read"]
        if h.skipped_barrier is not None:
            details.append(f"only on a path that skips the barrier at line "
                           f"{h.skipped_barrier.loc.line} (a loop around it that runs no "
                           "iteration, or a branch that every lane takes the same way)")
        ctx.report(second.instr, msg,
                   certainty="definite" if h.definite else "possible", details=details,
                   related=[Step(first.instr.loc, "the other lane's access")], block=second.block)


def _hazards(fa) -> list:
    """`find_hazards(fa)`, found once for every target (the search does not depend on it).  Held
    with the analysis it is of: a copy taken for another text (`analysis.reuse`) shares `shared`
    but has notes of its own, which the search adds to.  (A weak reference to it: the analysis
    holding itself would be a reference cycle, freed only by the cyclic collector.)"""
    found = fa.shared.get("hazards")
    if found is None or found[0]() is not fa:
        found = fa.shared["hazards"] = (weakref.ref(fa), find_hazards(fa))
    return found[1]
