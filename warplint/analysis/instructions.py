"""Transfer functions of whole instructions: one table from opcode to its semantics.

`Interpreter.run_block` executes a block's instructions over a register environment (dict
register name -> abstract value) on the block's lanes and records what the checks need: the
warp primitives, barriers and memory accesses with the lanes that can execute them.  Operand
values and arithmetic come from `transfer.Evaluator`; a guarded write meets the old value with
`domain.Joins`.

Loads: a load at an address that differs between lanes gives a per-lane value; one at a uniform
address gives one value to the lanes of a warp that run it together, and, for a weak load, to
the whole scope of the address (see `_uniform_load`: the boundary rests on data-race freedom;
strong loads, which polling code uses, stay warp-uniform unless no thread of the kernel can
write the memory they read: `written_spaces`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from ..ir import Addr, Instr, Reg, Sym, Vec
from ..memo import remember
from .domain import Joins, negate
from .lanes import EMPTY, FULL, FULL_SET, LaneSet, Literals
from .local_objects import POINTER_ARITH, LocalOffset, pointer_base
from .calls import block_collective, is_collective, may_wait
from .results import Barrier, MemAccess, WarpOp
from .transfer import Evaluator, comparison, type_bits
from .values import ZEROS, Aff, MaskV, Pred, Terms, Unk, const, is_uniform, mask_of, scope_of, wider

_BRANCHES = ("bra", "ret", "exit", "trap", "brx")
_SPACES = ("shared", "global", "local", "param", "const")
_SHARED_SPACES = ("shared", "global", "generic")  # accesses that other threads can see
_STRONG_LOADS = ("volatile", "relaxed", "acquire")  # may read a concurrent write without a race
# instructions that write memory other threads can read (`cp`, `stmatrix`, `wmma.store`, ...: at
# the address of their first operand); `asm`: inline assembly warplint could not read
_WRITES = ("st", "atom", "red", "cp", "sust", "sured", "stmatrix", "multimem", "wmma", "mbarrier",
           "discard", "tensormap", "tcgen05", "asm")


def written_spaces(cfg) -> frozenset[str]:
    """The state spaces (shared, global; `generic`: any of them) that some instruction of a
    kernel, its callees inlined, may write where other threads read: stores, atomics,
    reductions, copies, inline assembly not read, and opaque calls (which may be handed any
    pointer).  A space not among them holds the same values for as long as the kernel runs."""
    out = set()
    for blk in cfg.blocks:
        for ins in blk.instrs:
            if ins.op in _WRITES:
                space = next((m for m in ins.mods if m in _SPACES), "generic")
                if space in _SHARED_SPACES:
                    out.add(space)
            elif ins.op == "call" and may_wait(ins):  # (those known not to wait write nothing either)
                out.add("generic")
    return frozenset(out)


def _may_meet(space: str, written: frozenset[str]) -> bool:
    """Can memory of `space` be written by a write in one of `written`?"""
    return space in written or "generic" in written or space == "generic" and bool(written)


class MemoryCell(NamedTuple):
    """The environment's key for a thread's own memory (local or parameter space) at `addr`."""
    addr: object


@dataclass
class BlockRecord:
    """What one execution of a block found."""
    warp_ops: list[WarpOp] = field(default_factory=list)
    barriers: list[Barrier] = field(default_factory=list)
    accesses: list[MemAccess] = field(default_factory=list)
    branch_value: object = None  # the value a guarded or indexed branch at its end decides on


class Interpreter:
    def __init__(self, ev: Evaluator, joins: Joins, terms: Terms, lits: Literals,
                 fields: dict[str, list[str]] | None = None,
                 local_pointers: dict[str, tuple[str, ...]] | None = None,
                 local_fields: dict[str, dict[int, str]] | None = None,
                 written: frozenset[str] | None = None):
        self.ev = ev
        self.joins = joins
        self.terms = terms
        self.lits = lits
        self.fields = fields or {}  # struct register -> its fields read but never written
        self.local_pointers = local_pointers or {}  # register -> the variable it points into
        self.local_fields = local_fields or {}  # struct variable -> {offset: field}
        self.written = written  # `written_spaces` of a kernel; None: unknown (a function alone)
        self._guard_lanes: LaneSet | None = None  # lanes of the instruction's guard, if any
        self._calls: dict[int, tuple] = {}  # id of a call -> `_call_facts` (the CFG holds the calls)
        self._record = BlockRecord()

    def run_block(self, b: int, instrs: list[Instr], env: dict, mask: LaneSet) -> BlockRecord:
        self._record = record = BlockRecord()
        ev = self.ev
        track_pointers = bool(self.local_pointers)
        for i, ins in enumerate(instrs):
            active = mask
            guard = ins.guard
            if guard is not None:
                gv = ev.read(env, _guard_register(guard[0]))
                if ins is instrs[-1] and ins.op in _BRANCHES:
                    record.branch_value = gv
                    continue
                g = ev.pred_lanes(gv, guard[0], ins.loc)
                if guard[1]:
                    g = negate(g, self.lits, ("gneg", b, i))
                active = mask.and_(g)
                self._guard_lanes = g
            elif ins.op == "brx":
                record.branch_value = ev.read(env, ins.srcs[0]) if ins.srcs else None
                continue
            semantics = _SEMANTICS_BY_OPCODE.get(ins.opcode) or _semantics_of(ins)
            if ins.dests:
                semantics.run(self, b, i, ins, env, active, guard is not None)
                if track_pointers:
                    self._track_offset(ins, env)
            elif not semantics.needs_dest:
                semantics.run(self, b, i, ins, env, active, guard is not None)
            self._guard_lanes = None
        return record

    # -- writing results ------------------------------------------------------------------
    def _set(self, env, dest, value, guarded):
        if type(dest) is Reg:
            if guarded and dest.name in env and env[dest.name] != value:
                value = self._guarded_write(dest.name, env[dest.name], value)
            env[dest.name] = value
            for f in self.fields.get(dest.name, ()):  # a whole struct written: its fields too
                env[f] = self._part(value, f)
        elif isinstance(dest, Vec):
            for j, d in enumerate(dest.items):
                part = value if is_uniform(value) and not isinstance(value, Aff) else self._part(value, j)
                self._set(env, d, part, guarded)

    def _part(self, value, which):
        """One part of a wider value (a vector element, a struct field): the same in every
        lane where the whole is."""
        if isinstance(value, Aff) and value.exact and value.uniform:
            return value if isinstance(which, int) else Aff(self.terms.get(("part", value, which), "part"), ZEROS, 1, "block")
        if isinstance(value, Aff) and value.uniform:
            return Aff(self.terms.get(("part", value, which), "part"), ZEROS, 1, value.scope)
        return Unk(self.terms.get(("part", value, which), "part"))

    def _guarded_write(self, reg: str, old, new):
        """`@p mov reg, new`: `new` on the lanes of p, `old` elsewhere."""
        g = self._guard_lanes
        point = self.joins.point(None, reg)
        if g is not None and g.lits and all(self.lits[x].kind == "uniform" for x in g.lits):
            return self.joins.join(point, old, new)
        masks = [g, g.not_() or EMPTY] if g is not None else [FULL_SET, FULL_SET]
        return self.joins.merge_by_lanes(point, [new, old], masks)

    def _set_all(self, env, ins: Instr, value, guarded) -> None:
        for d in ins.dests:
            self._set(env, d, value, guarded)

    # -- the semantics, by opcode ---------------------------------------------------------
    def _opaque(self, ins: Instr, env, guarded, *_):
        vals = [self.ev.read(env, s) for s in ins.srcs]
        self._set_all(env, ins, self.ev.opaque(ins.opcode, vals, ins.op), guarded)

    def _unknown_op(self, b, i, ins: Instr, env, active, guarded):
        """An opcode with no semantics of its own: an opaque function of its operands."""
        self._opaque(ins, env, guarded)

    def _move(self, b, i, ins: Instr, env, active, guarded):
        if not ins.srcs:
            return self._opaque(ins, env, guarded)
        src = ins.srcs[0] if ins.op == "copysign" else ins.srcs[-1]
        v = self.ev.read(env, src)
        if ins.op == "cvt" and not any(m.startswith("f") for m in ins.mods):
            v = self.ev.truncate(v, type_bits(ins))
        self._set(env, ins.dests[0], v, guarded)

    def _compare(self, b, i, ins: Instr, env, active, guarded):
        ev = self.ev
        srcs = ins.srcs
        if len(srcs) < 2:
            return
        a, c = ev.read(env, srcs[0]), ev.read(env, srcs[1])
        p = comparison(ev, ins, a, c).lanes
        combine = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
        if combine and len(srcs) >= 3:
            q = ev.pred_lanes(ev.read(env, srcs[2]), str(srcs[2]), ins.loc)
            if 2 in ins.negated:
                q = negate(q, self.lits, ("setpq", id(ins)))
            p = p.and_(q) if combine == "and" else p.or_(q) if combine == "or" else p
        if ins.dests:
            self._set(env, ins.dests[0], Pred(p), guarded)
        if len(ins.dests) > 1:
            self._set(env, ins.dests[1], Pred(negate(p, self.lits, ("setpn", id(ins)))), guarded)

    def _logic(self, b, i, ins: Instr, env, active, guarded):
        if "pred" not in ins.mods:
            return (self._arith if ins.op != "not" else self._unary)(b, i, ins, env, active, guarded)
        ev, lits = self.ev, self.lits
        vals = [ev.pred_lanes(ev.read(env, s), str(s), ins.loc) for s in ins.srcs]
        vals = [(negate(v, lits, ("srcneg", id(ins), j)) if j in ins.negated else v)
                for j, v in enumerate(vals)]
        op = ins.op
        if op == "not":
            r = negate(vals[0], lits, ("not", id(ins)))
        elif op in ("and", "or"):
            r = ev.predicate_butterfly(op, vals[0], vals[1], str(ins.dests[0]), ins.loc)
            if r is None:
                r = vals[0].and_(vals[1]) if op == "and" else vals[0].or_(vals[1])
        else:
            n0, n1 = negate(vals[0], lits, ("x0", id(ins))), negate(vals[1], lits, ("x1", id(ins)))
            r = vals[0].and_(n1).or_(n0.and_(vals[1]))
        self._set(env, ins.dests[0], Pred(r), guarded)

    def _select(self, b, i, ins: Instr, env, active, guarded):
        if len(ins.srcs) != 3:
            return self._opaque(ins, env, guarded)
        ev = self.ev
        a, c, p = (ev.read(env, s) for s in ins.srcs)
        self._set(env, ins.dests[0], ev.select(a, c, p, str(ins.srcs[2]), ins.loc), guarded)

    def _multiply_add(self, b, i, ins: Instr, env, active, guarded):
        if len(ins.srcs) != 3:
            return self._opaque(ins, env, guarded)
        ev, bits = self.ev, type_bits(ins)
        a, c, d = (ev.read(env, s) for s in ins.srcs)
        self._set(env, ins.dests[0], ev.arith("add", ev.arith("mul", a, c, bits), d, bits), guarded)

    def _arith(self, b, i, ins: Instr, env, active, guarded):
        srcs = ins.srcs
        if len(srcs) != 2:
            return self._opaque(ins, env, guarded)
        ev, op, bits = self.ev, ins.op, type_bits(ins)
        a, c = ev.read(env, srcs[0]), ev.read(env, srcs[1])
        if op == "mul" and "hi" in ins.mods:
            v = ev.opaque("mulhi", (a, c))
        else:
            v = ev.arith(op, a, c, bits * 2 if op == "mul" and "wide" in ins.mods else bits)
        self._set(env, ins.dests[0], v, guarded)

    def _unary(self, b, i, ins: Instr, env, active, guarded):
        if len(ins.srcs) != 1:
            return self._opaque(ins, env, guarded)
        ev, op = self.ev, ins.op
        a = ev.read(env, ins.srcs[0])
        if op == "neg":
            v = ev.arith("sub", const(0), a, type_bits(ins))
        elif op == "not":
            v = ev.arith("xor", a, const(-1), type_bits(ins))
        else:
            v = ev.opaque(op, (a,))
        self._set(env, ins.dests[0], v, guarded)

    def _assume(self, b, i, ins: Instr, env, active, guarded):
        """`static_assert(c)` / `__builtin_assume(c)`: what `c` says about values."""
        if not guarded and ins.srcs:
            self.ev.assume(self.ev.read(env, ins.srcs[0]))

    def _call(self, b, i, ins: Instr, env, active, guarded):
        """A call of a function defined elsewhere (defined ones are inlined).  Its arguments
        are what was stored into the .param symbols it names; its result is unknown, the same
        in every lane only when every argument is (a call with no arguments, like `lane_of()`,
        may read the lane: lane-varying).  A PTX call returns through a .param symbol: the
        loads from it read the result."""
        facts = self._calls.get(id(ins))
        if facts is None:
            facts = self._calls[id(ins)] = _call_facts(ins)
        barrier, collective, key, returned = facts
        if barrier:  # a barrier for the whole block (analysis/calls.py)
            self._record.barriers.append(Barrier(ins, b, active, False))
        if not ins.dests:
            return
        if collective:
            return self._collective(ins, env, guarded)
        vals = [v for s in ins.srcs[1:] for v in self._argument(env, s)]
        result = self.ev.opaque(key, vals, "call") if vals else Unk(self.terms.get((key, id(ins)), "call"))
        for name in returned:
            env[name] = result
        self._set_all(env, ins, result, guarded)

    def _collective(self, ins: Instr, env, guarded):
        """A library collective (`call.lane.block`): each result a fresh unknown of its own
        scope, whatever the arguments (a scan's output differs per thread even when every
        input is the same; its block aggregate is one value for the whole block)."""
        for j, (d, scope) in enumerate(zip(ins.dests, ins.mods)):
            t = self.terms.get(("collective", id(ins), j), str(ins.srcs[0]))
            self._set(env, d, Unk(t) if scope == "lane" else Aff(t, ZEROS, 1, scope), guarded)

    def _argument(self, env, op) -> list:
        """The values a call argument passes: a register's value, or what was stored into a
        .param symbol (every field of it)."""
        if not isinstance(op, Sym):
            return [self.ev.read(env, op)]
        base = self.ev.read(env, op)
        stored = [v for k, v in env.items() if isinstance(k, MemoryCell) and isinstance(k.addr, Aff)
                  and isinstance(base, Aff) and k.addr.base == base.base]
        return stored or [base]

    def _barrier(self, b, i, ins: Instr, env, active, guarded):
        mods, srcs = ins.mods, ins.srcs
        if "sync" in mods or "red" in mods or len(mods) == 0 or mods[0] in ("sync", "red"):
            counted = ("red" not in mods and len(srcs) >= 2) or ("red" in mods and len(srcs) >= 3
                                                                 and not isinstance(srcs[-1], Reg))
            self._record.barriers.append(Barrier(ins, b, active, counted))
        if ins.dests and "red" in mods:
            self._set_all(env, ins, self._block_reduction(ins), guarded)
        elif ins.dests:
            vals = [self.ev.read(env, s) for s in srcs[1:]]
            self._set_all(env, ins, self.ev.opaque("bar", vals), guarded)

    def _block_reduction(self, ins: Instr):
        """bar.red (__syncthreads_count/_and/_or): one result for the whole block."""
        if "pred" in ins.mods:
            return Pred(LaneSet.lit(self.lits.get(("bar.red", id(ins)), "uniform", "block",
                                                  "result of the block reduction", ins.loc)))
        return Aff(self.terms.get(("bar.red", id(ins)), "bar.red"), ZEROS, 1, "block")

    # -- warp primitives ----------------------------------------------------------------
    def _warp_op(self, b, i, ins: Instr, env, active: LaneSet, guarded):
        ev = self.ev
        kind = "syncwarp" if ins.op == "bar" else ins.op
        srcs = ins.srcs
        sync = "sync" in ins.mods or kind == "syncwarp"
        member_value = ev.read(env, srcs[-1]) if sync and srcs else None
        member = mask_of(member_value) if member_value is not None else None
        vals = [ev.read(env, s) for s in srcs]
        groups = _member_groups(member_value) if member is None else []
        self._record.warp_ops.append(WarpOp(ins, b, kind, active, member_value, member, vals, groups))
        participants = active.and_(member) if member is not None else active
        result = _WARP_RESULTS.get(kind)
        if result is not None:
            result(self, ins, env, vals, active, participants, guarded)

    def _activemask_result(self, ins, env, vals, active, participants, guarded):
        if ins.dests:
            self._set(env, ins.dests[0], MaskV(active, "activemask", ins.loc), guarded)

    def _vote_result(self, ins, env, vals, active, participants, guarded):
        v = self._vote(ins, vals, participants)
        if ins.dests:
            self._set(env, ins.dests[0], v, guarded)

    def _vote(self, ins: Instr, vals, participants: LaneSet):
        srcs = ins.srcs
        mode = next((m for m in ins.mods if m in ("all", "any", "uni", "ballot")), "any")
        p = self.ev.pred_lanes(vals[0], str(srcs[0]), ins.loc) if vals else FULL_SET
        if 0 in ins.negated:
            p = negate(p, self.lits, ("vneg", id(ins)))
        if mode == "ballot":
            return MaskV(participants.and_(p), "ballot", ins.loc)
        lit = self.lits.get(("vote", mode, participants, p), "uniform", "warp",
                            f"{mode} vote of {srcs[0] if srcs else ''}", ins.loc)
        return Pred(LaneSet.lit(lit))

    def _match_result(self, ins, env, vals, active, participants, guarded):
        if "all" in ins.mods:  # the same mask (or 0) and predicate in every participating lane
            return self._match_all_result(ins, env, guarded)
        self._set_all(env, ins, self.ev.opaque(("match", id(ins)), [Unk(0)]), guarded)

    def _match_all_result(self, ins, env, guarded):
        d = ins.dests
        if d:
            self._set(env, d[0], Aff(self.terms.get(("match.all", id(ins)), "match.all"), ZEROS, 1, "warp"), guarded)
        if len(d) > 1:
            lit = self.lits.get(("match.all", id(ins)), "uniform", "warp", "all values equal", ins.loc)
            self._set(env, d[1], Pred(LaneSet.lit(lit)), guarded)

    def _redux_result(self, ins, env, vals, active, participants, guarded):
        operand = Aff(self.terms.get(("redux-in", tuple(vals), participants)), ZEROS, 1, "warp")
        v = self.ev.opaque(("redux", ins.opcode), [operand])
        if ins.dests:
            self._set(env, ins.dests[0], v, guarded)

    def _shuffle_result(self, ins, env, vals, active, participants, guarded):
        d = ins.dests
        if not d:
            return
        a = vals[0] if vals else None
        if a is not None and isinstance(a, Aff) and a.uniform:
            self._set(env, d[0], a, guarded)
        elif self._broadcast(ins, vals):  # every lane reads the same source lane
            term = self.terms.get(("shfl-broadcast", ins.opcode, tuple(vals)), "broadcast")
            self._set(env, d[0], Aff(term, ZEROS, 1, "warp"), guarded)
        elif (moved := self._butterfly_partner(ins, vals, participants)) is not None:
            self._set(env, d[0], moved, guarded)
        else:
            self._set(env, d[0], self.ev.opaque(("shfl", ins.opcode), vals, lanewise=False), guarded)
        if len(d) > 1:
            p = _shfl_in_range(ins, vals)
            in_range = LaneSet.const(p) if p is not None else LaneSet.lit(
                self.lits.get(("shflp", id(ins)), "lane", "lane", "shuffle source in range", ins.loc))
            self._set(env, d[1], Pred(in_range), guarded)

    def _butterfly_partner(self, ins: Instr, vals, participants: LaneSet):
        """`shfl.bfly` by a constant m, every lane taking part and reading in range (spec:
        ptx-warp-sync-instructions.md, shfl.sync): lane l reads lane l ^ m.  A known value moves
        exactly; an unknown one is named as the partner by m of the value read, so that
        combining the two (`Evaluator.butterfly`) is seen to be the same in lanes l and l ^ m."""
        if "bfly" not in ins.mods or len(vals) < 3 or participants.warp_exact(self.lits) != FULL \
                or _shfl_in_range(ins, vals) != FULL:
            return None
        v, m = vals[0], vals[1].const()
        if not 0 <= m < 32:
            return None
        if isinstance(v, Aff):
            return Aff(v.base, tuple(v.off[lane ^ m] for lane in range(32)), v.align, v.scope)
        if isinstance(v, Unk):
            t = self.terms.get(("bfly", v.term, m), "butterfly partner")
            self.terms.partners[t] = (v.term, m)
            return Unk(t)
        return None

    def _broadcast(self, ins: Instr, vals) -> bool:
        """shfl.idx whose source lane b is the same in every lane, over the whole warp (c's
        segment mask 0): all lanes that execute it get lane b's value."""
        if "idx" not in ins.mods or len(vals) < 3 or not self.ev.uniform(vals[1]):
            return False
        c = vals[2]
        return isinstance(c, Aff) and c.const() is not None and (c.const() >> 8) & 0x1F == 0

    # -- memory ---------------------------------------------------------------------------
    def _memory(self, b, i, ins: Instr, env, active, guarded):
        ev = self.ev
        space, size = _space_and_size(ins)
        op = ins.op
        if op == "st":
            addr_op = ins.dests[0] if ins.dests else (ins.srcs[0] if ins.srcs else None)
            val_ops = ins.srcs[1:] if not ins.dests else ins.srcs
        else:
            addr_op = ins.srcs[0] if ins.srcs else None
            val_ops = ins.srcs[1:]
        variable = self.local_pointers.get(pointer_base(addr_op)) if self.local_pointers else None
        if variable is not None and op in ("ld", "st"):
            self._variable_access(ins, env, variable, val_ops, guarded)
            return
        addr = ev.read(env, addr_op) if addr_op is not None else Unk(0)
        if space in _SHARED_SPACES:
            self._record.accesses.append(MemAccess(ins, b, i, active, addr, op in ("st", "atom", "red"),
                                                   op in ("ld", "ldu", "atom"), space, size))
        if op == "st":
            if space in ("local", "param") and val_ops:
                env[MemoryCell(addr)] = ev.read(env, val_ops[0])
            return
        if ins.dests:
            self._set_all(env, ins, self._loaded(ins, env, space, addr_op, addr), guarded)

    def _track_offset(self, ins: Instr, env) -> None:
        """A pointer into a thread's own variable: also keep its offset in the variable, to
        tell whether a store through it writes the same part in every lane."""
        d = ins.dests[0]
        if not (isinstance(d, Reg) and d.name in self.local_pointers) or ins.op not in POINTER_ARITH:
            return
        offs = [self._offset(env, op) for op in ins.srcs[:2]]
        off = offs[0] if ins.op in ("mov", "cvt", "cvta") else self.ev.arith(ins.op, *offs, 64)
        env[LocalOffset(d.name)] = off

    def _offset(self, env, op):
        if isinstance(op, Sym) and op.name.startswith("&"):
            return const(0)
        if isinstance(op, Reg) and op.name in self.local_pointers:
            return env.get(LocalOffset(op.name), Unk(0))
        return self.ev.read(env, op)

    def _variable_access(self, ins: Instr, env, variable: tuple, val_ops, guarded) -> None:
        """A load or store through a pointer into a thread's own variable (`local_objects`):
        a store may write any part of it, so each of its registers keeps its old value or
        takes the stored one; a load reads what the variable's registers hold."""
        address = (ins.dests or ins.srcs)[0] if ins.op == "st" else ins.srcs[0]
        off = self._offset(env, Reg(pointer_base(address)))
        if isinstance(getattr(address, "offset", None), int) and address.offset:
            off = self.ev.arith("add", off, const(address.offset), 64)
        field = self._field_at(variable, off)
        if ins.op == "st":
            if not val_ops:
                return
            new = self.ev.read(env, val_ops[0])
            for reg in (field,) if field else variable:
                old = env.get(reg)
                if old is None or old == new:
                    stored = new
                elif is_uniform(off):
                    stored = self._stored(reg, old, new)
                else:  # lanes write different parts: which one each keeps differs between lanes
                    stored = self.joins.merge_by_lanes(self.joins.point(None, "&" + reg), [new, old],
                                                       [FULL_SET, FULL_SET])
                self._set(env, Reg(reg), stored, guarded)
            return
        if field:
            self._set_all(env, ins, self.ev.read(env, Reg(field)), guarded)
            return
        held = [env[reg] for reg in variable if reg in env] or [self.ev.read(env, Reg(variable[0]))]
        value = held[0]
        for v in held[1:]:
            value = value if v == value else self._stored(variable[0], value, v)
        self._set_all(env, ins, value, guarded)

    def _field_at(self, variable: tuple, off) -> str | None:
        """The field register of struct `variable` that an access at offset `off` reaches, when
        the offset is the same known number in every lane and names a field used here."""
        fields = self.local_fields.get(variable[0].partition("@")[0])
        k = off.const() if fields and isinstance(off, Aff) and off.exact else None
        reg = f"{variable[0]}.{fields[k]}" if k in (fields or ()) else None
        return reg if reg in variable else None

    def _stored(self, reg: str, a, b):
        """A variable that holds `a` or `b`: which one is the same in every lane that ran the
        stores (a lane's own memory), so the values join as at a uniform choice."""
        return self.joins.join(self.joins.point(None, "&" + reg), a, b)

    def _loaded(self, ins: Instr, env, space: str, addr_op, addr):
        """The value a load reads."""
        op = ins.op
        sym = _sym_base(addr_op)
        if op == "ld" and space in ("local", "param") and MemoryCell(addr) in env:
            return env[MemoryCell(addr)]
        if op == "ld" and space == "param" and _returned(sym) in env:
            return env[_returned(sym)]
        if op == "ld" and space == "param" and sym is not None:
            return self.ev.param_value(f"{sym}+{getattr(addr_op, 'offset', 0)}")
        if op in ("ld", "ldu") and space in ("const", "param") and sym is not None:
            # a named constant / parameter buffer: the same value in every lane
            key = ("ld", space, sym, getattr(addr_op, "offset", 0))
            return Aff(self.terms.get(key, "load"), ZEROS, 1, "block")
        if op in ("ld", "ldu") and is_uniform(addr) and space != "local":
            return self._uniform_load(ins, space, addr)
        return Unk(self.terms.get(("ld", ins.opcode, addr, id(ins)), "load"))

    def _uniform_load(self, ins: Instr, space: str, addr):
        """A load at an address that is the same in every lane.  The lanes of a warp that
        execute it together read one value.  A weak load gives the same value to the whole
        scope of its address (the block, for `done[blockIdx.x]`): for two warps to read
        different values, a write would have to fall between their executions of the load
        with nothing ordering it (a barrier cannot: every warp of the block must reach it),
        which is a data race, undefined in the PTX memory model.  A strong load (volatile,
        relaxed, acquire: what polling code uses) may race without undefined behaviour, so
        warps that run it at different times may see different values: warp-uniform at
        most, and each such load is a value of its own (no two are assumed equal) -- unless
        no thread of the kernel can write its space (`written_spaces`; a function analysed
        alone has callers unknown): then there is no write to see, and it is weak."""
        if any(m in ins.mods for m in _STRONG_LOADS) and self._may_change(space):
            key = ("ld", space, addr, id(ins))
            return Aff(self.terms.get(key, "load"), ZEROS, 1, wider(scope_of(addr), "warp"))
        return Aff(self.terms.get(("ld", space, addr), "load"), ZEROS, 1, scope_of(addr))


    def _may_change(self, space: str) -> bool:
        """May a thread of this kernel write memory of `space` while the kernel runs?"""
        return self.written is None or _may_meet(space, self.written)


class _Semantics(NamedTuple):
    run: object  # Interpreter method (self, b, i, ins, env, active, guarded)
    needs_dest: bool = True  # an instruction without a destination does nothing


_SEMANTICS: dict[str, _Semantics] = {}
for _ops, _method, _needs_dest in [
        (("vote", "shfl", "match", "redux", "activemask", "bar.warp"), Interpreter._warp_op, False),
        (("bar", "barrier"), Interpreter._barrier, False),
        (("ld", "st", "atom", "red", "ldu", "cp"), Interpreter._memory, False),
        (("mov", "cvt", "cvta", "copysign"), Interpreter._move, True),
        (("setp", "set"), Interpreter._compare, True),
        (("and", "or", "xor", "not"), Interpreter._logic, True),
        (("selp",), Interpreter._select, True),
        (("mad",), Interpreter._multiply_add, True),
        (("add", "sub", "mul", "div", "rem", "shl", "shr", "min", "max"), Interpreter._arith, True),
        (("neg", "abs"), Interpreter._unary, True),
        (("call",), Interpreter._call, False),  # (a block collective with no result is a barrier)
        (("assume",), Interpreter._assume, False)]:
    for _op in _ops:
        _SEMANTICS[_op] = _Semantics(_method, _needs_dest)

_UNKNOWN_OP = _Semantics(Interpreter._unknown_op, True)
_SEMANTICS_BY_OPCODE: dict[str, _Semantics] = {}  # full opcode -> its semantics (memo.remember)


def _semantics_of(ins: Instr) -> _Semantics:
    """The semantics of `ins`'s opcode (`bar.warp` apart from the other `bar`s), kept per opcode."""
    op = "bar.warp" if ins.op == "bar" and "warp" in ins.mods else ins.op
    return remember(_SEMANTICS_BY_OPCODE, ins.opcode, _SEMANTICS.get(op, _UNKNOWN_OP))


_GUARD_REGISTERS: dict[str, Reg] = {}  # predicate name -> its register operand (memo.remember)


def _guard_register(name: str) -> Reg:
    reg = _GUARD_REGISTERS.get(name)
    return reg if reg is not None else remember(_GUARD_REGISTERS, name, Reg(name))


_WARP_RESULTS = {"activemask": Interpreter._activemask_result, "vote": Interpreter._vote_result,
                 "match": Interpreter._match_result, "redux": Interpreter._redux_result,
                 "shfl": Interpreter._shuffle_result}


def _call_facts(ins: Instr) -> tuple[bool, bool, tuple, tuple[str, ...]]:
    """What `_call` reads of a call instruction, the same on every visit: whether it is a block
    collective's barrier, a collective with scoped results, the call's term key, and the
    environment keys its .param results are returned through."""
    srcs = ins.srcs
    return (bool(block_collective(ins)), is_collective(ins), ("call", str(srcs[0]) if srcs else "?"),
            tuple(_returned(d.name) for d in ins.dests if isinstance(d, Sym)))


def _member_groups(member_value) -> list:
    """A membermask that differs between lanes (CUB's logical sub-warps): [(lanes, their mask)]."""
    if not (isinstance(member_value, Aff) and member_value.exact):
        return []
    by_value: dict[int, int] = {}
    for lane, m in enumerate(member_value.off):
        by_value[m & FULL] = by_value.get(m & FULL, 0) | (1 << lane)
    return [(bits, LaneSet.const(m)) for m, bits in sorted(by_value.items())]


_SPACE_AND_SIZE: dict[str, tuple[str, int]] = {}  # opcode -> (space, access size) (memo.remember)


def _space_and_size(ins: Instr) -> tuple[str, int]:
    """The state space a memory instruction names (`generic` when none) and its access size,
    from its opcode."""
    known = _SPACE_AND_SIZE.get(ins.opcode)
    if known is None:
        known = remember(_SPACE_AND_SIZE, ins.opcode,
                         (next((m for m in ins.mods if m in _SPACES), "generic"), _access_size(ins)))
    return known


def _access_size(ins: Instr) -> int:
    bits = type_bits(ins)
    size = max(1, abs(bits) // 8) if bits else 4
    if "v2" in ins.mods:
        size *= 2
    elif "v4" in ins.mods:
        size *= 4
    return size


def _returned(sym: str | None) -> str:
    """The environment's key for the result a call returned through .param symbol `sym`."""
    return f"@returned {sym}"


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


def source_lane(mods: tuple, lane: int, b: int, c: int) -> tuple[int, bool]:
    """(source lane j, in range) of one lane, per the shfl.sync table in the spec."""
    segmask = (c >> 8) & 0x1F
    cval = c & 0x1F
    mode = _shfl_mode(mods)
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


@lru_cache(maxsize=64)
def _shfl_mode(mods: tuple) -> str:
    """`up`, `down`, `bfly` or `idx` (the default) of a shfl's modifiers (asked once per lane)."""
    return next((m for m in mods if m in ("up", "down", "bfly", "idx")), "idx")


@lru_cache(maxsize=1024)
def source_lanes(mods, b: int, c: int) -> tuple:
    """(source lane j, in range) for every lane, when b is the same on all lanes."""
    return tuple(source_lane(mods, lane, b, c) for lane in range(32))
