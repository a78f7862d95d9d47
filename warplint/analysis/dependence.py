"""Control dependence: which lanes run each block, from the CFG's networkx facts.

A block control dependent on the edge X->S of a branch runs on `lanes(X) ∧ cond(X->S)`; a
block control dependent on nothing runs on the function's entry lanes.  This gives
reconvergence at the immediate post-dominator of every branch (the pre-Volta model, and what
nvcc arranges on Volta+ with BSSY/BSYNC) and early exits (the code after `if (c) return;` is
control dependent on that branch).

*Temporal divergence* (as LLVM's GenericUniformityImpl names it): a loop whose exit condition
differs between lanes lets its lanes leave at different iterations.  Its body is control
dependent on its own exit test, so the body runs on "the first iteration, or the lanes still
iterating" (`LoopStay`), never on lanes that already left.
"""
from __future__ import annotations

from typing import NamedTuple

from ..cfg import CFG, EXIT
from ..ir import Addr
from .bounds import Implications
from .domain import negate
from .liveness import registers
from .local_objects import pointer_base
from .lanes import FULL_SET, LaneSet, Literals, unknown_subset
from .transfer import Evaluator
from .values import is_uniform, scope_of

CHEAP_DEPS = 4  # past the work bound, blocks with more control dependences get unknown lanes


class FirstIteration(NamedTuple):
    """The condition "in the first iteration of the loop at `header`" (uniform in the block)."""
    tag: str
    cfg: int
    header: int


class UnknownLanes(NamedTuple):
    """The name of "some of the entry lanes" given to block `block` past the work bound."""
    tag: int
    block: int


class BranchTarget(NamedTuple):
    """The condition "an indirect branch (brx.idx) at `block` goes to `target`"."""
    tag: str
    block: int
    target: int


class ControlDependence:
    """The lanes of each block and of each branch edge of one function."""

    def __init__(self, cfg: CFG, lits: Literals, entry_mask: LaneSet, rpo_index: dict[int, int]):
        self.cfg = cfg
        self.lits = lits
        self.entry_mask = entry_mask
        self.rpo_index = rpo_index
        self.cd = cfg.control_dependence  # block -> [(branch block, successor)]
        self.dependents = _dependents(self.cd)
        self.on_entry_path = _postdominators_of_entry(cfg)
        self.ends = can_end_normally(cfg)
        self.loop_exits = loop_exits(cfg, self.ends)
        self.edge_cond: dict[tuple[int, int], LaneSet] = {}
        self._edge_lanes: dict[tuple[int, int], tuple] = {}  # edge -> (block lanes, condition, their and)
        self._only_aborts: dict[tuple[int, int], bool] = {}
        self._kinds: dict[int, list] = {}  # block -> its control dependences, each marked round a loop or not
        self._meeting: dict[tuple[int, int, int], int | None] = {}  # (block, exit edge) -> loop header
        self._applied: dict[int, dict] = {}  # block -> the conditions of its out-edges last put in `edge_cond`
        self._branch_sides: dict[int, tuple] = {}  # branch block -> (lanes taking it, its edges' conditions)
        self.implications: Implications | None = None  # made with the first edge conditions

    def deps(self, b: int) -> int:
        return len(self.cd.get(b, ()))

    def edge_lanes(self, masks: dict[int, LaneSet], p: int, b: int) -> LaneSet:
        """The lanes that go from `p` to `b`."""
        lanes = self._taking(masks.get(p), p, b)
        return FULL_SET if lanes is None else lanes

    def _taking(self, m: LaneSet | None, p: int, b: int) -> LaneSet | None:
        """`m` (the lanes of `p`) and the condition of `p -> b`, None where either is unknown;
        kept per edge while both are the very same sets (the fixpoint asks again and again)."""
        c = self.edge_cond.get((p, b))
        if m is None or c is None:
            return None
        kept = self._edge_lanes.get((p, b))
        if kept is not None and kept[0] is m and kept[1] is c:
            return kept[2]
        lanes = m.and_(c)
        self._edge_lanes[(p, b)] = (m, c, lanes)
        return lanes

    def block_lanes(self, masks: dict[int, LaneSet], b: int, cheap: bool) -> LaneSet:
        """Lanes of block `b`: from its forward control dependences (a branch before it in
        program order); a loop exit test whose condition differs between lanes adds "in the
        first iteration, or among the lanes still iterating" (temporal divergence).  `cheap`
        (past the work bound): a block with many dependences gets some of the entry lanes.
        A per-lane test that a warp test of the same lanes implies is dropped (bounds.py)."""
        lanes = self._block_lanes(masks, b, cheap)
        return self.implications.simplify(lanes) if self.implications is not None else lanes

    def _block_lanes(self, masks: dict[int, LaneSet], b: int, cheap: bool) -> LaneSet:
        deps = self.cd.get(b)
        if not deps:
            return self.entry_mask
        if cheap and len(deps) > CHEAP_DEPS:  # any of the entry lanes, as far as we know
            return unknown_subset(self.entry_mask, UnknownLanes(-1, b))
        fwd = [self.entry_mask] if b in self.on_entry_path else []  # lanes from forward edges
        stay = []  # (loop header, condition to stay in the loop) that differs between lanes
        seen: dict = {}
        for x, s, round_loop in self._dependences(b):
            entered = self._entered_if_all_exits_meet(masks, b, x, s, seen)
            if entered is not None:  # every lane that enters the loop gets here
                fwd.append(entered)
                continue
            cond = self.edge_cond.get((x, s))
            if cond is None:
                continue
            if round_loop:  # own exit test, or a back edge
                if any(self.lits[l].kind != "uniform" for l in cond.lits):
                    stay.append((s, cond))
                continue
            part = self._lanes_through(masks, b, x, s, seen)
            if part is not None:
                fwd.append(part)
        fwd = LaneSet.union(fwd)
        if not stay:
            return fwd
        if fwd.is_empty():  # only reached round a loop (irreducible flow): be conservative
            return self._any_dependence(masks, deps)
        return fwd.and_(self._still_iterating(stay))

    def _dependences(self, b: int) -> list[tuple[int, int, bool]]:
        """`b`'s control dependences (x, s), each with whether it is `b`'s own exit test or a
        back edge (once per block: the CFG decides)."""
        known = self._kinds.get(b)
        if known is None:
            index = self.rpo_index
            known = self._kinds[b] = [(x, s, x == b or index.get(s, 0) <= index.get(x, 0)) for x, s in self.cd[b]]
        return known

    def _lanes_through(self, masks: dict[int, LaneSet], b: int, x: int, s: int, seen: dict) -> LaneSet | None:
        """The lanes that reach `b` through its forward control dependence on `x -> s`: those
        that enter the loop the edge leaves, when all of them get to `b`; else the lanes of `x`
        that take the edge (all of them when the other side only aborts the grid)."""
        entered = self._entered_if_all_exits_meet(masks, b, x, s, seen)
        if entered is not None:
            return entered
        mx, cond = masks.get(x), self.edge_cond.get((x, s))
        if mx is None or cond is None:
            return None
        return mx if self._aborts_elsewhere(x, s) else self._taking(mx, x, s)

    def _aborts_elsewhere(self, x: int, s: int) -> bool:
        """`only_aborts` for this CFG, once per edge."""
        known = self._only_aborts.get((x, s))
        if known is None:
            known = self._only_aborts[(x, s)] = only_aborts(self.cfg, x, s, self.ends)
        return known

    def _entered_if_all_exits_meet(self, masks: dict[int, LaneSet], b: int, x: int, s: int,
                                   seen: dict) -> LaneSet | None:
        """The lanes that enter the loop that `x -> s` leaves, when `b` post-dominates every
        block the loop exits to other than by aborting the grid (`trap`): every lane that
        enters the loop reaches `b`, whatever the exit conditions and in whichever iteration
        it leaves (a spin loop left on `__all_sync`, beside a timeout that traps).  The lanes
        entering are found the same way, so that a loop after such a loop is entered by all
        the lanes that entered the first (`seen`: the answer per loop header, for this block)."""
        header = self._loop_all_exits_meet(b, x, s)
        if header is None:
            return None
        if header not in seen:
            seen[header] = self._entry_lanes_of_loop(masks, header, seen)
        return seen[header]

    def _loop_all_exits_meet(self, b: int, x: int, s: int) -> int | None:
        """The header of the loop that `x -> s` leaves, when `b` post-dominates every block it
        exits to (once per block and edge: the CFG decides)."""
        key = (b, x, s)
        if key in self._meeting:
            return self._meeting[key]
        header = None
        exit_of = self.loop_exits.get((x, s))
        if exit_of is not None:
            post = self.cfg.postdominates
            if EXIT not in exit_of[1] and all(post(b, t) for t in exit_of[1]):
                header = exit_of[0]
        self._meeting[key] = header
        return header

    def _entry_lanes_of_loop(self, masks: dict[int, LaneSet], header: int, seen: dict) -> LaneSet | None:
        """The lanes that come into the loop at `header` (from before it, not round it)."""
        index = self.rpo_index
        deps = [(y, t) for y, t in self.cd.get(header, ()) if index.get(y, 0) < index[header]]
        if not deps:
            return self.entry_mask if header in self.on_entry_path or header not in self.cd else None
        parts = [self.entry_mask] if header in self.on_entry_path else []
        for y, t in deps:
            part = self._lanes_through(masks, header, y, t, seen)
            if part is None:
                return None
            parts.append(part)
        return LaneSet.union(parts)

    def _any_dependence(self, masks: dict[int, LaneSet], deps) -> LaneSet:
        parts = [self._taking(masks.get(x), x, s) for x, s in deps]
        return LaneSet.union([p for p in parts if p is not None])

    def _still_iterating(self, stay: list) -> LaneSet:
        header = stay[0][0]
        first = self.lits.get(FirstIteration("first-iteration", id(self.cfg), header), "uniform", "block",
                              "it is the first iteration of the loop")
        return LaneSet.union([LaneSet.lit(first)] + [cond for _, cond in stay])

    def set_edge_conditions(self, ev: Evaluator, b: int, branch_value) -> bool:
        """The conditions of `b`'s out-edges, from the value its branch decides on.  Returns
        whether one changed."""
        cfg = self.cfg
        if self.implications is None:
            self.implications = Implications(self.lits, ev.terms)
        succs = cfg.succs(b)
        if len(succs) < 2:
            new = self._applied.get(b) or {(b, s): FULL_SET for s in succs}
        else:
            term = cfg.blocks[b].terminator
            if term is not None and term.guard is not None:
                new = self._guarded_branch(ev, b, term, branch_value)
            else:
                new = self._indexed_branch(b, term, branch_value)
        if self._applied.get(b) is new:  # the very conditions in place (nothing else writes them)
            return False
        changed = any(self.edge_cond.get(e) != c for e, c in new.items())
        self.edge_cond.update(new)
        self._applied[b] = new
        return changed

    def _guarded_branch(self, ev: Evaluator, b: int, term, v) -> dict:
        taken = ev.pred_lanes(v, term.guard[0], term.loc) if v is not None else FULL_SET
        kept = self._branch_sides.get(b)  # the same condition as last time: the same sides
        if kept is None or not same_order(kept[0], taken):
            kept = self._branch_sides[b] = (taken, self._sides(b, term, taken))
        return kept[1]

    def _sides(self, b: int, term, taken: LaneSet) -> dict:
        if term.guard[1]:
            taken = negate(taken, self.lits, ("neg", b))
        fall = negate(taken, self.lits, ("fall", b))
        edges = self.cfg.edges
        return {(b, s): fall if edges[(b, s)].get("kind") == "fall" else taken for s in self.cfg.succs(b)}

    def _indexed_branch(self, b: int, term, idx) -> dict:
        """brx.idx: one condition per target."""
        out = {}
        for s in self.cfg.succs(b):
            kind = "uniform" if idx is not None and is_uniform(idx) else "lane"
            lit = self.lits.get(BranchTarget("brx", b, s), kind, scope_of(idx) if idx is not None else "lane",
                                "indirect branch target", term.loc if term else None)
            out[(b, s)] = LaneSet.lit(lit)
        return out


def same_order(a: LaneSet, b: LaneSet) -> bool:
    """Are two sets equal, listing their cubes in the same order?  Then what is computed from
    one is what would be computed from the other (equal frozensets may iterate differently,
    and simplifying can depend on the order)."""
    return a.cubes is b.cubes or a == b and tuple(a.cubes) == tuple(b.cubes)


def _dependents(cd: dict) -> dict[int, list[int]]:
    """Branch block -> the blocks control dependent on one of its edges."""
    out: dict[int, list[int]] = {}
    for b, deps in cd.items():
        for x, _ in deps:
            out.setdefault(x, []).append(b)
    return out


def _postdominators_of_entry(cfg: CFG) -> set[int]:
    """Blocks every execution reaches (they run on the entry lanes, besides any loop
    control dependence of their own)."""
    out, b = set(), cfg.entry
    ipdom = cfg.ipdom
    while b != EXIT and b not in out:
        out.add(b)
        b = ipdom.get(b, EXIT)
    return out


def loop_exits(cfg: CFG, ends: set[int] | None = None) -> dict[tuple[int, int], tuple[int, frozenset]]:
    """Loop exit edge -> (loop header, the blocks the loop exits to), for the exits from which
    the function can still end normally (not only by aborting the grid with `trap`).  The
    innermost loop wins where an edge leaves several.  `ends`: `can_end_normally(cfg)`, when known."""
    ends = can_end_normally(cfg) if ends is None else ends
    out: dict[tuple[int, int], tuple[int, frozenset]] = {}
    for header, body in cfg.loops.items():
        kept = [(u, v) for u in body for v in cfg.succs(u)
                if v not in body and (u if v == EXIT else v) in ends]
        targets = frozenset(v for _, v in kept)
        out.update((e, (header, targets)) for e in kept)
    return out


def only_aborts(cfg: CFG, x: int, s: int, ends: set[int]) -> bool:
    """Do the other successors of branch `x` (besides `s`) lead only to `trap`?  Lanes that
    take them abort the whole grid, so they never reach anything after the branch."""
    others = [o for o in cfg.succs(x) if o != s]
    return bool(others) and all(o not in ends and (o != EXIT or _ends_in_trap(cfg, x))
                                for o in others)


def can_end_normally(cfg: CFG) -> set[int]:
    """Blocks from which some path reaches a `ret`/`exit` (not a `trap`)."""
    todo = [b for b in cfg.preds(EXIT) if b != EXIT and not _ends_in_trap(cfg, b)]
    seen = set(todo)
    while todo:
        for p in cfg.preds(todo.pop()):
            if p != EXIT and p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def _ends_in_trap(cfg: CFG, b: int) -> bool:
    term = cfg.blocks[b].terminator
    return term is not None and term.op == "trap"


def loop_writes(cfg: CFG, local_pointers: dict | None = None) -> dict[int, set]:
    """Loop header -> registers written anywhere in its loop.  A register the loop never
    writes keeps its value from before the loop (no phi at the header).  A store through a
    pointer into a variable (`local_pointers`: register -> the variable's registers) writes
    the variable."""
    local_pointers = local_pointers or {}
    out: dict[int, set] = {}
    for header, body in cfg.loops.items():
        written = out[header] = set()
        for blk in body:
            for ins in cfg.blocks[blk].instrs:
                for d in ins.dests:
                    if not isinstance(d, Addr):
                        registers(d, written)
                if ins.op == "st":
                    written.update(local_pointers.get(pointer_base((ins.dests or ins.srcs or [None])[0]), ()))
    return out
