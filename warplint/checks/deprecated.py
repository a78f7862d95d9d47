"""WL001 deprecated non-.sync primitives; WL010 instructions the target/PTX ISA lacks."""
from __future__ import annotations

from ..availability import WARP_NEEDS
from ..findings import Edit, Fix
from ..messages import NonSyncPrimitive, Requirement, UnavailableOnTarget, instr_name
from ..sources import lines_of
from . import Context, rule

_CUDA_SYNC_NAME = {"__any": "__any_sync", "__all": "__all_sync", "__ballot": "__ballot_sync",
                   "__shfl": "__shfl_sync", "__shfl_up": "__shfl_up_sync",
                   "__shfl_down": "__shfl_down_sync", "__shfl_xor": "__shfl_xor_sync"}


def _removed(ctx: Context) -> bool:
    if ctx.target.sm < 70:
        return False
    v = ctx.module.ptx_version
    return v is None or v >= (6, 4)


def _proven_mask(op) -> int | None:
    exact = op.active.exact
    return exact if exact else None


def _fix(ctx: Context, op, mask: int) -> Fix | None:
    ins = op.instr
    text = ctx.module.text
    if not text:
        return None
    m = f"{mask:#010x}"
    if ins.text in _CUDA_SYNC_NAME:
        loc = ins.loc
        lines = lines_of(text)
        if loc.line > len(lines):
            return None
        line = lines[loc.line - 1]
        start = loc.col - 1
        name = ins.text
        if line[start:start + len(name)] != name:
            return None
        rest = line[start + len(name):]
        paren = len(rest) - len(rest.lstrip(" \t"))
        if not rest[paren:].startswith("("):
            return None
        end_col = loc.col + len(name) + paren + 1
        new = f"{_CUDA_SYNC_NAME[name]}({m}, "
        return Fix(f"use {_CUDA_SYNC_NAME[name]} with membermask {m}",
                   [Edit(loc.path, loc.line, loc.col, loc.line, end_col, new)])
    loc = ins.raw_loc or ins.loc
    lines = lines_of(text)
    if loc.line > len(lines) or not ins.text:
        return None
    line = lines[loc.line - 1]
    start = line.find(ins.text, loc.col - 1)
    if start < 0:
        return None
    parts = ins.opcode.split(".")
    new_opcode = ".".join([parts[0], "sync"] + parts[1:])
    new = ins.text.replace(ins.opcode, new_opcode, 1).rstrip() + f", {m}"
    return Fix(f"use {new_opcode} with membermask {m}",
               [Edit(loc.path, loc.line, start + 1, loc.line, start + 1 + len(ins.text), new)])


@rule("WL001")
def deprecated_non_sync(ctx: Context) -> None:
    version = ctx.module.ptx_version
    if version is not None and version < (6, 0):
        return
    for op in ctx.analysis.warp_ops:
        if op.kind not in ("vote", "shfl") or op.sync:
            continue
        ins = op.instr
        removed = _removed(ctx)
        cuda = ins.text in _CUDA_SYNC_NAME
        name = ins.text if cuda else ins.opcode
        replacement = _CUDA_SYNC_NAME[name] if cuda else ".".join(
            [ins.op, "sync"] + list(ins.mods))
        mask = _proven_mask(op)
        details = [f"executed by {ctx.describe(op.active)}"]
        fix = _fix(ctx, op, mask) if mask else None
        if mask is None:
            details.append("no automatic fix: the active lanes here are not known statically")
        msg = NonSyncPrimitive(name, replacement, cuda, removed, str(ctx.target), mask)
        ctx.report(ins, msg, details=details, fix=fix,
                   severity="error" if removed else "warning", block=op.block)


@rule("WL010")
def unavailable_on_target(ctx: Context) -> None:
    for op in ctx.analysis.warp_ops:
        if op.kind in ("vote", "shfl") and not op.sync:
            continue
        need = WARP_NEEDS.get(op.kind)
        if need is None:
            continue
        unmet = _unmet(ctx, op.instr, *need)
        if unmet:
            ctx.report(op.instr, UnavailableOnTarget(instr_name(op.instr), unmet))


def _unmet(ctx: Context, ins, sm: int, isa: tuple[int, int]) -> tuple[Requirement, ...]:
    """The requirements of `ins` (needing sm_`sm` and PTX ISA `isa`) that the target and the
    file's declared PTX ISA do not meet."""
    version, t = ctx.module.ptx_version, ctx.target
    declared = f"{version[0]}.{version[1]}" if version is not None else None
    out = []
    if t.sm < sm:
        out.append(Requirement("sm", f"sm_{sm}", str(t)))
    if version is not None and version < isa:
        out.append(Requirement("ptx", f"{isa[0]}.{isa[1]}", declared))
    if ins.op == "redux" and any(m in ins.mods for m in ("f32", "abs", "NaN")):
        form = ".f32/.abs/.NaN"
        if not (t.sm >= 100 and t.suffix in ("a", "f")):
            out.append(Requirement("sm", "sm_100a", str(t), form))
        if version is not None and version < (8, 6):
            out.append(Requirement("ptx", "8.6", None, form))
    return tuple(out)
