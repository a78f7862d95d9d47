"""`warplint --show-masks`: every warp primitive and barrier with its possible active lanes,
its membermask, and the branches that made the lanes diverge."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Loc
from ..messages import instr_name
from .lanes import LaneSet, definite_bits, describe, lane_ranges


def mask_summary(s: LaneSet | None, lits) -> dict:
    """Words and numbers for a lane set: exact mask, or possible/definite bits + condition."""
    if s is None:
        return {"exact": None, "possible": None, "definite": None,
                "text": "unknown (differs between lanes or not computable)"}
    exact = s.warp_exact(lits)
    if exact is not None:
        when = "" if s.exact is not None else f", in warps where {describe(s, lits).split(' where ', 1)[-1]}"
        return {"exact": exact, "possible": exact, "definite": exact,
                "text": f"{exact:#010x} ({lane_ranges(exact)}){when}"}
    possible = s.possible_bits
    definite = definite_bits(s, lits)
    return {"exact": None, "possible": possible, "definite": definite,
            "text": f"possible {possible:#010x} ({lane_ranges(possible)}), definite {definite:#010x}"
                    f" ({lane_ranges(definite)}): {describe(s, lits)}"}


def _entries(fa):
    for op in fa.warp_ops:
        yield op.instr, op.block, op.active, op.member if op.member_value is not None else False
    for bar in fa.barriers:
        yield bar.instr, bar.block, bar.active, False


@dataclass
class MaskEntry:
    """One warp primitive or barrier as `--show-masks` (and the language server's hover) shows it."""
    loc: Loc
    name: str
    active: str
    member: str | None  # None: the instruction has no membermask
    diverged: list  # Steps: the branches that made the lanes diverge


def mask_entries(fa) -> list[MaskEntry]:
    """The warp primitives and barriers of one FunctionAnalysis, in source order."""
    out = []
    for ins, block, active, member in sorted(_entries(fa), key=lambda e: (e[0].loc.line, e[0].loc.col)):
        out.append(MaskEntry(ins.loc, instr_name(ins),
                             mask_summary(active, fa.lits)["text"],
                             None if member is False else mask_summary(member, fa.lits)["text"],
                             list(fa.why(block))))
    return out


def format_masks(analyses) -> str:
    """The masks of the analysed functions ([FunctionAnalysis], as the checks see them)."""
    out = []
    for fa in analyses:
        fn = fa.function
        out.append(f"{'kernel' if fn.is_kernel else 'function'} {fn.display_name or fn.name}:")
        entries = mask_entries(fa)
        if not entries:
            out.append("  (no warp primitives or barriers)")
        for e in entries:
            out.append(f"  {e.loc}: {e.name}")
            out.append(f"    active: {e.active}")
            if e.member is not None:
                out.append(f"    member: {e.member}")
            for step in e.diverged:
                out.append(f"    diverged at {step.loc}: {step.message}")
        for note in fa.notes:
            out.append(f"  note: {note}")
    return "\n".join(out) + "\n"
