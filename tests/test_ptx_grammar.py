"""The PTX grammar (warplint/frontends/ptx/ptx.lark): the hand-written parser and a lark parser
over the grammar build the same IR (fixtures here, generated PTX here, the nvcc corpus in
test_nvcc_corpus.py), and syntax errors are explained in the grammar's words."""
from __future__ import annotations

import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warplint.errors import InputError
from warplint.frontends.ptx import parse_ptx, parse_ptx_statements
from warplint.frontends.ptx.grammar import build_module, build_statements, grammar_error
from warplint.frontends.ptx.parser import parse_module
from warplint.ir import Instr

ROOT = Path(__file__).resolve().parent.parent
PTX_FIXTURES = sorted((ROOT / "fixtures").glob("**/*.ptx"))
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def kernel(body: str) -> str:
    """A kernel whose body starts on line 6."""
    return HEAD + ".visible .entry k(.param .u64 p)\n{\n" + body + "\n\tret;\n}\n"


def item_signature(x) -> tuple:
    if isinstance(x, Instr):
        # operands as repr: a NaN immediate equals itself there
        return ("instr", x.opcode, x.mods, repr(x.dests), repr(x.srcs), x.guard, x.negated, x.loc,
                x.raw_loc, x.text, x.frames)
    return ("label", x.name, x.loc)


def ir_signature(module) -> list:
    """Everything the two parsers must agree on: module header, declarations, functions with
    their parameters, and every instruction (opcode, modifiers, operands, guard, locations)."""
    out = [("module", module.ptx_version, module.target, sorted(module.state_spaces.items()))]
    for f in module.functions:
        out.append(("function", f.name, f.is_kernel, f.params, f.ret_params, f.loc, f.display_name))
        out.extend(item_signature(x) for x in f.body)
    return out


def assert_same_ir(text: str, path: str) -> None:
    hand, grammar = ir_signature(parse_module(text, path)), ir_signature(build_module(text, path))
    for n, (a, b) in enumerate(zip(hand, grammar)):
        assert a == b, f"{path}: item {n} differs\n  hand:    {a}\n  grammar: {b}"
    assert len(hand) == len(grammar), path


def test_grammar_is_package_data():
    assert (files("warplint.frontends.ptx") / "ptx.lark").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"warplint.frontends.ptx" = ["*.lark"]' in pyproject and '"lark>=1.1"' in pyproject


@pytest.mark.parametrize("path", PTX_FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_fixtures_same_ir(path):
    assert_same_ir(path.read_text(), str(path))


def test_nvcc_debug_constructs_same_ir():
    """What nvcc -G / -lineinfo writes: .loc with inlined_at, DWARF sections with label+offset
    data, callseq blocks with multi-line call argument lists, initialised globals."""
    text = HEAD + (
        ".global .align 4 .b8 tab[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};\n"
        ".func  (.param .b32 func_retval0) _Z1hf(\n\t.param .b32 _Z1hf_param_0\n)\n{\n"
        "\t.reg .f32 \t%f<3>;\n\t.loc\t1 1 0\n$L__func_begin0:\n\t.loc\t1 1 0\n"
        "\tld.param.f32 \t%f1, [_Z1hf_param_0];\n\tadd.f32 \t%f2, %f1, %f1;\n"
        "\tst.param.f32 \t[func_retval0+0], %f2;\n\tret;\n$L__func_end0:\n}\n"
        ".visible .entry _Z1kPf(\n\t.param .u64 _Z1kPf_param_0\n)\n.maxntid 128, 1, 1\n{\n"
        "\t.reg .f32 \t%f<4>;\n\t.reg .b64 \t%rd<3>;\n"
        "\t.loc\t2 30 9, function_name $L__info_string0, inlined_at 1 9 3\n"
        "\tld.param.u64 \t%rd1, [_Z1kPf_param_0];\n\tld.global.f32 \t%f1, [%rd1];\n"
        "\t{ // callseq 0, 0\n\t.param .b32 param0;\n\tst.param.f32 \t[param0+0], %f1;\n"
        "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\t_Z1hf, \n\t(\n\tparam0\n\t);\n"
        "\tld.param.f32 \t%f2, [retval0+0];\n\t} // callseq 0\n\tret;\n}\n"
        "\t.file\t1 \"/src/k.cu\"\n\t.file\t2 \"/usr/include/h.h\", 1700000000, 4096\n"
        "\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 104,0\n\t}\n"
        "\t.section\t.debug_info\n\t{\n.b32 576\n.b32 .debug_abbrev\n.b32 .debug_loc+135\n"
        ".b64 $L__func_begin0\n.b64 tab\n\t}\n")
    assert_same_ir(text, "g.ptx")
    m = build_module(text, "g.ptx")
    assert m.state_spaces["tab"] == "global" and [f.name for f in m.functions] == ["_Z1hf", "_Z1kPf"]
    call = next(i for i in m.functions[1].body if i.op == "call")
    assert [str(x) for x in call.dests + call.srcs] == ["retval0$1", "_Z1hf", "param0$1"]


def test_hand_written_constructs_same_ir():
    """Immediates of every spelling, d|p, vectors, negated predicates, texture operands,
    brx.idx over .branchtargets, a call through a .callprototype, scoped names."""
    body = (
        "\t.reg .pred %p<3>;\n\t.reg .b32 %r<9>, lane;\n\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<4>;\n"
        "\tmov.u32 lane, %laneid;\n\tmov.u32 %r1, 0x1F;\n\tmov.u32 %r2, 0b101;\n\tmov.u32 %r3, 017;\n"
        "\tmov.u32 %r4, 7U;\n\tadd.s32 %r5, %r4, -3;\n\tmov.f32 %f1, 0f3F800000;\n\tmov.f32 %f2, 1.5;\n"
        "\tmov.f32 %f3, -2.5e3;\n\tmov.f64 %fd1, 0d3FF0000000000000;\n"
        "\tshfl.sync.up.b32 %r6|%p1, %r5, 1, 0, -1;\n\tmov.b64 {%r7, %r8}, %rd1;\n"
        "\tvote.sync.all.pred %p2, !%p1, 0xffffffff;\n\t@!%p2 bra $L__BB0_2;\n"
        "\tld.shared.u32 %r1, [%rd1 + -4];\n\tst.global.v2.u32 [%rd2+8], {%r1, %r2};\n"
        "\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f0}, [tex0, {%f1, %f2}];\n"
        "ts: .branchtargets $L__BB0_2, $L__BB0_3;\n\tbrx.idx %r1, ts;\n"
        "$L__BB0_2:\n\t{\n\t.reg .b32 t;\n\tmov.u32 t, %r1;\ninner:\n\t@%p1 bra inner;\n\t}\n"
        "proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
        "\tcall (%r1), %rd2, (%r2), proto;\n"
        "$L__BB0_3:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %r1;\n"
        "\t.pragma \"nounroll\";\n\tbar.sync 0;")
    assert_same_ir(kernel(body), "h.ptx")
    m = build_module(kernel(body), "h.ptx")
    brx = next(i for i in m.functions[0].body if i.op == "brx")
    assert [str(s) for s in brx.srcs] == ["%r1", "$L__BB0_2", "$L__BB0_3"]


def test_inline_asm_statements_same_ir():
    text = "{ .reg .pred q;\n setp.ne.s32 q, r1, 0;\n @q bra done;\n mov.u32 r2, %laneid; }\ndone:"
    a = [item_signature(x) for x in parse_ptx_statements(text, "a.cu", 4, 18)]
    b = [item_signature(x) for x in build_statements(text, "a.cu", 4, 18)]
    assert a == b and len(a) == 4


def test_statement_continued_on_the_next_line():
    """Found by the generated differential test: the rest of a statement on a later line that
    looks like a one-line instruction (`gtab + 8];`) was taken for one (hand parser bug)."""
    for body in ("\tmov.u32 %r1,\n\t\t[gtab + 8];", "\tnanosleep.u32 0, /* c */ sbuf - 8;",
                 "\t@%p1\n\tbra $L__BB0_1;\n$L__BB0_1:"):
        text = kernel(body)
        assert_same_ir(text, "c.ptx")
        assert parse_module(text, "c.ptx", fast=False).functions[0].body[0].opcode in ("mov.u32", "nanosleep.u32", "bra")


def test_statement_after_loc_on_the_same_line():
    """Found by mutating generated PTX: a `.loc` took the whole line, so a statement after it on
    that line was dropped without a word (hand parser bug)."""
    for body, count in (("\t.loc 1 10 ;\tret;", 2), ("\t.loc 1 2 3 mov.u32 %r1, %r2;", 2),
                        ("\t.loc 2 6 5, function_name $L__info_string0, inlined_at 1 9 3@%p1 exit;", 2),
                        ("\t.loc 1 2 3 // a comment\n\t.loc 1 4 5", 1)):
        text = kernel(body) + '.file 1 "a.cu"\n.file 2 "b.h"\n'
        assert_same_ir(text, "l.ptx")
        assert len(parse_module(text, "l.ptx").functions[0].body) == count


def test_opcodes_start_with_a_letter():
    assert grammar_error(kernel("\tmov.u32 %r1, %r2;\n\t%r1 mov.u32;")) is not None
    e = error_at(kernel("\t%r1 mov.u32;"))
    assert e.loc.line == 6


# -- generated PTX --------------------------------------------------------------------------------
_REGS = ["%r1", "%r2", "%r7", "lane", "%tid.x", "%laneid", "%ctaid.y", "WARP_SZ"]
_INTS = ["0", "1", "31", "-1", "-16", "0x1f", "0XFFFFFFFF", "017", "0b1011", "7U", "0x10U", "4294967295"]
_FLOATS = ["0f3F800000", "0F7FC00000", "0d3FF0000000000000", "1.5", "0.25", "2.5e3", "1e-3", "-0.5"]
_OPCODES = ["mov.u32", "add.s32", "shfl.sync.bfly.b32", "vote.sync.ballot.b32", "ld.global.u32",
            "st.shared.u32", "setp.lt.u32", "selp.b32", "bar.sync", "membar.gl", "activemask.b32",
            "mbarrier.try_wait.parity.shared::cta.b64", "redux.sync.min.abs.NaN.f32", "elect.sync",
            "match.any.sync.b32", "bar.red.popc.u32", "ret", "exit", "bra.uni", "bra", "nanosleep.u32"]
_LABELS = ["$L__BB0_1", "$L__BB0_2", "L3"]
_SPACE = st.sampled_from([" ", "\t", "  ", " \t"])


def _address(base: str, off: str) -> str:
    return f"[{base}{off}]"


_OPERAND = st.one_of(
    st.sampled_from(_REGS),
    st.sampled_from(_INTS),
    st.sampled_from(_FLOATS),
    st.builds(_address, st.sampled_from(["%rd1", "%rd2", "gtab", "sbuf"]),
              st.sampled_from(["", "+4", "+-4", " + 8", "-12", "+0x10"])),
    st.sampled_from(["[16]", "[-4]", "gtab+4", "sbuf - 8", "!%p1", "%r1|%p2", "{%r1, %r2}",
                     "{%f1, 0f00000000, -1}", "[tex0, {%f1, %f2}]", "$L__BB0_1"]),
)


@st.composite
def _instruction(draw) -> str:
    guard = draw(st.sampled_from(["", "", "@%p1 ", "@!%p3 ", "@%p2\t"]))
    ops = draw(st.lists(_OPERAND, max_size=4))
    sep = draw(st.sampled_from([", ", ",", " , ", ",\n\t\t", ", /* c */ "]))
    text = guard + draw(st.sampled_from(_OPCODES))
    if ops:
        text += draw(_SPACE) + sep.join(ops)
    return text + draw(st.sampled_from([";", " ;", ";  // done"]))


_STATEMENT = st.one_of(
    _instruction(), _instruction(), _instruction(), _instruction(),
    st.sampled_from([f"{lb}:" for lb in _LABELS]),
    st.builds("\t.loc\t1 {} {}".format, st.integers(0, 300), st.integers(0, 80)),
    st.builds("\t.loc\t2 {} {}, function_name $L__info_string0, inlined_at 1 {} {}".format,
              st.integers(1, 50), st.integers(0, 9), st.integers(0, 300), st.integers(1, 9)),
    st.sampled_from(["\t.reg .b32 %t<3>;", "\t.reg .b32 tmp, lane;", "\t.local .align 8 .b8 depot[8];",
                     "\t.shared .align 4 .b32 tile[32];", "\t.param .b32 param0;", "\t.pragma \"nounroll\";",
                     "ts: .branchtargets $L__BB0_1, L3;", "\tbrx.idx %r1, ts;",
                     "\tcall.uni (%r1), helper, (%r2, 4);", "\tcall helper;",
                     "\tcall.uni (retval0), \n\thelper, \n\t(\n\tparam0\n\t);", "// a comment",
                     "/* a\n   block comment */"]),
    st.just("{"), st.just("}"),
)


@st.composite
def generated_module(draw, min_statements: int, max_statements: int) -> tuple[str, int]:
    """(PTX text, number of statements in it): a kernel whose body is random statements, with
    nested blocks balanced."""
    items = draw(st.lists(_STATEMENT, min_size=min_statements, max_size=max_statements))
    depth, lines = 0, []
    for item in items:
        if item == "}":
            if depth == 0:
                continue
            depth -= 1
        elif item == "{":
            depth += 1
        lines.append(item)
    lines += ["}"] * depth
    body = "\n".join(lines)
    statements = sum(1 for x in items if x not in ("{", "}") and not x.startswith(("//", "/*")))
    text = (HEAD + ".global .align 4 .b8 gtab[16];\n.shared .align 4 .b32 sbuf[32];\n"
            ".func (.param .b32 r) helper(.param .b32 a)\n{\n\tret;\n}\n"
            ".visible .entry gen(.param .u64 gen_param_0, .reg .u32 lane)\n{\n"
            "\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<3>;\n\t.reg .f32 %f<3>;\n"
            + body + "\n\tret;\n}\n\t.file\t1 \"gen.cu\"\n\t.file\t2 \"inc.h\"\n")
    return text, statements


_GENERATED = {"statements": 0}


def _check_generated(case) -> None:
    text, count = case
    assert_same_ir(text, "gen.ptx")
    _GENERATED["statements"] += count


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(generated_module(20, 40))
def test_generated_ptx_same_ir(case):
    _check_generated(case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(generated_module(45, 60))
def test_generated_ptx_same_ir_10k(case):
    _check_generated(case)


@pytest.mark.slow
def test_generated_statements_count():
    """The generated differential tests above covered more than 10,000 statements."""
    if _GENERATED["statements"] == 0:
        pytest.skip("run with the generated tests")
    assert _GENERATED["statements"] >= 10_000, _GENERATED


# -- syntax errors explained ----------------------------------------------------------------------
def error_at(text: str) -> InputError:
    with pytest.raises(InputError) as e:
        parse_ptx(text, "k.ptx")
    return e.value


def where(e: InputError) -> str:
    return f"{e.loc.line}:{e.loc.col}: {e.message}"


def test_missing_semicolon_explained():
    e = error_at(kernel("\tmov.u32 %r1, %r2\n\tadd.s32 %r1, %r1, 1;"))
    assert where(e) == "6:18: expected ';' at the end of the line, found 'add.s32' on the next line"
    e = error_at(kernel("\tmov.u32 %r1, %r2 add.s32 %r1, %r1, 1;"))
    assert where(e) == "6:19: unexpected 'add.s32' - expected ',' or ';'"


def test_bad_operand_explained():
    e = error_at(kernel("\tadd.s32 %r1, , %r2;"))
    assert where(e) == "6:15: unexpected ',' - expected a register, an immediate or an address"
    e = error_at(kernel("\tld.global.u32 %r1, [%rd1+];"))
    assert where(e) == "6:27: unexpected ']' - expected an integer or '-'"
    e = error_at(kernel("\tmov.b64 {%r1 %r2}, %rd1;"))
    assert where(e) == "6:15: unexpected '%r2' - expected ',' or '}'"


def test_unknown_directive_in_body_explained():
    e = error_at(kernel("\t.reg .b32 %r<2>;\n\t.frobnicate 1;"))
    assert where(e) == ("7:2: unknown directive '.frobnicate' - expected an instruction, a label, "
                        "a declaration or '}'")


def test_unbalanced_brace_explained():
    e = error_at(HEAD + ".visible .entry k()\n{\n\t{\n\tret;\n}\n")
    assert where(e) == ("9:1: unexpected end of file inside function 'k' - expected an instruction, "
                        "a label, a declaration or '}' (unbalanced '{' at line 5, column 1)")
    e = error_at(HEAD + ".visible .entry k()\n{\n\tret;\n}\n}\n")
    assert where(e) == "8:1: unbalanced '}' - expected a declaration or a directive"


def test_malformed_loc_explained():
    e = error_at(kernel("\t.loc 1 x 3\n\tret;"))
    assert where(e) == "6:9: unexpected 'x' - expected an integer"
    e = error_at(kernel("\t.loc \"k.cu\" 4 2"))
    assert where(e) == "6:7: unexpected '\"k.cu\"' - expected an integer"
    e = error_at(kernel("\t.loc 1\n\tret;"))
    assert where(e) == "6:8: expected an integer at the end of the line, found 'ret' on the next line"


def test_error_column_in_a_later_function():
    """The grammar re-parses only the function the error is in; lines stay the file's."""
    good = ".visible .entry a()\n{\n\tret;\n}\n"
    e = error_at(HEAD + good * 3 + ".visible .entry b()\n{\n\tmov.u32 %r1, %r2 %r3;\n}\n")
    assert where(e) == "18:19: unexpected '%r3' - expected ',' or ';'"


def test_semantic_errors_keep_the_hand_parser_words():
    e = error_at(kernel("\t.param .b32 retval0;\n\tcall.uni (retval0);"))
    assert e.message == "call without a callee"
    e = error_at(kernel("\tmov.u32 %r1, /* never closed"))
    assert e.message == "unterminated comment '/*'"


def test_inline_asm_errors_explained():
    """Inline asm templates go through the statement parser: same words, the asm's position."""
    with pytest.raises(InputError) as e:
        parse_ptx_statements("mov.u32 r1, , r2;", "a.cu", 3, 19)
    assert where(e.value) == "3:31: unexpected ',' - expected a register, an immediate or an address"
    with pytest.raises(InputError) as e:
        parse_ptx_statements("{ .reg .pred q;\n setp.ne.s32 q, r1, 0;", "a.cu", 3, 19)
    assert e.value.message.startswith("unexpected end of input - expected an instruction")
    assert "(unbalanced '{' at line 3, column 19)" in e.value.message


def test_cuda_inline_asm_syntax_error_is_a_note():
    from warplint.frontends.cuda import parse_cuda
    from warplint.options import Options
    src = ("__global__ void k(int *p) {\n    int x;\n"
           "    asm volatile(\"mov.u32 x, , %%laneid;\" : \"=r\"(x));\n    p[0] = x;\n}\n")
    m = parse_cuda(src, "a.cu", Options())
    notes = [d for d in m.diagnostics if "inline asm" in d.message]
    assert len(notes) == 1 and notes[0].severity == "note" and notes[0].loc.line == 3
    assert notes[0].message.endswith("unexpected ',' - expected a register, an immediate or an address")


def test_grammar_error_none_on_valid_ptx():
    assert grammar_error(kernel("\tmov.u32 %r1, %laneid;")) is None


def test_lark_not_imported_on_valid_input(tmp_path):
    """Valid input never imports lark (it costs about 60 ms); a syntax error does."""
    def imports(path: Path) -> str:
        r = subprocess.run([sys.executable, "-X", "importtime", "-m", "warplint", "--no-cache", str(path)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        return r.stderr
    assert " lark" not in imports(ROOT / "fixtures/ptx/parse/sm80_v70.ptx")
    bad = tmp_path / "bad.ptx"
    bad.write_text(kernel("\tadd.s32 %r1, , %r2;"))
    assert " lark" in imports(bad)
