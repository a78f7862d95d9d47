"""CUDA-C -> warp IR driver: preprocess, desugar C++ on its syntax tree (cxx.py), rewrite what
is left of C++ to C token by token (rewrite.py), parse top-level items one by one
with pycparser, lower each function.

An item that does not parse is skipped with a note; when it swallowed the declarations after
it (a missing `;`), parsing resumes at the next top-level declaration.  Notes quote only text
written in the linted file itself, and briefly."""
from __future__ import annotations

import re

from ...errors import InputError
from ...ir import Diagnostic, Loc, Module
from ...memo import TextMemo
from .cxx import desugar
from .lexer import Tok, brief, quotable
from .preprocess import cuda_defines, preprocess
from .warpcode import uses_cooperative_groups, warp_functions
from .rewrite import Rewriter
from .scope import file_code

_ERR = re.compile(r":(\d+):(\d+): (.*)$", re.S)
MAX_NESTING = 200
MAX_RETRIES = 12
MAX_RESYNC_TRIES = 8  # declaration starts tried per item that does not parse
RESYNC_WORK = 4  # tokens re-split when resynchronising, per token of the file


def arch_of(target: str | None) -> int:
    if not target:
        return 700
    m = re.match(r"(?:sm|compute)_(\d+)", target)
    if not m:
        return 700
    return int(m.group(1)) * 10


class _Parser:
    """pycparser through its public API: the tokens one per line after a line of typedefs, so
    an AST coordinate's line is the token's 1-based index in the chunk + `offset`.  The AST is
    a function of that text alone (no file, no line of the source), so an item met again (the
    same header function in another target's text, or in another file of the run) reuses it;
    so is a failure to parse it, which is met again as the same `_Failure`."""
    offset = 1

    def __init__(self):
        from pycparser import c_parser
        from .c_tokens import lexer_class
        self.parser = c_parser.CParser(lexer=lexer_class())
        self.failure: _Failure | None = None  # of the last parse that failed

    def close(self) -> None:
        """Lets reference counting free pycparser's parser at once: its lexer holds the parser's
        bound methods (a reference cycle, else left to the cyclic collector with what it holds)."""
        vars(self.parser).clear()

    def parse(self, toks, typedefs: set[str]):
        """The AST of the item; raises what pycparser raised (`self.failure` says where)."""
        names = sorted({t.text for t in toks if t.kind == "id"} & typedefs)
        head = " ".join(f"typedef int {n};" for n in names)
        body = "\n".join([t.text for t in toks])
        if "#" in body:  # `#` and `##` left by the preprocessor: `@`, an error where it stands
            body = "\n".join("@" if t.text in ("#", "##") else t.text for t in toks)
        text = head + "\n" + body
        ast = PARSED.get(text)
        if isinstance(ast, _Failure):
            self.failure = ast
            raise ast.fresh_error()
        if ast is None:
            ast = self._parse_new(text)
            PARSED.put(text, ast, len(text))
        return ast

    def _parse_new(self, text: str):
        from pycparser.c_parser import ParseError
        try:
            return self.parser.parse(text, "")
        except (ParseError,) + _PARSER_FAILURES as e:  # remembered once its line is read
            self.failure = _Failure(e, text)
            raise

    def error_line(self) -> int | None:
        """The text's line the last ParseError stands at: its message's, else the next token's
        (None when there is none)."""
        failure = self.failure
        if failure.text is not None:
            m = _ERR.search(str(failure.error))
            if m:
                self._known(int(m.group(1)))
            else:
                try:
                    self._known(self.parser._peek().lineno)
                except AttributeError:  # no token left, or a pycparser without _peek
                    self._known(None)
        return failure.line

    def lexer_line(self) -> int | None:
        """The line pycparser's lexer had reached (one token per line) when it failed inside."""
        if self.failure.text is not None:
            try:
                self._known(self.parser.clex._lineno)
            except AttributeError:  # a pycparser without this lexer
                self._known(None)
        return self.failure.line

    def _known(self, line: int | None) -> None:
        """The last failure's line is `line`: its text is met again as this failure."""
        failure = self.failure
        failure.line, text, failure.text = line, failure.text, None
        failure.error = failure.fresh_error()  # kept without the traceback (its frames hold the item)
        PARSED.put(text, failure, len(text))


class _Failure:
    """A text pycparser does not parse: what it raised and the text's line it stood at, read
    from the parser's state right after (`text` until then)."""
    __slots__ = ("error", "line", "text")

    def __init__(self, error: Exception, text: str):
        self.error, self.line, self.text = error, None, text

    def fresh_error(self) -> Exception:
        """The error again, as a new exception of its class (no traceback, no context)."""
        return type(self.error)(*self.error.args)


# pycparser's own failures on odd input (an assert, a Struct taken for a type name)
_PARSER_FAILURES = (IndexError, AttributeError, TypeError, ValueError, AssertionError, KeyError)

# Lowering reads an AST and never changes it (beyond dropping the typedef line's declarations,
# which a second lowering finds dropped already): items parsed lately, by their text, and the
# texts that did not parse (`_Failure`).
PARSED = TextMemo(max_chars=1_000_000)  # about 36 MB of ASTs (nccl's device headers: 0.3 M)


class Chunk:
    __slots__ = ("toks", "is_func", "name_tok")

    def __init__(self, toks, is_func, name_tok):
        self.toks = toks
        self.is_func = is_func
        self.name_tok = name_tok


def split_chunks(toks: list[Tok]) -> list[Chunk]:
    return list(iter_chunks(toks))


def iter_chunks(toks: list[Tok], start: int = 0):
    """The top-level items of `toks[start:]`, one at a time (work in proportion to those taken)."""
    cur: list[Tok] = []
    depth = 0
    brace_start_paren = False
    seen_paren = False
    seen_eq = False
    for i in range(start, len(toks)):
        t = toks[i]
        x = t.text
        cur.append(t)
        if x not in _CHUNK_MARKS:
            continue
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
                yield _mk(cur, True)
                cur = []
                depth = 0
                brace_start_paren = seen_paren = seen_eq = False
        elif x == "=" and depth == 0:
            seen_eq = True
        elif x == ";" and depth <= 0:
            yield _mk(cur, False)
            cur = []
            depth = 0
            brace_start_paren = seen_paren = seen_eq = False
    if cur:
        yield _mk(cur, brace_start_paren)


_CHUNK_MARKS = frozenset(("(", "[", ")", "]", "{", "}", "=", ";"))  # what iter_chunks reads


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
        x = t.text
        if x not in _CHUNK_MARKS:
            continue
        if x in ("(", "[", "{"):
            depth += 1
            if depth > MAX_NESTING:
                return t
        elif x in (")", "]", "}"):
            depth -= 1
    return None


def parse_cuda(text: str, path: str, options, preprocessed=None) -> Module:
    """`preprocessed`: `preprocess.arch_trace`'s run for this target, if it made one."""
    from ...pipeline import linted_tree
    target = options.targets[0] if options.targets else None
    module = Module(path, "cuda", target=target, text=text)
    if not text.strip():
        return module
    arch = arch_of(target)
    defines = cuda_defines(arch)
    defines.update(options.defines or {})
    toks, pp = preprocess(text, path, defines, list(options.include_paths or []), linted_tree(path), preprocessed)
    cooperative_groups = uses_cooperative_groups(toks)
    module.warp_code = warp_functions(toks, path, cooperative_groups)  # what coverage is measured against
    module.arch_trace = tuple(pp.arch_trace)  # other targets whose trace is the same share this module
    notes = _Notes(module, Quoter(path, text))
    _bare_cr_note(text, path, notes)
    for tok, msg in pp.notes:
        notes.add(tok, msg)
    deep = _nesting_ok(toks)
    if deep is not None:
        raise InputError(Loc(deep.path, deep.line, deep.col), f"input nested deeper than {MAX_NESTING} levels")
    rw = Rewriter()
    rw.cooperative_groups = cooperative_groups
    toks, rw.facts = desugar(toks, rw.typedefs)
    notes.display = rw.facts.display
    for tok, msg in rw.facts.notes:
        notes.add(tok, msg)
    toks = rw.run(toks)
    from .lower import Lowerer
    parser = _Parser()
    lowerer = Lowerer(module, path, rw)
    resync = _Resynchroniser(parser, rw, notes, len(toks))
    code = file_code(split_chunks(toks), path)
    sources = [iter(code.chunks)]  # a stack: resynchronising pushes the rest of an item
    try:
        while sources:
            chunk = next(sources[-1], None)
            if chunk is None:
                sources.pop()
                continue
            ast, err, guessed = _parse_chunk(parser, chunk, rw, notes.quote)
            if ast is None:
                rest = resync.after(chunk, err)
                if rest is not None:
                    sources.append(rest)
                else:
                    _not_analysed(chunk, err, path, pp, notes)
                continue
            if pp.missing_includes:
                _undeclared_qualifier(chunk, guessed, path, pp, notes)
            lowered = len(module.functions)
            lowerer.top(ast, chunk.toks, parser.offset)
            if id(chunk) in code.outside:
                for fn in module.functions[lowered:]:
                    fn.outside = True
    finally:
        parser.close()
    lowerer.finish()
    for fn in module.functions:
        if fn.name in code.called_outside:
            fn.outside = True
    return module


class Quoter:
    """Source text a note may quote: a token written exactly there in the linted file (not one
    from an include or a macro body), short and printable (`lexer.quotable`)."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = text.split("\n")

    def __call__(self, tok: Tok) -> str:
        """`'x' at line N`, or just where when the token may not be quoted."""
        where = f"line {tok.line}" if tok.path == self.path else f"{tok.path}:{tok.line}"
        if tok.path != self.path or not quotable(tok.text) or not 0 < tok.line <= len(self.lines):
            return where
        line = self.lines[tok.line - 1]
        if line[tok.col - 1:tok.col - 1 + len(tok.text)] != tok.text:
            return where
        return f"'{tok.text}' at {where}"


class _Notes:
    """Notes for the module, once per place and message."""

    def __init__(self, module, quote: Quoter):
        self.module = module
        self.quote = quote
        self.seen: set[tuple] = set()
        self.display: dict[str, str] = {}  # a name the C++ layer gave -> the source's (`ns::f`)

    def name(self, tok: Tok) -> str:
        """The name of a function as a note says it."""
        return brief(self.display.get(tok.text, tok.text))

    def add(self, tok: Tok, msg: str) -> None:
        key = (tok.path, tok.line, tok.col, msg)
        if key not in self.seen:
            self.seen.add(key)
            self.module.diagnostics.append(Diagnostic(Loc(tok.path, tok.line, tok.col), "note", msg))


def _bare_cr_note(text: str, path: str, notes: _Notes) -> None:
    m = re.search(r"\r(?!\n)", text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        notes.add(Tok("nl", "\r", path, line, col), "line break by a bare CR (\\r): lines are counted at "
                  "\\n only, so the locations after it stay on this line")


def _not_analysed(chunk, err, path, pp, notes) -> None:
    """Notes for an item that did not parse: for each device function of the linted file in it,
    or for the function it is when a local #include was not read (its qualifier may be a macro
    from there)."""
    nt = chunk.name_tok
    if chunk.is_func and nt is not None and nt.path == path:
        if _is_device_chunk(chunk):
            notes.add(nt, f"function '{notes.name(nt)}' not analysed: {err}")
            return
        if pp.missing_includes:
            inc = pp.missing_includes[0][0]
            notes.add(nt, f"function '{notes.name(nt)}' not analysed: {err}; the #include at line {inc.line} "
                      "was not read (does it define a qualifier or type used here?)" if inc.path == path else
                      f"function '{notes.name(nt)}' not analysed: {err}; an #include was not read")
            return
    for nt, member in _device_functions(chunk, path):
        notes.add(nt, f"function '{notes.name(nt)}' not analysed: " +
                  ("member functions of classes are not supported" if member else err))


def _undeclared_qualifier(chunk, guessed: set[str], path, pp, notes) -> None:
    """A function of the linted file declared with a name nothing declares, while an #include
    was not read: `KERNEL void k()` is host code to us, though KERNEL may be `__global__`."""
    nt = chunk.name_tok
    if not chunk.is_func or nt is None or nt.path != path or _is_device_chunk(chunk):
        return
    for t in chunk.toks:
        if t is nt:
            return
        if t.text in guessed:
            inc = pp.missing_includes[0][0]
            notes.add(nt, f"function '{notes.name(nt)}' not analysed: taken for host code, as {notes.quote(t)} "
                      "is declared nowhere (" + (f"the #include at line {inc.line} was not read)"
                                                 if inc.path == path else "an #include was not read)"))
            return


class _Resynchroniser:
    """When an item does not parse, because a missing `;` glued the declarations after it to it,
    parsing resumes at the first top-level declaration start inside it (device functions'
    first) from which an item parses.  Work is bounded in proportion to the file's tokens."""

    def __init__(self, parser, rw, notes, ntoks: int):
        self.parser, self.rw, self.notes = parser, rw, notes
        self.budget = RESYNC_WORK * ntoks + 10_000  # tokens re-split after items that failed

    def after(self, chunk, err):
        """The items from the resynchronisation point on (an iterator), with a note; or None."""
        toks = chunk.toks
        if not self.spend(len(toks), toks[0]):
            return None
        starts = sorted(_declaration_starts(toks), key=lambda i: not _is_device_marker(toks, i))
        for cut in starts[:MAX_RESYNC_TRIES]:
            first = next(iter_chunks(toks, cut))
            if not self.spend(len(first.toks), toks[0]):
                return None
            ast, _, guessed = _parse_chunk(self.parser, first, self.rw, self.notes.quote)
            if ast is not None:
                here, there = toks[0], toks[cut]
                resume = f"line {there.line}" if there.path == here.path else f"{there.path}:{there.line}"
                self.notes.add(here, f"code from here up to {resume} not analysed (analysis resumes there): {err}")
                self.spend(len(toks) - cut, toks[0])  # the rest is split again
                return iter_chunks(toks, cut)
            self.rw.typedefs -= guessed
        return None

    def spend(self, work: int, where: Tok) -> bool:
        if self.budget < 0:
            return False
        self.budget -= work
        if self.budget < 0:
            self.notes.add(where, "parsing no longer resumes after items that do not parse: too many of them")
        return self.budget >= 0


def _is_device_marker(toks, i) -> bool:
    """Does `toks[i]` start `__global__`/`__device__` (rewritten to `_Alignas(7010)`/`(7003)`)?"""
    return toks[i].text == "_Alignas" and i + 2 < len(toks) and toks[i + 2].text in ("7003", "7010")


def _declaration_starts(toks) -> list[int]:
    """Indices (after the first) of identifiers at column 1 of a new line, outside brackets."""
    out = []
    depth = 0
    for i, t in enumerate(toks):
        if i and depth == 0 and t.col == 1 and t.kind == "id" and (
                toks[i - 1].line != t.line or toks[i - 1].path != t.path):
            out.append(i)
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
    return out


def _device_functions(chunk, path):
    """(name token, is a member) of the `__device__`/`__global__` functions defined in the
    linted file inside an item that did not parse."""
    toks = chunk.toks
    in_class = any(t.text in ("struct", "union") for t in toks[:8])
    out = []
    n = len(toks)
    depth = 0
    for i, t in enumerate(toks):
        if t.text == "{":
            depth += 1
        elif t.text == "}":
            depth -= 1
        if t.kind == "num" and t.text in ("7003", "7010") and i >= 2 and toks[i - 2].text == "_Alignas":
            for j in range(i + 1, min(n - 1, i + 40)):
                if toks[j].text in (";", "{", "}"):
                    break
                if toks[j].kind == "id" and toks[j + 1].text == "(" and toks[j].text != "_Alignas":
                    if toks[j].path == path and (not out or out[-1][0] is not toks[j]):
                        out.append((toks[j], in_class and depth > 0))
                    break
    return out


def _is_device_chunk(chunk) -> bool:
    for t in chunk.toks:
        if t.text == "{":
            return False
        if t.kind == "num" and t.text in ("7003", "7010"):
            return True
    return False


def _parse_chunk(parser, chunk, rw, quote):
    """(AST or None, why not, the names taken for type names to parse it)."""
    from pycparser.c_parser import ParseError
    toks = chunk.toks
    tried = set()
    err = "cannot parse"
    for _ in range(MAX_RETRIES):
        try:
            return parser.parse(toks, rw.typedefs), None, tried
        except ParseError:
            line = parser.error_line()
            if line is None:
                return None, "cannot parse", tried
            idx = line - 1 - parser.offset
            if not 0 <= idx < len(toks):
                return None, "cannot parse (unexpected end)", tried
            tok = toks[idx]
            construct = rw.facts.construct(tok)
            err = f"cannot parse {quote(tok)} (" + (_macro_statement(toks, idx) or (
                f"{construct} is not supported: --via-nvcc analyses it" if construct
                else _unmatched_or_syntax(toks, idx))) + ")"
            # an unknown type name right before the error position?
            fixed = False
            for j in (idx - 1, idx):
                if 0 <= j < len(toks):
                    c = toks[j]
                    if c.kind == "id" and c.text not in rw.typedefs and c.text not in tried and \
                            c.text not in _NOT_TYPES and c.text not in rw.facts.values:
                        rw.typedefs.add(c.text)
                        tried.add(c.text)
                        fixed = True
                        break
            if not fixed:
                return None, err, tried
        except RecursionError:
            return None, "nested too deeply", tried
        except _PARSER_FAILURES as e:
            return None, _internal_failure(parser, toks, rw, quote, e), tried
    return None, err, tried


def _internal_failure(parser, toks, rw, quote, e) -> str:
    """Why an item did not parse when pycparser failed inside (an assert on an unbalanced `}`, a
    Struct taken for a type name): the token its lexer had reached, and the construct there."""
    line = parser.lexer_line()
    idx = -1 if line is None else line - 1 - parser.offset
    if not 0 <= idx < len(toks):
        return f"cannot parse (the C parser failed inside: {type(e).__name__})"
    tok = toks[idx]
    construct = rw.facts.construct(tok)
    why = (f"{construct} is not supported: --via-nvcc analyses it" if construct else
           _CLOSES_NOTHING if _closes_nothing(toks, idx) else "a construct the C parser does not take")
    return f"cannot parse {quote(tok)} ({why})"


_CLOSES_NOTHING = "it closes no '{' of this item"


def _closes_nothing(toks, idx: int) -> bool:
    """Whether toks[idx] is a `}` with no `{` open before it in the item."""
    depth = sum(1 if t.text == "{" else -1 if t.text == "}" else 0 for t in toks[:idx])
    return toks[idx].text == "}" and depth <= 0


_STATEMENT_ENDS = {";", "{", "}"}


def _macro_statement(toks, idx: int) -> str | None:
    """Why the C parser stopped at toks[idx] when a statement there is a name no header read
    defines: `LOOP(i, n) {` (a loop macro before its block) or `BODY` alone on its line."""
    name = None
    if toks[idx].text == "{" and idx > 0 and toks[idx - 1].text == ")":
        depth, j = 0, idx - 1
        while j >= 0:
            depth += {")": 1, "(": -1}.get(toks[j].text, 0)
            if depth == 0:
                break
            j -= 1
        name = j - 1 if j > 0 else None
    else:  # the name, or the name before it (taken for a type name on a retry), alone on its line
        name = next((j for j in (idx, idx - 1) if 0 <= j < len(toks) - 1 and toks[j + 1].line != toks[j].line), None)
    if name is None or toks[name].kind != "id" or toks[name].text in _NOT_TYPES or \
            name > 0 and toks[name - 1].text not in _STATEMENT_ENDS:
        return None
    shape = f"'{toks[name].text}(...)' before a block" if toks[idx].text == "{" else \
        f"'{toks[name].text}' alone as a statement"
    return (f"{shape} is a macro that no header warplint read defines: define it (configuration `macros`, -D) "
            "or lint with --via-nvcc")


def _unmatched_or_syntax(toks, idx: int) -> str:
    """Why the C parser stopped at toks[idx], when no unsupported construct is known there (the
    same wording whether pycparser raised ParseError or failed an assert inside: versions differ)."""
    return _CLOSES_NOTHING if _closes_nothing(toks, idx) else "unsupported C++ or syntax error"


_NOT_TYPES = {"return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
              "continue", "goto", "sizeof", "struct", "union", "enum", "typedef", "_Alignas", "static",
              "extern", "const", "volatile", "int", "float", "double", "char", "void", "long", "short",
              "unsigned", "signed"}
