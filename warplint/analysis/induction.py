"""How an address moves between iterations of the loops around it.

A memory access pending from an earlier iteration of a loop (`tile[i][i]` written when `i` was
one less) has the same abstract address as the one of this iteration: the same interned terms.
Their values differ where a term is a loop's induction variable, a register that every
iteration advances by the same non-zero constant (`i++`, `p += 4`): then the two addresses lie
a non-zero multiple of a known stride apart (`IterationShift`).  A warp-uniform factor the
analysis does not know (a leading dimension `lda` in `a[i * lda]`) is taken as non-zero, as
distinct base terms are taken as distinct arrays.  WL007 uses the stride only to rule out a
pair of accesses that would meet within one iteration (analysis/memory.py)."""
from __future__ import annotations

from math import gcd

from ..ir import Imm, Reg
from .domain import MergePoint
from .values import Aff, Unk


def loop_steps(cfg) -> dict[tuple[int, str], int]:
    """(loop header, register) -> the constant every iteration adds to the register: its one
    write in the loop, in a block that each iteration passes, is `r = r + c` (directly or
    through one temporary, `t = r + 1; r = t`), c != 0."""
    out = {}
    for header, body in cfg.loops.items():
        writes: dict[str, list] = {}
        for b in body:
            for ins in cfg.blocks[b].instrs:
                for d in ins.dests:
                    if isinstance(d, Reg):
                        writes.setdefault(d.name, []).append((b, ins))
        latches = [p for p in cfg.preds(header) if p in body]
        for reg, defs in writes.items():
            if len(defs) != 1:
                continue
            block, ins = defs[0]
            step = _step(ins, reg, writes)
            if step and ins.guard is None and all(cfg.dominates(block, p) for p in latches):
                out[header, reg] = step
    return out


def _step(ins, reg: str, writes: dict) -> int | None:
    """c when `ins` writes reg + c into reg (one `mov` from a temporary written once allowed)."""
    if ins.op == "mov" and len(ins.srcs) == 1 and isinstance(ins.srcs[0], Reg):
        tmp = writes.get(ins.srcs[0].name, ())
        if len(tmp) != 1 or tmp[0][1].guard is not None:
            return None
        ins = tmp[0][1]
    if ins.op not in ("add", "sub") or len(ins.srcs) != 2:
        return None
    a, b = ins.srcs
    if isinstance(a, Reg) and a.name == reg and isinstance(b, Imm) and isinstance(b.value, int):
        return b.value if ins.op == "add" else -b.value
    if ins.op == "add" and isinstance(b, Reg) and b.name == reg and isinstance(a, Imm) \
            and isinstance(a.value, int):
        return a.value
    return None


class IterationShift:
    """For one function: by how much an address computed in an earlier iteration differs from
    the same address computed now."""

    def __init__(self, fa):
        self.cfg = fa.cfg
        self.steps = loop_steps(fa.cfg)
        self.keys = {i: k for k, i in fa.terms.items()}
        self.loops = fa.cfg.loops

    def stride(self, base: int, crossed: frozenset) -> int | None:
        """G: the address with this base term, computed after the back edges of the loops
        `crossed` were taken, lies a non-zero multiple of G bytes from where it was computed
        before; None: not known, or the same.  Only a loop that was not left and entered anew
        moves its induction variables by whole steps: one whose enclosing loops are not
        crossed."""
        moving = {h for h in crossed if not any(h in self.loops[o] and o != h for o in crossed)}
        form = self._linear(base, moving, crossed, 0)
        if not form:
            return None
        if len(form) == 1:
            (coeff, _), = form.values()
            return abs(coeff) or None
        if any(scaled for _, scaled in form.values()):
            return None  # unknown factors: the moves may cancel
        return abs(sum(coeff for coeff, _ in form.values())) or None

    def _linear(self, term: int, moving: set, crossed: frozenset, depth: int):
        """{induction term: (bytes per step, scaled by an unknown factor)} for `term`, the terms
        that do not move left out; None when a term moves in a way not known.  Every other
        term keeps its value (the analysis takes one term for one value, a load's result
        included)."""
        key = self.keys.get(term)
        if depth > 32 or key is None:
            return None
        if isinstance(key, MergePoint):
            return self._merge_point(term, key, moving, crossed)
        if not isinstance(key, tuple) or not key:
            return None
        head, terms = key[0], [x for x in key[1:3] if type(x) is int]
        if head == "mul" and len(key) == 3 and len(terms) == 2:  # (term, constant)
            inner = self._linear(key[1], moving, crossed, depth + 1)
            return None if inner is None else {t: (c * key[2], s) for t, (c, s) in inner.items()}
        if head in ("add", "sub") and len(key) == 3 and len(terms) == 2:
            return self._sum(head, self._linear(key[1], moving, crossed, depth + 1),
                             self._linear(key[2], moving, crossed, depth + 1))
        pair = key[1] if len(key) == 2 and isinstance(key[1], tuple) and len(key[1]) == 2 else None
        if head in ("add", "sub") and pair:  # two uniform values
            a, b = pair
            return self._sum(head, self._value_linear(a, moving, crossed, depth),
                             self._value_linear(b, moving, crossed, depth))
        if head in ("div", "and") and terms:  # of a term: moves unless the term does not
            return {} if self._linear(key[1], moving, crossed, depth + 1) == {} else None
        if head == "mul" and len(key) == 3:  # two uniform values multiplied (i * lda)
            return self._product(key[1], key[2], moving, crossed, depth)
        return {} if self._values_still(key[1:], moving, crossed, depth) else None

    def _merge_point(self, term: int, key: MergePoint, moving: set, crossed: frozenset):
        if key.cfg != id(self.cfg) or key.block is None:
            return None
        step = self.steps.get((key.block, key.reg))
        if key.block in moving and step:
            return {term: (step, False)}
        if any(key.block in self.loops[h] for h in crossed):
            return None  # changed in the loop, not by a constant step
        return {}

    @staticmethod
    def _sum(op: str, a, b):
        if a is None or b is None:
            return None
        sign = 1 if op == "add" else -1
        out = dict(a)
        for t, (c, s) in b.items():
            c0, s0 = out.get(t, (0, False))
            out[t] = (c0 + sign * c, s0 or s)
        return {t: v for t, v in out.items() if v[0]}

    def _product(self, a, b, moving, crossed, depth):
        """(A + a) * (B + b) with B + b still: A's moves times that factor, a multiple of what
        B's alignment and b share (blockDim.x: of 32)."""
        la, lb = self._value_linear(a, moving, crossed, depth), self._value_linear(b, moving, crossed, depth)
        if la is None or lb is None or la and lb:
            return None
        if not la and not lb:
            return {}
        form, factor = (la, b) if la else (lb, a)
        if not isinstance(factor, Aff) or not factor.uniform:
            return None
        if not factor.base:  # a known number
            return {t: (c * factor.off[0], s) for t, (c, s) in form.items()}
        unit = gcd(factor.align or 1, factor.off[0])
        return {t: (c * unit, True) for t, (c, _) in form.items()}

    def _value_linear(self, v, moving, crossed, depth):
        if isinstance(v, Aff):
            return self._linear(v.base, moving, crossed, depth + 1) if v.base else {}
        if isinstance(v, Unk):
            return self._linear(v.term, moving, crossed, depth + 1)
        return {} if isinstance(v, (str, int, float)) or v is None else None

    def _values_still(self, parts, moving, crossed, depth) -> bool:
        """Does no abstract value among `parts` (nested in tuples) move?"""
        for p in parts:
            if isinstance(p, tuple):
                if not self._values_still(p, moving, crossed, depth):
                    return False
            elif isinstance(p, (Aff, Unk)) and self._value_linear(p, moving, crossed, depth) != {}:
                return False
        return True
