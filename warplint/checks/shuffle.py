"""Shuffle rules: WL005 (source lane invalid), WL006 (width / c operand invalid)."""
from __future__ import annotations

from itertools import product

from ..analysis.arrival import divergences
from ..analysis.divergence import source_lane
from ..analysis.lanes import MAX_VARS, definite_bits, together
from ..analysis.values import Aff
from ..messages import ShflClampInvalid, ShflSegmentMaskInvalid, ShuffleSourceInvalid, ShuffleWidthInvalid
from . import Context, rule

_VALID_SEGMASK = {0: 32, 16: 16, 24: 8, 28: 4, 30: 2, 31: 1}


def _const(v):
    return v.const() if isinstance(v, Aff) else None


@rule("WL006")
def shfl_width_invalid(ctx: Context) -> None:
    for op in ctx.analysis.warp_ops:
        if op.kind != "shfl" or len(op.srcs) < 3:
            continue
        c = _const(op.srcs[2])
        if c is None:
            continue
        ins = op.instr
        mode = next((m for m in ins.mods if m in ("up", "down", "bfly", "idx")), "idx")
        if ins.from_cuda:  # the c operand encodes the call's width argument
            width = 32 - (c >> 8)
            if width < 1 or width > 32 or width & (width - 1):
                ctx.report(ins, ShuffleWidthInvalid(width))
            continue
        c &= 0xFFFFFFFF
        segmask, cval = (c >> 8) & 0x1F, c & 0x1F
        width = _VALID_SEGMASK.get(segmask)
        if width is None or c >> 13:
            ctx.report(ins, ShflSegmentMaskInvalid(c, segmask))
            continue
        want = 0 if mode == "up" else width - 1
        if cval & ~segmask & 0x1F != want:  # only these bits reach maxLane
            ctx.report(ins, ShflClampInvalid(c, cval, mode, width, segmask, want))


def _exits(fa, op, kernel) -> str:
    """"all" / "some" / "" : do the lanes missing at this shuffle exit?"""
    divs = divergences(fa, op.block, lambda i: i.opcode == op.instr.opcode, kernel)
    if divs and all(d.fate == "exit" for d in divs):
        return "all"
    return "some" if any(d.fate == "exit" for d in divs) else ""


@rule("WL005")
def shfl_source_invalid(ctx: Context) -> None:
    fa = ctx.analysis
    for op in fa.warp_ops:
        if op.kind != "shfl" or len(op.srcs) < 3 or op.active.is_empty():
            continue
        b, c = op.srcs[1], _const(op.srcs[2])
        if c is None or not (isinstance(b, Aff) and b.exact):
            continue
        mv = op.member_value
        if op.member is not None and op.member.exact is None:
            _check_symbolic_mask(ctx, op, b, c)
            continue
        if op.member is None and mv is not None and not (isinstance(mv, Aff) and mv.exact):
            continue
        active = op.active.possible_bits
        sure = definite_bits(op.active, fa.lits)
        exited = None  # do lanes missing here exit?  (computed on demand)
        readers, sources, definite, why = 0, 0, False, set()
        for lane in range(32):
            if not active >> lane & 1:
                continue
            member = mv.off[lane] & 0xFFFFFFFF if isinstance(mv, Aff) else None
            j, ok = source_lane(op.instr.mods, lane, b.off[lane], c)
            if not ok or not 0 <= j < 32:
                continue
            if active >> j & 1 and (member is None or member >> j & 1):
                # the source can be here; on sm_70+ it may also have exited (early return)
                if sure >> j & 1 or together(op.active, lane, j, fa.lits) or not ctx.target.independent_scheduling \
                        or not sure >> lane & 1 and sure:
                    continue
                if exited is None:
                    exited = _exits(fa, op, ctx.kernel)
                if exited:
                    why.add("exited")
                    readers |= 1 << lane
                    sources |= 1 << j
                continue
            if member is not None and not member >> j & 1:
                why.add("not in the membermask")
            elif member is None:
                why.add("inactive")
            elif ctx.target.independent_scheduling:
                if exited is None:
                    exited = _exits(fa, op, ctx.kernel)
                if not exited:
                    continue
                why.add("exited")
                definite_exit = exited == "all"
                if not definite_exit:
                    readers |= 1 << lane
                    sources |= 1 << j
                    continue
            else:
                continue  # pre-Volta: WL002 reports the mask mismatch
            readers |= 1 << lane
            sources |= 1 << j
            definite |= bool(sure >> lane & 1)
        if readers:
            ctx.report(op.instr, ShuffleSourceInvalid(readers, sources, tuple(sorted(why)), definite),
                       certainty="definite" if definite else "possible",
                       details=[f"active lanes: {ctx.describe(op.active)}",
                                f"membermask: {ctx.describe(op.member) if op.member is not None else 'none'}"],
                       block=op.block)


def _check_symbolic_mask(ctx: Context, op, b, c) -> None:
    """A membermask that depends on conditions (`__activemask()` or a ballot under `if (i < n)`):
    a lane may read a source lane outside the mask when some valuation of the conditions puts the
    reader in the mask and its source out of it (the tail warp of `i < n`)."""
    fa = ctx.analysis
    readers = sources = 0
    for lane in range(32):
        if not op.active.possible_bits >> lane & 1:
            continue
        j, ok = source_lane(op.instr.mods, lane, b.off[lane], c)
        if ok and 0 <= j < 32 and j != lane and _may_be_outside(op, lane, j, fa.lits):
            readers |= 1 << lane
            sources |= 1 << j
    if readers:
        ctx.report(op.instr, ShuffleSourceInvalid(readers, sources, ("not in the membermask",), False),
                   certainty="possible",
                   details=[f"active lanes: {ctx.describe(op.active)}",
                            f"membermask: {ctx.describe(op.member)}"],
                   block=op.block)


def _may_be_outside(op, lane: int, j: int, lits) -> bool:
    """Can `lane` run `op` in its membermask while lane `j` is not in it?  A warp-uniform
    condition has one value for both lanes; a per-lane condition may differ between them.
    Past MAX_VARS conditions: no (nothing is reported)."""
    def key(x, who):
        return abs(x) if lits[x].kind == "uniform" else (abs(x), who)

    reader = [(op.active.lane_formula(lane), "r"), (op.member.lane_formula(lane), "r")]
    source = op.member.lane_formula(j)
    keys = sorted({key(x, who) for f, who in reader for cube in f for x in cube}
                  | {key(x, "s") for cube in source for x in cube}, key=str)
    if len(keys) > MAX_VARS:
        return False

    def holds(formula, who, val) -> bool:
        return any(all(val[key(x, who)] == (x > 0) for x in cube) for cube in formula)
    for values in product((False, True), repeat=len(keys)):
        val = dict(zip(keys, values))
        if all(holds(f, who, val) for f, who in reader) and not holds(source, "s", val):
            return True
    return False
