"""The abstract domain of the divergence analysis: how values meet.

A register's values meet at two kinds of points, named by `MergePoint`:
- a block's entry, where environments flowing in over its edges meet;
- a guarded write (`@p mov r, x`): the new value on the lanes of `p`, the old one elsewhere.

Two joins:
- `merge_by_lanes`: lanes arrive with different values from different paths (the
  reconvergence point of a divergent branch): the value differs between lanes.  Exact where
  every path's lanes and values are exact, else a per-lane unknown.
- `join`: every lane takes the same path, but which one is unknown (a uniform branch, a loop
  back edge): the least upper bound of the two values, with widening at loop headers (an
  alignment that keeps shrinking jumps to 1) so that fixpoints converge.

Values (`values.py`) and lane sets (`lanes.py`) are the lattice elements.
"""
from __future__ import annotations

from itertools import compress
from operator import is_not
from typing import NamedTuple

from .lanes import EMPTY, FULL, LaneSet, Literals
from .values import ZEROS, Aff, Pred, Terms, Unk, back_steps, is_uniform, join_offsets, scope_of, steps_from, wider


class MergePoint(NamedTuple):
    """Where the values of register `reg` meet: the entry of `block`, or a guarded write
    (`block` None).  `cfg` tells apart the CFGs that share one table of terms."""
    cfg: int
    block: int | None
    reg: str


class Incoming(NamedTuple):
    """An environment flowing into a block over one edge."""
    env: dict
    lanes: LaneSet  # the lanes that take the edge
    back: bool  # a loop back edge


def negate(s: LaneSet, lits: Literals, why) -> LaneSet:
    """The complement of `s`; a fresh per-lane condition named by `why` where it would be too
    large to represent."""
    n = s.not_()
    if n is None:
        return LaneSet.lit(lits.get(("neg-overflow", why, s), "lane", "lane", "complex condition"))
    return n


def changed_keys(old: dict, new: dict) -> list:
    """Keys of `new` whose value is not the very object `old` has.  When both have the same
    keys in the same order (the common case) the comparison runs in C, so that environments
    of thousands of registers that differ in a few cost little to merge."""
    if len(old) == len(new) and list(old) == list(new):
        return list(compress(new, map(is_not, old.values(), new.values())))
    return [k for k, v in new.items() if old.get(k) is not v]


class Joins:
    """The joins of one function's analysis (they intern the merged values' names)."""

    def __init__(self, cfg_id: int, terms: Terms, lits: Literals):
        self.cfg_id = cfg_id
        self.terms = terms
        self.lits = lits
        self.widened: dict[MergePoint, int] = {}  # the alignment each point's join last gave
        self._lane_parts: dict[LaneSet, LaneSet] = {}

    def point(self, block: int | None, reg: str) -> MergePoint:
        return MergePoint(self.cfg_id, block, reg)

    def lane_part(self, s: LaneSet) -> LaneSet:
        """The set with warp-uniform conditions dropped: what differs between lanes (kept:
        the fixpoint asks again for the same blocks' lanes)."""
        part = self._lane_parts.get(s)
        if part is None:
            lits = self.lits
            part = self._lane_parts[s] = LaneSet([(bits, frozenset(x for x in l if lits[x].kind != "uniform"))
                                                  for bits, l in s.cubes])
        return part

    # -- environments -----------------------------------------------------------------
    def environments(self, block: int, incoming: list[Incoming], lanes: LaneSet,
                     loop_writes: set | None) -> dict:
        """Merge the register environments flowing into `block` (run on `lanes`).  Where lanes
        arrive from different forward paths (the reconvergence point of a divergent branch), a
        value that differs between the paths differs between lanes (`merge_by_lanes`).  A loop
        back edge is not such a merge: in each iteration all active lanes come round the same
        edge (`join`); round it, only what the loop writes (`loop_writes`) can change."""
        if not incoming:
            return {}
        if len(incoming) == 1 and (not incoming[0].back or incoming[0].lanes == lanes):
            return dict(incoming[0].env)  # (one forward edge: nothing differs, whatever its lanes)
        return self.merge(block, incoming, loop_writes)

    def merge(self, block: int, incoming: list[Incoming], loop_writes: set | None) -> dict:
        """`environments` the long way (any number of edges)."""
        forward = [i for i in incoming if not i.back]
        whole = self.lane_part(LaneSet.union([i.lanes for i in forward]))  # (the lanes back edges
        divergent = any(self.lane_part(i.lanes) != whole for i in forward)  # bring are among these)
        if loop_writes is not None and any(i.back for i in incoming):
            incoming = [i if not i.back else i._replace(env={k: v for k, v in i.env.items()
                                                             if k in loop_writes or not isinstance(k, str)})
                        for i in incoming]
        out, differing = self._union(incoming, divergent)
        forward = [i for i in incoming if not i.back] or incoming
        round_loop = any(i.back for i in incoming)  # a loop header: values come round the loop
        for k in differing:
            out[k] = self._meet(self.point(block, k), incoming, forward, divergent, round_loop)
        return out

    @staticmethod
    def _union(incoming: list[Incoming], divergent: bool) -> tuple[dict, set]:
        """The first environment with the others' registers added, and the registers whose
        values differ between the environments (or are missing from some, past a divergent
        branch)."""
        out = dict(incoming[0].env)
        differing = set()
        for inc in incoming[1:]:
            env = inc.env
            for k in changed_keys(out, env):
                v, cur = env[k], out.get(k)
                if cur is None:
                    out[k] = v
                    if divergent:
                        differing.add(k)
                elif cur != v:
                    differing.add(k)
        return out, differing

    def _meet(self, point: MergePoint, incoming: list[Incoming], forward: list[Incoming], divergent: bool,
              round_loop: bool):
        """One register's value where the environments meet."""
        k = point.reg
        merged = None
        if divergent and self._chosen_by_warps(k, forward):
            divergent = False
        if not divergent and not round_loop:
            exact = self._predicates_by_path(point, k, incoming)
            if exact is not None:
                return exact
        if divergent:
            vals = [i.env.get(k) for i in forward]
            if any(v is not None for v in vals):
                merged = self.merge_by_lanes(point, vals, [i.lanes for i in forward])
        present = [merged] if merged is not None else []
        present += [i.env[k] for i in incoming if (i.back or not divergent) and k in i.env]
        acc = present[0]
        for v in present[1:]:
            if v != acc:
                acc = self.join(point, acc, v, round_loop)
        return acc

    def _chosen_by_warps(self, k, forward: list[Incoming]) -> bool:
        """Do the lanes that bring each value of `k` differ only in warp-uniform conditions?
        Paths of a divergent branch that bring the same value (both sides of `if (x[i] != y)`
        set `n = 0`) make no choice between lanes for `k`."""
        by_value: dict[object, list[LaneSet]] = {}
        for i in forward:
            v = i.env.get(k)
            if v is None:
                return False
            by_value.setdefault(v, []).append(i.lanes)
        if len(by_value) == len(forward):
            return False  # every path its own value: the lanes of each path choose it
        whole = self.lane_part(LaneSet.union([i.lanes for i in forward]))
        return all(self._all_or_none(LaneSet.union(sets), whole) for sets in by_value.values())

    def _all_or_none(self, s: LaneSet, whole: LaneSet) -> bool:
        """Is `s`, under each warp-uniform condition it holds on, all of the lanes `whole`?
        (`c and lane < 16 or not c and lane >= 16` is not: it splits the warp either way.)"""
        by_choice: dict[frozenset, list[LaneSet]] = {}
        for bits, lits in s.cubes:
            uniform = frozenset(x for x in lits if self.lits[x].kind == "uniform")
            by_choice.setdefault(uniform, []).append(LaneSet([(bits, lits - uniform)]))
        return all(LaneSet.union(parts) == whole for parts in by_choice.values())

    # -- values -----------------------------------------------------------------------
    def merge_by_lanes(self, point: MergePoint, vals: list, masks: list[LaneSet]):
        """Lane l holds vals[i] where masks[i] holds l (None: no value from that path)."""
        exacts = [m.exact for m in masks]
        if all(e is not None for e in exacts) and all(
                v is None or isinstance(v, Aff) and v.exact for v in vals):
            return self._merge_exact(point, vals, exacts)
        if all(isinstance(v, Pred) or v is None for v in vals):
            return self._merge_predicates(point, vals, masks)
        return Unk(self.terms.merged(point))

    def _merge_exact(self, point: MergePoint, vals: list, exacts: list[int]):
        term = self.terms.merged(point)
        lanes = [None] * 32
        for v, e in zip(vals, exacts):
            if v is None:
                continue
            for lane in range(32):
                if e >> lane & 1:
                    if lanes[lane] is not None and lanes[lane] != v.off[lane]:
                        return Unk(term)
                    lanes[lane] = v.off[lane]
        return Aff(0, tuple(x if x is not None else 0 for x in lanes))

    def _predicates_by_path(self, point: MergePoint, k, incoming: list[Incoming]):
        """A predicate that whole warps bring from different forward paths (a uniform branch:
        `ok = (flags & FIX) == 0 && f()`): each path's value on the lanes that take it, kept
        exactly when small (a fresh condition would lose that `ok` implies the flag test)."""
        vals = [i.env.get(k) for i in incoming]
        if not all(isinstance(v, Pred) for v in vals):
            return None
        self.terms.merged(point)  # named in the same order as other merges
        return self._exact_predicates(vals, [i.lanes for i in incoming])

    @staticmethod
    def _exact_predicates(vals: list, masks: list[LaneSet]) -> Pred | None:
        """Lane l holds vals[i] where masks[i] holds l, when small enough to keep, else None."""
        if len(vals) <= 4 and all(len(m.cubes) <= 2 for m in masks) and all(
                v is None or len(v.lanes.cubes) <= 2 for v in vals):
            out = EMPTY
            for v, m in zip(vals, masks):
                if v is not None:
                    out = out.or_(v.lanes.and_(m))
            if len(out.cubes) <= 8:
                return Pred(out)
        return None

    def _merge_predicates(self, point: MergePoint, vals: list, masks: list[LaneSet]):
        self.terms.merged(point)  # named in the same order as other merges
        exact = self._exact_predicates(vals, masks)
        if exact is not None:
            return exact
        lit = self.lits.get(point, "lane", "lane", f"{point.reg} (merged)")
        return Pred(LaneSet.lit(lit))

    def join(self, point: MergePoint, a, v, round_loop: bool = False):
        """The least upper bound of two values that whole warps take (a uniform choice);
        `round_loop`: at a loop header, one of them comes round the loop."""
        t = self.terms.merged(point)
        if isinstance(a, Aff) and isinstance(v, Aff):
            return self._join_affine(point, t, a, v, round_loop)
        if is_uniform(a) and is_uniform(v) and not isinstance(a, Pred):
            return Aff(t, ZEROS, 1, wider(scope_of(a), scope_of(v)))
        if isinstance(a, Pred) or isinstance(v, Pred):
            sa, sv = self.uniform_scope(a), self.uniform_scope(v)
            if sa is not None and sv is not None:
                lit = self.lits.get(point, "uniform", wider(sa, sv), f"{point.reg} (merged)")
            else:
                lit = self.lits.get(point, "lane", "lane", f"{point.reg} (merged)")
            return Pred(LaneSet.lit(lit))
        return Unk(t)

    def uniform_scope(self, v) -> str | None:
        """Where `v` is one value ("block": the whole block, "warp": each warp), or None when
        it may differ between the lanes of a warp.  A predicate is uniform when it is true on
        all lanes or none in every warp, whichever way its uniform conditions go (`x != 0 &&
        a[blockIdx.x] == y` merged after the short circuit)."""
        if not isinstance(v, Pred):
            return scope_of(v) if is_uniform(v) else None
        if v.lanes.warp_exact(self.lits) not in (0, FULL):
            return None
        scope = "block"
        for x in v.lanes.lits:
            scope = wider(scope, self.lits[x].scope)
        return scope if scope != "lane" else "warp"

    def _join_affine(self, point: MergePoint, t: int, a: Aff, v: Aff, round_loop: bool):
        j = join_offsets(a, v)
        scope = wider(a.scope, v.scope)
        if j is not None:
            if round_loop:
                self._note_moves(t, a, v)
            off, align = j
            if a.base == t:
                off = a.off
            # widening: a merge point whose alignment shrinks (off /= 2) jumps to 1; one that
            # keeps it (idx += blockDim.x) keeps it
            last = self.widened.get(point)
            if last is not None and align != last:
                align = 1 if align < last else last
            self.widened[point] = align
            return Aff(t, off, align, scope)
        if a.uniform and v.uniform:
            return Aff(t, ZEROS, 1, scope)
        return Unk(t)

    def _note_moves(self, t: int, a: Aff, v: Aff) -> None:
        """Where one value comes in from before the loop (`start`) and the other is it or the
        merged value plus block-uniform steps (its offsets moved by a constant), the merged
        value is `start` plus steps the same in the whole block (values.difference_scope)."""
        terms = self.terms
        for start, back in ((a, v), (v, a)):
            if start.base and start.base != t and not steps_from(terms, start.base, t) and (
                    steps_from(terms, back.base, t) or steps_from(terms, back.base, start.base)):
                terms.note_moves(t, start.base, back_steps(terms, back.base, t, start.base))
                return
