"""Shortcuts of the per-lane transfer functions (issue 17, session 10) give what the long way,
lane by lane, gives: exact arithmetic (one computation for offsets the same in every lane, the
operator mapped over the lanes otherwise), sums of lane offsets, comparisons of exact values
(signed ones read without a call per lane), the uniformity test, and the semantics and memory
kinds kept per opcode."""
from __future__ import annotations

import random

import pytest

from warplint.analysis import instructions, transfer
from warplint.analysis.interned import Interned
from warplint.analysis.lanes import Literals
from warplint.analysis.transfer import _CMP, _bits, _lane_arith, _signed
from warplint.analysis.values import LANES, ZEROS, Aff, MaskV, Pred, Terms, Unk, exact, is_uniform
from warplint.intops import ARITHMETIC
from warplint.ir import Instr

RNG = random.Random(1710)
BITS = (0, 1, 8, 16, 32, 64, 65)


def _offsets():
    """Offsets of the kinds the analysis meets: uniform (zeros, small, negative, huge), lane
    numbers, random, some with zeros and negative numbers in some lanes."""
    out = [ZEROS, (1,) * 32, (-3,) * 32, (2 ** 40,) * 32, (-(2 ** 63),) * 32, LANES,
           tuple(31 - lane for lane in LANES)]
    for _ in range(12):
        out.append(tuple(RNG.choice((0, 1, -1, 7, 33, -64, 2 ** 31, 2 ** 33 + 5)) for _ in LANES))
    return out


def _exact_long_way(op, x, y, bits):
    """`Evaluator._aff` of two exact values as it was: every lane through `_lane_arith`."""
    mask = (1 << bits) - 1 if 0 < bits <= 64 else None
    if op not in ARITHMETIC:
        return None
    vals = [_lane_arith(op, p, q) for p, q in zip(x, y)]
    return None if None in vals else exact((v & mask) if mask else v for v in vals)


@pytest.mark.parametrize("op", [*ARITHMETIC, "eq", "mulhi"])
def test_exact_arithmetic_is_the_lane_by_lane_arithmetic(op):
    ev = transfer.Evaluator(Terms(), Literals(), True, set())
    offsets = _offsets()
    for x in offsets:
        for y in offsets:
            for bits in BITS:
                got = ev._aff(op, Aff(0, x), Aff(0, y), bits)
                assert got == _exact_long_way(op, x, y, bits), (op, x, y, bits)


def test_lane_sums_are_the_lane_by_lane_sums():
    offsets = _offsets()
    for x in offsets:
        for y in offsets:
            assert transfer._lane_sums("add", x, y) == tuple(p + q for p, q in zip(x, y))
            assert transfer._lane_sums("sub", x, y) == tuple(p - q for p, q in zip(x, y))


@pytest.mark.parametrize("cmp", sorted(_CMP))
def test_exact_comparisons_are_the_lane_by_lane_comparisons(cmp):
    f = _CMP[cmp]
    offsets = _offsets()
    for x in offsets:
        for y in offsets:
            for bits in BITS:
                want = _bits(f(_signed(p, bits), _signed(q, bits)) for p, q in zip(x, y))
                assert transfer._lanes_where(f, x, y, bits) == want
            assert transfer._lanes_where(f, x, y) == _bits(f(p, q) for p, q in zip(x, y))


def test_signed_lanes_read_each_lane_as_signed():
    for bits in BITS + (2, 63, 128):
        offs = tuple(RNG.randint(-(2 ** 70), 2 ** 70) for _ in LANES)
        assert transfer._signed_lanes(offs, bits) == [_signed(v, bits) for v in offs]
        edges = (0, 1, -1, 2 ** 31, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 - 1, 2 ** 63, 2 ** 64 - 1, -(2 ** 63))
        assert transfer._signed_lanes(edges, bits) == [_signed(v, bits) for v in edges]


def test_uniform_is_the_uniformity_of_values():
    lits = Literals()
    ev = transfer.Evaluator(Terms(), lits, True, set())
    from warplint.analysis.lanes import FULL_SET, LaneSet
    values = [Aff(0, x) for x in _offsets()] + [Aff(5, LANES, 32, "warp"), Aff(7, ZEROS, 1, "block"),
                                                 Unk(3), MaskV(FULL_SET, "ballot"), Pred(FULL_SET),
                                                 Pred(LaneSet.const(1))]
    for v in values:
        want = v.lanes.warp_exact(lits) in (0, 0xFFFFFFFF) if isinstance(v, Pred) else is_uniform(v)
        assert ev.uniform(v) == want
        assert ev.symmetry(v) == (0xFFFFFFFF if want else ev.symmetry(v))


def test_interning_gives_each_key_one_id_from_1():
    table = Interned("none")
    keys = [("a", 1), ("b",), ("a", 1), 7, ("b",), Unk(3), Unk(3), Aff(0, ZEROS)]
    ids = [table.intern(k, f"info {k}") for k in keys]
    assert ids == [1, 2, 1, 3, 2, 4, 4, 5]
    assert table.info == ["none", "info ('a', 1)", "info ('b',)", "info 7", "info Unk(t3)", "info Exact(0)"]
    assert [table.key_of(i) for i in range(1, 6)] == [("a", 1), ("b",), 7, Unk(3), Aff(0, ZEROS)]


def test_unknowns_hash_as_before():
    assert hash(Unk(12)) == hash(("U", 12)) and Unk(12) == Unk(12) and len({Unk(1), Unk(1), Unk(2)}) == 2
    import copy
    import pickle
    u = Unk(5)
    hash(u)
    for c in (pickle.loads(pickle.dumps(u)), copy.copy(u), copy.deepcopy(u)):
        assert c == u and c._h is None and hash(c) == hash(u)


@pytest.mark.parametrize("opcode", ["bar.sync", "bar.warp.sync", "barrier.sync", "add.s32", "ld.shared.v4.f32",
                                    "st.global.b64", "ld.u8", "frobnicate.b32", "shfl.sync.bfly.b32", "call"])
def test_semantics_and_memory_kinds_kept_per_opcode_are_those_of_the_instruction(opcode):
    ins = Instr(opcode)
    op = "bar.warp" if ins.op == "bar" and "warp" in ins.mods else ins.op
    assert instructions._semantics_of(ins) == instructions._SEMANTICS.get(op, instructions._UNKNOWN_OP)
    assert instructions._SEMANTICS_BY_OPCODE[opcode] is instructions._semantics_of(ins)
    space = next((m for m in ins.mods if m in instructions._SPACES), "generic")
    assert instructions._space_and_size(ins) == (space, instructions._access_size(ins))
    assert instructions._space_and_size(Instr(opcode)) == (space, instructions._access_size(ins))


def _assume_long_way(ev, p) -> None:
    """`Evaluator.assume` as it was: every literal of the table looked at, in its order."""
    from warplint.analysis.values import pred_of
    lanes = pred_of(p)
    if lanes is None or len(lanes.cubes) != 1:
        return
    bits, cube = next(iter(lanes.cubes))
    if bits != 0xFFFFFFFF:
        return
    for key, lit in ev.lits.items():
        if lit in cube and isinstance(key, tuple) and key[:2] == ("cmp", "eq"):
            ev._learn(key[3], key[4])


def test_assume_looks_up_its_literals_as_the_table_scan_did():
    """The literals of an assumed cube are looked up by id, in the order they were made: the
    same facts (the first fact about a term wins) as the scan of the whole table."""
    from warplint.analysis.lanes import FULL, LaneSet
    learned = 0
    for _ in range(200):
        trees = [transfer.Evaluator(Terms(), Literals(), True, set()) for _ in range(2)]
        seed = RNG.random()
        for ev in trees:  # the same literals and cube in both, assumed the two ways
            r = random.Random(seed)
            ids = []
            for j in range(r.randrange(1, 12)):
                base = ev.terms.get(("param", f"p{r.randrange(4)}"), "p")
                x = Aff(base, (r.randrange(3),) * 32, 1, "block")
                k = Aff(0, (r.randrange(5),) * 32)
                kind = r.choice((("cmp", "eq"), ("cmp", "lt"), ("nz",)))
                key = (*kind, 32, x, k) if kind[0] == "cmp" else (*kind, x)
                ids.append(ev.lits.get(key, "uniform", "block", "t"))
            cube = frozenset(r.choice((1, 1, -1)) * i for i in r.sample(ids, r.randrange(1, len(ids) + 1)))
            p = Pred(LaneSet([(FULL if r.random() < 0.9 else 0xFFFF, cube)]))
            if ev is trees[0]:
                ev.assume(p)
            else:
                _assume_long_way(ev, p)
        assert list(trees[0].facts.items()) == list(trees[1].facts.items())
        learned += bool(trees[0].facts)
    assert learned > 50


def test_call_facts_are_those_read_on_each_visit():
    """`_call` reads a call's barrier, collective kind, term key and returned keys once per
    instruction (`_call_facts`): what the calls of analysis/calls.py give each time."""
    from warplint.analysis.calls import block_collective, is_collective
    from warplint.ir import Reg, Sym
    calls = [Instr("call", (Reg("r"),), (Sym("f"), Reg("a"))),
             Instr("call", (Sym("retval0"),), (Sym("g"), Sym("param0"))),
             Instr("call", (), (Sym("cub::BlockReduce::Sum"), Reg("x"))),
             Instr("call.lane.block", (Reg("s"), Reg("t")), (Sym("cub::BlockScan::ExclusiveSum"), Reg("x"))),
             Instr("call.lane", (Reg("s"), Reg("t")), (Sym("h"),)),
             Instr("call", (Reg("r"),), ())]
    for ins in calls:
        barrier, collective, key, returned = instructions._call_facts(ins)
        assert barrier == bool(block_collective(ins)) and collective == is_collective(ins)
        assert key == ("call", str(ins.srcs[0]) if ins.srcs else "?")
        assert returned == tuple(instructions._returned(d.name) for d in ins.dests if isinstance(d, Sym))
    assert [instructions._call_facts(i)[:2] for i in calls[2:4]] == [(True, False), (True, True)]
