"""The CFG's shortcuts (issue 17): a graph with no edge back in reverse post-order has no loop,
and one with no branch has no control dependence; both as networkx finds them the long way."""
from __future__ import annotations

import random

import networkx as nx

from warplint.cfg import CFG, EXIT
from warplint.ir import Function, Instr, Label, Loc, Reg, Sym


def _loops_long_way(cfg: CFG) -> dict:
    index = {b: i for i, b in enumerate(cfg.rpo())}
    loops: dict[int, set[int]] = {}
    todo = [set(index)]
    while todo:
        region = todo.pop()
        sub = nx.DiGraph()
        sub.add_nodes_from(region)
        sub.add_edges_from((u, v) for u in region for v in cfg.succs(u) if v in region and v not in loops)
        for scc in nx.strongly_connected_components(sub):
            header = min(scc, key=index.__getitem__)
            if len(scc) > 1 or sub.has_edge(header, header):
                loops[header] = scc
                todo.append(scc)
    return dict(sorted(loops.items(), key=lambda item: index[item[0]]))


def _cd_long_way(cfg: CFG) -> dict:
    frontiers = nx.dominance_frontiers(cfg._postdom_graph, EXIT)
    cd = {}
    for y, xs in frontiers.items():
        if y == EXIT:
            continue
        deps = [(x, s) for x in sorted(xs) if x in cfg.reachable and len(cfg.succs(x)) >= 2
                for s in cfg.succs(x) if cfg.postdominates(y, s)]
        if deps:
            cd[y] = deps
    return cd


def _random_function(rng: random.Random, n: int, guarded=0.25, jump=0.10, ret=0.05) -> Function:
    """`n` labelled blocks, each ending with a guarded `bra` (a branch), a `bra` (to itself too:
    a block that never exits) or a `ret` with those chances, else falling through."""
    loc = Loc("f.ptx", 1, 1)
    body = []
    for k in range(n):
        body.append(Label(f"L{k}", loc))
        body.append(Instr("add.s32", (Reg("r"),), (Reg("r"), Reg("r")), loc))
        roll = rng.random()
        target = Sym(f"L{rng.randrange(n)}")
        if roll < guarded:
            body.append(Instr("bra", (), (target,), loc, ("p", False)))
        elif roll < guarded + jump:
            body.append(Instr("bra", (), (target,), loc))
        elif roll < guarded + jump + ret:
            body.append(Instr("ret", (), (), loc))
    return Function("f", True, [], [], body, loc)


def test_shortcuts_agree_with_networkx():
    rng = random.Random(17)
    seen = {"no loop": 0, "loop": 0, "no branch": 0, "branch": 0}
    for _ in range(600):
        cfg = CFG(_random_function(rng, rng.randrange(1, 9)))
        long_loops, long_cd = _loops_long_way(cfg), _cd_long_way(cfg)
        assert cfg.loops == long_loops
        assert cfg.control_dependence == long_cd
        seen["loop" if long_loops else "no loop"] += 1
        seen["branch" if any(len(cfg.succs(b)) >= 2 for b in cfg.rpo()) else "no branch"] += 1
    assert min(seen.values()) > 20, seen


def test_frontiers_over_known_postdominators_are_networkx_frontiers():
    """`_postdominance_frontiers` (walked over `ipdom`) against `nx.dominance_frontiers`, which
    computes the post-dominators again: the same sets, keyed in the same order (the order of
    `control_dependence`'s keys); also with blocks that never reach the exit (`bra` to self)."""
    rng = random.Random(11)
    for _ in range(600):
        cfg = CFG(_random_function(rng, rng.randrange(1, 12)))
        assert list(cfg.control_dependence.items()) == list(_cd_long_way(cfg).items())
        if not cfg._branches:  # (then `ipdom` comes without networkx, and no frontier is asked for)
            continue
        ours = cfg._postdominance_frontiers()
        theirs = nx.dominance_frontiers(cfg._postdom_graph, EXIT)
        assert ours == theirs
        assert list(ours) == list(theirs)


def _straight_function(rng: random.Random, n: int) -> Function:
    """No branch with two ways: falls, jumps (to itself too: a block that never exits) and returns."""
    return _random_function(rng, n, guarded=0, jump=0.3, ret=0.1)


def test_adjacency_and_edges_are_the_graphs():
    """`succs`, `preds` and `edges`, kept while building, are the networkx graph's, in its orders."""
    rng = random.Random(5)
    for _ in range(300):
        cfg = CFG(_random_function(rng, rng.randrange(1, 12)))
        g = cfg.graph
        assert cfg._succ == {n: list(s) for n, s in g.succ.items()}
        assert list(cfg._succ) == list(g.succ)
        assert cfg._pred == {n: list(p) for n, p in g.pred.items()}
        assert list(cfg._pred) == list(g.pred)
        assert list(cfg.edges.items()) == [((u, v), d) for u, v, d in g.edges(data=True)]
        assert all(g.nodes[b.id]["block"] is b for b in cfg.blocks)


def test_straight_postdominators_are_networkx_ones():
    """With no branch, `ipdom` is found without networkx: the same pairs (blocks that never
    reach the exit included), and so the same post-dominance and control dependence."""
    rng = random.Random(3)
    never_exits = 0
    for _ in range(400):
        cfg = CFG(_straight_function(rng, rng.randrange(1, 12)))
        assert not cfg._branches
        theirs = {**nx.immediate_dominators(cfg._postdom_graph, EXIT), EXIT: EXIT}
        assert cfg.ipdom == theirs
        never_exits += EXIT not in nx.descendants(cfg.graph, cfg.entry)
        assert cfg.control_dependence == _cd_long_way(cfg) == {}
    assert never_exits > 20
