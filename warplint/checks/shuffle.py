"""Shuffle rules: WL005 (source lane invalid), WL006 (width / c operand invalid)."""
from __future__ import annotations

from functools import lru_cache
from itertools import product

from ..analysis.arrival import divergences
from ..analysis.divergence import source_lane, source_lanes
from ..analysis.lanes import MAX_VARS, definite_bits, lane_ranges, together
from ..analysis.loop_values import values_at
from ..analysis.values import Aff, const, is_uniform
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
        c = _const(op.srcs[2])
        lane_args, over_loop = _lane_arguments(fa, op)
        if c is None or not lane_args:
            continue
        symbolic = op.member is not None and op.member.exact is None
        mv = op.member_value
        if not symbolic and op.member is None and mv is not None and not (isinstance(mv, Aff) and mv.exact):
            continue
        exits = _Exits(fa, op, ctx.kernel)
        readers, sources, definite, why, bad = 0, 0, False, set(), []
        for b in lane_args:
            found = _symbolic_reads(ctx, op, b, c) if symbolic else _reads(ctx, op, b, c, exits)
            if found[0]:
                readers, sources = readers | found[0], sources | found[1]
                definite, why = definite or found[2], why | found[3]
                bad.append(b.off[0])
        if readers:
            member = ctx.describe(op.member) if symbolic else _describe_mask(ctx, op)
            details = [f"active lanes: {ctx.describe(op.active)}", f"membermask: {member}"]
            if over_loop:
                details.append(_loop_detail(op, lane_args, bad))
            ctx.report(op.instr, ShuffleSourceInvalid(readers, sources, tuple(sorted(why)), definite),
                       certainty="definite" if definite else "possible", details=details, block=op.block)


def _lane_arguments(fa, op) -> tuple[list[Aff], bool]:
    """The shuffle's lane / offset operand as known values, and whether they are a loop's: the
    one value it has, or, for a loop's counter (`for (o = 16; o > 0; o >>= 1)`, the same in every
    lane), one per value the loop gives it."""
    b = op.srcs[1]
    if isinstance(b, Aff) and b.exact:
        return [b], False
    if not (isinstance(b, Aff) and b.uniform):
        return [], False
    values = values_at(fa.cfg, op.block, op.instr, op.instr.srcs[1])
    return [const(v) for v in values or ()], True


def _loop_detail(op, lane_args: list[Aff], bad: list[int]) -> str:
    """`offset 'o' over the loop's iterations: 16, 8, 4, 2, 1; the reads above happen with 16, 8`."""
    mode = _mode(op)
    what = "source lane" if mode == "idx" else "lane mask" if mode == "bfly" else "offset"
    every = [b.off[0] for b in lane_args]
    which = "each" if bad == every else ", ".join(map(str, bad))
    name = str(op.instr.srcs[1]).partition("@")[0]  # `k@1`: `k` of an inlined call
    return f"{what} '{name}' over the loop's iterations: {', '.join(map(str, every))}; " \
           f"the reads above happen with {which}"


def _mode(op) -> str:
    return next((m for m in op.instr.mods if m in ("up", "down", "bfly", "idx")), "idx")


class _Exits:
    """Whether the lanes missing at a shuffle exit (`_exits`), found on first use."""

    def __init__(self, fa, op, kernel):
        self.fa, self.op, self.kernel, self.known = fa, op, kernel, None

    def __call__(self) -> str:
        if self.known is None:
            self.known = _exits(self.fa, self.op, self.kernel)
        return self.known


def _reads(ctx: Context, op, b: Aff, c: int, exited: _Exits):
    """(readers, sources, definite, why): the lanes that read, with lane operand `b`, from a lane
    inactive, exited or outside a membermask known per lane."""
    fa = ctx.analysis
    mv = op.member_value
    active = op.active.possible_bits
    sure = definite_bits(op.active, fa.lits)
    if _sources_sure(op, b, c, active, sure):
        return 0, 0, False, set()
    order = _lane_order(fa.lits)
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
                    or not sure >> lane & 1 and sure \
                    or not _can_lack([op.active.lane_formula(lane)], op.active.lane_formula(j), lane, j,
                                     fa.lits, order):
                continue
            if exited():
                why.add("exited")
                readers |= 1 << lane
                sources |= 1 << j
            continue
        if member is not None and not member >> j & 1:
            why.add("not in the membermask")
        elif member is None:
            why.add("inactive")
        elif ctx.target.independent_scheduling:
            if not exited():
                continue
            why.add("exited")
            if exited() != "all":
                readers |= 1 << lane
                sources |= 1 << j
                continue
        else:
            continue  # pre-Volta: WL002 reports the mask mismatch
        readers |= 1 << lane
        sources |= 1 << j
        definite |= bool(sure >> lane & 1)
    return readers, sources, definite, why


def _sources_sure(op, b: Aff, c: int, active: int, sure: int) -> bool:
    """Does every active lane read (where its source lane is in range) from a lane that is
    surely active and in a membermask the same in every lane?  Then `_reads` finds no reader
    (most shuffles): decided on bit sets, not lane by lane."""
    mv = op.member_value
    if not b.uniform or isinstance(mv, Aff) and not mv.uniform:
        return False
    fine = active & sure
    if isinstance(mv, Aff):
        fine &= mv.off[0] & 0xFFFFFFFF
    return not _read_lanes(op.instr.mods, b.off[0], c, active) & ~fine


@lru_cache(maxsize=1024)
def _read_lanes(mods: tuple, b: int, c: int, active: int) -> int:
    """The source lanes (in range) that lanes `active` read, with lane operand `b` in every lane."""
    out = 0
    for lane, (j, ok) in enumerate(source_lanes(mods, b, c)):
        if ok and 0 <= j < 32 and active >> lane & 1:
            out |= 1 << j
    return out


def _describe_mask(ctx: Context, op) -> str:
    """The membermask in words: a set of lanes, one mask per lane (`0xf << (lane & ~3)`), or
    none (a shuffle without one, before `*.sync`: the active lanes take part)."""
    if op.member is not None:
        return ctx.describe(op.member)
    mv = op.member_value
    if not (isinstance(mv, Aff) and mv.exact):
        return "none (the shuffle has no membermask)" if not op.sync else "not known"
    by_mask: dict[int, int] = {}
    for lane in range(32):
        if op.active.possible_bits >> lane & 1:
            m = mv.off[lane] & 0xFFFFFFFF
            by_mask[m] = by_mask.get(m, 0) | 1 << lane
    sizes = {bin(m).count("1") for m in by_mask}
    if all(m == lanes for m, lanes in by_mask.items()) and len(sizes) == 1:
        size = sizes.pop()
        if all(m == ((1 << size) - 1) << ((m & -m).bit_length() - 1) for m in by_mask):
            return f"one per lane: its own group of {size} lanes"
    return "one per lane: " + "; ".join(f"{lane_ranges(lanes)} use {m:#010x}"
                                        for m, lanes in sorted(by_mask.items(), key=lambda x: x[1]))


def _symbolic_reads(ctx: Context, op, b: Aff, c: int):
    """A membermask that depends on conditions (`__activemask()` or a ballot under `if (i < n)`):
    a lane may read a source lane outside the mask when some valuation of the conditions puts the
    reader in the mask and its source out of it (the tail warp of `i < n`)."""
    fa = ctx.analysis
    order = _lane_order(fa.lits)
    readers = sources = 0
    for lane in range(32):
        if not op.active.possible_bits >> lane & 1:
            continue
        j, ok = source_lane(op.instr.mods, lane, b.off[lane], c)
        if ok and 0 <= j < 32 and j != lane and _can_lack(
                [op.active.lane_formula(lane), op.member.lane_formula(lane)], op.member.lane_formula(j),
                lane, j, fa.lits, order):
            readers |= 1 << lane
            sources |= 1 << j
    return readers, sources, False, {"not in the membermask"}


_ORDERS: dict = {}  # id(lits) -> (lits, how many interned, its _lane_order); lits held


def _lane_order(lits) -> dict[int, int]:
    """`_find_lane_order`, remembered per function: every shuffle of it asks (literals are
    only ever added, so their count tells whether the answer still stands)."""
    hit = _ORDERS.get(id(lits))
    if hit is not None and hit[0] is lits and hit[1] == len(lits.items()):
        return hit[2]
    if len(_ORDERS) > 256:
        _ORDERS.clear()
    order = _find_lane_order(lits)
    _ORDERS[id(lits)] = (lits, len(lits.items()), order)
    return order


def _find_lane_order(lits) -> dict[int, int]:
    """Conditions that hold on a run of low or high lanes: a comparison `A > B` or `A >= B`
    (one literal per comparison, as the evaluator keys it) of a value that grows with the
    lane (`i = blockIdx.x * blockDim.x + threadIdx.x`) with one that is the same in every lane.
    -1: where it holds in a lane, it holds in every lower lane (`i < n`: after
    `if (i >= n) return;` the live lanes are a prefix, lane 0 is alive whenever any lane is);
    +1: in every higher lane."""
    out = {}
    for key, lid in lits.items():
        if not (isinstance(key, tuple) and len(key) == 5 and key[0] == "cmp"
                and key[1] in ("gt", "ge") and key[2] in ("s", "u")):
            continue
        a, b = key[3], key[4]
        if _grows(a) and is_uniform(b):
            out[lid] = 1
        elif _grows(b) and is_uniform(a):
            out[lid] = -1
    return out


def _grows(v) -> bool:
    return isinstance(v, Aff) and not v.uniform and all(x <= y for x, y in zip(v.off, v.off[1:]))


_LACKS: dict = {}  # (id(lits), reader, source, lane < j) -> (lits, answer); lits held: ids stay unique


def _can_lack(reader: list, source: list, lane: int, j: int, lits, order: dict[int, int]) -> bool:
    """`_search_lack`, remembered: the 32 lanes of a shuffle ask the same few questions (the
    answer depends on the two lanes only through their formulas and which is lower; `order` is
    `_lane_order(lits)`)."""
    key = (id(lits), tuple(map(tuple, reader)), tuple(source), lane < j)
    hit = _LACKS.get(key)
    if hit is not None and hit[0] is lits:
        return hit[1]
    if len(_LACKS) > 4096:
        _LACKS.clear()
    answer = _search_lack(reader, source, lane, j, lits, order)
    _LACKS[key] = (lits, answer)
    return answer


def _search_lack(reader: list, source: list, lane: int, j: int, lits, order: dict[int, int]) -> bool:
    """Is there a valuation of the conditions under which lane `lane` satisfies every formula
    in `reader` while lane `j` does not satisfy `source`?  A warp-uniform condition has one
    value for both lanes; a per-lane condition may differ between them, except that one that
    holds on a run of low (high) lanes and holds in the higher (lower) of the two holds in the
    other too.  Past MAX_VARS conditions: no (nothing is reported)."""
    def key(x, who):
        return abs(x) if lits[x].kind == "uniform" else (abs(x), who)

    keys = sorted({key(x, "r") for f in reader for cube in f for x in cube}
                  | {key(x, "s") for cube in source for x in cube}, key=str)
    if len(keys) > MAX_VARS:
        return False
    low, high = ("r", "s") if lane < j else ("s", "r")
    runs = [((x, high), (x, low)) if order[x] < 0 else ((x, low), (x, high))
            for x in {k[0] for k in keys if isinstance(k, tuple)} if x in order]

    def holds(formula, who, val) -> bool:
        return any(all(val[key(x, who)] == (x > 0) for x in cube) for cube in formula)
    for values in product((False, True), repeat=len(keys)):
        val = dict(zip(keys, values))
        if any(val.get(a, False) and not val.get(b, True) for a, b in runs):
            continue  # a run of lanes with a hole
        if all(holds(f, "r", val) for f in reader) and not holds(source, "s", val):
            return True
    return False
