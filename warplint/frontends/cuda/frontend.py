"""CUDA-C -> warp IR driver: preprocess, rewrite C++ to C, parse top-level items one by one
with pycparser, lower each function."""
from __future__ import annotations

import re

from ...errors import InputError
from ...ir import Diagnostic, Loc, Module
from .lexer import Tok
from .preprocess import preprocess
from .rewrite import Rewriter

_ERR = re.compile(r":(\d+):(\d+): (.*)$", re.S)
MAX_NESTING = 200
MAX_RETRIES = 12


def arch_of(target: str | None) -> int:
    if not target:
        return 700
    m = re.match(r"(?:sm|compute)_(\d+)", target)
    if not m:
        return 700
    return int(m.group(1)) * 10


class _Parser:
    """pycparser with a preset set of typedef names."""

    def __init__(self):
        from pycparser import c_parser
        self.mod = c_parser
        parser = c_parser.CParser()
        self.parser = parser

    def parse(self, text: str, typedefs: set[str]):
        p = self.parser
        from pycparser.c_lexer import CLexer  # noqa: F401
        p.clex.input(text, "")
        p._scope_stack = [dict.fromkeys(typedefs, True)]
        p._tokens = self.mod._TokenStream(p.clex)
        ast = p._parse_translation_unit_or_empty()
        tok = p._peek()
        if tok is not None:
            p._parse_error(f"before: {tok.value}", p._tok_coord(tok))
        return ast


class Chunk:
    __slots__ = ("toks", "is_func", "name_tok")

    def __init__(self, toks, is_func, name_tok):
        self.toks = toks
        self.is_func = is_func
        self.name_tok = name_tok


def split_chunks(toks: list[Tok]) -> list[Chunk]:
    chunks = []
    cur: list[Tok] = []
    depth = 0
    brace_start_paren = False
    seen_paren = False
    seen_eq = False
    for t in toks:
        x = t.text
        cur.append(t)
        if x in ("(", "["):
            if depth == 0 and x == "(" and not seen_eq:
                seen_paren = True
            depth += 1
        elif x in (")", "]"):
            depth -= 1
        elif x == "{":
            if depth == 0:
                brace_start_paren = seen_paren
            depth += 1
        elif x == "}":
            depth -= 1
            if depth <= 0 and brace_start_paren:
                chunks.append(_mk(cur, True))
                cur = []
                depth = 0
                brace_start_paren = seen_paren = seen_eq = False
        elif x == "=" and depth == 0:
            seen_eq = True
        elif x == ";" and depth <= 0:
            chunks.append(_mk(cur, False))
            cur = []
            depth = 0
            brace_start_paren = seen_paren = seen_eq = False
    if cur:
        chunks.append(_mk(cur, brace_start_paren))
    return chunks


def _mk(toks, is_func):
    name = None
    if is_func:
        depth = 0
        for i, t in enumerate(toks):
            if t.text == "(" and depth == 0 and i and toks[i - 1].kind == "id" and toks[i - 1].text != "_Alignas":
                name = toks[i - 1]
                break
            if t.text == "{":
                break
            if t.text in ("(",):
                depth += 1
            elif t.text == ")":
                depth -= 1
    return Chunk(toks, is_func, name)


def render(toks: list[Tok]) -> tuple[str, dict]:
    """C text for tokens and a map (line, col) in that text -> original token."""
    parts = []
    where = {}
    line = 1
    col = 1
    prev_line = None
    for t in toks:
        if prev_line is not None and (t.line != prev_line[0] or t.path != prev_line[1]):
            parts.append("\n")
            line += 1
            col = 1
        elif parts:
            parts.append(" ")
            col += 1
        where[(line, col)] = t
        parts.append(t.text)
        col += len(t.text)
        prev_line = (t.line, t.path)
    return "".join(parts), where


def _nesting_ok(toks) -> Tok | None:
    depth = 0
    for t in toks:
        if t.text in ("(", "[", "{"):
            depth += 1
            if depth > MAX_NESTING:
                return t
        elif t.text in (")", "]", "}"):
            depth -= 1
    return None


def parse_cuda(text: str, path: str, options) -> Module:
    target = options.targets[0] if options.targets else None
    module = Module(path, "cuda", target=target, text=text)
    if not text.strip():
        return module
    arch = arch_of(target)
    defines = {"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": str(arch), "CUDART_VERSION": "13000",
               "CUDA_VERSION": "13000", "__CUDACC_VER_MAJOR__": "13", "__CUDACC_VER_MINOR__": "0",
               "__CUDACC_VER_BUILD__": "0", "__cplusplus": "201703L", "__CUDA_ARCH_LIST__": str(arch)}
    defines.update(options.defines or {})
    toks, pp = preprocess(text, path, defines, list(options.include_paths or []))
    rw = Rewriter()
    toks = rw.run(toks)
    deep = _nesting_ok(toks)
    if deep is not None:
        raise InputError(Loc(deep.path, deep.line, deep.col), f"input nested deeper than {MAX_NESTING} levels")
    from .lower import Lowerer
    parser = _Parser()
    lowerer = Lowerer(module, path, rw)
    for chunk in split_chunks(toks):
        ast, where, err = _parse_chunk(parser, chunk, rw)
        if ast is None:
            if chunk.is_func and chunk.name_tok is not None and _is_device_chunk(chunk) \
                    and chunk.name_tok.path == path:
                nt = chunk.name_tok
                module.diagnostics.append(Diagnostic(Loc(nt.path, nt.line, nt.col), "note",
                                                     f"function '{nt.text}' not analysed: {err}"))
            elif not chunk.is_func:
                for nt in _member_functions(chunk, path):
                    module.diagnostics.append(Diagnostic(
                        Loc(nt.path, nt.line, nt.col), "note",
                        f"function '{nt.text}' not analysed: member functions of classes are not supported"))
            continue
        lowerer.top(ast, where, chunk.toks)
    lowerer.finish()
    return module


def _member_functions(chunk, path):
    """`__device__`/`__global__` functions defined inside a struct/class that did not parse."""
    toks = chunk.toks
    if not any(t.text in ("struct", "union") for t in toks[:8]):
        return []
    out = []
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind == "num" and t.text in ("7003", "7010") and i >= 2 and toks[i - 2].text == "_Alignas":
            for j in range(i + 1, min(n - 1, i + 40)):
                if toks[j].text in (";", "{", "}"):
                    break
                if toks[j].kind == "id" and toks[j + 1].text == "(" and toks[j].text != "_Alignas":
                    if toks[j].path == path and (not out or out[-1] is not toks[j]):
                        out.append(toks[j])
                    break
    return out


def _is_device_chunk(chunk) -> bool:
    for t in chunk.toks:
        if t.text == "{":
            return False
        if t.kind == "num" and t.text in ("7003", "7010"):
            return True
    return False


def _parse_chunk(parser, chunk, rw):
    from pycparser.c_parser import ParseError
    toks = chunk.toks
    tried = set()
    err = "cannot parse"
    for _ in range(MAX_RETRIES):
        text, where = render(toks)
        try:
            return parser.parse(text, rw.typedefs), where, None
        except ParseError as e:
            m = _ERR.search(str(e))
            if m:
                line, col = int(m.group(1)), int(m.group(2))
                msg = m.group(3)
            else:
                try:
                    ptok = parser.parser._peek()
                    line, col = ptok.lineno, parser.parser._tok_coord(ptok).column
                except Exception:  # noqa: BLE001
                    return None, where, "cannot parse"
                msg = str(e).lstrip(": ")
            tok = where.get((line, col))
            err = _explain(msg, tok)
            if tok is None:
                return None, where, err
            # an unknown type name right before the error position?
            idx = next((i for i, t in enumerate(toks) if t is tok), None)
            fixed = False
            for j in (idx - 1, idx) if idx else ():
                if 0 <= j < len(toks):
                    c = toks[j]
                    if c.kind == "id" and c.text not in rw.typedefs and c.text not in tried and \
                            c.text not in _NOT_TYPES:
                        rw.typedefs.add(c.text)
                        tried.add(c.text)
                        fixed = True
                        break
            if not fixed:
                return None, where, err
        except RecursionError:
            return None, {}, "nested too deeply"
        except (IndexError, AttributeError, TypeError, ValueError, AssertionError) as e:
            return None, {}, f"cannot parse ({type(e).__name__})"
    return None, {}, err


_NOT_TYPES = {"return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
              "continue", "goto", "sizeof", "struct", "union", "enum", "typedef", "_Alignas", "static",
              "extern", "const", "volatile", "int", "float", "double", "char", "void", "long", "short",
              "unsigned", "signed"}


def _explain(msg: str, tok) -> str:
    msg = msg.strip()
    if tok is not None:
        where = f" at line {tok.line}" if tok.line else ""
        return f"cannot parse '{tok.text}'{where} (unsupported C++ or syntax error)"
    return f"cannot parse ({msg[:60]})"
