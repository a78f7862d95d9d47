"""What the divergence analysis finds in a function: its warp primitives, barriers and memory
accesses with the lanes that can execute them, and each block's lanes with the branches that
made them diverge (`FunctionAnalysis.why`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ..cfg import CFG
from ..findings import Step
from ..ir import Function, Instr
from .lanes import FULL_SET, LaneSet, Literals, describe
from .values import Terms


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
    # a device function analysed on its own: how to analyse it with number arguments that
    # differ per lane (`any_arguments`); None for a kernel, or a function with no such argument
    analyse_any_arguments: "Callable[[], FunctionAnalysis] | None" = field(default=None, repr=False, compare=False)
    # what several rules or targets ask of this analysis, found once (checks/membermask.py)
    shared: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def has_any_arguments(self) -> bool:
        return self.analyse_any_arguments is not None

    @cached_property
    def any_arguments(self) -> "FunctionAnalysis | None":
        """The analysis with number arguments that differ per lane (see pipeline.check), made
        when first asked for: only a function with findings needs it."""
        return self.analyse_any_arguments() if self.analyse_any_arguments is not None else None

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
