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

from collections import Counter
from math import gcd
from operator import sub

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
    __slots__ = ("term", "_h")

    def __init__(self, term: int):
        self.term = term
        self._h = None

    def __eq__(self, o):
        return isinstance(o, Unk) and o.term == self.term

    def __hash__(self):
        if self._h is None:
            self._h = hash(("U", self.term))
        return self._h

    def __reduce__(self):  # (a copy hashes afresh: a string's hash differs between processes)
        return Unk, (self.term,)

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
    """Value computations as small ints, with their text.  Three facts about terms are kept
    for `difference_scope`: where an operand of a sum of two unknowns is one value
    (`scopes`), what it is a multiple of (`aligns`: an exact division of the sum divides each
    operand), and which loop-merged terms move from another term by block-uniform steps
    (`moves_from`: `j = threadIdx.x; ...; j += blockDim.x`)."""

    def __init__(self):
        super().__init__("")
        self.scopes: dict[int, str] = {}
        self.aligns: dict[int, int] = {}
        self.moves_from: dict[int, int] = {}  # merged term -> the term it starts from (0: several)
        self.steps: dict[int, frozenset] = {}  # merged term -> the (atom, coefficient) its back edges add
        # butterfly steps (`Evaluator.butterfly`): a full-warp shfl.bfly's unknown result ->
        # (the term it read, the lane xor m); an unknown -> the lane xors s (bit s) under which
        # it is the same (lane l and lane l ^ s hold one value)
        self.partners: dict[int, tuple[int, int]] = {}
        self.symmetric: dict[int, int] = {}
        self.symmetric_lits: dict[int, int] = {}  # the same for lane conditions (Literals ids)

    def get(self, key, text: str = "") -> int:
        return self.intern(key, text)

    def merged(self, point) -> int:
        """The term of the value merged at `point` (a domain.MergePoint), named "<register>
        (merged)" when first met (the name is not formatted again for a known point)."""
        known = self._ids.get(point)
        return known if known is not None else self.intern(point, f"{point.reg} (merged)")

    def note_scope(self, term: int, scope: str, align: int = 0) -> None:
        if term:
            self.scopes.setdefault(term, scope)
            if align > 1:
                known = self.aligns.get(term, 1)
                self.aligns[term] = known * align // gcd(known, align)

    def note_moves(self, merged: int, start: int, steps: frozenset = frozenset()) -> None:
        """`merged` (a loop header's value) is `start` plus block-uniform steps (`steps`: what
        one back edge adds, as (atom, coefficient) pairs)."""
        known = self.moves_from.get(merged)
        if known is None:
            self.moves_from[merged] = start
        elif known != start:
            self.moves_from[merged] = 0
        self.steps[merged] = self.steps.get(merged, frozenset()) | steps


MAX_DEPTH = 16


def _linear(terms: Terms, t: int, stop: int = 0, depth: int = 0) -> dict | None:
    """{atom: coefficient} with `t` the sum of the atoms: sums and differences of two unknowns
    are opened, a loop-merged term is its start plus its steps (an atom of its own, block
    uniform); `stop` is kept closed.  None past MAX_DEPTH."""
    if not t:
        return {}
    if depth > MAX_DEPTH:
        return None
    start = terms.moves_from.get(t) if t != stop else None
    if start:
        inner = _linear(terms, start, stop, depth + 1)
        return None if inner is None else _plus(inner, {("steps", t): 1}, 1)
    key = terms.key_of(t) if t != stop else None
    if isinstance(key, tuple) and len(key) == 3 and key[0] in ("add", "sub") \
            and type(key[1]) is int and type(key[2]) is int:
        x, y = _linear(terms, key[1], stop, depth + 1), _linear(terms, key[2], stop, depth + 1)
        return None if x is None or y is None else _plus(x, y, 1 if key[0] == "add" else -1)
    if isinstance(key, tuple) and len(key) == 3 and key[0] == "div" and type(key[1]) is int:
        return _divided(terms, t, _linear(terms, key[1], stop, depth + 1), key[2])
    return {t: 1}


def _divided(terms: Terms, t: int, form: dict | None, c: int) -> dict | None:
    """The form of `t` = (the sum `form`) / c: an exact division divides each atom that is a
    multiple of c (`(warp base + blockIdx.x * blockDim.x) / 2`, both multiples of 32), giving
    the atoms `atom / c` that dividing each alone gives; `t` stays closed otherwise."""
    if form is None:
        return None
    if not form or any(isinstance(a, tuple) or terms.aligns.get(a, 1) % c for a in form):
        return {t: 1}
    return {terms.get(("div", a, c), "div"): k for a, k in form.items()}


def _plus(a: dict, b: dict, sign: int) -> dict:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) + sign * c
    return {k: c for k, c in out.items() if c}


def _block_uniform(terms: Terms, atom) -> bool:
    if isinstance(atom, tuple):  # a loop's steps, recorded only when block uniform
        return True
    if terms.scopes.get(atom) == "block":
        return True
    key = terms.key_of(atom)
    if isinstance(key, tuple) and len(key) == 3 and key[0] == "div" and type(key[1]) is int:
        return _block_uniform(terms, key[1])  # x / c: as uniform as x
    return isinstance(key, tuple) and len(key) == 2 and key[0] in ("param", "dparam")


def difference_scope(terms: Terms, a: int, b: int) -> str | None:
    """"block" when the unknowns `a - b` is the same in every thread of the block: the parts
    that vary between warps cancel (`j` from threadIdx.x by steps of blockDim.x against
    `n + threadIdx.x`); None when that is not known."""
    x, y = _linear(terms, a), _linear(terms, b)
    if x is None or y is None:
        return None
    return "block" if all(_block_uniform(terms, atom) for atom in _plus(x, y, -1)) else None


def steps_from(terms: Terms, x: int, t: int) -> bool:
    """Is `x` the term `t` plus block-uniform parts (a back edge's `j + blockDim.x`)?"""
    form = _linear(terms, x, stop=t)
    return form is not None and form.get(t) == 1 and all(
        _block_uniform(terms, atom) for atom, c in form.items() if atom != t)



UNKNOWN_STEP = frozenset({("?", 1)})  # a back edge whose step is not known as atoms


def back_steps(terms: Terms, x: int, t: int, start: int) -> frozenset:
    """What the back edge's `x` adds to the loop's merged term `t` (or, in the first round, to
    its `start`): (atom, coefficient) pairs."""
    for base in (t, start):
        form = _linear(terms, x, stop=base)
        if form is not None and form.get(base) == 1:
            return frozenset((atom, c) for atom, c in form.items() if atom != base)
    return UNKNOWN_STEP


def thread_index_steps(terms: Terms, t: int) -> list[Counter] | None:
    """When `t` is threadIdx.x's warp base plus positive multiples of terms (a loop's steps
    counted as the one term each iteration adds: `i = threadIdx.x; i += S`), the factors of
    each multiple (`product_factors`); None otherwise."""
    form = _linear(terms, t)
    if not form or form.pop(terms.get(("warpbase",), "warp's first thread"), 0) != 1:
        return None
    out = []
    for atom, c in form.items():
        if isinstance(atom, tuple):  # a loop's steps
            step = terms.steps.get(atom[1], UNKNOWN_STEP)
            atom, c = next(iter(step)) if len(step) == 1 else (None, 0)
        if not isinstance(atom, int) or c <= 0:
            return None
        out.append(Counter(product_factors(terms, atom)))
    return out


def product_factors(terms: Terms, t: int, depth: int = 0) -> list[int]:
    """The terms whose product `t` is (`q * blockDim.x`: [q, blockDim.x]); [t] when no product."""
    key = terms.key_of(t)
    if depth < MAX_DEPTH and isinstance(key, tuple) and len(key) == 3 and key[0] == "mul" \
            and all(isinstance(f, Aff) and f.off == ZEROS for f in key[1:]):
        return [x for f in key[1:] for x in product_factors(terms, f.base, depth + 1)]
    return [t]


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
    ao, bo = a.off, b.off
    d = bo[0] - ao[0]
    if (ao == bo) if d == 0 else list(map(sub, bo, ao)).count(d) == 32:  # every lane moved by d
        al = gcd(a.align or 0, b.align or 0, abs(d))
        return a.off, al
    return None


FULL_PRED = Pred(FULL_SET)
