"""Per-function control-flow graphs over basic blocks.

Nodes are block indices plus the virtual `EXIT` node that every `ret`/`exit`/`trap` reaches.
Edge data `kind`: "fall" (fall-through, or the not-taken side of a guarded branch),
"taken" (a branch target), "exit".  A guarded terminator's edges also carry `guard`
(the predicate register and whether it was written `@!`).

The analyses use the adjacency lists and the dominator trees computed here (iterative
Cooper–Harvey–Kennedy), which is much faster than going through networkx; `cfg.graph`
builds the same graph as a networkx DiGraph on demand for tools and tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

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
    entry = 0

    def __init__(self, function: Function):
        self.function = function
        self.blocks: list[Block] = []
        self.edges: dict[tuple[int, int], dict] = {}
        self._succ: dict[int, list[int]] = {EXIT: []}
        self._pred: dict[int, list[int]] = {EXIT: []}
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
        for b in blocks:
            self._succ[b.id] = []
            self._pred[b.id] = []
        for b in blocks:
            term = b.terminator
            nxt = b.id + 1 if b.id + 1 < len(blocks) else EXIT
            if term is None:
                self._edge(b.id, nxt, kind="fall")
                continue
            guard = term.guard
            if guard is not None:
                self._edge(b.id, nxt, kind="fall", guard=guard)
            if term.op in _LEAVES:
                self._edge(b.id, EXIT, kind="exit", guard=guard)
                continue
            targets = [s.name for s in term.srcs if isinstance(s, Sym)]
            if not targets:
                raise InputError(term.loc, f"'{term.opcode}' has no target label")
            for name in targets:
                if name not in labels:
                    raise InputError(term.loc, f"branch to undefined label '{name}'")
                self._edge(b.id, labels[name], kind="taken", guard=guard)
        self.labels = labels

    def _edge(self, u: int, v: int, **data) -> None:
        if (u, v) in self.edges:
            return
        self.edges[(u, v)] = data
        self._succ[u].append(v)
        self._pred[v].append(u)

    # -- queries ------------------------------------------------------------------------
    def succs(self, b: int) -> list[int]:
        return self._succ[b]

    def preds(self, b: int) -> list[int]:
        return self._pred[b]

    @cached_property
    def graph(self):
        """The CFG as a networkx DiGraph (nodes: block ids and EXIT; edge data as above)."""
        import networkx as nx
        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.blocks)))
        g.add_node(EXIT)
        for (u, v), data in self.edges.items():
            g.add_edge(u, v, **data)
        return g

    def rpo(self) -> list[int]:
        """Reachable blocks in reverse post-order (EXIT excluded)."""
        return list(self._rpo_order)

    @cached_property
    def _rpo_order(self) -> list[int]:
        return [b for b in _rpo(self.entry, self._succ) if b != EXIT]

    @cached_property
    def reachable(self) -> set[int]:
        return set(_rpo(self.entry, self._succ))

    @cached_property
    def idom(self) -> dict[int, int]:
        return _dominators(self.entry, self._succ, self._pred)

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominators (EXIT is the root).  Blocks that cannot reach EXIT
        (infinite loops) are treated as if they could, so every block has one."""
        succ = {k: list(v) for k, v in self._pred.items()}  # reversed graph
        pred = {k: list(v) for k, v in self._succ.items()}
        reaches_exit = set(_rpo(EXIT, succ))
        for b in range(len(self.blocks)):
            if b not in reaches_exit:
                succ[EXIT].append(b)
                pred[b].append(EXIT)
        return _dominators(EXIT, succ, pred)

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


def _rpo(root: int, succ: dict[int, list[int]]) -> list[int]:
    seen = {root}
    order: list[int] = []
    stack = [(root, iter(succ.get(root, ())))]
    while stack:
        node, it = stack[-1]
        for nxt in it:
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(succ.get(nxt, ()))))
                break
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def _dominators(root: int, succ, pred) -> dict[int, int]:
    """Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm"."""
    order = _rpo(root, succ)
    index = {b: i for i, b in enumerate(order)}
    idom = {root: root}
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            new = None
            for p in pred.get(b, ()):
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while index[x] > index[y]:
                        x = idom[x]
                    while index[y] > index[x]:
                        y = idom[y]
                new = x
            if new is not None and idom.get(b) != new:
                idom[b] = new
                changed = True
    return idom


def build_cfg(function: Function) -> CFG:
    return CFG(function)
