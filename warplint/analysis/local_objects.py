"""Variables whose address is taken: a thread's own memory, cell by cell.

The CUDA front end keeps a local variable `x` in register `x`, and `&x` is the symbol `&x`
(state space local).  A store through a pointer into `x` (`reinterpret_cast<int*>(&x)[i] = v`)
writes the variable, and a load through it reads the variable: `pointers_to_locals` finds the
registers that can only hold such pointers, so the interpreter reads and writes the variable's
registers (`x` and its fields `x.f`) instead of unknown memory.  An access at an offset that is
one known number in every lane reaches the field the front end placed there (`Module.local_fields`);
at any other offset a load reads any field and a store is a weak update (the old value or the
stored one).
"""
from __future__ import annotations

from typing import NamedTuple

from ..cfg import CFG
from ..ir import Addr, Reg, Sym

# instructions whose result points into the object its pointer operand points into
POINTER_ARITH = ("mov", "cvt", "cvta", "add", "sub")


class LocalOffset(NamedTuple):
    """The environment's key for the offset, inside its variable, of pointer register `reg`."""
    reg: str


def pointers_to_locals(cfg: CFG, spaces: dict | None) -> dict[str, tuple[str, ...]]:
    """Register -> the registers of the one local variable every value it holds points into."""
    if not _takes_addresses(cfg):  # no `&x`: no register points into a variable (PTX has none)
        return {}
    spaces = spaces or {}
    defs: dict[str, list] = {}
    regs: set[str] = set()
    for blk in cfg.blocks:
        for ins in blk.instrs:
            for d in ins.dests:
                if type(d) is Reg:
                    regs.add(d.name)
                    defs.setdefault(d.name, []).append(ins)
            for op in ins.srcs:
                if type(op) is Reg:
                    regs.add(op.name)
    target: dict[str, str] = {}
    changed = True
    while changed:  # a register joins once all its definitions point into one variable
        changed = False
        for reg, ins_list in defs.items():
            if reg in target:
                continue
            into = {_points_into(ins, reg, target, spaces) for ins in ins_list}
            into.discard(reg)  # `p = p + 4` keeps what p points into
            if len(into) == 1 and None not in into:
                target[reg] = into.pop()
                changed = True
    if not target:
        return {}
    escaped = _escaped(cfg, target)
    fields = _fields_by_variable(regs)
    return {reg: (x, *sorted(fields.get(x, ())))
            for reg, x in target.items() if x not in escaped and x.partition("@")[0] not in escaped}


def _takes_addresses(cfg: CFG) -> bool:
    """Does some instruction name a variable's address (`&x`)?"""
    for blk in cfg.blocks:
        for ins in blk.instrs:
            for op in ins.srcs:
                if type(op) is Sym and op.name.startswith("&"):
                    return True
            for op in ins.dests:
                if type(op) is Sym and op.name.startswith("&"):
                    return True
    return False


def _fields_by_variable(regs: set[str]) -> dict[str, list[str]]:
    """Name -> the registers that are its fields (`x.f`, `x.f.g` of `x`; `x.f.g` of `x.f`
    too), found in one pass over the registers, not one per variable."""
    out: dict[str, list[str]] = {}
    for r in regs:
        dot = r.find(".")
        while dot >= 0:
            out.setdefault(r[:dot], []).append(r)
            dot = r.find(".", dot + 1)
    return out


def _escaped(cfg: CFG, target: dict) -> set[str]:
    """Variables a pointer to which leaves the loads, stores and pointer arithmetic seen here
    (passed to a call, stored to memory, compared): what is done through it is unknown.  An
    `&x` used elsewhere names x in every inlined copy (the symbol is not renamed)."""
    out = set()
    for blk in cfg.blocks:
        for ins in blk.instrs:
            address = pointer_base(_address_operand(ins))
            to_pointer = ins.op in POINTER_ARITH and any(isinstance(d, Reg) and d.name in target for d in ins.dests)
            for op in (*ins.srcs, *ins.dests):
                if to_pointer:
                    break
                if isinstance(op, Sym) and op.name.startswith("&"):
                    out.add(op.name[1:])
                elif isinstance(op, Reg) and op.name in target and op.name != address:
                    out.add(target[op.name])
    return out


def _address_operand(ins):
    """The address operand of a load or store, else None."""
    if ins.op == "st":
        return (ins.dests or ins.srcs or [None])[0]
    if ins.op == "ld":
        return ins.srcs[0] if ins.srcs else None
    return None


def _points_into(ins, reg: str, target: dict, spaces: dict) -> str | None:
    """The variable that `ins`'s result `reg` points into, `reg` for a step of `reg` itself,
    or None (not pointer arithmetic on one variable)."""
    if ins.op not in POINTER_ARITH or ins.guard is not None:
        return None
    srcs = ins.srcs[:1] if ins.op == "sub" else ins.srcs
    found = set()
    for op in srcs:
        if isinstance(op, Sym) and op.name.startswith("&") and spaces.get(op.name) == "local":
            found.add(op.name[1:] + _inline_suffix(reg))
        elif isinstance(op, Reg) and (op.name in target or op.name == reg):
            found.add(target.get(op.name, reg))
    return found.pop() if len(found) == 1 else None


def _inline_suffix(reg: str) -> str:
    """`@1` of `$a2@1`: an inlined copy renames its registers (`recv` -> `recv@1`) but not
    the symbol `&recv`, so the copy's variable is named by the pointer's suffix."""
    base = reg.partition(".")[0]
    at = base.find("@")
    return base[at:] if at >= 0 else ""


def pointer_base(op) -> str | None:
    """The register an address operand is based on."""
    if isinstance(op, Reg):
        return op.name
    if isinstance(op, Addr) and isinstance(op.base, Reg):
        return op.base.name
    return None
