"""`written_spaces`: the state spaces a kernel may write where other threads read, which decides
whether a strong load at a uniform address can see a change (analysis/instructions.py)."""
import pytest

from warplint.analysis.instructions import written_spaces
from warplint.cfg import build_cfg
from warplint.ir import Addr, Function, Imm, Instr, Loc, Reg, Sym

L = Loc("t.ptx", 1)


def _spaces(*instrs):
    body = list(instrs) + [Instr("ret", (), (), L)]
    return written_spaces(build_cfg(Function("k", True, body=body)))


def _st(opcode):
    return Instr(opcode, (Addr(Reg("%rd1"), 0),), (Reg("%r1"),), L)


def _call(name):
    return Instr("call", (Reg("%r2"),), (Sym(name), Reg("%r1")), L)


@pytest.mark.parametrize("opcode, spaces", [
    ("st.shared.u32", {"shared"}), ("st.global.u32", {"global"}), ("st.u32", {"generic"}),
    ("st.local.u32", set()), ("st.param.b32", set())])
def test_stores_by_space(opcode, spaces):
    assert _spaces(_st(opcode)) == spaces


def test_atomics_and_copies_write_their_first_space():
    atom = Instr("atom.global.exch.b32", (Reg("%r2"),), (Addr(Reg("%rd1"), 0), Imm(0)), L)
    copy = Instr("cp.async.ca.shared.global", (), (Addr(Reg("%rd1"), 0), Addr(Reg("%rd2"), 0), Imm(4)), L)
    assert _spaces(atom, copy) == {"global", "shared"}


def test_opaque_calls_and_unread_asm_may_write_anything():
    assert _spaces(_call("update_peers")) == {"generic"}
    assert _spaces(Instr("asm", (Reg("%r2"),), (Reg("%r1"),), L)) == {"generic"}


def test_loads_math_clock_and_printf_write_nothing():
    load = Instr("ld.acquire.gpu.global.u32", (Reg("%r2"),), (Addr(Reg("%rd1"), 0),), L)
    assert _spaces(load, _call("sqrtf"), _call("clock64"), _call("vprintf")) == set()
