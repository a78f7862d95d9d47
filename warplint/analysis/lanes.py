"""Symbolic sets of lanes.

A `LaneSet` is a union of cubes.  A cube is `(bits, lits)`: the lanes in the 32-bit `bits`
for which every literal in `lits` holds.  A literal is a signed int: `+id` means the
condition `id` holds for that lane, `-id` that it does not.  Conditions are registered in a
`Literals` table with their kind:

- "uniform": the same truth value on every lane of the warp (a branch on a kernel
  parameter, on blockIdx, or on a warp-uniform value derived from threadIdx);
- "lane":    an unknown, data-dependent subset of the lanes.

Questions the checks ask ("can this active set differ from that membermask?") are answered
lane by lane with a truth table over the literals involved, under the condition that the
instruction executes at all (some cube is satisfiable).

Work is bounded: a set whose representation would exceed `WIDEN_CUBES` cubes (or an
intersection that would multiply more than `PRODUCT_CAP` cube pairs) is widened to "an unknown
subset of its possible lanes", a fresh per-lane literal; a cube with more than `MAX_LITS`
literals keeps the oldest and one fresh literal for the rest.  That over-approximates the set (every
lane it may hold stays possible, none is claimed definitely), and `STATS` counts it so that the
analysis can say its results are approximate.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import is_

from .interned import Interned

FULL = 0xFFFFFFFF
MAX_CUBES = 24
MAX_VARS = 12
MAX_LITS = 16  # a cube with more literals keeps the oldest, and one unknown for the rest
WIDEN_CUBES = 32  # larger sets are widened to an unknown subset of their lanes
PRODUCT_CAP = 96  # intersections with more cube pairs are widened without being computed
WIDE_BASE = 1 << 40  # literal ids from here on are widened sets (not in any Literals table)
STATS = {"widened": 0}  # how many sets were widened in this process


@dataclass(frozen=True, slots=True)
class LitInfo:
    kind: str  # "uniform" | "lane"
    scope: str  # "block" (same across the block/grid) | "warp" | "lane"
    text: str  # what the condition is, for messages ("%r3 < n", "lane < 16")
    loc: object = None  # where it was computed (branch/setp Loc)


class Literals(Interned):
    """Interned conditions; -id is the negation of id."""

    def get(self, key, kind: str, scope: str, text: str, loc=None) -> int:
        lid = self._ids.get(key)
        return lid if lid is not None else self.intern(key, LitInfo(kind, scope, text, loc))

    def __getitem__(self, lit: int) -> LitInfo:
        lit = abs(lit)
        return self.info[lit] if lit < WIDE_BASE else WIDENED


WIDENED = LitInfo("lane", "lane", "a subset too complex to track")


Cube = tuple  # (bits: int, lits: frozenset[int])
_NOLITS: frozenset = frozenset()


class LaneSet:
    __slots__ = ("cubes", "_hash")

    def __init__(self, cubes=()):
        self.cubes = frozenset(cubes)
        self._hash = None

    # -- construction ---------------------------------------------------------------
    @staticmethod
    def const(bits: int) -> "LaneSet":
        bits &= FULL
        return LaneSet([(bits, _NOLITS)]) if bits else EMPTY

    @staticmethod
    def lit(lit: int, bits: int = FULL) -> "LaneSet":
        return LaneSet([(bits & FULL, frozenset([lit]))])

    def __eq__(self, other):
        return isinstance(other, LaneSet) and self.cubes == other.cubes

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self.cubes)
        return self._hash

    def __repr__(self):
        return "LaneSet(" + " | ".join(f"{b:#010x}{sorted(l) if l else ''}" for b, l in self.cubes) + ")"

    # -- algebra ----------------------------------------------------------------------
    def is_empty(self) -> bool:
        return not self.cubes

    def and_(self, other: "LaneSet") -> "LaneSet":
        if other is self:
            return self
        if len(self.cubes) == 1 and len(other.cubes) == 1:
            (b1, l1), = self.cubes
            (b2, l2), = other.cubes
            if not l1 and not l2:
                return LaneSet.const(b1 & b2)
            if not l2 and b1 & b2 == b1:
                return self
            if not l1 and b1 & b2 == b2:
                return other
        # the very same operands (by identity, kept with the result)
        return _remembered(_INTERSECTED, (id(self.cubes), id(other.cubes)), (self.cubes, other.cubes),
                           self._intersect, other)

    def _intersect(self, other: "LaneSet") -> "LaneSet":
        if len(self.cubes) * len(other.cubes) > PRODUCT_CAP and _overlapping_pairs(self, other) > PRODUCT_CAP:
            return _widen(self.possible_bits & other.possible_bits, (self.cubes, other.cubes))
        out = []
        for b1, l1 in self.cubes:
            for b2, l2 in other.cubes:
                b = b1 & b2
                if not b:
                    continue
                lits = l1 | l2 if l2 else l1
                if l1 and l2 and any(-x in l1 for x in l2):
                    continue
                if len(lits) > MAX_LITS:
                    lits = _fewer_lits(lits)
                out.append((b, lits))
        return _simplify(out)

    def and_bits(self, bits: int) -> "LaneSet":
        return _simplify([(b & bits, l) for b, l in self.cubes if b & bits])

    def or_(self, other: "LaneSet") -> "LaneSet":
        if not other.cubes or other is self:
            return self
        if not self.cubes:
            return other
        if len(self.cubes) == 1 and len(other.cubes) == 1:
            (b1, l1), = self.cubes
            (b2, l2), = other.cubes
            if not l1 and not l2:
                return LaneSet.const(b1 | b2)
        return _simplify(list(self.cubes | other.cubes))

    @staticmethod
    def union(sets) -> "LaneSet":
        """The union of many sets, simplified once (not once per operand)."""
        sets = [s for s in sets if s.cubes]
        if len(sets) <= 1:
            return sets[0] if sets else EMPTY
        return _simplify([c for s in sets for c in s.cubes])

    def not_(self) -> "LaneSet | None":
        """Complement, or None when it would be too large to represent.  The fixpoint negates
        the same branch and guard conditions again and again: kept, keyed by the cubes in the
        order they are listed (the result can depend on it)."""
        return _remembered(_NEGATED, tuple(self.cubes), (), LaneSet._complement, self)

    def _complement(self) -> "LaneSet | None":
        result = FULL_SET
        for b, lits in self.cubes:
            comp = [(FULL & ~b, _NOLITS)] if b != FULL else []
            comp += [(b, frozenset([-x])) for x in lits]
            result = result.and_(_simplify([c for c in comp if c[0]]))
            if len(result.cubes) > MAX_CUBES:
                return None
        return result

    # -- lane questions -------------------------------------------------------------------
    @property
    def lits(self) -> set[int]:
        return {abs(x) for _, l in self.cubes for x in l}

    @property
    def possible_bits(self) -> int:
        """Lanes that can be in the set for some valuation."""
        bits = 0
        for b, _ in self.cubes:
            bits |= b
        return bits

    @property
    def exact(self) -> int | None:
        """The concrete mask when the set does not depend on any literal."""
        if all(not l for _, l in self.cubes):
            return self.possible_bits
        return None

    def warp_exact(self, lits: "Literals") -> int | None:
        """The concrete mask for every warp that executes here, when only warp-uniform
        conditions (which decide *whether* a warp gets here, not which lanes) are involved."""
        bits = None
        for b, l in self.cubes:
            if any(lits[x].kind != "uniform" for x in l) or (bits is not None and b != bits):
                return None
            bits = b
        return bits if bits is not None else 0

    def lane_formula(self, lane: int) -> list[frozenset]:
        bit = 1 << lane
        return [l for b, l in self.cubes if b & bit]


FULL_SET = LaneSet([(FULL, _NOLITS)])
EMPTY = LaneSet()


_SIMPLIFIED: dict[tuple, tuple] = {}  # cubes as given -> ((), the set, how many sets it widened)
_SIMPLIFIED_MAX = 1 << 14  # entries kept before a memo starts afresh (a few MB)
# intersections of the very same cube sets (by identity: equal sets may list their cubes in
# another order) -> (the two operands' cubes, the result, how many sets it widened)
_INTERSECTED: dict[tuple, tuple] = {}
_COMPARED: dict[tuple, tuple] = {}  # (cubes, cubes, id of the literals) -> (the literals, the Comparison)
_NEGATED: dict[tuple, tuple] = {}  # cubes in their order -> ((), the complement or None, how many sets it widened)


def forget_memos() -> None:
    """Empty the memos (a benchmark's runs each start cold, as a fresh process does)."""
    _SIMPLIFIED.clear()
    _INTERSECTED.clear()
    _COMPARED.clear()
    _NEGATED.clear()


def _simplify(cubes: list) -> LaneSet:
    """The set of `cubes`, simplified (`_simplify_cubes`).  The fixpoint asks for the same
    intersections again and again, so results are kept, keyed by the cubes in the order given
    (the simplification's result can depend on it); a kept result that widened counts again."""
    if len(cubes) <= 1:
        return _simplify_cubes(cubes)
    return _remembered(_SIMPLIFIED, tuple(cubes), (), _simplify_cubes, cubes)


def _remembered(memo: dict, key, held: tuple, compute, argument) -> LaneSet:
    """`compute(argument)`, kept in `memo` under `key` (emptied past _SIMPLIFIED_MAX entries) with how
    many sets it widened, counted again on a hit.  `held`: the objects `key` names by identity,
    kept with the result so that a hit is for the very same ones."""
    kept = memo.get(key)
    if kept is not None and all(map(is_, kept[0], held)):
        STATS["widened"] += kept[2]
        return kept[1]
    widened = STATS["widened"]
    result = compute(argument)
    if len(memo) >= _SIMPLIFIED_MAX:
        memo.clear()
    memo[key] = (held, result, STATS["widened"] - widened)
    return result


def _simplify_cubes(cubes) -> LaneSet:
    cubes = [c for c in set(cubes) if c[0]]
    if len(cubes) <= 1:
        return LaneSet(cubes)
    if len(cubes) > PRODUCT_CAP:  # simplifying costs len² per round: widen instead
        return _widen(_bits_of(cubes), frozenset(cubes))
    changed = True
    while changed:
        changed = False
        # merge (b, L+x) | (b, L-x) -> (b, L); and (b1, L) | (b2, L) -> (b1|b2, L)
        by_lits: dict[frozenset, int] = {}
        for b, l in cubes:
            by_lits[l] = by_lits.get(l, 0) | b
        if len(by_lits) < len(cubes):
            changed = True
        cubes = [(b, l) for l, b in by_lits.items()]
        index = {(b, l) for b, l in cubes}
        for b, l in cubes:  # every merge of this round in one sweep
            if (b, l) not in index:
                continue
            for x in l:
                twin = (b, (l - {x}) | {-x})
                if twin in index:
                    index.discard((b, l))
                    index.discard(twin)
                    index.add((b, l - {x}))
                    changed = True
                    break
        cubes = list(index)
        # absorption: drop (b2, L2) when some (b1, L1) has b1 ⊇ b2 and L1 ⊆ L2
        kept = []
        for i, (b2, l2) in enumerate(cubes):
            absorbed = False
            for j, (b1, l1) in enumerate(cubes):
                if i != j and (b1 | b2) == b1 and l1 <= l2 and (b1, l1) != (b2, l2):
                    absorbed = True
                    break
            if absorbed:
                changed = True
            else:
                kept.append((b2, l2))
        cubes = kept
    if len(cubes) > WIDEN_CUBES:
        return _widen(_bits_of(cubes), frozenset(cubes))
    return LaneSet(cubes)


def _overlapping_pairs(a: LaneSet, b: LaneSet) -> int:
    """How many cube pairs of an intersection share lanes (sets split over disjoint groups of
    lanes, one condition per group, pair up group by group)."""
    return sum(1 for b1, _ in a.cubes for b2, _ in b.cubes if b1 & b2)


def _bits_of(cubes) -> int:
    bits = 0
    for b, _ in cubes:
        bits |= b
    return bits


def _fewer_lits(lits: frozenset) -> frozenset:
    """A cube over too many literals: the MAX_LITS - 1 oldest, and one unknown literal that
    stands for the others (fewer conditions: a superset of the lanes, none claimed definite)."""
    STATS["widened"] += 1
    ordered = sorted(lits, key=abs)
    rest = frozenset(ordered[MAX_LITS - 1:])
    return frozenset(ordered[:MAX_LITS - 1]) | {WIDE_BASE + (hash(rest) & 0xFFFFFFFFFF)}


def unknown_subset(s: LaneSet, what) -> LaneSet:
    """Some subset of the lanes `s` may hold (whichever lanes they are), named by `what`."""
    return _widen(s.possible_bits, what)


def _widen(bits: int, what) -> LaneSet:
    """An unknown subset of `bits`: one literal of its own, derived from the set it stands
    for (the same set widens to the same literal, so that fixpoints still converge; `what`
    holds only ints, whose hashes do not change from run to run)."""
    STATS["widened"] += 1
    if not bits:
        return EMPTY
    return LaneSet([(bits, frozenset([WIDE_BASE + (hash(what) & 0xFFFFFFFFFF)]))])


# -- truth-table reasoning ---------------------------------------------------------------

# A truth table over the 2**n valuations of n conditions is an int: bit v is the value under
# valuation v, where condition k (its index) is true if bit k of v is set.  One and/or of two
# tables decides all valuations at once (at most 2**MAX_VARS bits).

_VAR_TABLES: dict[tuple[int, int], int] = {}


def _var_table(k: int, n: int) -> int:
    """The table of condition k alone: true in the upper half of each period of 2**(k+1)."""
    table = _VAR_TABLES.get((k, n))
    if table is None:
        half = 1 << k
        period = ((1 << half) - 1) << half
        repeats = ((1 << (1 << n)) - 1) // ((1 << 2 * half) - 1)  # 1 every 2**(k+1) bits
        table = _VAR_TABLES[(k, n)] = period * repeats
    return table


def _table(formula: list[frozenset], index: dict[int, int], n: int) -> int:
    """The table of a disjunction of cubes (conjunctions of literals; -x: x is false)."""
    every = (1 << (1 << n)) - 1
    out = 0
    for cube in formula:
        t = every
        for x in cube:
            v = _var_table(index[abs(x)], n)
            t &= v if x > 0 else every & ~v
        out |= t
    return out


def _tables(vars_: list[int], *formulas: list[frozenset]) -> list[int]:
    index = {x: k for k, x in enumerate(vars_)}
    return [_table(f, index, len(vars_)) for f in formulas]


def _exec_formula(s: LaneSet, lits: "Literals | None") -> list[frozenset]:
    """When does some lane execute?  Only warp-uniform conditions say anything about all
    lanes at once; a per-lane condition holding for one lane says nothing about another."""
    if lits is None:
        return [l for _, l in s.cubes]
    return [frozenset(x for x in l if lits[x].kind == "uniform") for _, l in s.cubes]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Per-lane comparison of an active set with a membermask (32-bit masks): the lanes that can /
    always (whenever the instruction executes) be active but not in the mask, and the converse."""
    only_active_possible: int = 0
    only_active_definite: int = 0
    only_member_possible: int = 0
    only_member_definite: int = 0


def _exact_comparison(active: int, member: int) -> Comparison:
    return Comparison(active & ~member, active & ~member, member & ~active, member & ~active)


def compare(active: LaneSet, member: LaneSet, lits: "Literals | None" = None) -> Comparison:
    """Per-lane comparison of two lane sets, assuming the instruction executes
    (`exec_cond`, default `active`, is non-empty).
    With more than MAX_VARS literals involved, an over-approximation (`compare_roughly`).
    Remembered per sets and literal table: the checks of each rule and target ask again.
    """
    ea, em = active.exact, member.exact
    if ea is not None and em is not None:  # the common case: no conditions at all
        return _exact_comparison(ea, em)
    key = (active.cubes, member.cubes, id(lits))
    kept = _COMPARED.get(key)
    if kept is not None and kept[0] is lits:
        return kept[1]
    result = _compare(active, member, lits)
    if len(_COMPARED) >= _SIMPLIFIED_MAX:
        _COMPARED.clear()
    _COMPARED[key] = (lits, result)
    return result


def _compare(active: LaneSet, member: LaneSet, lits: "Literals | None") -> Comparison:
    if lits is not None:
        wa, wm = active.warp_exact(lits), member.warp_exact(lits)
        if wa is not None and wm is not None and not member.lits:
            # only warp-uniform conditions decide whether the warp gets here at all
            return _exact_comparison(wa, wm)
    ex = _exec_formula(active, lits)
    masks = [0, 0, 0, 0]  # in the order of Comparison's fields
    cache: dict = {}
    for lane in range(32):
        fa = active.lane_formula(lane)
        fm = member.lane_formula(lane)
        key = (tuple(fa), tuple(fm))
        if key not in cache:
            vars_ = sorted({abs(x) for f in (fa, fm, ex) for l in f for x in l})
            if len(vars_) > MAX_VARS:
                return compare_roughly(active, member)
            e, a, m = _tables(vars_, ex, fa, fm)  # where it executes, is active, is a member
            a_only, m_only = e & a & ~m, e & m & ~a
            # (some, every) executing valuation has the lane active and not a member; the converse
            cache[key] = (a_only != 0, e != 0 and a_only == e, m_only != 0, e != 0 and m_only == e)
        for k, hit in enumerate(cache[key]):
            if hit:
                masks[k] |= 1 << lane
    return Comparison(*masks)


def compare_roughly(active: LaneSet, member: LaneSet) -> Comparison:
    """`compare` without the conditions: a lane may be in one set and not the other unless
    it is in the other unconditionally; nothing is definite."""
    def unconditional(s: LaneSet) -> int:
        return _bits_of(c for c in s.cubes if not c[1])
    return Comparison(only_active_possible=active.possible_bits & ~unconditional(member),
                      only_member_possible=member.possible_bits & ~unconditional(active))


def too_many_conditions(*sets: LaneSet) -> bool:
    """Would `compare` of these sets fall back to `compare_roughly`?"""
    return len(set().union(*(s.lits for s in sets))) > MAX_VARS


def definite_bits(s: LaneSet, lits: "Literals | None" = None) -> int:
    """Lanes that are in `s` on every valuation where `s` is non-empty."""
    e = s.exact if lits is None else s.warp_exact(lits)
    if e is not None:
        return e
    ex = _exec_formula(s, lits)
    out = 0
    cache: dict = {}
    for lane in range(32):
        f = s.lane_formula(lane)
        if not f:
            continue
        key = tuple(f)
        if key not in cache:
            vars_ = sorted({abs(x) for g in (f, ex) for l in g for x in l})
            if len(vars_) > MAX_VARS:
                cache[key] = False
            else:
                e, in_s = _tables(vars_, ex, f)
                cache[key] = e & ~in_s == 0  # in `s` wherever `s` is non-empty
        if cache[key]:
            out |= 1 << lane
    return out


# -- words for users -------------------------------------------------------------------

def lane_ranges(bits: int) -> str:
    """0x0000ffff -> 'lanes 0-15'; 0x00010001 -> 'lanes 0, 16'; 0 -> 'no lanes'."""
    if not bits:
        return "no lanes"
    if bits == FULL:
        return "all 32 lanes"
    parts, lane = [], 0
    while lane < 32:
        if bits >> lane & 1:
            start = lane
            while lane + 1 < 32 and bits >> (lane + 1) & 1:
                lane += 1
            parts.append(f"{start}-{lane}" if lane > start else f"{start}")
        lane += 1
    word = "lane" if len(parts) == 1 and "-" not in parts[0] else "lanes"
    return f"{word} {', '.join(parts)}"


def describe(s: LaneSet, lits: Literals) -> str:
    """'lanes 0-15', 'all 32 lanes where (x < n)', 'a data-dependent subset of lanes 0-31'."""
    exact = s.exact
    if exact is not None:
        return lane_ranges(exact)
    from ..messages import condition_words  # the one home of how a condition reads
    words: dict[str, list] = {}  # the conditions as they read -> the lanes of each cube: one
    for b, l in sorted(s.cubes, key=lambda c: (-c[0], sorted(c[1]))):  # condition per group of
        conds = " and ".join(_condition(lits[x], x > 0, condition_words) for x in sorted(l, key=abs))
        words.setdefault(conds, []).append(b)  # lanes reads once, "(per group of 8 lanes)"
    parts = []
    for conds, groups in words.items():
        b = _bits_of((g, None) for g in groups)
        lanes = "the lanes" if b == FULL else lane_ranges(b)
        parts.append(f"{lanes} where {conds}{_per_group(groups)}" if conds else lane_ranges(b))
    return "; or ".join(parts)


def _per_group(groups: list[int]) -> str:
    """' (per group of 8 lanes)' when one condition reads the same for disjoint groups of lanes."""
    if len(groups) < 2 or sum(g.bit_count() for g in groups) != _bits_of((g, None) for g in groups).bit_count():
        return ""
    sizes = {g.bit_count() for g in groups}
    return f" (per group of {sizes.pop()} lanes)" if len(sizes) == 1 else " (per group of lanes)"


def _condition(info: LitInfo, positive: bool, words) -> str:
    line = getattr(info.loc, "line", None)
    return words(info.text, positive, line)


def together(s: LaneSet, a: int, b: int, lits: "Literals") -> bool:
    """Is lane `b` in `s` whenever lane `a` is, and conversely?  So when both lie in exactly the
    same cubes and those cubes' conditions are warp-uniform (one truth value for both lanes):
    the lanes of an aligned group that share every condition (`idx < n4` with n4 a multiple of
    4, for the 4 lanes of a group)."""
    for bits, l in s.cubes:
        ina, inb = bits >> a & 1, bits >> b & 1
        if ina != inb or ina and any(lits[x].kind != "uniform" for x in l):
            return False
    return True
