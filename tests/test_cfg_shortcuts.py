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


def _random_function(rng: random.Random, n: int) -> Function:
    loc = Loc("f.ptx", 1, 1)
    body = []
    for k in range(n):
        body.append(Label(f"L{k}", loc))
        body.append(Instr("add.s32", (Reg("r"),), (Reg("r"), Reg("r")), loc))
        roll = rng.random()
        target = Sym(f"L{rng.randrange(n)}")
        if roll < 0.25:
            body.append(Instr("bra", (), (target,), loc, ("p", False)))
        elif roll < 0.35:
            body.append(Instr("bra", (), (target,), loc))
        elif roll < 0.4:
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
