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
    """pycparser fed with our own tokens (no second lexing pass) and a preset set of typedef
    names.  A token's `lineno` is its 1-based index in the chunk, so every AST coordinate maps
    back to the exact original token."""

    def __init__(self):
        from pycparser import c_parser
        self.mod = c_parser
        self.parser = c_parser.CParser()
        self.kinds: dict[str, str | None] = {}
        if _Parser.fast:
            try:
                from pycparser import c_lexer
                self.Token = c_lexer._Token
                self.classifier = c_lexer.CLexer(lambda *a: None, lambda: None, lambda: None, lambda n: False)
                _Parser.fast = self._self_test()
            except Exception:  # noqa: BLE001 - another pycparser: public API only
                _Parser.fast = False

    def _self_test(self) -> bool:
        from .lexer import tokenize
        toks = [t for t in tokenize("int f(T *a) { if (a) return a[0] + 1; return 0; }", "") if t.kind != "nl"]
        ast = self._parse_fast(toks, {"T"})
        fd = ast.ext[0]
        return type(fd).__name__ == "FuncDef" and fd.decl.coord.line == 2 and \
            fd.body.block_items[0].cond.coord.line == 11

    def kind(self, text: str):
        k = self.kinds.get(text, 0)
        if k == 0:
            cl = self.classifier
            try:
                cl.input(text, "")
                tok = cl.token()
                k = tok.type if tok is not None and tok.value == text and cl.token() is None else None
            except Exception:  # noqa: BLE001
                k = None
            self.kinds[text] = k
        return k

    offset = 0
    fast = True  # feed tokens through pycparser's (private) token stream; else re-lex text

    def parse(self, toks, typedefs: set[str]):
        """AST of the tokens; coordinates' lines are 1-based token indices (+ `self.offset`)."""
        if self.fast:
            try:
                self.offset = 0
                return self._parse_fast(toks, typedefs)
            except (AttributeError, TypeError, NameError) as e:
                if not _internal_error(e):
                    raise
                self.fast = False  # another pycparser version: use its public API only
        return self._parse_text(toks, typedefs)

    def _parse_text(self, toks, typedefs):
        """Public-API fallback: one token per line after a line of typedefs."""
        used = {t.text for t in toks if t.kind == "id"} & typedefs
        own = {toks[i + 1].text for i, t in enumerate(toks[:-1]) if t.text == "typedef"}
        names = sorted(used - own)
        head = " ".join(f"typedef int {n};" for n in names)
        body = "\n".join("@" if t.text in ("#", "##") else t.text for t in toks)
        self.offset = 1
        return self.parser.parse(head + "\n" + body, "")

    def _parse_fast(self, toks, typedefs: set[str]):
        p = self.parser
        p._scope_stack = [dict.fromkeys(typedefs, True)]
        feed = _Feed(self, toks)
        p._tokens = self.mod._TokenStream(feed)
        saved = p.clex
        p.clex = feed
        try:
            ast = p._parse_translation_unit_or_empty()
            tok = p._peek()
            if tok is not None:
                p._parse_error(f"before: {tok.value}", p._tok_coord(tok))
        finally:
            p.clex = saved
        return ast


def _internal_error(e) -> bool:
    """Did pycparser's private API (not the input) fail?"""
    import traceback
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and frames[-1].name in ("_parse_fast", "token", "kind", "__init__")


class _LexError(Exception):
    def __init__(self, index):
        super().__init__("bad token")
        self.index = index


class _Feed:
    filename = ""

    def __init__(self, owner, toks):
        self.owner = owner
        self.toks = toks
        self.i = 0

    def token(self):
        i = self.i
        if i >= len(self.toks):
            return None
        self.i = i + 1
        t = self.toks[i]
        o = self.owner
        k = o.kind(t.text)
        if k is None:
            raise _LexError(i)
        p = o.parser
        if k == "ID" and p._is_type_in_scope(t.text):
            k = "TYPEID"
        elif k == "LBRACE":
            p._push_scope()
        elif k == "RBRACE":
            if len(p._scope_stack) > 1:
                p._pop_scope()
        return o.Token(k, t.text, i + 1, 1)


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
        ast, err = _parse_chunk(parser, chunk, rw)
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
        lowerer.top(ast, chunk.toks, parser.offset)
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
        try:
            return parser.parse(toks, rw.typedefs), None
        except _LexError as e:
            t = toks[e.index]
            return None, f"cannot parse '{t.text}' at line {t.line} (not C/CUDA)"
        except ParseError as e:
            m = _ERR.search(str(e))
            if m:
                idx = int(m.group(1)) - 1 - parser.offset
            else:
                try:
                    idx = parser.parser._peek().lineno - 1 - parser.offset
                except Exception:  # noqa: BLE001
                    return None, "cannot parse"
            if not 0 <= idx < len(toks):
                return None, "cannot parse (unexpected end)"
            tok = toks[idx]
            err = _explain(tok)
            # an unknown type name right before the error position?
            fixed = False
            for j in (idx - 1, idx):
                if 0 <= j < len(toks):
                    c = toks[j]
                    if c.kind == "id" and c.text not in rw.typedefs and c.text not in tried and \
                            c.text not in _NOT_TYPES:
                        rw.typedefs.add(c.text)
                        tried.add(c.text)
                        fixed = True
                        break
            if not fixed:
                return None, err
        except RecursionError:
            return None, "nested too deeply"
        except (IndexError, AttributeError, TypeError, ValueError, AssertionError, KeyError) as e:
            return None, f"cannot parse ({type(e).__name__})"
    return None, err


_NOT_TYPES = {"return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
              "continue", "goto", "sizeof", "struct", "union", "enum", "typedef", "_Alignas", "static",
              "extern", "const", "volatile", "int", "float", "double", "char", "void", "long", "short",
              "unsigned", "signed"}


def _explain(tok) -> str:
    return f"cannot parse '{tok.text}' at line {tok.line} (unsupported C++ or syntax error)"
