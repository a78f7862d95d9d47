"""The fixpoint of the divergence analysis: a worklist over blocks.

Values and active lanes depend on each other (a ballot's value depends on which lanes run
it; a branch on it changes the lanes), so both are computed in one fixpoint.  Blocks are
visited in rounds, each in reverse postorder: a block whose lanes or out-environment change
queues its successors and the blocks control dependent on it, in this round when they come
later in the order, else in the next round.  At most `MAX_ROUNDS` rounds; the work bound is
checked before each block, so one long round cannot overrun it.
"""
from __future__ import annotations

from heapq import heappop, heappush

from ..cfg import CFG, EXIT
from ..ir import Addr
from ..specials import is_special
from .dependence import CHEAP_DEPS, ControlDependence, loop_writes
from .domain import Incoming, Joins
from .instructions import BlockRecord, Interpreter, written_spaces
from .lanes import EMPTY, FULL_SET, STATS, LaneSet, Literals, too_many_conditions
from .liveness import dead_after, names_of, registers
from .local_objects import pointers_to_locals
from .results import FunctionAnalysis
from .transfer import Evaluator
from .values import Terms

MAX_ROUNDS = 8


def unwritten_fields(cfg: CFG, params: set[str], names=None) -> dict[str, list[str]]:
    """Struct register or parameter -> the fields of it (`t.nRanks`, `p.outSize.x`) that the
    function reads but never writes: they come with the whole struct, so writing `t` (`t =
    team_of(comm)`) writes them, and those of a parameter are parameters.  `names`: every
    register the function names, when known (none of them a field: PTX, nothing to look for)."""
    if names is not None and not any("." in name and not is_special(name) for name in names):
        return {}
    read, written = set(), set()
    for blk in cfg.blocks:
        for ins in blk.instrs:
            for d in ins.dests:
                registers(d, read if isinstance(d, Addr) else written)
            for op in ins.srcs:
                registers(op, read)
    out: dict[str, list[str]] = {}
    for name in sorted(read - written):
        base = name.split(".", 1)[0]
        if base != name and (base in written or base in params) and not is_special(name):
            out.setdefault(base, []).append(name)
    return out


class Solver:
    def __init__(self, cfg: CFG, module, options, terms: Terms, lits: Literals,
                 entry_mask: LaneSet = FULL_SET):
        fn = cfg.function
        self.cfg = cfg
        self.terms = terms
        self.lits = lits
        self.entry_mask = entry_mask
        ev = Evaluator(terms, lits, fn.is_kernel, set(fn.params) | set(fn.ret_params),
                       getattr(options, "block_dim", None), getattr(module, "state_spaces", None))
        self.ev = ev
        self.order = cfg.rpo()
        self.index = {b: i for i, b in enumerate(self.order)}
        self.preds = {b: [p for p in cfg.preds(b) if p != EXIT] for b in self.order}
        self.deps = ControlDependence(cfg, lits, entry_mask, self.index)
        self.joins = Joins(id(cfg), terms, lits)
        params = set(fn.params) | set(fn.ret_params)
        self.reg_names, self.dead_after = dead_after(cfg)
        fields = unwritten_fields(cfg, params, self.reg_names)
        local_pointers = pointers_to_locals(cfg, getattr(module, "state_spaces", None))
        ev.filled_through_pointers = {r for variable in local_pointers.values() for r in variable}
        self.interpreter = Interpreter(ev, self.joins, terms, lits, fields, local_pointers,
                                       getattr(module, "local_fields", None),
                                       written_spaces(cfg) if fn.is_kernel else None)
        self.param_fields = {f: ev.param_value(f) for base, fs in fields.items() if base in params for f in fs}
        self.loop_writes = loop_writes(cfg, local_pointers)
        self.reg_names = list(self.reg_names)  # bit i of a register set is register reg_names[i]
        self.dead_names: dict[int, set[str]] = {}  # block -> the names of dead_after[block]
        self.work = 0
        self.work_bound = getattr(options, "work_bound", 200_000)
        self.over_bound = False  # past the work bound: blocks with many dependences get cheap masks
        self.masks: dict[int, LaneSet] = {}
        self.in_env: dict[int, dict] = {}
        self.out_env: dict[int, dict] = {}
        self.records: dict[int, BlockRecord] = {}
        self.notes: list[str] = []

    # -- driver ---------------------------------------------------------------------------
    def solve(self) -> FunctionAnalysis:
        widened = STATS["widened"]
        if all(self.index.get(p, -1) < self.index[b] for b in self.order for p in self.preds[b]):
            self._single_pass()
        else:
            self._worklist()
        self._note_approximations(widened)
        warp_ops, barriers, accesses = [], [], []
        for b in self.order:  # the records of each block's last execution, in program order
            rec = self.records.get(b)
            if rec is not None:
                warp_ops.extend(rec.warp_ops)
                barriers.extend(rec.barriers)
                accesses.extend(rec.accesses)
        if any(too_many_conditions(*pair) for op in warp_ops for pair in _compared_sets(op)) or any(
                too_many_conditions(bar.active) for bar in barriers):
            self.notes.append("analysis work bound reached: some warp primitives depend on too many "
                              "conditions to compare their lanes exactly; their findings are "
                              "over-approximated")
        return FunctionAnalysis(self.cfg.function, self.cfg, self.lits, self.terms, self.masks,
                                warp_ops, barriers, accesses, self.deps.cd, self.deps.edge_cond, self.notes)

    def _note_approximations(self, widened: int) -> None:
        if self.over_bound:
            self.notes.append(f"analysis work bound ({self.work_bound} steps) reached; the lanes of "
                              "blocks that depend on many branches are over-approximated from there "
                              "on; results in this function are approximate")
        elif STATS["widened"] > widened:
            self.notes.append("analysis work bound reached: some sets of lanes were too complex to "
                              "track and were widened; results in this function are approximate")

    def _single_pass(self) -> None:
        """No back edges: one pass in reverse postorder.  An environment is kept only until
        its last successor has read it, so memory follows the blocks in flight, not blocks ×
        registers."""
        readers: dict[int, int] = {}
        for b in self.order:
            for p in self.preds[b]:
                readers[p] = readers.get(p, 0) + 1
        for b in self.order:
            self._check_bound()
            mask = self._lanes(b)
            self.masks[b] = mask
            env = self._entry_env(b, mask)
            for p in self.preds[b]:
                readers[p] -= 1
                if not readers[p]:
                    self.out_env.pop(p, None)
            self._execute(b, env, mask)

    def _worklist(self) -> None:
        later: set[int] = set(self.order)  # blocks to visit in the next round
        for _ in range(MAX_ROUNDS):
            if not later:
                return
            heap = [self.index[b] for b in later]
            heap.sort()
            queued, later = set(later), set()
            while heap:
                i = heappop(heap)
                b = self.order[i]
                queued.discard(b)
                for d in self._visit(b, later):
                    if self.index[d] > i:
                        if d not in queued:
                            queued.add(d)
                            heappush(heap, self.index[d])
                    else:
                        later.add(d)

    def _visit(self, b: int, later: set[int]) -> list[int]:
        """Recompute block `b`; returns the blocks its changes affect."""
        if self._check_bound():
            later.update(x for x in self.order if self.deps.deps(x) > CHEAP_DEPS)
        mask = self._lanes(b)
        mask_changed = self.masks.get(b) != mask
        self.masks[b] = mask
        env = self._entry_env(b, mask)
        if not mask_changed and self.in_env.get(b) == env:
            return []  # same inputs, same results as last time
        self.in_env[b] = dict(env)
        edges_changed, out_changed = self._execute(b, env, mask)
        affected = list(self.cfg.succs(b)) if mask_changed or edges_changed or out_changed else []
        if mask_changed or edges_changed:
            affected += self.deps.dependents.get(b, ())
        return [d for d in affected if d != EXIT]

    def _check_bound(self) -> bool:
        """Whether the work bound was passed just now (checked per block: one round can be long)."""
        if not self.over_bound and self.work > self.work_bound:
            self.over_bound = True
            return True
        return False

    # -- one block --------------------------------------------------------------------------
    def _lanes(self, b: int) -> LaneSet:
        self.work += self.deps.deps(b)
        return self.deps.block_lanes(self.masks, b, self.over_bound)

    def _entry_env(self, b: int, mask: LaneSet) -> dict:
        index = self.index
        incoming = [Incoming(self.out_env[p], self.deps.edge_lanes(self.masks, p, b), index[p] >= index[b])
                    for p in self.preds[b] if p in self.out_env]
        if b == self.cfg.entry:
            incoming.append(Incoming(dict(self.param_fields), self.entry_mask, False))
        taken = [i for i in incoming if not i.lanes.is_empty()]  # an edge no lane takes brings no values
        return self.joins.environments(b, taken or incoming, mask, self.loop_writes.get(b))

    def _execute(self, b: int, env: dict, mask: LaneSet) -> tuple[bool, bool]:
        """Run the block; returns whether its edge conditions and its out-environment changed."""
        instrs = self.cfg.blocks[b].instrs
        self.work += len(instrs) + 1
        record = self.interpreter.run_block(b, instrs, env, mask)
        self.records[b] = record
        edges_changed = self.deps.set_edge_conditions(self.ev, b, record.branch_value)
        dead = self.dead_after.get(b)
        if dead:  # (`env` is this visit's own: `_entry_env` made it, `run_block` wrote it)
            for k in self._dead_names(b, dead):
                env.pop(k, None)
        out_changed = self.out_env.get(b) != env
        if out_changed:
            self.out_env[b] = env
        return edges_changed, out_changed

    def _dead_names(self, b: int, dead: int) -> set[str]:
        """The registers dead after block `b` (its bits `dead`), named once per block; not those
        loads through pointers fill (they read a variable liveness cannot see)."""
        names = self.dead_names.get(b)
        if names is None:
            names = self.dead_names[b] = names_of(dead, self.reg_names) - self.ev.filled_through_pointers
        return names


def _compared_sets(op) -> list:
    """The (active lanes, membermask) pairs the checks compare for a warp primitive: one per
    group of lanes sharing a membermask when it differs between lanes (logical sub-warps)."""
    if op.member is None and op.member_groups:
        return [(op.active.and_bits(bits), m) for bits, m in op.member_groups]
    return [(op.active, op.member or EMPTY)]
