"""Which architectures have an instruction, and the lowest one a CUDA file's code can be built for.

One table for WL010 (a target that lacks an instruction the code uses) and for choosing the
default targets (pipeline.parse_variants): when the user names no target, a file whose text for
sm_60 holds an sm_80 instruction outside any `__CUDA_ARCH__` guard cannot be built for sm_60
(nvcc: "identifier __reduce_add_sync is undefined"; ptxas: "Feature 'elect' requires .target
sm_90 or higher"), so sm_60 is not one of its targets.
"""
from __future__ import annotations

from .ir import Instr

# warp instructions (op -> lowest sm, lowest PTX ISA): the PTX ISA warp instruction reference,
# Quick Reference table (spec/ptx-warp-sync-instructions.md); `.sync` vote/shfl need PTX ISA 6.0
WARP_NEEDS = {
    "match": (70, (6, 0)),
    "redux": (80, (7, 0)),
    "activemask": (30, (6, 2)),
    "vote": (30, (6, 0)),
    "shfl": (30, (6, 0)),
    "syncwarp": (30, (6, 0)),
}

# other instructions real code writes in inline asm (op -> lowest sm; PTX ISA, the "Target ISA
# notes" of each instruction); only used to find the lowest architecture a file can be built for
_OTHER_SM = {"nanosleep": 70, "ldmatrix": 75, "mbarrier": 80, "elect": 90, "stmatrix": 90, "mapa": 90,
             "getctarank": 90, "griddepcontrol": 90, "wgmma": 90, "setmaxnreg": 90}
_MEMORY_ORDER = frozenset({"relaxed", "acquire", "release", "acq_rel"})  # ld/st/atom/red: sm_70


def lowest_sm(ins: Instr) -> int:
    """The lowest architecture (sm number) that has the instruction `ins` (30 when any does)."""
    op, mods = ins.op, set(ins.mods)
    if op in WARP_NEEDS:
        return WARP_NEEDS[op][0]
    if op == "mbarrier" and mods & {"try_wait", "expect_tx"}:
        return 90
    if op == "cp" and "async" in mods:
        return 90 if "bulk" in mods else 80
    if op == "fence":
        if "mbarrier_init" in mods or {"proxy", "async"} <= mods:
            return 90
        return 70 if mods & {"acq_rel", "sc"} else 30
    if op in ("ld", "st", "atom", "red") and mods & _MEMORY_ORDER:
        return 70
    return _OTHER_SM.get(op, 30)


def required_arch(module) -> tuple[int, Instr] | None:
    """The lowest architecture the module's code can be built for, with the instruction that
    demands it; None when any target does.  As nvcc decides it: a warp intrinsic written in any
    function is an error (`__reduce_add_sync` is declared only for sm_80+; templates, which nvcc
    checks when instantiated, are not told apart here); an inline-asm instruction only where
    ptxas sees it, in the code emitted -- the kernels and the functions they call (an uncalled
    helper is not compiled), or every function of a file with no kernel (a header's helpers are
    there to be called)."""
    best: tuple[int, Instr] | None = None
    emitted = {id(f) for f in _emitted(module)}
    for fn in module.functions:
        for ins in fn.body:
            if isinstance(ins, Instr) and (_intrinsic(ins) or id(fn) in emitted):
                sm = lowest_sm(ins)
                if sm > 30 and (best is None or sm > best[0]):
                    best = (sm, ins)
    return best


def _intrinsic(ins: Instr) -> bool:
    """A CUDA-C warp intrinsic (or cooperative-groups call lowered to one), not inline asm."""
    return ins.from_cuda and ins.op in WARP_NEEDS


def _emitted(module) -> list:
    """The kernels and the functions they call (transitively); every function when there is no kernel."""
    from .analysis.inline import function_table, resolve
    kernels = [f for f in module.functions if f.is_kernel]
    if not kernels:
        return list(module.functions)
    table = function_table(module)
    seen: dict[int, object] = {}
    todo = list(kernels)
    while todo:
        fn = todo.pop()
        if id(fn) not in seen:
            seen[id(fn)] = fn
            todo.extend(c for c in (resolve(i, table) for i in fn.body if isinstance(i, Instr)) if c is not None)
    return list(seen.values())
