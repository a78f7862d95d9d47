"""Per-lane abstract values of registers.

- `Aff(base, off, align, scope)`: lane l holds `B + off[l]`, where `B` is a warp-uniform
  unknown named by term id `base` (0: no unknown part, the value is exact) that is a
  multiple of `align`.  `%laneid` is Aff(0, (0..31)); `%tid.x` is Aff(W, (0..31), 32,
  "warp"); a kernel parameter is Aff(P, (0,)*32, 1, "block").
- `Unk(term)`: a data-dependent value that may differ between lanes.
- `Pred(lanes)`: a predicate, true on the lanes of the LaneSet `lanes`.
- `MaskV(lanes, origin)`: a 32-bit lane mask value (from a ballot, activemask, match)
  that is the same on every participating lane.

Terms are interned ints (value numbering): the same computation on the same inputs gets
the same term, so `i < n` computed twice is recognised as one condition.
"""
from __future__ import annotations

from math import gcd

from .interned import Interned
from .lanes import FULL, FULL_SET, LaneSet

LANES = tuple(range(32))
ZEROS = (0,) * 32
_SCOPES = {"block": 0, "warp": 1, "lane": 2}


def wider(a: str, b: str) -> str:
    return a if _SCOPES[a] >= _SCOPES[b] else b


class Aff:
    __slots__ = ("base", "off", "align", "scope", "_h")

    def __init__(self, base: int, off: tuple, align: int = 0, scope: str = "block"):
        self.base = base
        self.off = off
        self.align = align if base else 0
        self.scope = scope if base else "block"
        self._h = None

    @property
    def exact(self) -> bool:
        return self.base == 0

    @property
    def uniform(self) -> bool:
        o = self.off
        return o.count(o[0]) == 32

    def const(self) -> int | None:
        return self.off[0] if self.base == 0 and self.uniform else None

    def __eq__(self, o):
        return (isinstance(o, Aff) and self.base == o.base and self.off == o.off
                and self.align == o.align and self.scope == o.scope)

    def __hash__(self):
        if self._h is None:
            self._h = hash((self.base, self.off, self.align, self.scope))
        return self._h

    def __repr__(self):
        o = self.off
        offs = f"{o[0]}" if self.uniform else ("lane" if o == LANES else f"{o[:4]}..")
        return f"Aff(t{self.base}+{offs}, align={self.align}, {self.scope})" if self.base else f"Exact({offs})"


class Unk:
    __slots__ = ("term",)

    def __init__(self, term: int):
        self.term = term

    def __eq__(self, o):
        return isinstance(o, Unk) and o.term == self.term

    def __hash__(self):
        return hash(("U", self.term))

    def __repr__(self):
        return f"Unk(t{self.term})"


class Pred:
    __slots__ = ("lanes",)

    def __init__(self, lanes: LaneSet):
        self.lanes = lanes

    def __eq__(self, o):
        return isinstance(o, Pred) and o.lanes == self.lanes

    def __hash__(self):
        return hash(("P", self.lanes))

    def __repr__(self):
        return f"Pred({self.lanes})"


class MaskV:
    __slots__ = ("lanes", "origin", "loc")

    def __init__(self, lanes: LaneSet, origin: str, loc=None):
        self.lanes = lanes
        self.origin = origin  # "ballot" | "activemask" | "match"
        self.loc = loc

    def __eq__(self, o):
        return isinstance(o, MaskV) and o.lanes == self.lanes and o.origin == self.origin

    def __hash__(self):
        return hash(("M", self.lanes, self.origin))

    def __repr__(self):
        return f"MaskV({self.origin}, {self.lanes})"


Value = Aff | Unk | Pred | MaskV


def exact(vals) -> Aff:
    return Aff(0, tuple(vals))


_CONSTS: dict[int, Aff] = {}


def const(c: int) -> Aff:
    v = _CONSTS.get(c)
    if v is None:
        v = Aff(0, (c,) * 32)
        if len(_CONSTS) < 4096:
            _CONSTS[c] = v
    return v


def is_uniform(v) -> bool:
    if isinstance(v, Aff):
        return v.uniform
    if isinstance(v, MaskV):
        return True
    if isinstance(v, Pred):
        e = v.lanes.exact
        return e in (0, FULL) if e is not None else False
    return False


def scope_of(v) -> str:
    if isinstance(v, Aff):
        return v.scope if v.uniform else "lane"
    if isinstance(v, MaskV):
        return "warp"
    return "lane"


class Terms(Interned):
    """Value computations as small ints, with their text."""

    def __init__(self):
        super().__init__("")

    def get(self, key, text: str = "") -> int:
        return self.intern(key, text)



def pred_of(v) -> LaneSet | None:
    """The lanes on which a value used as a predicate is true (None: unknown)."""
    if isinstance(v, Pred):
        return v.lanes
    if isinstance(v, Aff) and v.exact:
        bits = 0
        for lane, x in enumerate(v.off):
            if x:
                bits |= 1 << lane
        return LaneSet.const(bits)
    return None


def mask_of(v) -> LaneSet | None:
    """The lanes named by a value used as a membermask (None: varies across lanes/unknown)."""
    if isinstance(v, MaskV):
        return v.lanes
    if isinstance(v, Aff) and v.exact and v.uniform:
        return LaneSet.const(v.off[0] & FULL)
    return None


def join_offsets(a: Aff, b: Aff):
    """Offsets and alignment for the join of two affine values, or None."""
    d = b.off[0] - a.off[0]
    if all(y - x == d for x, y in zip(a.off, b.off)):
        al = gcd(a.align or 0, b.align or 0, abs(d))
        return a.off, al
    return None


FULL_PRED = Pred(FULL_SET)
