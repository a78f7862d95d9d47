"""Cross-lane memory hazards inside a warp: a lane reads (or overwrites) shared/global
memory that another lane of the same warp wrote (or read) with no warp or block
synchronisation in between on some path."""
from __future__ import annotations

from dataclasses import dataclass, field

from .calls import is_pure
from .claims import Claims, required_literals as _required
from .divergence import FunctionAnalysis, MemAccess
from .induction import IterationShift
from .lanes import definite_bits
from .values import Aff

MAX_PENDING = 128  # accesses since the last barrier each new one is compared with
MAX_PASSES = 6


@dataclass
class Hazard:
    first: MemAccess
    second: MemAccess
    kind: str  # "RAW" (read after another lane's write) | "WAR" (write over another lane's read)
    writer: int  # example lane pair
    reader: int
    definite: bool
    skipped_barrier: object = None  # the barrier on another path between the two (see _Flow)


def _is_sync(ins) -> bool:
    op = ins.op
    if op == "bar" or op == "barrier":
        return True  # bar.warp.sync, bar.sync, bar.red, barrier.sync
    return op == "call" and not is_pure(ins)  # an opaque callee may hold a barrier


_BYTES_CACHE: dict = {}


def _per_access(cache: dict, acc: MemAccess, lanes: int, build):
    """`build(acc, lanes)`, remembered per access (held, so its id stays unique) and lane set."""
    key = (id(acc), lanes)
    hit = cache.get(key)
    if hit is not None and hit[0] is acc:
        return hit[1]
    if len(cache) > 4096:
        cache.clear()
    out = build(acc, lanes)
    cache[key] = (acc, out)
    return out


def _bytes(acc: MemAccess, lanes: int) -> dict[int, set[int]]:
    """Byte -> the lanes among `lanes` of `acc` that touch it."""
    return _per_access(_BYTES_CACHE, acc, lanes, _lanes_per_byte)


def _lanes_per_byte(acc: MemAccess, lanes: int) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {}
    for lane in range(32):
        if lanes >> lane & 1:
            o = acc.addr.off[lane]
            for k in range(acc.size):
                out.setdefault(o + k, set()).add(lane)
    return out


_PRIVATE: dict = {}


def _private(off: tuple, size: int) -> bool:
    """Are the per-lane byte ranges pairwise disjoint?"""
    key = (off, size)
    hit = _PRIVATE.get(key)
    if hit is None:
        ordered = sorted(off)
        hit = all(y - x >= size for x, y in zip(ordered, ordered[1:]))
        if len(_PRIVATE) > 4096:
            _PRIVATE.clear()
        _PRIVATE[key] = hit
    return hit


def _ordered_conflict(first, then, lits, caller_pointers, stride: int = 0):
    """("RAW", conflict) when `first` writes what `then` reads, ("WAR", conflict) when `then`
    overwrites what `first` read, (None, None) otherwise.  `stride` > 0: `first` ran in an
    earlier iteration, at an address a non-zero multiple of `stride` bytes from the one its
    terms give now."""
    if first.store and then.load:
        return "RAW", _conflict(first, then, lits, caller_pointers, stride)
    if first.load and then.store:
        return "WAR", _conflict(then, first, lits, caller_pointers, stride)
    return None, None


def _conflict(a: MemAccess, b: MemAccess, lits, caller_pointers: bool = False, stride: int = 0):
    """(writer lane, reader lane, definite) for a cross-lane overlap, else None."""
    if not (isinstance(a.addr, Aff) and isinstance(b.addr, Aff)) or a.addr.base != b.addr.base:
        return None
    if caller_pointers and _maybe_per_thread(a) and _maybe_per_thread(b):
        return None
    if a.space != b.space and "generic" not in (a.space, b.space):
        return None
    if stride:
        return _shifted_conflict(a, b, lits, stride)
    pa, pb = a.active.possible_bits, b.active.possible_bits
    oa, ob = a.addr.off, b.addr.off
    if max(oa) + a.size <= min(ob) or max(ob) + b.size <= min(oa):
        return None  # disjoint address ranges
    if oa == ob and a.size == b.size and _private(oa, a.size):
        return None  # every lane touches only its own element
    if _no_common_byte(a, pa, b, pb):
        return None
    table = _bytes(a, pa)
    da = db = None
    for lane in range(32):
        if not pb >> lane & 1:
            continue
        o = b.addr.off[lane]
        for k in range(b.size):
            others = table.get(o + k, ())
            for other in others:
                if other != lane:
                    if da is None:
                        da, db = definite_bits(a.active, lits), definite_bits(b.active, lits)
                    definite = bool(da >> other & 1 and db >> lane & 1)
                    return other, lane, definite
    return None


def _no_common_byte(a: MemAccess, pa: int, b: MemAccess, pb: int) -> bool:
    """Do lanes `pa` of `a` and lanes `pb` of `b` touch no byte in common (fields of one struct,
    interleaved)?  Decided on the byte tables, in C: most pairs of a large function meet none."""
    return _byte_set(a, pa).isdisjoint(_byte_set(b, pb))


_BYTE_SETS: dict = {}


def _byte_set(acc: MemAccess, lanes: int) -> frozenset[int]:
    """The bytes that lanes `lanes` of `acc` touch (the keys of `_bytes`, built in C)."""
    return _per_access(_BYTE_SETS, acc, lanes, _bytes_touched)


def _bytes_touched(acc: MemAccess, lanes: int) -> frozenset[int]:
    starts = {acc.addr.off[lane] for lane in range(32) if lanes >> lane & 1}
    return frozenset(o + k for o in starts for k in range(acc.size))


def _shifted_conflict(a: MemAccess, b: MemAccess, lits, stride: int):
    """`_conflict` where one of the two ran in another iteration, its address moved by a
    non-zero multiple of `stride` bytes (either way): bytes [x, x + a.size) of a lane of `a`
    meet bytes [y + m * stride, ...) of another lane of `b` for some m != 0."""
    pa, pb = a.active.possible_bits, b.active.possible_bits
    by_offset_a = _lanes_by_offset(a.addr.off, pa)
    for y, lanes_b in _lanes_by_offset(b.addr.off, pb).items():
        for x, lanes_a in by_offset_a.items():
            if not _some_nonzero_multiple(x - y - b.size, x - y + a.size, stride):
                continue
            for lane in lanes_b:
                other = next((o for o in lanes_a if o != lane), None)
                if other is not None:
                    da, db = definite_bits(a.active, lits), definite_bits(b.active, lits)
                    return other, lane, bool(da >> other & 1 and db >> lane & 1)
    return None


def _lanes_by_offset(off: tuple, lanes: int) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for lane in range(32):
        if lanes >> lane & 1:
            out.setdefault(off[lane], []).append(lane)
    return out


def _some_nonzero_multiple(lo: int, hi: int, stride: int) -> bool:
    """Is some m * stride, m != 0, strictly between lo and hi?"""
    first = lo // stride + 1  # the smallest m with m * stride > lo
    last = -(-hi // stride) - 1  # the largest m with m * stride < hi
    return first <= last and not (first == last == 0)


def _maybe_per_thread(acc: MemAccess) -> bool:
    """In a device function analysed on its own, a generic pointer comes from its caller and
    may point to the caller's per-thread variables (`f(&x)`, `float v[4]; f(v)`).  The analysis
    takes it as the same in every lane, so an access at one address in every lane is no
    evidence of memory the lanes share; indexing it by lane (`p[lane]`) is."""
    return acc.space == "generic" and acc.addr.uniform


def _judges_caller_pointers(fa: FunctionAnalysis) -> bool:
    """Apply `_maybe_per_thread` in a device function analysed on its own, in the analysis with
    number arguments that differ per lane (`any_arguments`, or the only one when it has no
    number parameter): there `p[i]` with a lane index is lane-varying and stays a finding, while
    with the same argument in every lane it would look like one address (a finding must hold
    in both, see pipeline.check)."""
    return not fa.function.is_kernel and not fa.has_any_arguments


def _divergent_merge(fa: FunctionAnalysis, b: int) -> bool:
    """Do lanes arrive at `b` from different paths (a lane-divergent branch)?  Then the
    accesses on the sibling paths ran concurrently (sm_70+ interleaves the two sides)."""
    lits = fa.lits
    mask = fa.masks.get(b)
    if mask is None:
        return False
    def lane_part(s):
        return {(bits, frozenset(x for x in l if lits[x].kind != "uniform")) for bits, l in s.cubes}
    whole = lane_part(mask)
    for p in fa.cfg.preds(b):
        m, c = fa.masks.get(p), fa.edge_cond.get((p, b))
        if m is not None and c is not None and lane_part(m.and_(c)) != whole:
            return True
    return False


def _taken(fa: FunctionAnalysis, p: int, b: int) -> bool:
    """Can some lane go from block `p` to `b`?  Not over a branch whose condition holds in no
    lane: the exit test before the first iteration of `for (i = 0; i < 4; i++)`, so what comes
    before such a loop reaches what follows it only through the body (and its barriers)."""
    cond = fa.edge_cond.get((p, b))
    return cond is None or cond.possible_bits != 0


def _sibling_hazards(incoming: list[tuple], hazards: dict, pairs: "_Pairs") -> None:
    """Accesses on different incoming paths: `a` on a path that `c` is not on, and the other
    way round.  Each access is visited once with the set of paths it is on (linear in the
    accesses, not in the pairs of paths)."""
    paths: dict[int, int] = {}  # id(instr) -> bit set of the incoming states holding it
    accs: dict[int, MemAccess] = {}
    for i, state in enumerate(incoming):
        for a in state:
            key = id(a.instr)
            paths[key] = paths.get(key, 0) | 1 << i
            accs.setdefault(key, a)
    every = (1 << len(incoming)) - 1  # an access on every path pairs with none
    items = [(k, a) for k, a in accs.items() if paths[k] != every]
    at = {k: i for i, (k, _) in enumerate(items)}
    for i, (ka, a) in enumerate(items):
        pa = paths[ka]
        for j in sorted(at[kc] for kc in pairs.racing(a) if at.get(kc, -1) > i):  # (the others meet nothing)
            kc, c = items[j]
            pc = paths[kc]
            if not (pa & ~pc and pc & ~pa):
                continue
            x, y = (a, c) if (a.instr.loc.line, a.instr.loc.col) <= (c.instr.loc.line, c.instr.loc.col) \
                else (c, a)
            key = (id(x.instr), id(y.instr))
            if key in hazards:
                continue
            kind, hit = pairs.conflict(x, y)
            if hit:
                hazards[key] = Hazard(x, y, kind, *hit)


PENDING_NOTE = (f"analysis work bound reached: each memory access is compared with at most the "
                f"{MAX_PENDING} accesses before it since the last barrier; races with earlier "
                "accesses are not reported")


def _note(fa: FunctionAnalysis, note: str) -> None:
    if note not in fa.notes:
        fa.notes.append(note)


def find_hazards(fa: FunctionAnalysis) -> list[Hazard]:
    accesses = [a for a in fa.accesses if "atom" != a.instr.op and "red" != a.instr.op]
    if not accesses or not any(a.store for a in accesses):
        return []
    if len(accesses) <= MAX_PENDING:  # the work bound cannot be reached: follow only those
        accesses = _racing(accesses)   # that may race (the others change no pair's outcome)
        if not accesses:
            return []
    cfg = fa.cfg
    order = cfg.rpo()
    position = {b: k for k, b in enumerate(order)}
    out_state: dict[int, _Frozen] = {}
    hazards: dict[tuple[int, int], Hazard] = {}
    pairs = _Pairs(fa, accesses, set().union(*cfg.loops.values()))
    events = _events(cfg, order, pairs.by_instr)
    blocks = []  # (block, its inputs, its events, whether it passes its one state on), in order
    for b in order:
        ins_b = _inputs(fa, b, position)
        blocks.append((b, ins_b, events[b], _passes_through(ins_b, events[b])))
    divergent_at: dict[int, bool] = {}
    version: dict[int, int] = {}  # block -> how many times its outgoing state changed
    walked: dict[int, tuple] = {}  # block -> (its inputs' versions, its pairs with a skipped barrier) at its last walk
    for _ in range(MAX_PASSES if _has_back_edge(cfg, order, position) else 1):  # (else one pass is the fixpoint)
        changed = False
        for b, ins_b, run, through in blocks:
            if through:
                state = out_state[ins_b[0][0]]
            else:
                seen = tuple([version.get(p, 0) for p, _ in ins_b])
                last = walked.get(b)
                if _walked_with(last, seen):  # the same states in: the same walk
                    if last[1]:
                        _downgrade(last[1], hazards)
                    continue
                skips = []
                state = _walk(fa, b, ins_b, run, out_state, hazards, pairs, divergent_at, skips)
                walked[b] = (seen, skips)
            old = out_state.get(b)
            if old is not state and old != state:
                out_state[b] = state
                version[b] = version.get(b, 0) + 1
                changed = True
        if not changed:
            break
    return list(hazards.values())


def _walked_with(last: tuple | None, seen: tuple) -> bool:
    """Was a block last walked with the states in that `seen` numbers?"""
    return last is not None and last[0] == seen


def _downgrade(skips: list[tuple], hazards: dict) -> None:
    """What walking a block again with the very same states in would change: the races of its
    pairs pending past a barrier on another path (`_pair`) that were found since, by
    `_sibling_hazards` at a merge, become possible.  Nothing else: every other pair's answer
    was found (and recorded) the first time."""
    for key, skipped in skips:
        known = hazards.get(key)
        if known is not None and known.definite:
            known.definite, known.skipped_barrier = False, skipped


def _passes_through(ins_b: list, run: list) -> bool:
    """Does a block's outgoing state equal the one state flowing in (nothing happens in it, one
    edge in, not a back edge)?  Then it is that state (`_walk` would build an equal copy)."""
    return not run and len(ins_b) == 1 and not ins_b[0][1]


def _walk(fa: FunctionAnalysis, b: int, ins_b: list, run: list, out_state: dict, hazards: dict,
          pairs: "_Pairs", divergent_at: dict, skips: list) -> "_Frozen":
    """Block `b`'s outgoing state: the paths in joined, then its barriers and accesses in order
    (each access paired with the pending accesses it may race with; `skips` gets the pairs
    whose earlier access is pending past a barrier on another path, for `_downgrade`)."""
    flow, incoming, divergent = _incoming(fa, b, out_state, ins_b, divergent_at)
    if divergent:
        _sibling_hazards(incoming, hazards, pairs)
    for ins, acc in run:
        if acc is None:
            flow.barrier(ins)
            continue
        partners = pairs.partners(acc)
        if partners:
            for prev in [prev for key, prev in flow.pending.items() if key in partners]:
                _pair(prev, acc, flow, hazards, pairs, skips)
        if flow.execute(acc):
            _note(fa, PENDING_NOTE)
    return flow.frozen()


def _events(cfg, order: list[int], by_instr: dict) -> dict[int, list[tuple]]:
    """Block -> what the search follows in it, in order: (barrier, None) for an unguarded
    barrier, (instruction, its access) for an access followed."""
    out = {}
    for b in order:
        run = []
        for ins in cfg.blocks[b].instrs:
            if _is_sync(ins) and ins.guard is None:
                run.append((ins, None))
            else:
                acc = by_instr.get(id(ins))
                if acc is not None:
                    run.append((ins, acc))
        out[b] = run
    return out


def _inputs(fa: FunctionAnalysis, b: int, position: dict) -> list[tuple[int, bool]]:
    """The edges that can bring a state into `b`: (predecessor, whether the edge goes back
    to `b` or before it: a loop's back edge)."""
    return [(p, position[p] >= position[b]) for p in fa.cfg.preds(b) if p in position and _taken(fa, p, b)]


class _Pairs:
    """What one search asks of pairs of accesses, each answer found once: which pending
    accesses a new one is compared with (one base, `_may_race`, not `_exclusive`), whether
    the two conflict (`_ordered_conflict` without a stride)."""

    def __init__(self, fa: FunctionAnalysis, accesses: list[MemAccess], in_loop: set[int]):
        self.fa = fa
        self.lits = fa.lits
        self.in_loop = in_loop
        self.accesses = accesses
        self.by_instr = {id(a.instr): a for a in accesses}
        self.by_kind: dict[tuple, dict[str, set[int]]] = {}  # (base, store?) -> space -> instruction ids
        for a in accesses:
            base = _base(a)
            if base is not None:
                for store, does in ((True, a.store), (False, a.load)):
                    if does:
                        self.by_kind.setdefault((base, store), {}).setdefault(a.space, set()).add(id(a.instr))
        self.caller_pointers = _judges_caller_pointers(fa)
        self.one_lane = _one_lane_literals(fa.lits)
        self.shifts = _Shifts(fa)
        self.claims = Claims(fa)
        self._partners: dict[int, frozenset] = {}
        self._racing: dict[int, frozenset] = {}
        self._conflicts: dict[tuple[int, int], tuple] = {}
        self._excluding: dict[int, set[int]] | None = None

    def partners(self, acc: MemAccess) -> frozenset:
        """The accesses (by instruction id) that `acc` is compared with when they are pending:
        those that `_may_race` with it, less those `_exclusive` of it."""
        key = id(acc.instr)
        found = self._partners.get(key)
        if found is None:
            racing = self.racing(acc)
            if racing and acc.block not in self.in_loop:
                racing = racing - self._exclusive_of(acc)
            found = self._partners[key] = racing
        return found

    def racing(self, acc: MemAccess) -> frozenset:
        """`_racing_with(acc)` (by instruction id), found once per access: the only accesses
        that `conflict` can find in conflict with it, before or after it."""
        key = id(acc.instr)
        found = self._racing.get(key)
        if found is None:
            found = self._racing[key] = frozenset(self._racing_with(acc))
        return found

    def _racing_with(self, acc: MemAccess) -> set[int]:
        """The accesses `prev` with `_may_race(prev, acc)`: a write before a read, or a read
        before a write, of `acc`'s base, in its space, or any space where one is generic."""
        base = _base(acc)
        out: set[int] = set()
        if base is None:
            return out
        for store, wanted in ((True, acc.load), (False, acc.store)):
            spaces = self.by_kind.get((base, store)) if wanted else None
            if spaces:
                if acc.space == "generic":
                    out.update(*spaces.values())
                else:
                    out.update(spaces.get(acc.space, ()), spaces.get("generic", ()))
        return out

    def _exclusive_of(self, acc: MemAccess) -> set[int]:
        """The accesses outside loops that `_exclusive(prev, acc)` holds for (`acc` outside
        loops too): one requires a warp-uniform literal whose negation `acc` requires."""
        if self._excluding is None:
            self._excluding = {}  # literal -> accesses outside loops requiring it (a uniform one)
            lits = self.lits
            for a in self.accesses:
                if a.block not in self.in_loop:
                    for x in _required(a.active):
                        if lits[x].kind == "uniform":
                            self._excluding.setdefault(x, set()).add(id(a.instr))
        out: set[int] = set()
        for y in _required(acc.active):
            out.update(self._excluding.get(-y, ()))
        return out

    def conflict(self, first: MemAccess, then: MemAccess):
        """`_ordered_conflict(first, then, ...)` with no stride."""
        key = (id(first.instr), id(then.instr))
        found = self._conflicts.get(key)
        if found is None:
            found = self._conflicts[key] = _ordered_conflict(first, then, self.lits, self.caller_pointers)
        return found


def _has_back_edge(cfg, order: list[int], position: dict[int, int]) -> bool:
    """Does a block flow into one at or before it in `order` (reverse postorder)?  With none,
    a block's predecessors are all done before it: the second pass would only confirm the first."""
    return any(position.get(p, -1) >= position[b] for b in order for p in cfg.preds(b))


def _base(acc: MemAccess) -> int | None:
    """The abstract base of an access's address; None where it is not an `Aff` (such an
    access meets none: see `_conflict`)."""
    return acc.addr.base if isinstance(acc.addr, Aff) else None


def _may_race(first: MemAccess, then: MemAccess) -> bool:
    """Could `_ordered_conflict(first, then, ...)` find a conflict, judging by what the two
    accesses are (not where they run or which lanes): a write and a read, in that order or the
    other, at addresses of one base in spaces that can be the same memory.  Pairs that cannot
    are never compared (most pairs of a large function)."""
    if not (first.store and then.load or first.load and then.store):
        return False
    base = _base(first)
    return base is not None and base == _base(then) \
        and (first.space == then.space or "generic" in (first.space, then.space))


def _racing(accesses: list[MemAccess]) -> list[MemAccess]:
    """The accesses that `_may_race` with some access (themselves included: a loop runs an
    access again), in their order."""
    loads: dict[int, set[str]] = {}  # base -> the spaces read at it
    stores: dict[int, set[str]] = {}
    for a in accesses:
        base = _base(a)
        if base is not None:
            if a.load:
                loads.setdefault(base, set()).add(a.space)
            if a.store:
                stores.setdefault(base, set()).add(a.space)
    def races(a):
        base = _base(a)
        return a.store and _meets(a.space, loads.get(base)) or a.load and _meets(a.space, stores.get(base))
    return [a for a in accesses if races(a)]


def _meets(space: str, spaces: set[str] | None) -> bool:
    """Can an access in `space` touch the memory of one in some space of `spaces`?"""
    return bool(spaces) and (space in spaces or space == "generic" or "generic" in spaces)


def _pair(prev: MemAccess, acc: MemAccess, flow: "_Flow", hazards: dict, pairs: _Pairs, skips: list) -> None:
    """Record the race between pending access `prev` and `acc`, if there is one."""
    key = (id(prev.instr), id(acc.instr))
    skipped = flow.skipped.get(id(prev.instr))
    if skipped is not None:
        skips.append((key, skipped))
    known = hazards.get(key)
    if known is not None:
        if skipped is not None and known.definite:  # a later pass found the path with a barrier
            known.definite, known.skipped_barrier = False, skipped
        return
    kind, c = pairs.conflict(prev, acc)  # (remembered: most pairs asked again meet no byte)
    if not c or id(prev.instr) not in flow.carried and _same_lane(prev, acc, pairs.one_lane) \
            or _moved_apart(prev, acc, flow, pairs.lits, pairs.caller_pointers, pairs.shifts):
        return
    if kind == "WAR" and flow.only_carried(id(prev.instr)) is None and pairs.claims.is_claim(prev, acc):
        return  # a check-then-set claim of this iteration (claims.py: no outcome beyond lockstep's)
    writer, reader, definite = c
    hazards[key] = Hazard(prev, acc, kind, writer, reader, definite and skipped is None, skipped)


def _moved_apart(prev: MemAccess, acc: MemAccess, flow: "_Flow", lits, caller_pointers: bool,
                 shifts: "_Shifts") -> bool:
    """Is `prev` pending only from earlier iterations of loops that moved its address away
    from `acc` (`tile[i][i]` of the last iteration against this one's)?  The stride only rules
    pairs out: the sizes of types the file does not define are guesses, and sub-elements of a
    lane's own element of such a type would seem to reach the neighbour's."""
    crossed = flow.only_carried(id(prev.instr))
    stride = shifts.stride(prev, acc, crossed) if crossed else None
    return bool(stride) and _ordered_conflict(prev, acc, lits, caller_pointers, stride)[1] is None


class _Shifts:
    """The stride between an access of an earlier iteration and one of this iteration at the
    same abstract base (`induction.IterationShift`, built on first use)."""

    def __init__(self, fa: FunctionAnalysis):
        self.fa = fa
        self.shift = None

    def stride(self, prev: MemAccess, acc: MemAccess, crossed: frozenset) -> int | None:
        a, b = prev.addr, acc.addr
        if not (isinstance(a, Aff) and isinstance(b, Aff)) or a.base != b.base or not a.base:
            return None
        if self.shift is None:
            self.shift = IterationShift(self.fa)
        return self.shift.stride(a.base, crossed)


@dataclass(frozen=True)
class _Frozen:
    """A block's outgoing `_Flow`, compared between passes (copies: never changed; dicts and
    sets compare by content, whatever their order)."""
    pending: tuple
    carried: dict  # instruction id -> loop headers
    fresh: set
    fenced: dict  # instruction id -> barrier
    skipped: dict  # instruction id -> barrier
    by_key: dict = field(default_factory=dict, compare=False)  # `pending` by instruction id


class _Flow:
    """What is pending at one point of a block: the accesses since the last barrier (by
    instruction id); those of them pending from an earlier iteration of a loop on some path
    (`carried`, with the headers of the loops whose back edges were taken since: the same
    terms may hold other values there) and those pending from this iteration on some path
    (`fresh`); those a barrier separates from here on some path since they last ran
    (`fenced`, with the barrier), and the pending ones that are also fenced on another path
    through a merge that every lane takes the same way (`skipped`, with the barrier: the race
    needs the path that skips it, such as a loop that runs no iteration)."""

    def __init__(self):
        self.pending: dict[int, MemAccess] = {}
        self.carried: dict[int, frozenset] = {}
        self.fresh: set[int] = set()
        self.fenced: dict[int, object] = {}
        self.skipped: dict[int, object] = {}

    def join(self, state: _Frozen, header: int | None) -> None:
        """Add the state flowing in over one edge (`header`: the block it enters, when the edge
        is a loop's back edge)."""
        if header is None and not (self.pending or self.fenced or self.skipped):
            self._copy(state)  # the first edge in: the state as it is (most blocks have one)
            return
        self.pending.update(state.by_key)  # (a key already pending keeps its place)
        carried, into = state.carried, self.carried  # (`carried` and `fresh` hold pending keys only)
        if header is None:
            self.fresh.update(state.fresh)
            for key, loops in carried.items():
                into[key] = into.get(key, frozenset()) | loops
        else:  # every access pending over a back edge is carried round the loop
            entered = {header}
            for key in state.by_key:
                into[key] = into.get(key, frozenset()) | ((carried.get(key) or frozenset()) | entered)
        self.fenced.update(state.fenced)
        self.skipped.update(state.skipped)

    def _copy(self, state: _Frozen) -> None:
        self.pending = dict(state.by_key)
        self.carried = dict(state.carried)
        self.fresh = set(state.fresh)
        self.fenced = dict(state.fenced)
        self.skipped = dict(state.skipped)

    def only_carried(self, key: int) -> frozenset | None:
        """The loops crossed since access `key` ran, when it is pending only from earlier
        iterations."""
        return None if key in self.fresh else self.carried.get(key)

    def meet_paths(self, divergent: bool) -> None:
        """After joining the paths into a merge: an access pending on one and fenced on
        another.  Where lanes arrive by different paths, some lanes surely took the one
        without the barrier; where all take the same, the race needs that path."""
        for key in self.pending.keys() & self.fenced.keys():
            if divergent:
                del self.fenced[key]
            else:
                self.skipped.setdefault(key, self.fenced[key])

    def barrier(self, ins) -> None:
        for key in self.pending:
            self.fenced.setdefault(key, ins)
        self.pending.clear()
        self.carried.clear()
        self.fresh.clear()
        self.skipped.clear()

    def execute(self, acc: MemAccess) -> bool:
        """`acc` runs: it is pending from here on every path.  True when the oldest pending
        access had to be dropped (the work bound)."""
        key = id(acc.instr)
        self.pending[key] = acc
        self.carried.pop(key, None)
        self.fresh.add(key)
        self.fenced.pop(key, None)
        self.skipped.pop(key, None)
        if len(self.pending) > MAX_PENDING:
            self.pending.pop(next(iter(self.pending)))
            return True
        return False

    def frozen(self) -> _Frozen:
        keys = self.pending.keys()
        carried = {k: v for k, v in self.carried.items() if k in keys}
        return _Frozen(tuple(self.pending.values()), carried, self.fresh & keys, dict(self.fenced),
                       dict(self.skipped), dict(self.pending))


def _incoming(fa: FunctionAnalysis, b: int, out_state: dict, ins_b: list, divergent_at: dict):
    """The `_Flow` at the start of block `b`, the pending accesses of each incoming path, and
    whether lanes arrive by different paths (`_divergent_merge`, remembered per block)."""
    flow = _Flow()
    incoming = []
    for p, back in ins_b:
        state = out_state.get(p)
        if state is None:
            continue
        incoming.append(state.pending)
        flow.join(state, b if back else None)
    divergent = False
    if len(incoming) > 1:
        divergent = divergent_at.get(b)
        if divergent is None:
            divergent = divergent_at[b] = _divergent_merge(fa, b)
        flow.meet_paths(divergent)
    return flow, incoming, divergent


def _exclusive(a: MemAccess, b: MemAccess, lits, in_loop: set[int]) -> bool:
    """Do `a` and `b` run under opposite values of one warp-uniform condition (`if (flags &
    FIX)` and `if (!(flags & FIX))`)?  Then no warp runs both.  Only outside loops: there each
    runs at most once, so the condition (one interned value) is one value for both; in a loop
    the same term holds another value in another iteration."""
    if a.block in in_loop or b.block in in_loop:
        return False
    need_b = _required(b.active)
    return any(-x in need_b and lits[x].kind == "uniform" for x in _required(a.active))


def _one_lane_literals(lits) -> set[int]:
    """The conditions that hold in at most one lane: `x == u` with `x` different in every lane
    (threadIdx.x, a lane index) and `u` the same in every lane (`if (i == tx)`,
    `if (threadIdx.x == kThreads - 1)`)."""
    out = set()
    for key, lit in lits.items():
        if isinstance(key, tuple) and len(key) == 5 and key[:2] == ("cmp", "eq") \
                and (_one_lane_equality(key[3], key[4]) or _one_lane_equality(key[4], key[3])):
            out.add(lit)
    return out


def _one_lane_equality(x, u) -> bool:
    return isinstance(x, Aff) and isinstance(u, Aff) and u.uniform and len(set(x.off)) == 32


def _same_lane(a: MemAccess, b: MemAccess, one_lane: set[int]) -> bool:
    """Do `a` and `b` (in one iteration) run only where one condition that holds in at most
    one lane holds?  Then the two run in the same single lane: no other lane's access."""
    return bool(one_lane and _required(a.active) & _required(b.active) & one_lane)

