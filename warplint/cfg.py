"""Per-function control-flow graphs over basic blocks (networkx DiGraph).

Nodes are block indices plus the virtual `EXIT` node that every `ret`/`exit`/`trap` reaches.
Edge attribute `kind`: "fall" (fall-through, or the not-taken side of a guarded branch),
"taken" (a branch target), "exit".  A guarded terminator's edges also carry `guard`
(the predicate register and whether it was written `@!`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from .errors import InputError
from .ir import Function, Instr, Label, Loc, Sym

EXIT = -1
_ENDS_BLOCK = frozenset({"bra", "brx", "ret", "exit", "trap"})
_LEAVES = frozenset({"ret", "exit", "trap"})


@dataclass(slots=True, eq=False)
class Block:
    id: int
    label: str | None
    instrs: list[Instr] = field(default_factory=list)

    @property
    def terminator(self) -> Instr | None:
        return self.instrs[-1] if self.instrs and self.instrs[-1].op in _ENDS_BLOCK else None

    @property
    def loc(self) -> Loc | None:
        return self.instrs[0].loc if self.instrs else None


class CFG:
    def __init__(self, function: Function):
        self.function = function
        self.blocks: list[Block] = []
        self.graph = nx.DiGraph()
        self._build()

    # -- construction -------------------------------------------------------------------
    def _build(self) -> None:
        blocks = self.blocks
        labels: dict[str, int] = {}
        current = Block(0, None)
        blocks.append(current)
        for item in self.function.body:
            if isinstance(item, Label):
                if current.instrs or current.label is not None:
                    current = Block(len(blocks), item.name)
                    blocks.append(current)
                else:
                    current.label = item.name
                if item.name in labels:
                    raise InputError(item.loc, f"label '{item.name}' defined twice")
                labels[item.name] = current.id
                continue
            if current.terminator is not None:
                current = Block(len(blocks), None)
                blocks.append(current)
            current.instrs.append(item)
        g = self.graph
        g.add_nodes_from(range(len(blocks)))
        g.add_node(EXIT)
        for b in blocks:
            term = b.terminator
            nxt = b.id + 1 if b.id + 1 < len(blocks) else EXIT
            if term is None:
                g.add_edge(b.id, nxt, kind="fall")
                continue
            guard = term.guard
            if guard is not None:
                g.add_edge(b.id, nxt, kind="fall", guard=guard)
            if term.op in _LEAVES:
                g.add_edge(b.id, EXIT, kind="exit", guard=guard)
                continue
            targets = [s.name for s in term.srcs if isinstance(s, Sym)]
            if not targets:
                raise InputError(term.loc, f"'{term.opcode}' has no target label")
            for name in targets:
                if name not in labels:
                    raise InputError(term.loc, f"branch to undefined label '{name}'")
                g.add_edge(b.id, labels[name], kind="taken", guard=guard)
        self.labels = labels

    # -- queries ------------------------------------------------------------------------
    entry = 0

    def succs(self, b: int) -> list[int]:
        return list(self.graph.successors(b))

    def preds(self, b: int) -> list[int]:
        return list(self.graph.predecessors(b))

    @cached_property
    def reachable(self) -> set[int]:
        return nx.descendants(self.graph, self.entry) | {self.entry}

    @cached_property
    def idom(self) -> dict[int, int]:
        return nx.immediate_dominators(self.graph, self.entry)

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominators (EXIT is the root).  Blocks that cannot reach EXIT
        (infinite loops) are treated as if they could, so every block has one."""
        rev = self.graph.reverse(copy=True)
        stuck = set(rev.nodes) - nx.descendants(rev, EXIT) - {EXIT}
        for b in stuck:
            rev.add_edge(EXIT, b)
        return nx.immediate_dominators(rev, EXIT)

    def postdominates(self, a: int, b: int) -> bool:
        """Does `a` post-dominate `b` (reflexive)?"""
        ipdom = self.ipdom
        while True:
            if b == a:
                return True
            nb = ipdom.get(b, EXIT)
            if nb == b:
                return False
            b = nb

    @cached_property
    def back_edges(self) -> set[tuple[int, int]]:
        """Edges u->v where v dominates u (natural-loop back edges)."""
        out = set()
        idom = self.idom
        for u, v in self.graph.edges:
            if u == EXIT or v == EXIT or u not in idom:
                continue
            x = u
            while True:
                if x == v:
                    out.add((u, v))
                    break
                px = idom.get(x, x)
                if px == x:
                    break
                x = px
        return out

    def rpo(self) -> list[int]:
        """Reachable blocks in reverse post-order (EXIT excluded)."""
        order = list(nx.dfs_postorder_nodes(self.graph, self.entry))
        order.reverse()
        return [b for b in order if b != EXIT]


def build_cfg(function: Function) -> CFG:
    return CFG(function)
