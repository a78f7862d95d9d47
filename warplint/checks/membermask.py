"""Membermask rules: WL002 (pre-Volta mismatch), WL003 (executing lane not in the mask),
WL004 (mask names lanes that never arrive), WL008 (activemask misuse)."""
from __future__ import annotations

from dataclasses import replace

from ..analysis.arrival import divergences
from ..analysis.lanes import FULL_SET, compare
from ..analysis.values import MaskV, Pred
from ..findings import Step
from ..ir import Reg
from ..messages import (ActivemaskAsMembermask, LaneNotInMembermask, LegacyActiveMaskBallot,
                        MembermaskLanesNeverArrive, PreVoltaMaskMismatch, instr_name)
from . import Context, rule


def _checked_ops(ctx: Context) -> list:
    """`_compared_ops`, found once per analysis: WL002, WL003 and WL004 ask for every target."""
    found = ctx.analysis.shared.get("membermask")
    if found is None:
        found = ctx.analysis.shared["membermask"] = list(_compared_ops(ctx.analysis))
    return found


def _compared_ops(fa):
    """Sync primitives whose membermask is known and not an activemask value, with their
    active lanes compared to it; a membermask that differs between lanes is checked group by
    group (lanes sharing one mask value)."""
    for op in fa.warp_ops:
        if not op.sync or op.active.is_empty():
            continue
        if isinstance(op.member_value, MaskV) and op.member_value.origin == "activemask":
            continue
        if op.member is not None:
            parts = [op]
        else:
            parts = [replace(op, active=op.active.and_bits(bits), member=m) for bits, m in op.member_groups]
        for part in parts:
            if part.active.is_empty():
                continue
            yield part, compare(part.active, part.member, fa.lits)


def _name(op) -> str:
    return instr_name(op.instr)


def _mask_text(ctx, op) -> str:
    e = op.member.exact
    return f"{e:#010x}" if e is not None else ctx.describe(op.member)


@rule("WL003")
def lane_not_in_membermask(ctx: Context) -> None:
    for op, cmp in _checked_ops(ctx):
        bits = cmp.only_active_possible
        if not bits:
            continue
        definite = cmp.only_active_definite
        msg = LaneNotInMembermask(definite or bits, _name(op), _mask_text(ctx, op), bool(definite))
        ctx.report(op.instr, msg,
                   certainty="definite" if definite else "possible",
                   details=[f"active lanes: {ctx.describe(op.active)}",
                            f"membermask: {ctx.describe(op.member)}"], block=op.block)


@rule("WL002")
def pre_volta_mask_mismatch(ctx: Context) -> None:
    if ctx.target.independent_scheduling:
        return
    for op, cmp in _checked_ops(ctx):
        bits = cmp.only_member_possible
        if not bits:
            continue
        definite = cmp.only_member_definite
        msg = PreVoltaMaskMismatch(str(ctx.target), _mask_text(ctx, op), _name(op), definite or bits,
                                   bool(definite))
        ctx.report(op.instr, msg,
                   certainty="definite" if definite else "possible",
                   details=[f"active lanes: {ctx.describe(op.active)}",
                            f"membermask: {ctx.describe(op.member)}",
                            "a matching instruction on another path does not help before sm_70"],
                   block=op.block)


@rule("WL004")
def membermask_lanes_never_arrive(ctx: Context) -> None:
    if not ctx.target.independent_scheduling:
        return
    ops = ctx.analysis.warp_ops
    for op, cmp in _checked_ops(ctx):
        bits = cmp.only_member_possible
        if not bits:
            continue
        mine = op.instr

        def matches(ins, op=op):
            if ins.opcode != op.instr.opcode:
                return False
            other = next((o for o in ops if o.instr is ins), None)
            return other is not None and (other.member_value == op.member_value or
                                          other.member is not None and other.member == op.member)

        divs = [d for d in divergences(ctx.analysis, op.block, matches, ctx.kernel)]
        bad = [d for d in divs if d.fate in ("skip", "mixed")]
        if not bad:
            continue
        definite = cmp.only_member_definite and all(d.fate == "skip" for d in divs)
        lanes = cmp.only_member_definite or bits
        cfg = ctx.analysis.cfg
        flow = ctx.analysis.why(op.block)
        related = []
        for d in bad:
            term = cfg.blocks[d.branch].terminator
            if term is not None:
                related.append(Step(term.loc, "the missing lanes take the other side of this branch "
                                    "and reach its reconvergence point without a matching "
                                    f"'{_name(op)}'"))
        ctx.report(mine, MembermaskLanesNeverArrive(_mask_text(ctx, op), _name(op), lanes, bool(definite)),
                   certainty="definite" if definite else "possible",
                   details=[f"active lanes: {ctx.describe(op.active)}",
                            "make every lane in the membermask reach a matching call, or compute the "
                            "membermask with __ballot_sync() of the branch condition"],
                   flow=flow, related=related)


@rule("WL008")
def activemask_misuse(ctx: Context) -> None:
    for op in ctx.analysis.warp_ops:
        ins = op.instr
        mv = op.member_value
        if op.sync and op.kind in ("vote", "match", "redux") and isinstance(mv, MaskV) \
                and mv.origin == "activemask" and not _aggregates(ctx.analysis, ins):
            line = mv.loc.line if mv.loc is not None else None
            ctx.report(ins, ActivemaskAsMembermask(_name(op), line), certainty="possible",
                       details=["compute the participating lanes with __ballot_sync(<mask of the enclosing "
                                "uniform code>, <branch condition>) instead"],
                       related=[Step(mv.loc, "activemask read here")] if mv.loc else [],
                       block=op.block)
        elif op.kind == "vote" and not op.sync and "ballot" in ins.mods and op.srcs:
            p = op.srcs[0]
            if isinstance(p, Pred) and p.lanes == FULL_SET or getattr(p, "const", lambda: None)() == 1:
                ctx.report(ins, LegacyActiveMaskBallot(),
                           details=["__activemask() is not a synchronisation point; if the code needs "
                                    "converged lanes, use __ballot_sync with an explicit mask"])


_MASK_KEEPING = ("mov", "and", "cvt")  # the result is still a subset of the group's lanes
_LEADER = ("ffs", "bfind", "clz", "brev")  # lowest / highest set lane of the group
_COUNT = ("popc",)


def _aggregates(fa, ins) -> bool:
    """The warp-aggregated atomic: a ballot (`__ballot_sync(__activemask(), p)`) or
    `__match_any_sync(__activemask(), key)` whose group mask is only counted (`__popc`), used
    to elect the group's leader (lowest set lane, `__ffs`), or as the membermask of a shuffle.
    Each group of converged lanes then does its own share: right for any subset of the lanes."""
    if not ins.dests or not isinstance(ins.dests[0], Reg) or not ("ballot" in ins.mods or "any" in ins.mods):
        return False
    group = {ins.dests[0].name}
    leader = False
    body = [i for b in fa.cfg.rpo() for i in fa.cfg.blocks[b].instrs]
    for _ in range(2):  # a value copied to a variable before its uses (loops: one more pass)
        for use in body:
            if use is ins:
                continue
            read = [k for k, o in enumerate(use.srcs) if isinstance(o, Reg) and o.name in group]
            if not read:
                continue
            if use.op in _MASK_KEEPING and use.dests and isinstance(use.dests[0], Reg):
                group.add(use.dests[0].name)
            elif use.op in _LEADER:
                leader = True
            elif use.op in _COUNT or (use.op == "shfl" and read == [len(use.srcs) - 1]):
                continue
            else:
                return False  # stored, compared, or a vote of its own: needs that particular set
    return leader
