"""Register liveness over a CFG (bit sets over a register numbering), to drop dead registers
from the environments of the divergence analysis."""
from __future__ import annotations

from ..cfg import CFG, EXIT
from ..ir import Addr, Imm, Reg, Sym, Vec


def registers(op, out: set) -> None:
    """Add the registers that operand `op` names to `out`."""
    if isinstance(op, Reg):
        out.add(op.name)
    elif isinstance(op, Addr):
        if isinstance(op.base, Reg):
            out.add(op.base.name)
    elif isinstance(op, Vec):
        for x in op.items:
            registers(x, out)


def names_of(bits: int, names: list[str]) -> set[str]:
    """The registers of a live bit set (a string search: linear in the bits, in C)."""
    digits = bin(bits)[:1:-1]  # bit 0 first
    out = set()
    i = digits.find("1")
    while i >= 0:
        out.add(names[i])
        i = digits.find("1", i + 1)
    return out


def _bits(op, bit) -> int:
    """The bits (`bit(name)`) of the registers that operand `op` names (as `registers`).  (Not a
    closure calling itself: that is a reference cycle, left to the cyclic collector.)"""
    if isinstance(op, Reg):
        return bit(op.name)
    if isinstance(op, Addr):
        return bit(op.base.name) if isinstance(op.base, Reg) else 0
    if isinstance(op, Vec):
        out = 0
        for x in op.items:
            out |= _bits(x, bit)
        return out
    return 0


def dead_after(cfg: CFG) -> tuple[dict[str, int], dict[int, int]]:
    """Registers that can be in a block's environment but are dead at its end: those live
    out of a predecessor or written in the block, and not live out of it (backward dataflow
    over bit sets of a register numbering, not sets of names).  Dropping dead registers keeps
    the environments small: the CUDA-C front end makes many one-use temporaries; dropping
    only these keeps the work per block in proportion to what changes there."""
    number: dict[str, int] = {}

    def bit(name: str) -> int:
        n = number.get(name)
        if n is None:
            n = number[name] = len(number)
        return 1 << n

    def bits(op) -> int:
        return _bits(op, bit)

    use: dict[int, int] = {}
    defs: dict[int, int] = {}
    writes: dict[int, int] = {}  # guarded or not
    for blk in cfg.blocks:
        u = d = w = 0
        for ins in blk.instrs:
            read = written = 0
            for x in ins.srcs:
                kind = type(x)
                if kind is Reg:  # (most operands: `bit` inline; immediates and symbols name none)
                    n = number.get(x.name)
                    if n is None:
                        n = number[x.name] = len(number)
                    read |= 1 << n
                elif kind is not Imm and kind is not Sym:
                    read |= bits(x)
            for x in ins.dests:
                if type(x) is Reg:
                    n = number.get(x.name)
                    if n is None:
                        n = number[x.name] = len(number)
                    written |= 1 << n
                elif isinstance(x, Addr):
                    read |= bits(x)
                else:
                    written |= bits(x)
            if ins.guard:
                read |= bit(ins.guard[0])
            u |= read & ~d
            w |= written
            if ins.guard is None:
                d |= written
        use[blk.id], defs[blk.id], writes[blk.id] = u, d, w
    live_in = {b: 0 for b in use}
    live_out = {b: 0 for b in use}
    order = list(reversed(cfg.rpo()))
    succs = {b: [s for s in cfg.succs(b) if s != EXIT] for b in order}
    preds = {b: [p for p in cfg.preds(b) if p in succs] for b in order}
    stale = set(order)  # blocks whose successors' live-in changed since they were computed
    while stale:  # (rounds in `order` until nothing changes: the least fixpoint, in any order)
        for b in order:
            if b not in stale:
                continue
            stale.discard(b)
            out = 0
            for s in succs[b]:
                out |= live_in[s]
            live_out[b] = out
            inn = use[b] | (out & ~defs[b])
            if inn != live_in[b]:
                live_in[b] = inn
                stale.update(preds[b])
    dead = {}
    for b in use:
        may_hold = writes[b]
        for p in cfg.preds(b):
            if p != EXIT:
                may_hold |= live_out.get(p, 0)
        dead[b] = may_hold & ~live_out[b]
    return number, dead
