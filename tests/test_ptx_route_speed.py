"""Shortcuts taken for the speed of the PTX route (issue 17, session 7) find what the long way
finds: the hazard search's test for accesses with no byte in common, the per-function memory of
WL005's lane order, liveness over bits without per-instruction sets, and the `.loc` chains'
placement chosen once per chain."""
from __future__ import annotations

from pathlib import Path

import pytest

from warplint.analysis import liveness, memory
from warplint.analysis.lanes import Literals
from warplint.analysis.solver import unwritten_fields
from warplint.analysis.values import Aff
from warplint.callsite import place_in_tree
from warplint.checks import membermask, shuffle
from warplint.frontends.ptx import parser as ptx_parser
from warplint.frontends.ptx.parser import parse_module
from warplint.ir import Function, Instr, Loc, Module
from warplint.options import Options
from warplint.pipeline import lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".cu", ".ptx"))
RACE_FIXTURES = [p for p in SOURCES if "WL007" in p.read_text()]
SHUFFLE_FIXTURES = [p for p in SOURCES if "WL005" in p.read_text() or "activemask" in p.read_text()]

FIELDS = """struct pair { float a, b; };
__global__ void k(float *out) {
  __shared__ pair s[32];
  s[threadIdx.x].a = 1.0f;
  out[threadIdx.x] = s[threadIdx.x ^ 1].b;
}
"""


def _lint(text: str, path: str):
    return lint_text(text, path, Options(targets=["sm_70"]))


def _hazards(path: Path) -> list[tuple]:
    out = []
    for fa in _lint(path.read_text(), str(path)).analyses:
        for h in memory.find_hazards(fa):
            out.append((fa.function.name, h.first.instr.loc.line, h.second.instr.loc.line, h.kind,
                        h.writer, h.reader, h.definite))
    return out


@pytest.mark.parametrize("path", RACE_FIXTURES, ids=lambda p: p.name)
def test_no_common_byte_shortcut_finds_what_the_byte_search_finds(path, monkeypatch):
    assert RACE_FIXTURES
    quick = _hazards(path)
    monkeypatch.setattr(memory, "_no_common_byte", lambda *args: False)
    assert quick == _hazards(path)


def test_interleaved_fields_meet_no_byte_and_the_neighbour_twin_races():
    assert not _lint(FIELDS, "fields.cu").findings  # field b of lane ^ 1: never written
    twin = FIELDS.replace("s[threadIdx.x ^ 1].b", "s[threadIdx.x ^ 1].a")
    assert [(f.rule_id, f.loc.line) for f in _lint(twin, "fields.cu").findings] == [("WL007", 5)]


@pytest.mark.parametrize("path", SHUFFLE_FIXTURES, ids=lambda p: p.name)
def test_remembered_lane_order_gives_the_same_findings(path, monkeypatch):
    assert SHUFFLE_FIXTURES
    remembered = [(f.rule_id, f.loc.line, f.message) for f in _lint(path.read_text(), str(path)).findings]
    monkeypatch.setattr(shuffle, "_lane_order", shuffle._find_lane_order)
    assert remembered == [(f.rule_id, f.loc.line, f.message) for f in _lint(path.read_text(), str(path)).findings]


def test_lane_order_is_found_again_when_a_literal_is_added():
    lits = Literals()
    assert shuffle._lane_order(lits) == {}
    lane = Aff(1, tuple(range(32)))  # grows with the lane
    n = Aff(2, (0,) * 32)  # the same in every lane
    lid = lits.get(("cmp", "gt", "s", lane, n), "lane", "lane", "i > n")
    assert shuffle._lane_order(lits) == {lid: 1} == shuffle._find_lane_order(lits)


def _dead_by_sets(cfg) -> dict[int, set[str]]:
    """`dead_after` as it was written before, over sets of names (the reference)."""
    use, defs, writes = {}, {}, {}
    for blk in cfg.blocks:
        u, d, w = set(), set(), set()
        for ins in blk.instrs:
            read: set = set()
            for x in ins.srcs:
                liveness.registers(x, read)
            for x in ins.dests:
                if isinstance(x, liveness.Addr):
                    liveness.registers(x, read)
            if ins.guard:
                read.add(ins.guard[0])
            u |= read - d
            written: set = set()
            for x in ins.dests:
                if not isinstance(x, liveness.Addr):
                    liveness.registers(x, written)
            w |= written
            if ins.guard is None:
                d |= written
        use[blk.id], defs[blk.id], writes[blk.id] = u, d, w
    live_in = {b: set() for b in use}
    live_out = {b: set() for b in use}
    changed = True
    while changed:
        changed = False
        for b in use:
            out = set().union(*(live_in[s] for s in cfg.succs(b) if s != liveness.EXIT))
            inn = use[b] | (out - defs[b])
            if inn != live_in[b] or out != live_out[b]:
                live_in[b], live_out[b] = inn, out
                changed = True
    return {b: (writes[b].union(*(live_out[p] for p in cfg.preds(b) if p != liveness.EXIT)))
            - live_out[b] for b in use}


@pytest.mark.parametrize("path", SOURCES[::7], ids=lambda p: p.name)
def test_liveness_over_bits_is_liveness_over_names(path):
    for fa in _lint(path.read_text(), str(path)).analyses:
        number, dead = liveness.dead_after(fa.cfg)
        names = list(number)
        assert {b: liveness.names_of(bits, names) for b, bits in dead.items()} == _dead_by_sets(fa.cfg)


@pytest.mark.parametrize("path", SOURCES[::5], ids=lambda p: p.name)
def test_struct_fields_looked_for_only_where_a_register_is_a_field(path):
    for fa in _lint(path.read_text(), str(path)).analyses:
        fn = fa.function
        params = set(fn.params) | set(fn.ret_params)
        names, _ = liveness.dead_after(fa.cfg)
        assert unwritten_fields(fa.cfg, params, list(names)) == unwritten_fields(fa.cfg, params)


MASK_FIXTURES = [p for p in SOURCES if any(r in p.read_text() for r in ("WL002", "WL003", "WL004"))]


@pytest.mark.parametrize("path", MASK_FIXTURES, ids=lambda p: p.name)
def test_membermask_comparisons_found_once_give_the_same_findings(path, monkeypatch):
    assert MASK_FIXTURES
    options = Options(targets=["sm_60", "sm_70"])  # WL002 on one, WL004 on the other, WL003 on both
    shared = [(f.rule_id, f.loc.line, f.message) for f in lint_text(path.read_text(), str(path), options).findings]
    monkeypatch.setattr(membermask, "_checked_ops", lambda ctx: membermask._compared_ops(ctx.analysis))
    assert shared == [(f.rule_id, f.loc.line, f.message) for f in lint_text(path.read_text(), str(path), options).findings]


LOC_FIXTURES = [p for p in SOURCES if p.suffix == ".ptx" and "inlined_at" in p.read_text()]


def _frames(path: Path) -> list:
    module = parse_module(path.read_text(), str(path))
    return [(ins.loc, ins.raw_loc, ins.frames) for fn in module.functions for ins in fn.body
            if getattr(ins, "frames", None) is not None]


@pytest.mark.parametrize("path", LOC_FIXTURES, ids=lambda p: p.name)
def test_loc_chains_share_their_places_and_place_the_same(path, monkeypatch):
    assert LOC_FIXTURES
    shared = _frames(path)
    placed = ptx_parser._placed
    monkeypatch.setattr(ptx_parser, "_placed", lambda chain, files, locs=None: placed(chain, files))
    assert shared == _frames(path)  # each chain's places made afresh


def _reference_place(module, usable, keep_outside):
    """`place_in_tree` as written before: every instruction's frames searched afresh."""
    for fn in module.functions:
        for item in fn.body:
            raw = getattr(item, "raw_loc", None)
            if raw is None or item.loc is None:
                continue
            frames = item.frames or ((item.loc, ""),)
            chosen = next((loc for loc, _ in frames if usable(loc.path)), None)
            if chosen is not None:
                item.loc = chosen
            elif keep_outside:
                item.loc = frames[0][0]
            else:
                item.loc, item.raw_loc = raw, None


def _module_with_places():
    inner, outer, own = Loc("lib.h", 3, 1), Loc("tree.cu", 9, 5), Loc("lib.h", 7, 2)
    chain = ((inner, "f"), (outer, ""))
    body = [Instr("add.s32", loc=inner, raw_loc=Loc("k.ptx", 10, 1), frames=chain),
            Instr("add.s32", loc=inner, raw_loc=Loc("k.ptx", 11, 1), frames=chain),
            Instr("mov.u32", loc=own, raw_loc=Loc("k.ptx", 12, 1)),
            Instr("mov.u32", loc=outer, raw_loc=Loc("k.ptx", 13, 1))]
    return Module("k.ptx", "ptx", functions=[Function("k", True, body=body)])


@pytest.mark.parametrize("keep_outside", [False, True])
def test_places_chosen_once_per_chain_are_the_places_chosen_each_time(keep_outside):
    def usable(path):
        return path == "tree.cu"
    fast, slow = _module_with_places(), _module_with_places()
    place_in_tree(fast, usable, keep_outside)
    _reference_place(slow, usable, keep_outside)
    assert [(i.loc, i.raw_loc) for i in fast.functions[0].body] == \
        [(i.loc, i.raw_loc) for i in slow.functions[0].body]


SECTION_TEXTS = [
    '{\n.b8 1,2,3\n}\nrest',
    '{ { } // } comment\n /* } */ "a}b" / 4 }\nrest',
    '{ /* never closed',
    '{ "unterminated\n}',
    '{ a / b /* c */ { "x\\"}" } } }',
    '{ ' + ",".join(["95,90,78"] * 500) + ' }',
    '',
]


@pytest.mark.parametrize("text", SECTION_TEXTS + [p.read_text() for p in SOURCES if ".section" in p.read_text()][:20])
def test_section_tokens_are_the_finditer_tokens(text):
    for pos in (0, len(text) // 3, len(text) // 2):
        expected = [(t.start(), t.group()) for t in ptx_parser._SECTION_BODY.finditer(text, pos)]
        assert [(t.start(), t.group()) for t in ptx_parser._section_tokens(text, pos)] == expected
