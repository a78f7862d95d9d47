"""The IR's cheaper construction (issue 17): `slot_init` classes and `Instr`'s own `__init__`
behave as the `dataclass`-generated ones they replace."""
from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import pytest

from warplint import ir
from warplint.ir import Addr, Imm, Instr, Loc, Reg, Sym, Vec
from warplint.memo import MAX_WORDS


def _reference(cls):
    """The same fields as `cls`, built by `dataclass` itself (frozen, slotted)."""
    spec = [(f.name, f.type, dataclasses.field(default=f.default)) for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass("Ref" + cls.__name__, spec, frozen=True, slots=True)


CASES = [
    (Loc, [("a.cu", 3), ("a.cu", 3, 7), ("p", 1, 2, 3, 4), ("p",), ()], {"line": 9, "end_col": 2}),
    (Reg, [("%r1",), ()], {"name": "%r2"}),
    (Imm, [(17,), (2.5,)], {"value": 3}),
    (Sym, [("lbl",)], {"name": "f"}),
    (Addr, [(Reg("%rd1"),), (Reg("%rd1"), 8), (None, 4)], {"offset": 12}),
    (Vec, [((Reg("%r1"), Imm(0)),)], {"items": ()}),
]


@pytest.mark.parametrize("cls, arg_lists, change", CASES, ids=[c[0].__name__ for c in CASES])
def test_slot_init_matches_the_dataclass_init(cls, arg_lists, change):
    ref = _reference(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(ref))
    for args in arg_lists:
        try:
            expected = ref(*args)
        except TypeError:
            with pytest.raises(TypeError):
                cls(*args)
            continue
        obj = cls(*args)
        assert dataclasses.astuple(obj) == dataclasses.astuple(expected)
        assert obj == cls(*args) and hash(obj) == hash(cls(*args))
        assert obj == pickle.loads(pickle.dumps(obj)) == copy.copy(obj) == copy.deepcopy(obj)
        assert repr(obj) == repr(expected).replace("Ref" + cls.__name__, cls.__name__, 1)
        changed = dataclasses.replace(obj, **change)
        assert dataclasses.astuple(changed) == dataclasses.astuple(dataclasses.replace(expected, **change))
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, dataclasses.fields(cls)[0].name, None)
    kw = {f.name: getattr(cls(*arg_lists[0]), f.name) for f in dataclasses.fields(cls)}
    assert cls(**kw) == cls(*arg_lists[0])


def test_instr_op_and_mods_are_the_opcode_split():
    for opcode in ("ret", "shfl.sync.bfly.b32", "ld.volatile.shared.u32", "call.lane.block", "a..b", ".x"):
        for _ in range(2):  # first sight and remembered
            parts = opcode.split(".")
            ins = Instr(opcode)
            assert (ins.op, ins.mods) == (parts[0], tuple(parts[1:]))


def test_opcode_memo_is_bounded():
    for n in range(MAX_WORDS + 10):
        ins = Instr(f"op{n}.m{n}")
        assert (ins.op, ins.mods) == (f"op{n}", (f"m{n}",))
        assert len(ir._OPCODE_PARTS) <= MAX_WORDS


def test_instr_init_keeps_the_dataclass_signature_and_defaults():
    names = [f.name for f in dataclasses.fields(Instr) if f.init]
    assert list(inspect.signature(Instr).parameters)[:len(names)] == names
    assert len(inspect.signature(Instr).parameters) == len(names)
    ins = Instr("bar.sync")
    for f in dataclasses.fields(Instr):
        if f.init and f.name != "opcode":
            assert getattr(ins, f.name) == f.default
    full = Instr("add.s32", (Reg("%r1"),), (Imm(1),), Loc("f", 2), ("%p", True), Loc("g", 3), "add",
                 frozenset({0}), True, ((Loc("h", 1), "k"),))
    again = pickle.loads(pickle.dumps(full))
    assert [getattr(again, f.name) for f in dataclasses.fields(Instr)] == \
        [getattr(full, f.name) for f in dataclasses.fields(Instr)]
    moved = dataclasses.replace(full, opcode="shfl.sync.idx.b32")
    assert (moved.op, moved.mods, moved.srcs) == ("shfl", ("sync", "idx", "b32"), full.srcs)
