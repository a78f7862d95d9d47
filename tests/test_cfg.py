"""CFG construction and dominator trees (checked against networkx on random graphs)."""
import random

import networkx as nx
import pytest

from warplint.cfg import EXIT, build_cfg
from warplint.errors import InputError
from warplint.ir import Function, Imm, Instr, Label, Loc, Reg, Sym

L = Loc("t.ptx", 1)


def _random_body(rng, n):
    body = []
    for i in range(n):
        body.append(Label(f"L{i}", L))
        r = rng.random()
        if r < 0.3:
            body.append(Instr("bra", (), (Sym(f"L{rng.randrange(n)}"),), L, guard=("%p", rng.random() < 0.5)))
        elif r < 0.45:
            body.append(Instr("bra", (), (Sym(f"L{rng.randrange(n)}"),), L))
        elif r < 0.5:
            body.append(Instr("ret", (), (), L, guard=("%p", False)))
        elif r < 0.55:
            body.append(Instr("exit", (), (), L))
        else:
            body.append(Instr("add.s32", (Reg("%r"),), (Reg("%r"), Imm(1)), L))
    return body


@pytest.mark.parametrize("seed", range(5))
def test_dominators_match_networkx(seed):
    rng = random.Random(seed)
    for _ in range(60):
        cfg = build_cfg(Function("f", True, body=_random_body(rng, rng.randint(2, 40))))
        ref = nx.immediate_dominators(cfg.graph, 0)
        assert {k: v for k, v in ref.items() if k != 0} == {k: v for k, v in cfg.idom.items() if k != 0}
        rev = cfg.graph.reverse(copy=True)
        for b in set(rev.nodes) - nx.descendants(rev, EXIT) - {EXIT}:
            rev.add_edge(EXIT, b)
        ref = nx.immediate_dominators(rev, EXIT)
        assert {k: v for k, v in ref.items() if k != EXIT} == {k: v for k, v in cfg.ipdom.items() if k != EXIT}


def test_edges_and_kinds():
    body = [Instr("setp.lt.u32", (Reg("%p"),), (Reg("%laneid"), Imm(16)), L),
            Instr("bra", (), (Sym("A"),), L, guard=("%p", True)),
            Instr("trap", (), (), L),
            Label("A", L), Instr("ret", (), (), L)]
    cfg = build_cfg(Function("k", True, body=body))
    assert cfg.edges[(0, 1)]["kind"] == "fall" and cfg.edges[(0, 2)]["kind"] == "taken"
    assert cfg.edges[(1, EXIT)]["kind"] == "exit" and cfg.ipdom[0] == EXIT
    assert set(cfg.graph.edges) == set(cfg.edges)


def test_undefined_label_is_located():
    body = [Instr("bra", (), (Sym("nowhere"),), Loc("t.ptx", 7, 3))]
    with pytest.raises(InputError) as e:
        build_cfg(Function("k", True, body=body))
    assert e.value.loc.line == 7 and "nowhere" in e.value.message
