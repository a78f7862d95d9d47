"""What one comparison says about another: `x < round_down(y, g)` implies `x < y`.

A lane-strided loop over n elements (`for (i = lane; i < n; i += 32)`, a per-lane test) that
handles the whole warps of elements apart (`if (i < n / 32 * 32)`, one test per warp: i and the
bound share the alignment 32) runs that branch on every lane of the warp: where the warp test
holds, `B + r < Y'` with B and Y' multiples of g, so `B + o < Y' <= y` for every offset o below
the next multiple of g above r.  The per-lane test is then true on those lanes, and a block's
lanes drop it from the cubes that hold the warp test (`Implications.simplify`).

Indices are taken as not negative: `y / g * g` rounds towards zero, so it is at most `y` for
`y >= 0`, and a negative bound runs no iteration of a loop counting up from a lane index.
"""
from __future__ import annotations

from math import gcd

from .lanes import LaneSet, Literals
from .values import Aff, Terms

MAX_REMEMBERED = 4096


class Implications:
    """Per-lane comparisons implied by a warp-uniform comparison in the same cube, for one
    function's literals and terms."""

    def __init__(self, lits: Literals, terms: Terms):
        self.lits = lits
        self.terms = terms
        self._simplified: dict[LaneSet, LaneSet] = {}
        self._implied: dict[tuple, bool] = {}

    def simplify(self, s: LaneSet) -> LaneSet:
        """`s` with each per-lane comparison dropped from the cubes where a warp-uniform
        comparison of the same cube implies it on all the cube's lanes."""
        done = self._simplified.get(s)
        if done is not None:
            return done
        cubes, changed = [], False
        for bits, cube in s.cubes:
            implied = {x for x in cube if self._implied_in(x, cube, bits)}
            if implied:
                cube, changed = cube - implied, True
            cubes.append((bits, cube))
        out = LaneSet.union([LaneSet([c]) for c in cubes]) if changed else s
        if len(self._simplified) < MAX_REMEMBERED:
            self._simplified[s] = out
        return out

    def _implied_in(self, x: int, cube: frozenset, bits: int) -> bool:
        lits = self.lits
        if x < 0 or lits[x].kind == "uniform":
            return False
        return any(u > 0 and lits[u].kind == "uniform" and self._implies(u, x, bits) for u in cube)

    def _implies(self, u: int, x: int, bits: int) -> bool:
        key = (u, x, bits)
        known = self._implied.get(key)
        if known is None:
            known = self._below_rounded_bound(self.lits.key_of(u), self.lits.key_of(x), bits)
            if len(self._implied) < MAX_REMEMBERED:
                self._implied[key] = known
        return known

    def _below_rounded_bound(self, warp_test, lane_test, bits: int) -> bool:
        """warp_test `B + r < Y'` (Y' = y rounded down to a multiple of g) and lane_test
        `B + o < y`: does the first imply the second on every lane of `bits`?"""
        if not (_is_less_than(warp_test) and _is_less_than(lane_test)) or warp_test[2] != lane_test[2]:
            return False
        bound, rep = warp_test[3], warp_test[4]
        y, x = lane_test[3], lane_test[4]
        if not all(isinstance(v, Aff) for v in (bound, rep, y, x)):
            return False
        if not rep.uniform or x.uniform or not x.base or x.base != rep.base or rep.align != x.align:
            return False
        g = _common_alignment(x, bound)
        if not g or any(bound.off) or any(y.off) or not self._rounds_down(bound.base, y, g):
            return False
        r = rep.off[0]
        limit = g * (r // g) + g  # every offset below it is below Y' too
        return all(x.off[lane] < limit for lane in range(32) if bits >> lane & 1)

    def _rounds_down(self, term: int, y: Aff, g: int) -> bool:
        """Is the term `y / k * k` or `y & ~(k - 1)`, with k a multiple of g (so at most y)?"""
        key = self.terms.key_of(term)
        if not isinstance(key, tuple) or len(key) < 3:
            return False
        if key[0] == "mul" and isinstance(key[2], int) and key[2] > 0 and key[2] % g == 0:
            inner = self.terms.key_of(key[1]) if isinstance(key[1], int) else None
            return (isinstance(inner, tuple) and len(inner) == 2 and inner[0] == "div"
                    and inner[1][0] == y and isinstance(inner[1][1], Aff) and inner[1][1].const() == key[2])
        if key[0] == "and" and len(key) == 4 and key[1] == y.base and key[2] == 0 and isinstance(key[3], int):
            low = key[3] & -key[3]  # the evaluator made this term only for masks that clear low bits
            return low > 0 and low % g == 0
        return False


def _is_less_than(key) -> bool:
    """A comparison literal's key `("cmp", "gt", kind, b, a)`: a < b (signed or unsigned)."""
    return isinstance(key, tuple) and len(key) == 5 and key[:2] == ("cmp", "gt") and key[2] in ("s", "u")


def _common_alignment(x: Aff, bound: Aff) -> int:
    """The alignment both unknown parts share (0: none known)."""
    if not x.align or not bound.base or not bound.align:
        return 0
    return gcd(x.align, bound.align)
