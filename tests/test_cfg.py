"""CFG construction and the structural facts taken from networkx."""
import subprocess
import sys

import pytest

from warplint.cfg import EXIT, build_cfg
from warplint.errors import InputError
from warplint.ir import Function, Imm, Instr, Label, Loc, Reg, Sym

L = Loc("t.ptx", 1)


def _bra(target, guard=None):
    return Instr("bra", (), (Sym(target),), L, guard=guard)


def _add():
    return Instr("add.s32", (Reg("%r"),), (Reg("%r"), Imm(1)), L)


def test_diamond_dominators_and_control_dependence():
    # blocks: 0 "@%p bra B", 1 "add; bra J", 2 (B) "add", 3 (J) "ret"
    body = [_bra("B", ("%p", False)), _add(), _bra("J"), Label("B", L), _add(),
            Label("J", L), Instr("ret", (), (), L)]
    cfg = build_cfg(Function("k", True, body=body))
    assert cfg.rpo()[0] == 0 and set(cfg.rpo()) == {0, 1, 2, 3}
    assert cfg.idom == {0: 0, 1: 0, 2: 0, 3: 0, EXIT: 3}
    assert cfg.ipdom[0] == 3 and cfg.ipdom[1] == 3 and cfg.ipdom[3] == EXIT
    assert cfg.control_dependence == {1: [(0, 1)], 2: [(0, 2)]}
    assert cfg.graph.nodes[1]["block"] is cfg.blocks[1]


def test_loop_is_control_dependent_on_its_own_exit_test():
    body = [Label("H", L), _add(), _bra("H", ("%p", False)), Instr("ret", (), (), L)]
    cfg = build_cfg(Function("k", True, body=body))
    assert cfg.control_dependence == {0: [(0, 0)]}
    assert cfg.postdominates(1, 0) and not cfg.postdominates(0, 1)


def test_nested_loops_from_strongly_connected_components():
    # blocks: 0 "add", 1 (Outer) "add", 2 (Inner) "add; @%p bra Inner", 3 "@%q bra Outer", 4 "ret"
    body = [_add(), Label("Outer", L), _add(), Label("Inner", L), _add(), _bra("Inner", ("%p", False)),
            _bra("Outer", ("%q", False)), Instr("ret", (), (), L)]
    cfg = build_cfg(Function("k", True, body=body))
    assert cfg.loops == {1: {1, 2, 3}, 2: {2}}


def test_infinite_loop_still_has_post_dominators():
    # 0: @%p bra Spin; 1: ret; Spin: bra Spin (never reaches EXIT)
    body = [_bra("Spin", ("%p", False)), Instr("ret", (), (), L), Label("Spin", L), _bra("Spin")]
    cfg = build_cfg(Function("k", True, body=body))
    assert cfg.ipdom == {EXIT: EXIT, 0: EXIT, 1: EXIT, 2: EXIT}
    assert cfg.control_dependence == {1: [(0, 1)], 2: [(0, 2)]}


def test_unreachable_blocks_are_left_out_of_the_order():
    body = [Instr("ret", (), (), L), Label("Dead", L), _add()]
    cfg = build_cfg(Function("k", True, body=body))
    assert cfg.rpo() == [0] and cfg.reachable == {0, EXIT} and 1 not in cfg.idom


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


def test_networkx_is_imported_by_the_first_cfg_not_by_the_modules():
    code = ("import sys, warplint.analysis, warplint.cfg; print('networkx' in sys.modules); "
            "from warplint.ir import Function; warplint.cfg.build_cfg(Function('k', True, body=[])); "
            "print('networkx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True"], out.stderr
