"""Divergence analysis: per-lane register values and the possible active lanes of every block.

The active lanes of a block are derived from control dependence: a block that is control
dependent on the edge X->S of a branch runs on `active(X) ∧ cond(X->S)`; a block control
dependent on nothing runs on the function's entry lanes.  This gives reconvergence at the
immediate post-dominator of every branch (the pre-Volta model, and what nvcc arranges on
Volta+ with BSSY/BSYNC), loops whose lanes leave at different iterations (the body is
control dependent on its own exit test), and early exits (the code after `if (c) return;`
is control dependent on that branch).

Values and active lanes depend on each other (a ballot's value depends on which lanes run
it; a branch on it changes the lanes), so both are computed in one fixpoint.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress
from operator import is_not

from ..cfg import CFG, EXIT
from ..findings import Step
from ..ir import Addr, Function, Instr, Reg, Sym, Vec
from .lanes import (EMPTY, FULL, FULL_SET, STATS, LaneSet, Literals, describe, too_many_conditions,
                    unknown_subset)
from .transfer import _CMP_TEXT, Evaluator, type_bits
from .values import (ZEROS, Aff, MaskV, Pred, Terms, Unk, const, is_uniform, join_offsets,
                     mask_of, scope_of, wider)

_OPPOSITE = {"lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "eq": "ne", "ne": "eq",
             "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls"}
WARP_OPS = {"vote", "shfl", "match", "redux", "activemask"}
MAX_PASSES = 8
CHEAP_DEPS = 4  # past the work bound, blocks with more control dependences get unknown lanes


@dataclass
class WarpOp:
    instr: Instr
    block: int
    kind: str  # vote | shfl | match | redux | activemask | syncwarp
    active: LaneSet  # lanes that can execute it together
    member_value: object = None  # abstract value of the membermask operand (None: no operand)
    member: LaneSet | None = None  # lanes named by the membermask (None: unknown / varies)
    srcs: list = field(default_factory=list)  # abstract values of the source operands
    # a membermask that differs between lanes (CUB's logical sub-warps): [(lanes, their mask)]
    member_groups: list = field(default_factory=list)

    @property
    def sync(self) -> bool:
        return "sync" in self.instr.mods


@dataclass
class Barrier:
    instr: Instr
    block: int
    active: LaneSet
    counted: bool  # has an explicit thread count (not checked)


@dataclass
class MemAccess:
    instr: Instr
    block: int
    index: int  # position in the block
    active: LaneSet
    addr: object
    store: bool
    load: bool
    space: str
    size: int


@dataclass
class FunctionAnalysis:
    function: Function
    cfg: CFG
    lits: Literals
    terms: Terms
    masks: dict[int, LaneSet]
    warp_ops: list[WarpOp]
    barriers: list[Barrier]
    accesses: list[MemAccess]
    cd: dict[int, list]  # block -> [(branch block, successor)]
    edge_cond: dict[tuple[int, int], LaneSet]
    notes: list[str] = field(default_factory=list)

    def control_deps(self, block: int):
        """The branch edges (X, S) that `block` depends on, directly or through the branches
        it depends on: each once, nearest first (depth-first over the control dependences)."""
        seen, expanded, todo = set(), set(), [block]
        while todo:
            b = todo.pop()
            if b in expanded:
                continue
            expanded.add(b)
            for x, s in self.cd.get(b, ()):
                if (x, s) not in seen:
                    seen.add((x, s))
                    todo.append(x)
                    yield x, s

    def why(self, block: int, limit: int = 4) -> list[Step]:
        """The branches that made this block's lanes diverge, outermost first."""
        found: list[tuple] = []  # (branch block, its terminator, condition), innermost first
        for x, s in self.control_deps(block):
            cond = self.edge_cond.get((x, s))
            term = self.cfg.blocks[x].terminator
            if cond is None or cond == FULL_SET or term is None:
                continue
            found.append((x, term, cond))
            if len(found) == limit:
                break
        steps = []
        for x, term, cond in reversed(found):
            lanes = self.masks.get(x, FULL_SET).and_(cond)  # described only for the steps shown
            steps.append(Step(term.loc, f"lanes diverge here: {describe(lanes, self.lits)} "
                              "take the path to the instruction"))
        return steps


class _Run:
    def __init__(self, cfg: CFG, module, options, terms: Terms, lits: Literals,
                 entry_mask: LaneSet = FULL_SET):
        fn = cfg.function
        self.cfg = cfg
        self.module = module
        self.terms = terms
        self.lits = lits
        self.entry_mask = entry_mask
        self.ev = Evaluator(terms, lits, fn.is_kernel, set(fn.params) | set(fn.ret_params),
                            getattr(options, "block_dim", None), getattr(module, "state_spaces", None))
        self.params = set(fn.params)
        self.kernel = fn.is_kernel
        self.work = 0
        self.work_bound = getattr(options, "work_bound", 200_000)
        self.over_bound = False  # past the work bound: blocks with many dependences get cheap masks
        self.cd = cfg.control_dependence
        self.on_entry_path = _postdominators_of_entry(cfg)
        number, self.dead_after = _dead_after(cfg)
        self.reg_names = list(number)  # bit i of a register set is register reg_names[i]
        self.masks: dict[int, LaneSet] = {}
        self.edge_cond: dict[tuple[int, int], LaneSet] = {}
        self.guard_val: dict[int, object] = {}
        self.out_env: dict[int, dict] = {}
        self.rpo_index: dict[int, int] = {}
        self.loop_writes: dict[int, set] = {}
        self.in_env: dict[int, dict] = {}
        self.records: dict[int, tuple] = {}
        self.widen: dict = {}
        self._guard_lanes: LaneSet | None = None
        self.warp_ops: list[WarpOp] = []
        self.barriers: list[Barrier] = []
        self.accesses: list[MemAccess] = []
        self.notes: list[str] = []

    # -- driver ---------------------------------------------------------------------------
    def run(self) -> FunctionAnalysis:
        cfg = self.cfg
        order = cfg.rpo()
        index = {b: i for i, b in enumerate(order)}
        self.rpo_index = index
        self.loop_writes = _loop_writes(cfg)
        preds = {b: [p for p in cfg.preds(b) if p != EXIT] for b in order}
        acyclic = all(index.get(p, -1) < index[b] for b in order for p in preds[b])
        widened = STATS["widened"]
        for _ in range(MAX_PASSES):
            changed = self._pass(order, preds, acyclic)
            if acyclic or not changed:  # past the bound, passes are cheap: finish them
                break
        if self.over_bound:
            self.notes.append(f"analysis work bound ({self.work_bound} steps) reached; the lanes of "
                              "blocks that depend on many branches are over-approximated from there "
                              "on; results in this function are approximate")
        elif STATS["widened"] > widened:
            self.notes.append("analysis work bound reached: some sets of lanes were too complex to "
                              "track and were widened; results in this function are approximate")
        for b in order:  # the records of each block's last execution, in program order
            ops, bars, accs = self.records.get(b, ((), (), ()))
            self.warp_ops.extend(ops)
            self.barriers.extend(bars)
            self.accesses.extend(accs)
        if any(too_many_conditions(op.active, op.member or EMPTY) for op in self.warp_ops) or any(
                too_many_conditions(bar.active) for bar in self.barriers):
            self.notes.append("analysis work bound reached: some warp primitives depend on too many "
                              "conditions to compare their lanes exactly; their findings are "
                              "over-approximated")
        return FunctionAnalysis(cfg.function, cfg, self.lits, self.terms, self.masks,
                                self.warp_ops, self.barriers, self.accesses, self.cd,
                                self.edge_cond, self.notes)

    def _pass(self, order, preds, once: bool = False) -> bool:
        """One pass over the blocks in reverse postorder.  A pass that is the only one (`once`:
        no back edges) keeps an environment only until its last successor has read it, so
        memory follows the blocks in flight, not blocks × registers."""
        changed = False
        entry = self.cfg.entry
        readers: dict[int, int] = {}
        if once:
            for b in order:
                for p in preds[b]:
                    readers[p] = readers.get(p, 0) + 1
        for b in order:
            if not self.over_bound and self.work > self.work_bound:
                self.over_bound = True  # checked per block: one pass can be long
            mask = self._mask(b)
            mask_changed = self.masks.get(b) != mask
            if mask_changed:
                self.masks[b] = mask
                changed = True
            index = self.rpo_index
            incoming = [(self.out_env[p], self._edge_mask(p, b), index[p] >= index[b])
                        for p in preds[b] if p in self.out_env]
            if b == entry:
                incoming.append(({}, self.entry_mask, False))
            env = self._join(b, incoming, mask)
            if once:
                for p in preds[b]:
                    readers[p] -= 1
                    if not readers[p]:
                        self.out_env.pop(p, None)
            elif not mask_changed and self.in_env.get(b) == env:
                continue  # same inputs, same results as last time
            else:
                self.in_env[b] = dict(env)
            self.warp_ops, self.barriers, self.accesses = [], [], []
            self._exec_block(b, env, mask)
            self.records[b] = (self.warp_ops, self.barriers, self.accesses)
            self._edge_conds(b)
            dead = self.dead_after.get(b)
            if dead:
                env = dict(env)
                for k in _names(dead, self.reg_names):
                    env.pop(k, None)
            if self.out_env.get(b) != env:
                self.out_env[b] = env
                changed = True
        self.warp_ops, self.barriers, self.accesses = [], [], []
        return changed

    def _edge_mask(self, p: int, b: int) -> LaneSet:
        m = self.masks.get(p)
        c = self.edge_cond.get((p, b))
        if m is None or c is None:
            return FULL_SET
        return m.and_(c)

    def _lane_part(self, s: LaneSet) -> LaneSet:
        """The set with warp-uniform conditions dropped: what differs between lanes."""
        lits = self.lits
        return LaneSet([(bits, frozenset(x for x in l if lits[x].kind != "uniform")) for bits, l in s.cubes])

    def _mask(self, b: int) -> LaneSet:
        """Lanes of block `b`: from its forward control dependences (a branch before it in
        program order); a loop back edge whose condition differs between lanes adds "in
        the first iteration, or among the lanes still iterating"."""
        deps = self.cd.get(b)
        if not deps:
            return self.entry_mask
        if self.over_bound and len(deps) > CHEAP_DEPS:  # any of the entry lanes, as far as we know
            return unknown_subset(self.entry_mask, (-1, b))
        self.work += len(deps)
        fwd = [self.entry_mask] if b in self.on_entry_path else []  # lanes from forward edges
        stay = []
        index = self.rpo_index
        for x, s in deps:
            cond = self.edge_cond.get((x, s))
            if cond is None:
                continue
            if x == b or index.get(s, 0) <= index.get(x, 0):  # own exit test, or a back edge
                if any(self.lits[l].kind != "uniform" for l in cond.lits):
                    stay.append((s, cond))
                continue
            mx = self.masks.get(x)
            if mx is not None:
                fwd.append(mx.and_(cond))
        fwd = LaneSet.union(fwd)
        if not stay:
            return fwd
        if fwd.is_empty():  # only reached round a loop (irreducible flow): be conservative
            parts = []
            for x, s in deps:
                mx, cond = self.masks.get(x), self.edge_cond.get((x, s))
                if mx is not None and cond is not None:
                    parts.append(mx.and_(cond))
            return LaneSet.union(parts)
        header = stay[0][0]
        first = self.lits.get(("first-iteration", id(self.cfg), header), "uniform", "block",
                              "first iteration of the loop")
        still = LaneSet.union([LaneSet.lit(first)] + [cond for _, cond in stay])
        return fwd.and_(still)

    def _edge_conds(self, b: int) -> None:
        cfg = self.cfg
        succs = cfg.succs(b)
        if len(succs) < 2:
            for s in succs:
                self.edge_cond[(b, s)] = FULL_SET
            return
        term = cfg.blocks[b].terminator
        if term is not None and term.guard is not None:
            v = self.guard_val.get(b)
            taken = self.ev.pred_lanes(v, term.guard[0], term.loc) if v is not None else FULL_SET
            if term.guard[1]:
                taken = _negate(taken, self, ("neg", b))
            fall = _negate(taken, self, ("fall", b))
            for s in succs:
                kind = cfg.edges[(b, s)].get("kind")
                self.edge_cond[(b, s)] = fall if kind == "fall" else taken
            return
        # brx.idx: one condition per target
        idx = self.guard_val.get(b)
        for s in succs:
            kind = "uniform" if idx is not None and is_uniform(idx) else "lane"
            lit = self.lits.get(("brx", b, s), kind, scope_of(idx) if idx is not None else "lane",
                                "indirect branch target", term.loc if term else None)
            self.edge_cond[(b, s)] = LaneSet.lit(lit)

    # -- joins ----------------------------------------------------------------------------
    def _join(self, b: int, incoming: list[tuple[dict, LaneSet, bool]], mask: LaneSet) -> dict:
        """Merge the register environments flowing into `b`.  Where lanes arrive from
        different forward paths (the reconvergence point of a divergent branch), a value that
        differs between the paths differs between lanes: it is merged lane by lane when
        every mask is exact, and becomes a per-lane unknown otherwise.  A loop back edge is
        not such a merge: in each iteration all active lanes come round the same edge."""
        if not incoming:
            return {}
        if len(incoming) == 1 and incoming[0][1] == mask:
            return dict(incoming[0][0])
        whole = self._lane_part(mask)
        divergent = any(self._lane_part(m) != whole for _, m, back in incoming if not back)
        written = self.loop_writes.get(b)
        if written is not None and any(back for _, _, back in incoming):
            # round a back edge only what the loop writes can change
            incoming = [(env if not back else {k: v for k, v in env.items()
                                               if k in written or not isinstance(k, str)}, m, back)
                        for env, m, back in incoming]
        out = dict(incoming[0][0])
        differing = set()
        for env, _, _ in incoming[1:]:
            for k in _changed_keys(out, env):
                v, cur = env[k], out.get(k)
                if cur is None:
                    out[k] = v
                    if divergent:
                        differing.add(k)
                elif cur != v:
                    differing.add(k)
        forward = [(env, m) for env, m, back in incoming if not back] or [(e, m) for e, m, _ in incoming]
        for k in differing:
            merged = None
            if divergent:
                vals = [env.get(k) for env, _ in forward]
                if any(v is not None for v in vals):
                    merged = self._merge_lanes(b, k, vals, [m for _, m in forward])
            present = [merged] if merged is not None else []
            present += [env[k] for env, _, back in incoming if (back or not divergent) and k in env]
            acc = present[0]
            for v in present[1:]:
                if v != acc:
                    acc = self._join_val(b, k, acc, v)
            out[k] = acc
        return out

    def _merge_lanes(self, b, k, vals, masks):
        t = self.terms.get(("phi", id(self.cfg), b, k), f"{k} (merged)")
        exacts = [m.exact for m in masks]
        if all(e is not None for e in exacts) and all(
                v is None or isinstance(v, Aff) and v.exact for v in vals):
            lanes = [None] * 32
            for v, e in zip(vals, exacts):
                if v is None:
                    continue
                for lane in range(32):
                    if e >> lane & 1:
                        if lanes[lane] is not None and lanes[lane] != v.off[lane]:
                            return Unk(t)
                        lanes[lane] = v.off[lane]
            return Aff(0, tuple(x if x is not None else 0 for x in lanes))
        if all(isinstance(v, Pred) or v is None for v in vals) and len(vals) <= 4 and all(
                len(m.cubes) <= 2 for m in masks) and all(v is None or len(v.lanes.cubes) <= 2 for v in vals):
            out = EMPTY
            for v, m in zip(vals, masks):
                if v is not None:
                    out = out.or_(v.lanes.and_(m))
            if len(out.cubes) <= 8:
                return Pred(out)
        if all(isinstance(v, Pred) or v is None for v in vals):
            lit = self.lits.get(("phi", id(self.cfg), b, k), "lane", "lane", f"{k} (merged)")
            return Pred(LaneSet.lit(lit))
        return Unk(t)

    def _join_val(self, b, k, a, v):
        t = self.terms.get(("phi", id(self.cfg), b, k), f"{k} (merged)")
        if isinstance(a, Aff) and isinstance(v, Aff):
            j = join_offsets(a, v)
            scope = wider(a.scope, v.scope)
            if j is not None:
                off, align = j
                if a.base == t:
                    off = a.off
                # widening: a merge point whose alignment keeps shrinking (off /= 2) jumps to 1
                seen = self.widen.get((b, k), 0) + 1
                self.widen[(b, k)] = seen
                if seen > 1:
                    align = 1
                return Aff(t, off, align, scope)
            if a.uniform and v.uniform:
                return Aff(t, ZEROS, 1, scope)
            return Unk(t)
        if is_uniform(a) and is_uniform(v) and not isinstance(a, Pred):
            return Aff(t, ZEROS, 1, wider(scope_of(a), scope_of(v)))
        if isinstance(a, Pred) or isinstance(v, Pred):
            kind = "uniform" if is_uniform(a) and is_uniform(v) else "lane"
            lit = self.lits.get(("phi", id(self.cfg), b, k), kind, "lane", f"{k} (merged)")
            return Pred(LaneSet.lit(lit))
        return Unk(t)

    # -- instructions ---------------------------------------------------------------------
    def _exec_block(self, b: int, env: dict, mask: LaneSet) -> None:
        instrs = self.cfg.blocks[b].instrs
        self.work += len(instrs) + 1
        for i, ins in enumerate(instrs):
            active = mask
            if ins.guard is not None:
                gv = self.ev.read(env, Reg(ins.guard[0]))
                if ins is instrs[-1] and ins.op in ("bra", "ret", "exit", "trap", "brx"):
                    self.guard_val[b] = gv
                    continue
                g = self.ev.pred_lanes(gv, ins.guard[0], ins.loc)
                if ins.guard[1]:
                    g = _negate(g, self, ("gneg", b, i))
                active = mask.and_(g)
                self._guard_lanes = g
            elif ins.op == "brx":
                self.guard_val[b] = self.ev.read(env, ins.srcs[0]) if ins.srcs else None
                continue
            self._exec(b, i, ins, env, active, guarded=ins.guard is not None)
            self._guard_lanes = None

    def _set(self, env, dest, value, guarded):
        if isinstance(dest, Reg):
            if guarded and dest.name in env and env[dest.name] != value:
                g = self._guard_lanes
                if g is not None and g.lits and all(self.lits[x].kind == "uniform" for x in g.lits):
                    value = self._join_val(-2, dest.name, env[dest.name], value)
                else:
                    value = self._merge_lanes(-2, dest.name, [value, env[dest.name]],
                                              [g, g.not_() or EMPTY] if g is not None else [FULL_SET, FULL_SET])
            env[dest.name] = value
        elif isinstance(dest, Vec):
            for j, d in enumerate(dest.items):
                part = value if is_uniform(value) else Unk(self.terms.get(("part", value, j), "part"))
                if is_uniform(value) and isinstance(value, Aff) and not value.exact:
                    part = Aff(self.terms.get(("part", value, j), "part"), ZEROS, 1, value.scope)
                self._set(env, d, part, guarded)

    def _exec(self, b, i, ins: Instr, env, active: LaneSet, guarded: bool):
        op = ins.op
        ev = self.ev
        srcs = ins.srcs
        read = ev.read
        if op in WARP_OPS or (op == "bar" and "warp" in ins.mods):
            self._warp_op(b, ins, env, active, guarded)
            return
        if op in ("bar", "barrier"):
            if ("sync" in ins.mods or "red" in ins.mods or len(ins.mods) == 0
                                or ins.mods[0] in ("sync", "red")):
                counted = ("red" not in ins.mods and len(srcs) >= 2) or ("red" in ins.mods and len(srcs) >= 3
                                                                          and not isinstance(srcs[-1], Reg))
                self.barriers.append(Barrier(ins, b, active, counted))
            for d in ins.dests:
                self._set(env, d, ev.opaque("bar", [read(env, s) for s in srcs[1:]]), guarded)
            return
        if op in ("ld", "st", "atom", "red", "ldu", "cp"):
            self._memory(b, i, ins, env, active, guarded)
            return
        if not ins.dests:
            return
        dest = ins.dests[0]
        bits = type_bits(ins)
        if op in ("mov", "cvt", "cvta", "copysign") and srcs:
            v = read(env, srcs[-1] if op != "copysign" else srcs[0])
            if op == "cvt" and isinstance(v, Aff) and v.exact and 0 < bits < 64 and not any(
                    m.startswith("f") for m in ins.mods):
                v = Aff(0, tuple(x & ((1 << bits) - 1) for x in v.off))
            self._set(env, dest, v, guarded)
            return
        if op == "setp" or op == "set":
            self._setp(ins, env, guarded)
            return
        if op in ("and", "or", "xor", "not") and "pred" in ins.mods:
            vals = [ev.pred_lanes(read(env, s), str(s), ins.loc) for s in srcs]
            vals = [(_negate(v, self, ("srcneg", id(ins), j)) if j in ins.negated else v)
                    for j, v in enumerate(vals)]
            if op == "not":
                r = _negate(vals[0], self, ("not", id(ins)))
            elif op == "and":
                r = vals[0].and_(vals[1])
            elif op == "or":
                r = vals[0].or_(vals[1])
            else:
                n0, n1 = _negate(vals[0], self, ("x0", id(ins))), _negate(vals[1], self, ("x1", id(ins)))
                r = vals[0].and_(n1).or_(n0.and_(vals[1]))
            self._set(env, dest, Pred(r), guarded)
            return
        if op == "selp" and len(srcs) == 3:
            a, c, p = (read(env, s) for s in srcs)
            pl = ev.pred_lanes(p, str(srcs[2]), ins.loc)
            e = pl.exact
            if e is not None and isinstance(a, Aff) and isinstance(c, Aff) and a.exact and c.exact:
                v = Aff(0, tuple(x if e >> l & 1 else y for l, (x, y) in enumerate(zip(a.off, c.off))))
            elif a == c:
                v = a
            else:
                v = ev.opaque("selp", (a, c, p))
            self._set(env, dest, v, guarded)
            return
        if op == "mad" and len(srcs) == 3:
            a, c, d = (read(env, s) for s in srcs)
            self._set(env, dest, ev.arith("add", ev.arith("mul", a, c, bits), d, bits), guarded)
            return
        if op in ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "min", "max") \
                and len(srcs) == 2:
            a, c = read(env, srcs[0]), read(env, srcs[1])
            if op == "mul" and ("hi" in ins.mods):
                v = ev.opaque("mulhi", (a, c))
            else:
                if op == "mul" and "wide" in ins.mods:
                    bits = bits * 2
                v = ev.arith(op, a, c, bits)
            self._set(env, dest, v, guarded)
            return
        if op in ("neg", "not", "abs") and len(srcs) == 1:
            a = read(env, srcs[0])
            if op == "neg":
                v = ev.arith("sub", const(0), a, bits)
            elif op == "not":
                v = ev.arith("xor", a, const(-1), bits)
            else:
                v = ev.opaque(op, (a,))
            self._set(env, dest, v, guarded)
            return
        if op == "call":
            vals = [read(env, s) for s in srcs[1:]]
            v = ev.opaque(("call", str(srcs[0]) if srcs else "?"), vals, "call")
            for d in ins.dests:
                self._set(env, d, v, guarded)
            return
        vals = [read(env, s) for s in srcs]
        v = ev.opaque(ins.opcode, vals, op)
        for d in ins.dests:
            self._set(env, d, v, guarded)

    def _setp(self, ins: Instr, env, guarded):
        ev = self.ev
        mods = ins.mods
        cmp = next((m for m in mods if m in _CMP_TEXT or m in ("equ", "neu", "ltu", "leu", "gtu",
                                                                  "geu", "num", "nan")), "ne")
        combine = next((m for m in mods if m in ("and", "or", "xor")), None)
        srcs = ins.srcs
        if len(srcs) < 2:
            return
        a, c = ev.read(env, srcs[0]), ev.read(env, srcs[1])
        signed = any(m.startswith("s") and m[1:].isdigit() for m in mods)
        text = f"{srcs[0]} {_CMP_TEXT.get(cmp, cmp)} {srcs[1]}"
        opposite = _OPPOSITE.get(cmp)
        neg_text = f"{srcs[0]} {_CMP_TEXT[opposite]} {srcs[1]}" if opposite else ""
        p = ev.compare(cmp, a, c, type_bits(ins), signed, text, ins.loc, neg_text).lanes
        if combine and len(srcs) >= 3:
            q = ev.pred_lanes(ev.read(env, srcs[2]), str(srcs[2]), ins.loc)
            if 2 in ins.negated:
                q = _negate(q, self, ("setpq", id(ins)))
            p = p.and_(q) if combine == "and" else p.or_(q) if combine == "or" else p
        if ins.dests:
            self._set(env, ins.dests[0], Pred(p), guarded)
        if len(ins.dests) > 1:
            self._set(env, ins.dests[1], Pred(_negate(p, self, ("setpn", id(ins)))), guarded)

    def _warp_op(self, b, ins: Instr, env, active: LaneSet, guarded):
        ev = self.ev
        op = ins.op
        kind = "syncwarp" if op == "bar" else op
        srcs = ins.srcs
        sync = "sync" in ins.mods or kind == "syncwarp"
        member_value = ev.read(env, srcs[-1]) if sync and srcs else None
        member = mask_of(member_value) if member_value is not None else None
        vals = [ev.read(env, s) for s in srcs]
        groups = []  # a membermask that differs between lanes: lanes grouped by their mask
        if member is None and isinstance(member_value, Aff) and member_value.exact:
            by_value: dict[int, int] = {}
            for lane, m in enumerate(member_value.off):
                by_value[m & FULL] = by_value.get(m & FULL, 0) | (1 << lane)
            groups = [(bits, LaneSet.const(m)) for m, bits in sorted(by_value.items())]
        self.warp_ops.append(WarpOp(ins, b, kind, active, member_value, member, vals, groups))
        d = ins.dests
        participants = active.and_(member) if member is not None else active
        if kind == "activemask":
            if d:
                self._set(env, d[0], MaskV(active, "activemask", ins.loc), guarded)
            return
        if kind == "vote":
            mode = next((m for m in ins.mods if m in ("all", "any", "uni", "ballot")), "any")
            p = ev.pred_lanes(vals[0], str(srcs[0]), ins.loc) if vals else FULL_SET
            if 0 in ins.negated:
                p = _negate(p, self, ("vneg", id(ins)))
            if mode == "ballot":
                v = MaskV(participants.and_(p), "ballot", ins.loc)
            else:
                lit = self.lits.get(("vote", mode, participants, p), "uniform", "warp",
                                    f"{mode} vote of {srcs[0] if srcs else ''}", ins.loc)
                v = Pred(LaneSet.lit(lit))
            if d:
                self._set(env, d[0], v, guarded)
            return
        if kind == "match":
            v = ev.opaque(("match", id(ins)), [Unk(0)])
            for x in d:
                self._set(env, x, v, guarded)
            return
        if kind == "redux":
            v = ev.opaque(("redux", ins.opcode), [Aff(self.terms.get(("redux-in", tuple(vals), participants)),
                                                      ZEROS, 1, "warp")])
            if d:
                self._set(env, d[0], v, guarded)
            return
        if kind == "shfl":
            a = vals[0] if vals else None
            if d:
                if a is not None and isinstance(a, Aff) and a.uniform:
                    self._set(env, d[0], a, guarded)
                else:
                    self._set(env, d[0], ev.opaque(("shfl", ins.opcode), vals), guarded)
                if len(d) > 1:
                    p = _shfl_in_range(ins, vals)
                    self._set(env, d[1], Pred(LaneSet.const(p)) if p is not None else
                              Pred(LaneSet.lit(self.lits.get(("shflp", id(ins)), "lane", "lane",
                                                            "shuffle source in range", ins.loc))), guarded)

    def _memory(self, b, i, ins: Instr, env, active, guarded):
        ev = self.ev
        mods = ins.mods
        space = next((m for m in mods if m in ("shared", "global", "local", "param", "const")), "generic")
        op = ins.op
        if op == "st":
            addr_op = ins.dests[0] if ins.dests else (ins.srcs[0] if ins.srcs else None)
            val_ops = ins.srcs[1:] if not ins.dests else ins.srcs
        else:
            addr_op = ins.srcs[0] if ins.srcs else None
            val_ops = ins.srcs[1:]
        addr = ev.read(env, addr_op) if addr_op is not None else Unk(0)
        size = max(1, abs(type_bits(ins)) // 8) if type_bits(ins) else 4
        if any(m in ("v2", "v4") for m in mods):
            size *= 2 if "v2" in mods else 4
        if space in ("shared", "global", "generic"):
            self.accesses.append(MemAccess(ins, b, i, active, addr, op in ("st", "atom", "red"),
                                           op in ("ld", "ldu", "atom"), space, size))
        if op == "st":
            if space in ("local", "param") and val_ops:
                env[("mem", addr)] = ev.read(env, val_ops[0])
            return
        if not ins.dests:
            return
        if op == "ld" and space in ("local", "param") and ("mem", addr) in env:
            v = env[("mem", addr)]
        elif op == "ld" and space == "param" and isinstance(addr_op, (Sym,)) or (
                op == "ld" and space == "param" and getattr(addr_op, "base", None) is not None
                and isinstance(addr_op.base, Sym)):
            name = addr_op.name if isinstance(addr_op, Sym) else addr_op.base.name
            v = ev.param_value(f"{name}+{getattr(addr_op, 'offset', 0)}")
        elif op in ("ld", "ldu") and space in ("const", "param") and _sym_base(addr_op) is not None:
            # a named constant / parameter buffer: the same value in every lane
            v = Aff(self.terms.get(("ld", space, _sym_base(addr_op), getattr(addr_op, "offset", 0)), "load"),
                    ZEROS, 1, "block")
        elif op in ("ld", "ldu") and is_uniform(addr) and space in ("global", "const", "param", "shared",
                                                                     "generic"):
            v = Aff(self.terms.get(("ld", space, addr), "load"), ZEROS, 1, scope_of(addr))
        else:
            v = Unk(self.terms.get(("ld", ins.opcode, addr, id(ins)), "load"))
        for d in ins.dests:
            self._set(env, d, v, guarded)


def _sym_base(op) -> str | None:
    if isinstance(op, Sym):
        return op.name
    if isinstance(op, Addr) and isinstance(op.base, Sym):
        return op.base.name
    return None


def _shfl_in_range(ins: Instr, vals) -> int | None:
    """Lanes whose source lane is in range (the shfl predicate), when b and c are constants."""
    if len(vals) < 3:
        return None
    b, c = vals[1], vals[2]
    if not (isinstance(b, Aff) and b.exact and b.uniform and isinstance(c, Aff) and c.exact and c.uniform):
        return None
    src = source_lanes(ins.mods, b.off[0], c.off[0])
    return sum(1 << l for l, (j, ok) in enumerate(src) if ok)


def source_lane(mods, lane: int, b: int, c: int) -> tuple[int, bool]:
    """(source lane j, in range) of one lane, per the shfl.sync table in the spec."""
    segmask = (c >> 8) & 0x1F
    cval = c & 0x1F
    mode = next((m for m in mods if m in ("up", "down", "bfly", "idx")), "idx")
    max_lane = (lane & segmask) | (cval & ~segmask & 0x1F)
    if mode == "up":
        j = lane - b
        return j, j >= max_lane
    if mode == "down":
        j = lane + b
    elif mode == "bfly":
        j = lane ^ b
    else:
        j = (lane & segmask) | (b & ~segmask & 0x1F)
    return j, j <= max_lane


@lru_cache(maxsize=1024)
def source_lanes(mods, b: int, c: int) -> tuple:
    """(source lane j, in range) for every lane, when b is the same on all lanes."""
    return tuple(source_lane(mods, lane, b, c) for lane in range(32))


def _negate(s: LaneSet, run: "_Run", key) -> LaneSet:
    n = s.not_()
    if n is None:
        lit = run.lits.get(("neg-overflow", key, s), "lane", "lane", "complex condition")
        return LaneSet.lit(lit)
    return n


def _regs(op, out: set) -> None:
    if isinstance(op, Reg):
        out.add(op.name)
    elif isinstance(op, Addr):
        if isinstance(op.base, Reg):
            out.add(op.base.name)
    elif isinstance(op, Vec):
        for x in op.items:
            _regs(x, out)


def _changed_keys(old: dict, new: dict) -> list:
    """Keys of `new` whose value is not the very object `old` has.  When both have the same
    keys in the same order (the common case) the comparison runs in C, so that environments
    of thousands of registers that differ in a few cost little to merge."""
    if len(old) == len(new) and list(old) == list(new):
        return list(compress(new, map(is_not, old.values(), new.values())))
    return [k for k, v in new.items() if old.get(k) is not v]


def _names(bits: int, names: list[str]) -> set[str]:
    """The registers of a live bit set (a string search: linear in the bits, in C)."""
    digits = bin(bits)[:1:-1]  # bit 0 first
    out = set()
    i = digits.find("1")
    while i >= 0:
        out.add(names[i])
        i = digits.find("1", i + 1)
    return out


def _dead_after(cfg: CFG) -> tuple[dict[str, int], dict[int, int]]:
    """Registers that can be in a block's environment but are dead at its end: those live
    out of a predecessor or written in the block, and not live out of it (backward dataflow
    over bit sets of a register numbering, not sets of names).  Dropping dead registers keeps
    the environments small: the CUDA-C front end makes many one-use temporaries; dropping
    only these keeps the work per block in proportion to what changes there."""
    number: dict[str, int] = {}

    def bits(names) -> int:
        out = 0
        for name in names:
            out |= 1 << number.setdefault(name, len(number))
        return out

    use: dict[int, int] = {}
    defs: dict[int, int] = {}
    writes: dict[int, int] = {}  # guarded or not
    for blk in cfg.blocks:
        u = d = w = 0
        for ins in blk.instrs:
            read: set = set()
            for x in ins.srcs:
                _regs(x, read)
            for x in ins.dests:
                if isinstance(x, Addr):
                    _regs(x, read)
            if ins.guard:
                read.add(ins.guard[0])
            u |= bits(read) & ~d
            written: set = set()
            for x in ins.dests:
                if not isinstance(x, Addr):
                    _regs(x, written)
            w |= bits(written)
            if ins.guard is None:
                d |= bits(written)
        use[blk.id], defs[blk.id], writes[blk.id] = u, d, w
    live_in = {b: 0 for b in use}
    live_out = {b: 0 for b in use}
    order = list(reversed(cfg.rpo()))
    changed = True
    while changed:
        changed = False
        for b in order:
            out = 0
            for s in cfg.succs(b):
                if s != EXIT:
                    out |= live_in[s]
            inn = use[b] | (out & ~defs[b])
            if inn != live_in[b] or out != live_out[b]:
                live_in[b], live_out[b] = inn, out
                changed = True
    dead = {}
    for b in use:
        may_hold = writes[b]
        for p in cfg.preds(b):
            if p != EXIT:
                may_hold |= live_out.get(p, 0)
        dead[b] = may_hold & ~live_out[b]
    return number, dead


def _loop_writes(cfg: CFG) -> dict[int, set]:
    """Loop header -> registers written anywhere in its loop.  A register the loop never
    writes keeps its value from before the loop (no phi at the header)."""
    out: dict[int, set] = {}
    for header, body in cfg.loops.items():
        written = out[header] = set()
        for blk in body:
            for ins in cfg.blocks[blk].instrs:
                for d in ins.dests:
                    if not isinstance(d, Addr):
                        _regs(d, written)
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


def analyze_function(cfg: CFG, module, options, terms: Terms | None = None,
                     lits: Literals | None = None, entry_mask: LaneSet = FULL_SET) -> FunctionAnalysis:
    return _Run(cfg, module, options, terms or Terms(), lits or Literals(), entry_mask).run()
