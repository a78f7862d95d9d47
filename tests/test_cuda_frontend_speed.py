"""Shortcuts of the CUDA front end against the long way they stand for."""
from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest
from pycparser import c_parser

from warplint.frontends.cuda import c_tokens, cxx, frontend, lexer
from warplint.options import Options
from warplint.pipeline import parse_variants

HERE = Path(__file__).resolve().parent
SOURCES = [HERE.parent / "fixtures" / "cuda", HERE / "cccl_kernels", HERE / "corpus_kernels"]


def _outcome(parser, text):
    """What parsing `text` gives: the AST with coordinates, or the error; and what the front end
    reads of the parser's state after an error (the next token's line, the lexer's line)."""
    try:
        ast = parser.parse(text, "")
    except Exception as e:  # noqa: BLE001  (pycparser's own failures are compared too)
        try:
            peek = parser._peek()
            peek = peek and (peek.type, peek.value, peek.lineno, peek.column)
        except Exception as e2:  # noqa: BLE001
            peek = type(e2).__name__
        return type(e).__name__, str(e), peek, parser.clex._lineno
    buf = io.StringIO()
    ast.show(buf, showcoord=True, attrnames=True, nodenames=True)
    return "ok", buf.getvalue(), parser.clex._lineno


def _item_texts(limit_files=None):
    """The texts the front end hands pycparser for the CUDA fixtures."""
    texts = []
    original = frontend._Parser.parse

    def recording(self, toks, typedefs):
        names = sorted({t.text for t in toks if t.kind == "id"} & typedefs)
        texts.append(" ".join(f"typedef int {n};" for n in names) + "\n" +
                     "\n".join("@" if t.text in ("#", "##") else t.text for t in toks))
        return original(self, toks, typedefs)

    frontend._Parser.parse = recording
    try:
        for path in sorted(p for folder in SOURCES for p in folder.rglob("*.cu*"))[:limit_files]:
            try:
                parse_variants(path.read_text(errors="surrogateescape"), str(path), Options())
            except Exception:  # noqa: BLE001  (an input error: the texts before it count)
                pass
    finally:
        frontend._Parser.parse = original
    return texts


ODD_LINES = ["'a", "'ab'", "''", '"a#b"', '"\\q"', "#", "##", "@", "$x", "x$", "0x1.p3", "08", "1e", "1e+",
             "..", "...", "/*", "//", "1.0f", "0x1fULL", "'\\x41'", "u8\"s\"", "L'x'", "\\", "`", "a b",
             "typedef int T; typedef int U;", "_Alignas", "__int128", "_Bool", "{", "}", ">>=", "->*"]


@pytest.mark.skipif(c_tokens.Token is None, reason="pycparser 2: its own lexer is used")
def test_table_lexer_parses_as_pycparser_lexer():
    """The table lexer gives every fixture item's text, and texts with odd lines, the same AST,
    error and parser state as pycparser's own lexer."""
    texts = _item_texts()
    texts += [f"typedef int T;\nint\nf\n(\n)\n{{\n{line}\n;\n}}" for line in ODD_LINES]
    texts += [f"\nT\n{line}\nx\n;" for line in ODD_LINES]
    assert len(texts) > 500
    plain = c_parser.CParser()
    table = c_parser.CParser(lexer=c_tokens.TableLexer)
    for text in texts:
        assert _outcome(table, text) == _outcome(plain, text), text


def test_line_tokens():
    assert c_tokens.line_tokens("x") == (("ID", "x", 1),)
    assert c_tokens.line_tokens("int  x") == (("INT", "int", 1), ("ID", "x", 6))
    assert c_tokens.line_tokens("'a") is None  # an error: pycparser's lexer reports it in place
    assert c_tokens.line_tokens('"#"') is None  # a `#`: directives read the next line


def test_long_lines_from_their_words():
    """A long line (the typedef line) put together from its words' rows is what pycparser's lexer
    makes of the whole line."""
    heads = {text.split("\n", 1)[0] for text in _item_texts(limit_files=40)}
    words = ["typedef", "int", "T;", "x", "(", "a+b", "0x1fULL", "..", "1e+", "->*", ">>=", "$x", "@", "`", "\t"]
    rng = random.Random(17)
    soups = [" ".join(rng.choice(words) + " " * rng.randrange(3) for _ in range(120)) for _ in range(200)]
    heads |= {" ".join(f"typedef int {n};" for n in names) for names in (["A"] * 40, ["bool", "_Bool", "int"] * 20)}
    lines = [line for line in heads | set(soups) if len(line) > c_tokens.MAX_LINE_CHARS]
    lines += ["x" * 300 + " " + "y" * 250, "a " * 150 + '"s  t"', "a " * 150 + "// c", "a " * 150 + "'c"]
    assert len(lines) > 200
    for line in lines:
        assert c_tokens._line_rows(line) == c_tokens.line_tokens(line), line


def _desugared_trees():
    """The C++ layer's syntax trees of the fixtures, and of broken C++ (parts the parser could not read)."""
    trees = []
    original = cxx._parser

    class Recording:
        def parse(self, text):
            tree = original().parse(text)
            trees.append(tree)
            return tree

    cxx._parser = Recording
    try:
        _item_texts()
    finally:
        cxx._parser = original
    for text in BROKEN_CXX:
        trees.append(original().parse(text.encode()))
    return trees


BROKEN_CXX = ["__device__ int f(int &x) { x = 1; if (x { return; } }", "struct S { int a; void f() { a = ; } ",
              "template <typename T> __global__ void k(T *p) { p[0] = T(1) + ; }}", "int g() { return (1 + ; }",
              "void h() { for (int i = 0; i < n i++) s += i; }", "class C { public: C() : a(1 {} int a; };"]


def test_error_ids_are_the_nodes_in_error():
    """cxx._error_ids (one walk down the subtrees with errors) against `_in_error` asked of every node."""
    with_errors = 0
    for tree in _desugared_trees():
        root = tree.root_node
        with_errors += root.has_error
        assert cxx._error_ids(root) == {n.id for n in cxx._nodes_all(root) if cxx._in_error(n)}
    assert with_errors >= len(BROKEN_CXX)


def test_identifiers_with_their_parents():
    """cxx._identifiers against a walk asking every identifier for its parent."""
    count = 0
    for tree in _desugared_trees():
        for fd in cxx._nodes(tree.root_node, ("function_definition", "compound_statement")):
            long_way = [(x.id, x.parent.id) for x in cxx._walk(fd) if x.type == "identifier"]
            assert [(x.id, up.id) for x, up in cxx._identifiers(fd)] == long_way
            count += len(long_way)
    assert count > 1000


def test_spans_of_functions_in_one_walk():
    """cxx._nodes_spans against `_nodes` walking the whole tree and each function again."""
    types = ("parameter_declaration", "declaration", "function_definition", "call_expression")
    functions = 0
    for tree in _desugared_trees():
        root = tree.root_node
        everything, spans = cxx._nodes_spans(root, types, ("function_definition",))
        assert [n.id for n in everything] == [n.id for n in cxx._nodes(root, types)]
        for fn in cxx._nodes(root, ("function_definition",)):
            a, b = spans[fn.id]
            assert [n.id for n in everything[a:b]] == [n.id for n in cxx._nodes(fn, types)]
            functions += 1
    assert functions > 500


@pytest.mark.parametrize("texts", [["int", "x", "=", "1", ";"], ['"é"', "+", "x"], ["'\udc80'", "é", "ab", "\udcff"], ["a", "bb", "c"]])
def test_source_offsets_in_bytes(texts):
    """cxx.Source counts in characters where every one is a byte, else in bytes (the long way)."""
    toks = [lexer.Tok("id", x, "f.cu", 1 + i // 2, 1 + 3 * i) for i, x in enumerate(texts)]
    src = cxx.Source(toks)
    pos, starts, parts = 0, [], []
    for i, t in enumerate(toks):
        before = toks[i - 1] if i else None
        sep = b"" if before is None else b"\n" if t.line != before.line else \
            b"" if t.col == before.col + len(before.text) else b" "
        pos += len(sep)
        starts.append(pos)
        data = t.text.encode("utf-8", "surrogateescape")
        pos += len(data)
        parts += [sep, data]
    assert (src.text, src.starts) == (b"".join(parts), starts)


class _Everything:
    def __contains__(self, name):
        return True


def _front_end_outputs():
    out = []
    for path in sorted(p for folder in SOURCES for p in folder.rglob("*.cu*")):
        try:
            variants = parse_variants(path.read_text(errors="surrogateescape"), str(path), Options())
        except Exception as e:  # noqa: BLE001
            out.append(repr(e))
            continue
        out.append([(repr(m.functions), repr(m.diagnostics), [t.name for t in ts]) for m, ts in variants])
    return out


def test_rewriter_plain_names_as_the_long_way(monkeypatch):
    """Rewriter._rewrite copies a plain name at once; with every name taken for special (the
    long way through all its cases) the front end gives the same on every fixture."""
    from warplint.frontends.cuda import rewrite
    frontend.PARSED.entries.clear()
    frontend.PARSED.chars = 0
    short = _front_end_outputs()
    monkeypatch.setattr(rewrite, "_SPECIAL_NAMES", _Everything())
    assert _front_end_outputs() == short


def test_failed_parses_met_again_as_the_long_way(monkeypatch):
    """A text pycparser did not parse is met again as its remembered `_Failure` (the error and the
    line read from the parser's state): every fixture gives what it gives with each failure
    parsed afresh, in a fresh process and when every text is met again."""
    frontend.PARSED.entries.clear()
    frontend.PARSED.chars = 0
    kept = _front_end_outputs()
    assert any(isinstance(v, frontend._Failure) for v, _ in frontend.PARSED.entries.values())
    met_again = _front_end_outputs()
    frontend.PARSED.entries.clear()
    frontend.PARSED.chars = 0
    put = frontend.PARSED.put
    monkeypatch.setattr(frontend.PARSED, "put", lambda key, value, chars: (
        None if isinstance(value, frontend._Failure) else put(key, value, chars)))
    assert _front_end_outputs() == kept == met_again


def test_every_name_the_rewriter_tests_for_is_special():
    """The plain-name shortcut skips every case of Rewriter._rewrite for a name outside
    _SPECIAL_NAMES: each name a case compares the current token's text `x` with is in it."""
    import ast
    import inspect

    from warplint.frontends.cuda import rewrite
    tree = ast.parse(inspect.getsource(rewrite.Rewriter._rewrite).lstrip())
    tested = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "x":
            for right in node.comparators:
                values = right.elts if isinstance(right, (ast.Tuple, ast.Set, ast.List)) else [right]
                tested |= {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    names = {t for t in tested if t.isidentifier()}
    assert len(names) >= 10
    assert names <= rewrite._SPECIAL_NAMES


def _braced_return_arity_long_way(body) -> int:
    from pycparser import c_ast as A

    from warplint.frontends.cuda.lower import _braced
    found, todo = [], [body]
    while todo:
        node = todo.pop()
        if isinstance(node, A.Return):
            found.append(node.expr)
        else:
            todo.extend(node)
    counts = {len(b.exprs) if (b := _braced(e)) is not None else 0 for e in found if e is not None}
    return counts.pop() if len(counts) == 1 else 0


def test_braced_return_arity_walks_statements_only():
    """lower._braced_return_arity (statements only) against a walk of every node."""
    from pycparser import c_ast as A

    from warplint.frontends.cuda.lower import _braced_return_arity
    frontend.PARSED.entries.clear()
    frontend.PARSED.chars = 0
    _item_texts()
    asts = [ast for ast, _ in frontend.PARSED.entries.values() if not isinstance(ast, frontend._Failure)]
    bodies = [x.body for ast in asts for x in ast.ext if isinstance(x, A.FuncDef)]
    assert len(bodies) > 500
    assert sum(_braced_return_arity(b) > 0 for b in bodies) >= 5
    for body in bodies:
        assert _braced_return_arity(body) == _braced_return_arity_long_way(body)


_TOKEN_LONG_WAY = re.compile(r"""
 (?P<ws>(?:[ \t\f\v]|\r(?=\n))+|\\\r?\n)
|(?P<nl>\n|\r)
|(?P<lc>//(?:[^\n\r\\]|\r(?=\n)|\\\r?\n|\\)*)
|(?P<bc>/\*.*?\*/)
|(?P<open>/\*)
|(?P<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
|(?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
|(?P<id>[A-Za-z_$][A-Za-z0-9_$]*)
|(?P<num>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.]|'(?=[0-9A-Za-z]))*)
|(?P<op>\.\.\.|<<=|>>=|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\^=|\|=|\#\#|[-+*/%=<>!&|^~?:;,.()\[\]{}\#])
|(?P<other>.)
""", re.X | re.S)


def _rows_long_way(text):
    """lexer._rows as it was: blanks matched as tokens of their own."""
    out, line, line_start, bol = [], 1, 0, True
    for m in _TOKEN_LONG_WAY.finditer(text, 1 if text.startswith("\ufeff") else 0):
        kind, s, val = m.lastgroup, m.start(), m.group()
        if kind == "nl":
            out.append(("nl", val, line, s - line_start + 1, False))
            if val == "\n":
                line, line_start = line + 1, m.end()
            bol = True
            continue
        if kind in ("ws", "lc", "bc"):
            if val.count("\n"):
                line, line_start = line + val.count("\n"), s + val.rfind("\n") + 1
            continue
        out.append((kind, val, line, s - line_start + 1, bol))
        if kind == "open":
            break
        bol = False
    return out


BLANKS = ["a \\\n b", "x  ", "  \r\n y \r z", "\ufeff  a", "a\t\f\vb /* c */ d // e \\\n f\n g", "/* open",
          "'a' \"s\"  \\", " \\\r\n x", "a   ", "\t", "", " \\", "#define X(a) a ## b \\\n  c\n"]


def test_lexer_blanks_before_tokens():
    """lexer._rows (blanks matched with the token after them) against blanks as tokens of their own."""
    texts = BLANKS + [p.read_text(errors="surrogateescape") for folder in SOURCES for p in folder.rglob("*.cu*")]
    for text in texts:
        assert lexer._rows(text) == _rows_long_way(text), text[:60]


def test_lexer_token_order_on_odd_texts():
    """Names and operators tried first (guarded against literals, numbers and comments) give the
    tokens of the order before (literals, comments and numbers first), on random short texts."""
    rng = random.Random(11)
    alphabet = list("aLuU8_$ \t\r\n\\\"'/.*#+-<>=:;09xeEp()[]{}!&|^~?%,@`\f\v\x00\u00e9")
    for _ in range(30_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 16)))
        assert lexer._rows(text) == _rows_long_way(text), repr(text)


def _cuda_specifiers_long_way(toks):
    out, i = [], 0
    while i < len(toks):
        t = toks[i]
        if t.text in ("__device__", "__host__") and out and out[-1].text == "]" and \
                (i < 2 or toks[i - 2].text != "]"):
            i += 1
            continue
        if t.text == "__align__" and i + 3 < len(toks) and toks[i + 1].text == "(" and toks[i + 3].text == ")":
            i += 4
            continue
        out.append(t)
        i += 1
    return out


def _conversion_calls_long_way(toks):
    out, i = [], 0
    while i < len(toks):
        end = cxx._conversion_call_end(toks, i)
        if end is None:
            out.append(toks[i])
            i += 1
            continue
        if toks[i].text == "->":
            out += [cxx._new(toks[i], "op", "["), cxx._new(toks[i], "num", "0"), cxx._new(toks[i], "op", "]")]
        i = end + 1
    return out


SPECIFIER_CASES = ["[&] __device__ (int r) { return r; }", "[=] __host__ __device__ (int r) {}",
                   "[[nodiscard]] __device__ int f();", "__align__(16) int a; __align__ ( 8 ) __align__(4) b;",
                   "__align__(__device__) x; __align__(", "__device__ ] __device__", "] __device__",
                   "x.operator int() + p->operator ns::T *() + o.operator()(1) + q.operator float()",
                   "operator int(); a.operator", "p->operator unsigned int ( )", "a.operator b.operator c()"]


def test_token_passes_find_what_the_long_way_finds():
    """cxx.cuda_specifiers and cxx.conversion_calls (visiting the candidate tokens only) against a
    walk through every token, on every fixture's tokens and odd cases."""
    streams = [lexer.tokenize(text, "x.cu") for text in SPECIFIER_CASES]
    original = cxx.desugar

    def recording(toks, typenames):
        streams.append(cxx.alternative_tokens(toks))
        return original(toks, typenames)

    frontend.desugar = recording
    try:
        _item_texts()
    finally:
        frontend.desugar = original
    assert len(streams) > 300
    for toks in streams:
        toks = [t for t in toks if t.kind != "nl"]
        assert cxx.cuda_specifiers(toks) == _cuda_specifiers_long_way(toks)
        short, long = cxx.conversion_calls(toks), _conversion_calls_long_way(toks)
        assert [(t.kind, t.text, t.line, t.col) for t in short] == [(t.kind, t.text, t.line, t.col) for t in long]


def _apply_long_way(toks, replace):
    out, i = [], 0
    while i < len(toks):
        if i in replace:
            stop, new = replace[i]
            out.extend(new)
            i = stop
        else:
            out.append(toks[i])
            i += 1
    return out


def test_qualifier_replacements_as_the_long_way():
    """qualifiers._apply (slices between the replaced stretches) against the token-by-token walk,
    stretches overlapping and nested included."""
    from warplint.frontends.cuda import qualifiers
    rng = random.Random(5)
    for _ in range(500):
        toks = list(range(rng.randrange(30)))
        replace = {}
        for _ in range(rng.randrange(6)):
            if toks:
                start = rng.randrange(len(toks))
                replace[start] = (start + 1 + rng.randrange(4), ["n"] * rng.randrange(3))
        assert qualifiers._apply(toks, replace) == _apply_long_way(toks, replace)


def _scopes_long_way(toks):
    """Rewriter._scopes as it was: every token through the cases."""
    out, closers, i, n = [], [], 0, len(toks)
    while i < n:
        t = toks[i]
        x = t.text
        if x == "::":
            if out and out[-1].kind == "id" and i + 1 < n and toks[i + 1].kind == "id":
                prev = out[-1]
                if prev.text in ("std", "cub", "thrust", "cuda", "cooperative_groups", "cg") \
                        and toks[i + 1].text not in ("numeric_limits",):
                    out[-1] = toks[i + 1].copy(path=prev.path, line=prev.line, col=prev.col)
                else:
                    out[-1] = prev.copy(text=prev.text + "__" + toks[i + 1].text)
                i += 2
                continue
            if i + 1 < n and toks[i + 1].kind == "str":
                out.append(t)
                i += 1
                continue
            i += 1
            continue
        if x == "namespace" and t.kind == "id":
            j = i + 1
            while j < n and toks[j].text not in ("{", ";", "="):
                j += 1
            if j < n and toks[j].text == "{":
                closers.append(True)
                i = j + 1
                continue
            while j < n and toks[j].text != ";":
                j += 1
            if out and out[-1].text == "using":
                out.pop()
            i = j + 1
            continue
        if x == "extern" and i + 1 < n and toks[i + 1].kind == "str":
            if i + 2 < n and toks[i + 2].text == "{":
                closers.append(True)
                i += 3
            else:
                i += 2
            continue
        if x == "{":
            closers.append(False)
        elif x == "}":
            if closers and closers.pop():
                i += 1
                continue
        out.append(t)
        i += 1
    return out


def _collect_templates_long_way(rw, toks):
    from warplint.frontends.cuda.rewrite import _match_angle
    n = len(toks)
    for i, t in enumerate(toks):
        if t.text in ("struct", "class") and i + 2 < n and toks[i + 1].kind == "id" and \
                toks[i + 2].text in ("{", "<", ":"):
            rw.structs.add(toks[i + 1].text)
            j = i + 2
            while j < n and j < i + 64 and toks[j].text != "{":
                j += 1
            if j < n and toks[j].text == "{":
                e = lexer.closing(toks, j, "{", "}")
                body = {x.text for x in toks[j:e]} if e is not None and e - j < 400 else set()
                if "__shared__" in body and "operator" in body:
                    rw.shared_structs.add(toks[i + 1].text)
        if t.text == "template" and i + 1 < n and toks[i + 1].text == "<":
            j = _match_angle(toks, i + 1, 256)
            if j is None:
                continue
            k, depth = j + 1, 0
            while k < n and k < j + 200:
                x = toks[k].text
                if x in ("(", ";", "{", "=") and depth == 0:
                    break
                if x == "<":
                    depth += 1
                elif x == ">":
                    depth -= 1
                k += 1
            if k < n and toks[k].text in ("(", "{", ";") and k > 0 and toks[k - 1].kind == "id":
                rw.templates.add(toks[k - 1].text)


SCOPE_TEXTS = ["namespace a { int x; } namespace b = a; using namespace b; int y;", "namespace", "::",
               "a ::", ":: b", 'extern "C" { int f(); }', 'extern "C"', "extern", "} } {", "std::min<int>(a, b)",
               'asm("x" ::"r"(y));', "A::B::C d;", "struct S : T::U { class V {}; };", "template <class T> struct",
               "template", "template <", "class", "struct S {"]


def test_rewriter_scope_passes_as_the_long_way():
    """Rewriter._scopes (the tokens between the ones it acts on copied at once) and
    _collect_templates (only at struct/class/template) against every token through the cases."""
    from warplint.frontends.cuda.rewrite import Rewriter
    streams = [lexer.tokenize(text, "x.cu") for text in SCOPE_TEXTS]
    for path in sorted(p for folder in SOURCES for p in folder.rglob("*.cu*")):
        try:
            streams.append(frontend.preprocess(path.read_text(errors="surrogateescape"), str(path), {}, [])[0])
        except Exception:  # noqa: BLE001  (an input error)
            continue
    assert len(streams) > 300

    def shown(toks):
        return [(t.kind, t.text, t.path, t.line, t.col, t.hide, t.bol) for t in toks]
    for toks in streams:
        assert shown(Rewriter()._scopes(toks)) == shown(_scopes_long_way(toks))
        short, long = Rewriter(), Rewriter()
        short._collect_templates(toks)
        _collect_templates_long_way(long, toks)
        assert (short.structs, short.shared_structs, short.templates) == \
            (long.structs, long.shared_structs, long.templates)


def _expand_long_way(self, toks, in_if=False):
    """Preprocessor.expand as it was: every token through the stack."""
    from warplint.frontends.cuda.preprocess import ARCH_MACROS, MAX_EXPANSION, PPError
    macros, out, work = self.macros, [], list(reversed(toks))
    while work:
        t = work.pop()
        if t.kind != "id" or t.text not in macros or t.text in t.hide:
            if t.kind == "id" and t.text in ("__LINE__", "__FILE__"):
                t = t.copy(kind="num", text=str(t.line)) if t.text == "__LINE__" else \
                    t.copy(kind="str", text='"' + t.path.replace("\\", "/") + '"')
            out.append(t)
            continue
        m = macros[t.text]
        if m.name in ARCH_MACROS:
            self._arch_read = True
            if not in_if:
                self.arch_trace.append((t.path, t.line, " ".join(b.text for b in m.body)))
        if self.budget >= 0:
            self.budget -= 1 + len(m.body)
            if self.budget < 0:
                self.notes.append((t, f"macro expansion budget ({MAX_EXPANSION} steps) reached: this "
                                      "and later macro uses are left unexpanded"))
        if self.budget < 0:
            out.append(t)
            continue
        if m.params is None:
            hide = t.hide | {m.name}
            work.extend(reversed([b.copy(path=t.path, line=t.line, col=t.col, hide=hide | b.hide, bol=False)
                                  for b in m.body]))
            continue
        if not work or work[-1].text != "(":
            out.append(t)
            continue
        work.pop()
        args, level, closing = [[]], 0, None
        while work:
            a = work.pop()
            if a.text == "(" and a.kind == "op":
                level += 1
            elif a.text == ")" and a.kind == "op":
                if level == 0:
                    closing = a
                    break
                level -= 1
            elif a.text == "," and level == 0 and a.kind == "op" and not (m.variadic and len(args) >= len(m.params)):
                args.append([])
                continue
            args[-1].append(a)
        if closing is None:
            raise PPError(t, f"unterminated call of macro '{m.name}'")
        if len(m.params) == 0 and args == [[]]:
            args = []
        hide = t.hide | closing.hide | {m.name}
        body = self.substitute(m, args, t, in_if)
        for b in body:
            b.hide = b.hide | hide
        work.extend(reversed(body))
    return out


MACRO_TEXTS = ["#define F(x) x + F(x)\n#define G F\nG(1) G (2) G", "#define E(...) __VA_ARGS__\nE() E(a, (b, c)) E",
               "#define A B\n#define B A\nA B __LINE__ __FILE__", "#define C(x, y) x ## y\nC(a, b) C(, ) C(1,",
               "#define H() h\nH() H ( ) H", "#define S(x) #x\nS(a \"b\") S()", "#define L __LINE__\nL\nL",
               "#if defined(X) || F(1)\n#endif\n#define X 1\n#if X\nx\n#endif", "#define P(x) (x)\nP(P(P(1)))"]


def test_macro_expansion_as_the_long_way(monkeypatch):
    """Preprocessor.expand (the tokens no macro touches copied at once) gives the tokens, notes
    and architecture trace of the token-by-token stack on every fixture and odd macro uses."""
    from warplint.frontends.cuda import preprocess as pp

    def run(text, path):
        p = pp.Preprocessor(pp.cuda_defines(700), [], path)
        try:
            toks = p.run(text, path)
        except pp.PPError as e:
            return repr(e.msg), e.tok.line, e.tok.col
        return ([(t.kind, t.text, t.path, t.line, t.col, t.hide, t.bol) for t in toks],
                [(t.line, t.col, note) for t, note in p.notes], p.arch_trace, p.budget)
    inputs = [(text, "m.cu") for text in MACRO_TEXTS]
    inputs += [(p.read_text(errors="surrogateescape"), str(p)) for folder in SOURCES for p in sorted(folder.rglob("*.cu*"))]
    assert len(inputs) > 300
    short = [run(*i) for i in inputs]
    monkeypatch.setattr(pp.Preprocessor, "expand", _expand_long_way)
    assert [run(*i) for i in inputs] == short


def test_launched_names_as_the_long_way():
    from warplint.frontends.cuda import qualifiers
    texts = ["<<<", "k<<<1, 2>>>()", "a << b; k <<< g, b >>> (x); (f)<<<1,1>>>()", "k<<", "k<<<", "<< <", "x<<<<"]
    texts += [p.read_text(errors="surrogateescape") for folder in SOURCES for p in sorted(folder.rglob("*.cu*"))]
    for text in texts:
        toks = lexer.tokenize(text, "x.cu")
        long_way = {toks[i].text for i in range(len(toks) - 2)
                    if toks[i].kind == "id" and toks[i + 1].text == "<<" and toks[i + 2].text == "<"}
        assert qualifiers._launched(toks) == long_way, text[:60]
