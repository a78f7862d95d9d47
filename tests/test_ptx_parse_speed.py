"""The PTX parser's shortcuts (issue 17, session 10) build exactly what its general path builds:
one-line instructions with simple operands (`fast=True`: operands remembered by their text as
written, per function and across functions), `.loc` lines taken inline in `body`, and register
declarations that change no operand.  Compared on every PTX fixture and on variations of them,
including the errors that bad input gets."""
from __future__ import annotations

import random
import re
import zlib
from pathlib import Path

import pytest

from warplint.callsite import place_in_tree
from warplint.errors import InputError
from warplint.frontends.ptx import parser
from warplint.frontends.ptx.parser import parse_module, parse_statements
from warplint.ir import Instr

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PTX = sorted(FIXTURES.rglob("*.ptx"))
HEAD = ".version 8.5\n.target sm_80\n.address_size 64\n"


def _item(x) -> tuple:
    if isinstance(x, Instr):
        return ("instr", x.opcode, x.op, x.mods, x.dests, x.srcs, x.loc, x.raw_loc, x.guard, x.text,
                x.negated, x.from_cuda, x.frames)
    return ("label", x.name, x.loc)


def _module(m) -> tuple:
    return (m.ptx_version, m.target, sorted(m.state_spaces.items()),
            [(f.name, f.is_kernel, f.params, f.ret_params, f.loc, f.display_name, [_item(x) for x in f.body])
             for f in m.functions])


def _parsed(text: str, fast: bool, map_locations: bool = True):
    try:
        return _module(parse_module(text, "t.ptx", map_locations, fast=fast))
    except InputError as e:
        return ("error", e.loc, e.message)


def _same(text: str, other: str | None = None) -> None:
    """`text` parsed the fast way = parsed the general way (= `other` parsed, when given)."""
    for map_locations in (True, False):
        fast = _parsed(text, True, map_locations)
        assert fast == _parsed(text, False, map_locations)
        if other is not None:
            assert fast == _parsed(other, True, map_locations)


@pytest.mark.parametrize("path", PTX, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fast_path_builds_what_the_general_path_builds(path):
    assert PTX
    _same(path.read_text())


def _variations(text: str, seed: int):
    """Reformatted and damaged copies of a PTX text (seeded): spacing around operands, a comment
    after `.loc` lines (they then take the general `.loc` path), an instruction's line cut or a
    character dropped or doubled."""
    rnd = random.Random(seed)
    yield re.sub(r", ", lambda m: rnd.choice([",", ", ", " ,\t", " , "]), text)
    yield re.sub(r"(?m)^(\t*[a-z@][^\n;]*);$", lambda m: m[1] + rnd.choice([";", " ;", "\t;"]), text)
    lines = text.split("\n")
    for _ in range(6):
        n = rnd.randrange(len(lines))
        line = lines[n]
        if not line.strip():
            continue
        c = rnd.randrange(len(line))
        damaged = rnd.choice([line[:c] + line[c + 1:], line[:c] + line[c] + line[c:],
                              line[:c] + "\n" + line[c:], line[:c] + "|" + line[c:]])
        yield "\n".join(lines[:n] + [damaged] + lines[n + 1:])


@pytest.mark.parametrize("path", PTX, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fast_path_on_variations(path):
    for text in _variations(path.read_text(), zlib.crc32(path.name.encode())):
        _same(text)


@pytest.mark.parametrize("path", [p for p in PTX if ".loc" in p.read_text()],
                         ids=lambda p: str(p.relative_to(FIXTURES)))
def test_loc_lines_inline_and_general(path):
    """A `.loc` line with something more on it goes the general way (`loc_directive`): with a
    comment added to each, the IR stays the same."""
    text = path.read_text()
    _same(text, re.sub(r"(?m)^(\s*\.loc[^\n/]*)$", r"\1 // more", text))


SCOPES = HEAD + """\
.shared .align 4 .b8 buf[64];
.visible .entry first(.param .u64 p)
{
\t.reg .b32 %r<5>;
\t.reg .pred %p<3>;
\t.shared .b32 %r9;
\tmov.u32 %r1, %r9;
\tld.shared.u32 %r2, [%r9+4];
\tadd.s32 %r3, %r1, -7;
\tsetp.lt.s32 %p1|%p2, %r3, 0f3F800000;
\t@!%p1 bra $L1;
\t{
\t.reg .b32 %r1;
\tmov.u32 %r1, %r2;
\tst.shared.u32 [%r1+8], %r1;
\t}
$L1:
\tst.shared.u32 [buf+4], %r3;
\tret;
}
.visible .entry second(.param .u64 p)
{
\t.reg .b32 %r<12>;
\t.reg .pred %p<3>;
\tmov.u32 %r9, x;
\t.reg .b32 x;
\tmov.u32 %r9, x;
\tld.shared.u32 %r2, [%r9+4];
\tadd.s32 %r3, %r1, -7;
\tsetp.lt.s32 %p1|%p2, %r3, 0f3F800000;
\t@%p2 bra $L1;
\tbrx.idx %r3, $L1;
$L1:
\tcall foo;
\tmov.u32 %r4, WARP_SZ;
\tst.shared.u32 [buf+4], %r9;
\tret;
}
"""


def test_operands_remembered_across_functions_follow_the_declarations():
    """A `%` name declared in one function's scope (`%r9` there is a variable) and a name
    declared as a register half way (`x`): the operands remembered for other functions and
    before the declaration do not leak."""
    _same(SCOPES)
    m = parse_module(SCOPES, "t.ptx")
    first, second = ([x for x in f.body if isinstance(x, Instr)] for f in m.functions)
    assert str(first[0].srcs[0]) == "%r9" and type(first[0].srcs[0]).__name__ == "Sym"
    assert type(second[0].srcs[0]).__name__ == "Sym" and type(second[1].srcs[0]).__name__ == "Reg"
    assert type(second[2].srcs[0].base).__name__ == "Reg"


LOCS = HEAD + """\
.visible .entry k()
{
\t.reg .b32 %r<5>;
\t.loc 1 10 3
\tmov.u32 %r1, 1;
\t.loc 1 20 5, function_name $L__info_string0, inlined_at 1 10 3
\tadd.s32 %r2, %r1, 2;
\t.loc 2 30 7, function_name $L__info_string1, inlined_at 1 20 5
\tadd.s32 %r2, %r2, 1;
\t.loc 1 0 0
\tadd.s32 %r3, %r1, 2;
\t.loc 2 0 0, function_name $L__info_string1, inlined_at 1 20 5
\tadd.s32 %r3, %r1, 3;
\t.loc 2 30 7, function_name $L__info_string1, inlined_at 1 20 5 mov.u32 %r4, 4;
\t.loc 2 30 7, function_name $L__info_string1, inlined_at 1 20 5
\tadd.s32 %r4, %r4, %r3;
\t.loc 1 x 7
\tret;
}
.file 1 "a.cu"
.file 2 "b.h"
"""


def test_loc_chains_and_errors():
    text = LOCS.replace("\t.loc 1 x 7\n", "")
    _same(text)
    placed = [(x.loc.path, x.loc.line, len(x.frames))
              for x in parse_module(text, "t.ptx").functions[0].body if isinstance(x, Instr)]
    assert placed == [("a.cu", 10, 0), ("a.cu", 10, 2), ("a.cu", 10, 3), ("t.ptx", 14, 0),
                      ("a.cu", 20, 0), ("a.cu", 20, 2), ("a.cu", 20, 2), ("a.cu", 20, 2)]
    _same(LOCS)  # the bad `.loc`: the same error both ways
    assert _parsed(LOCS, True)[0] == "error"


@pytest.mark.parametrize("body", ["mov.u32 %r1, 1; @%p1 add.s32 %r2, %r1, 4;\n{ .reg .b32 %r1; mov.u32 %r1, x; }",
                                  "setp.lt.s32 %p1|%p2, %r3, 4;\n@!%p2 bra L;\nL: ret;",
                                  "add.s32 %r1, , %r2;", "@x bra L;"])
def test_statements_agree(body):
    def parsed(fast):
        try:
            return [_item(x) for x in parse_statements(body, "t.cu", 4, 9, fast=fast)]
        except InputError as e:
            return ("error", e.loc, e.message)
    assert parsed(True) == parsed(False)


@pytest.mark.parametrize("change", [
    lambda t: t,
    lambda t: t + '// .file 2 "commented.h"\n',  # read ahead, not read: the long way
    lambda t: t.replace('.file 1 "a.cu"', '/* .file 1 "old.cu" */ .file 1 "a.cu"'),
    lambda t: t.replace('.file 2 "b.h"', '.file 2 "b.h"\n.file 2 "c\\\\u0041.h"'),  # the last one stands
    lambda t: t.replace('.file 2 "b.h"', '.file 3 "b.h"'),  # a `.loc` names no file
    lambda t: t.replace('.file 1 "a.cu"\n', ""),
])
def test_file_table_read_ahead(change):
    """Instructions are placed as they are built from the `.file` table read ahead
    (`_file_table`); where the parser reads another table, it places them the long way."""
    text = change(LOCS.replace("\t.loc 1 x 7\n", ""))
    _same(text)
    files = parser._file_table(text)
    p = parser._Parser(text, "t.ptx", files=files)
    p.parse_module()
    assert (p.files == files) == ("commented" not in text and "old.cu" not in text)


def _asking(paths):
    """A `usable` test true for `paths`, and the list of the paths it is asked about, in order."""
    asked = []

    def usable(path, note=True):
        if note:
            asked.append(path)
        return path in paths
    return usable, asked


def _usable_choices(text: str) -> list:
    named = sorted(set(re.findall(r'\.file\s+\d+\s+"([^"]*)"', text)))
    return [set(), set(named), set(named[::2]), set(named[1::2])]


@pytest.mark.parametrize("path", [p for p in PTX if ".loc" in p.read_text()] + ["LOCS", "LOCS commented"],
                         ids=str)
def test_placed_as_built_is_placed_afterwards(path):
    """`parse_module(usable=...)` places each instruction as it builds it; the same as parsing
    and then `callsite.place_in_tree`, and the same paths asked about in the same order (the
    result cache notes them)."""
    text = LOCS.replace("\t.loc 1 x 7\n", "") if isinstance(path, str) else path.read_text()
    if path == "LOCS commented":
        text += '// .file 2 "commented.h"\n'  # the table read ahead differs: the long way
    for paths in _usable_choices(text):
        usable, asked = _asking(paths)
        placed = _module(parse_module(text, "t.ptx", usable=usable))
        usable_after, asked_after = _asking(paths)
        module = parse_module(text, "t.ptx", fast=False)
        place_in_tree(module, usable_after)
        assert placed == _module(module)
        assert dict.fromkeys(asked) == dict.fromkeys(asked_after)
