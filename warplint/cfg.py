"""Per-function control-flow graphs over basic blocks, as networkx DiGraphs.

Nodes are block indices (node data `block`: the `Block` with its instructions) plus the
virtual `EXIT` node that every `ret`/`exit`/`trap` reaches.  Edge data `kind`: "fall"
(fall-through, or the not-taken side of a guarded branch), "taken" (a branch target), "exit".
A guarded terminator's edges also carry `guard` (the predicate register and whether it was
written `@!`).

The structural facts (reverse post-order, reachability, dominators, post-dominators, control
dependence) come from networkx, computed once per CFG on first use.  The analyses' hot loops
read plain adjacency lists (`succs`, `preds`) and the `edges` dict derived once from the graph.
networkx is imported by the first CFG built (0.16 s), not by importing this module: runs that
analyse no function (parse errors, unsupported code, cache hits) never load it.
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
        # the adjacency and edge data, in networkx's orders (`_build` adds edges block by block)
        self._succ: dict[int, list[int]] = {}
        self._pred: dict[int, list[int]] = {}
        self.edges: dict[tuple[int, int], dict] = {}
        self._build()
        import networkx as nx
        g = self.graph = nx.DiGraph()
        g.add_nodes_from((b.id, {"block": b}) for b in self.blocks)
        g.add_node(EXIT)
        g.add_edges_from((u, v, d) for (u, v), d in self.edges.items())

    # -- construction -------------------------------------------------------------------
    def _build(self) -> None:
        blocks = self.blocks
        labels: dict[str, int] = {}
        current = Block(0, None)
        blocks.append(current)
        ended = False  # the current block's last instruction ends it (its `terminator`)
        for item in self.function.body:
            if isinstance(item, Label):
                if current.instrs or current.label is not None:
                    current = Block(len(blocks), item.name)
                    blocks.append(current)
                    ended = False
                else:
                    current.label = item.name
                if item.name in labels:
                    raise InputError(item.loc, f"label '{item.name}' defined twice")
                labels[item.name] = current.id
                continue
            if ended:
                current = Block(len(blocks), None)
                blocks.append(current)
            current.instrs.append(item)
            ended = item.op in _ENDS_BLOCK
        self._succ = {b.id: [] for b in blocks}
        self._succ[EXIT] = []
        self._pred = {n: [] for n in self._succ}
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
        if (u, v) not in self.edges:  # the first edge between two blocks keeps its data
            self.edges[(u, v)] = data
            self._succ[u].append(v)
            self._pred[v].append(u)

    # -- queries ------------------------------------------------------------------------
    def succs(self, b: int) -> list[int]:
        return self._succ[b]

    def preds(self, b: int) -> list[int]:
        return self._pred[b]

    def rpo(self) -> list[int]:
        """Reachable blocks in reverse post-order (EXIT excluded)."""
        return list(self._rpo_order)

    @cached_property
    def _rpo_order(self) -> list[int]:
        import networkx as nx
        order = list(nx.dfs_postorder_nodes(self.graph, self.entry))
        order.reverse()
        return [b for b in order if b != EXIT]

    @cached_property
    def reachable(self) -> set[int]:
        """Nodes reachable from the entry (EXIT included when some path leaves)."""
        import networkx as nx
        return nx.descendants(self.graph, self.entry) | {self.entry}

    @cached_property
    def idom(self) -> dict[int, int]:
        """Immediate dominators of the reachable nodes (the entry maps to itself)."""
        import networkx as nx
        return {**nx.immediate_dominators(self.graph, self.entry), self.entry: self.entry}

    def dominates(self, a: int, b: int) -> bool:
        """Does block `a` dominate block `b` (every path from the entry to `b` passes `a`)?"""
        idom = self.idom
        while b != a:
            up = idom.get(b)
            if up is None or up == b:
                return False
            b = up
        return True

    @cached_property
    def _postdom_graph(self):
        """The reversed CFG rooted at EXIT.  Blocks that cannot reach EXIT (infinite loops)
        are treated as if they could (an edge EXIT -> block), so every block has a
        post-dominator."""
        import networkx as nx
        rev = nx.DiGraph()  # structure only: reverse(copy=True) would deep-copy the blocks
        rev.add_nodes_from(self.graph)
        rev.add_edges_from((v, u) for u, succ in self.graph.adj.items() for v in succ)  # (not `.edges`: a view
        # of the graph cached in the graph, a reference cycle that only the cyclic collector frees)
        reaches_exit = nx.descendants(rev, EXIT)
        rev.add_edges_from((EXIT, b) for b in range(len(self.blocks)) if b not in reaches_exit)
        return rev

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominators (EXIT is the root and maps to itself)."""
        if not self._branches:
            return self._straight_postdominators()
        import networkx as nx
        return {**nx.immediate_dominators(self._postdom_graph, EXIT), EXIT: EXIT}

    @cached_property
    def _branches(self) -> bool:
        """Does some block have two successors or more?"""
        return any(len(s) >= 2 for s in self._succ.values())

    def _straight_postdominators(self) -> dict[int, int]:
        """`ipdom` of a CFG with no branch (the same pairs; the keys in another order): a block
        that reaches EXIT is post-dominated by its one successor; one that never does is, as
        in `_postdom_graph`, post-dominated by EXIT alone."""
        reaches_exit, todo = set(), [EXIT]
        while todo:
            for p in self._pred[todo.pop()]:
                if p not in reaches_exit:
                    reaches_exit.add(p)
                    todo.append(p)
        out = {b.id: self._succ[b.id][0] if b.id in reaches_exit else EXIT for b in self.blocks}
        out[EXIT] = EXIT
        return out

    @cached_property
    def loops(self) -> dict[int, set[int]]:
        """Loop header -> its body (header included), outermost loops first.  A loop is a
        cyclic strongly connected component of the reachable blocks; its header is the block
        first in reverse post-order.  Without the edges back into the header, the body's own
        cyclic components are the nested loops."""
        index = {b: i for i, b in enumerate(self._rpo_order)}
        if not any(index.get(v, -1) >= 0 and index[v] <= i for u, i in index.items() for v in self._succ[u]):
            return {}  # no edge back in reverse post-order: no cycle among the reachable blocks
        import networkx as nx
        loops: dict[int, set[int]] = {}
        todo = [set(index)]
        while todo:
            region = todo.pop()
            sub = nx.DiGraph()
            sub.add_nodes_from(region)
            sub.add_edges_from((u, v) for u in region for v in self._succ[u]
                               if v in region and v not in loops)
            for scc in nx.strongly_connected_components(sub):
                header = min(scc, key=index.__getitem__)
                if len(scc) > 1 or sub.has_edge(header, header):
                    loops[header] = scc
                    todo.append(scc)
        return dict(sorted(loops.items(), key=lambda item: index[item[0]]))

    def postdominates(self, a: int, b: int) -> bool:
        """Does `a` post-dominate `b` (reflexive)?"""
        first, last = self._postdom_intervals
        return first[a] <= first[b] and last[b] <= last[a]

    @cached_property
    def _postdom_intervals(self) -> tuple[dict[int, int], dict[int, int]]:
        """Pre- and post-order numbers of the post-dominator tree: `a` post-dominates `b`
        when a's interval encloses b's."""
        children: dict[int, list[int]] = {}
        for b, p in self.ipdom.items():
            if b != p:
                children.setdefault(p, []).append(b)
        first, last = {}, {}
        clock = 0
        stack = [(EXIT, False)]
        while stack:
            node, done = stack.pop()
            clock += 1
            if done:
                last[node] = clock
                continue
            first[node] = clock
            stack.append((node, True))
            stack.extend((c, False) for c in children.get(node, ()))
        return first, last

    @cached_property
    def control_dependence(self) -> dict[int, list[tuple[int, int]]]:
        """block -> the branch edges (X, S) it is control dependent on, by X then S: the block
        post-dominates S but not X strictly.  The X are its post-dominance frontier (the
        dominance frontier on the reversed graph)."""
        if not self._branches:
            return {}  # no branch: nothing to depend on
        reachable = self.reachable
        if not any(len(self._succ[x]) >= 2 for x in reachable if x != EXIT):
            return {}  # (no branch reachable)
        frontiers = self._postdominance_frontiers()
        cd: dict[int, list[tuple[int, int]]] = {}
        for y, xs in frontiers.items():
            if y == EXIT:
                continue
            deps = [(x, s) for x in sorted(xs) if x in reachable and len(self._succ[x]) >= 2
                    for s in self._succ[x] if self.postdominates(y, s)]
            if deps:
                cd[y] = deps
        return cd

    def _postdominance_frontiers(self) -> dict[int, set[int]]:
        """`nx.dominance_frontiers` of the reversed CFG from EXIT, walked over the immediate
        post-dominators already known (networkx's own would compute them a second time): the
        same sets, keyed in the same order."""
        rev_preds = self._postdom_graph.pred
        idom = {**self.ipdom, EXIT: None}
        df: dict[int, set[int]] = {u: set() for u in idom}
        for u in idom:
            if u == EXIT or len(rev_preds[u]) >= 2:
                for v in rev_preds[u]:
                    if v in idom:
                        while v != idom[u]:
                            df[v].add(u)
                            v = idom[v]
        return df


def build_cfg(function: Function) -> CFG:
    return CFG(function)
