"""The PTX grammar (`ptx.lark`) as a lark LALR parser: the executable specification of the PTX
warplint accepts.

Two jobs, neither on the hot path (importing this module imports lark):
- `explain_syntax_error`: when the hand-written parser (parser.py) rejects input, re-parse the
  offending function (or inline-asm template) with the grammar and say what was expected at the
  exact column, in words (`unexpected ',' - expected a register, an immediate or an address`).
- `build_module` / `build_statements`: build the warp IR from the grammar's parse tree, by the
  conventions in `warplint.ir`, independently of the hand parser's token walk; the tests compare
  the two on every fixture, the nvcc corpus and generated PTX.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from importlib.resources import files as _package_files

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from ...errors import InputError
from ...ir import Addr, Function, Imm, Instr, Label, Loc, Module, Reg, Sym, Vec
from ...targets import parse_ptx_target
from .parser import MAX_FRAMES, _SPACES, _display_name, _placed, _float, _int, _opcode_info, _show

_PARSER: Lark | None = None
_NAME_TOKENS = ("WORD", "SYMBOL")


def ptx_parser() -> Lark:
    """The LALR parser over ptx.lark (built once; start symbols `module` and `statements`)."""
    global _PARSER
    if _PARSER is None:
        grammar = (_package_files(__package__) / "ptx.lark").read_text(encoding="utf-8")
        _PARSER = Lark(grammar, parser="lalr", start=["module", "statements"],
                       propagate_positions=True, maybe_placeholders=False)
    return _PARSER


# -- syntax errors explained --------------------------------------------------------------------
# what a terminal stands for, in the words of an error message
_WORDS = {
    "WORD": "a name", "SYMBOL": "a name", "CALL": "'call'", "TYPE": "a type", "VECTOR": "a vector size",
    "PTR": "'.ptr'", "SECTION_NAME": "a section name", "INT": "an integer", "FLOAT": "a number",
    "STRING": "a string", "SEMI": "';'", "BANG": "'!'", "BAR": "'|'", "PLUS": "'+'", "MINUS": "'-'",
    "LBRACE": "'{'", "RBRACE": "'}'", "STATE_SPACE": "a declaration", "PARAM_SPACE": "'.param' or '.reg'",
    "PERF_DIRECTIVE": "a performance directive", "TARGETS_KIND": "'.branchtargets'",
    "ATTRIBUTE": "'.managed' or '.unified'", "$END": "end of input",
}
# sets of terminals that together mean one thing; the first that fits names them all
_GROUPS = (
    ({"WORD", "SYMBOL", "CALL", "STATE_SPACE", "RBRACE"},
     "an instruction, a label, a declaration or '}'"),
    ({"WORD", "SYMBOL", "CALL", "STATE_SPACE"}, "an instruction, a label or a declaration"),
    ({"WORD", "SYMBOL", "INT", "LSQB"}, "a register, an immediate or an address"),
    ({"WORD", "SYMBOL", "INT", "MINUS"}, "a register or an immediate"),
)
# in an operand position these go without saying
_OPERAND_EXTRAS = {"FLOAT", "BANG", "LBRACE", "LPAR", "MINUS"}
# terminals left out of the list when a statement could simply end here instead
_CONTINUATIONS = {"PLUS", "MINUS", "BAR", "LSQB", "LESSTHAN", "EQUAL", "LPAR", "INT"}
# hand-parser messages that stay: lexical ones (same column, same words) and semantic ones
_HAND_WORDS_KEPT = ("unterminated", "unexpected character", "call without a callee", "bad ",
                    "register range", "empty file", "expected a predicate register")
_FUNCTION_START = re.compile(
    r"^[ \t]*(?:\.(?:visible|extern|weak|common)[ \t]+)*\.(?:entry|func)(?![\w$])", re.M)


def _expected_words(expected: set[str]) -> str:
    names = set(expected)
    if len(names) > 1:
        names.discard("$END")
    for group, words in _GROUPS:
        if group <= names:
            if "STATE_SPACE" in group:  # a statement starts here: the directives go unnamed
                return words
            rest = _terminal_words(names - group - _OPERAND_EXTRAS)
            return words if not rest else words + ", or " + _join(rest)
    if "STATE_SPACE" in names:  # between statements: an empty statement needs no mention
        names.discard("SEMI")
    if "SEMI" in names or "COMMA" in names:
        names -= _CONTINUATIONS
    return _join(_terminal_words(names))


def _terminal_words(names: set[str]) -> list[str]:
    terminals = {t.name: t for t in ptx_parser().terminals}
    words = []
    for name in sorted(names, key=lambda n: (n not in ("COMMA", "SEMI"), n)):
        t = terminals.get(name)
        if name in _WORDS:
            word = _WORDS[name]
        elif t is not None and isinstance(t.pattern, PatternStr):
            word = f"'{t.pattern.value}'"
        else:
            word = name.lower()
        if word not in words:
            words.append(word)
    if sum(w.startswith("'.") for w in words) > 3:  # many directives: say so once
        words = [w for w in words if not w.startswith("'.")] + ["a directive"]
    return words


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words) or "nothing"
    return ", ".join(words[:-1]) + " or " + words[-1]


def _found(tok: Token) -> str:
    if tok.type == "$END":
        return "end of input"
    if tok.type == "SECTION_NAME":  # the catch-all: no directive of that name exists
        return f"unknown directive '{_show(tok.value)}'"
    if tok.value.startswith(".") and len(tok.value) > 1:
        return f"directive '{_show(tok.value)}'"
    return f"'{_show(tok.value)}'"


def grammar_error(text: str, start: str = "module", begin: int = 0,
                  locate=None) -> tuple[int, str] | None:
    """(offset, message) of the first syntax error the grammar finds in `text[begin:]`, or
    None; offsets are into `text`, `locate(offset)` gives the (line, column) that messages name."""
    chunk = text[begin:]
    try:
        ptx_parser().parse(chunk, start=start)
    except UnexpectedInput as e:
        offset, message, brace = _describe(e, chunk)
        if brace is not None:
            ln, col = (locate or _line_col(text))(begin + brace)
            message += f" (unbalanced '{{' at line {ln}, column {col})"
        return begin + offset, message
    except LarkError:
        return None
    return None


def _line_col(text: str):
    return lambda offset: (text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _describe(e: UnexpectedInput, text: str) -> tuple[int, str, int | None]:
    """(offset, message, offset of an unclosed '{' to name) for a lark error in `text`."""
    if isinstance(e, UnexpectedCharacters):
        expected = _expected_words(set(e.allowed or ()))
        c = text[e.pos_in_stream]
        what = "unterminated string" if c == '"' else f"unexpected character {c!r}"
        return e.pos_in_stream, f"{what} - expected {expected}", None
    if isinstance(e, UnexpectedEOF):
        return len(text), f"unexpected end of input - expected {_expected_words(set(e.expected))}", None
    assert isinstance(e, UnexpectedToken)
    tok = e.token
    pos = len(text) if tok.type == "$END" else tok.start_pos
    expected = set(e.expected)
    found = _found(tok)
    if tok.type == "RBRACE":
        found = "unbalanced '}'"
    elif not found.startswith("unknown"):
        found = "unexpected " + found
    message = f"{found} - expected {_expected_words(expected)}"
    prev_end = _end_of_previous_token(text, pos)
    if tok.type == "$END" and "RBRACE" in expected:
        return pos, message, _unclosed_brace(text)
    if prev_end and "STATE_SPACE" not in expected and "\n" in text[prev_end:pos]:
        # inside a statement, and the next token is on a later line: the statement most likely
        # ends early (a missing ';', a `.loc` short of numbers): say so where the line ends
        words = "';'" if "SEMI" in expected else _expected_words(expected)
        return prev_end, f"expected {words} at the end of the line, found {_found(tok)} on the next line", None
    return pos, message, None


def _end_of_previous_token(text: str, pos: int) -> int:
    """Where the last token before `pos` ends (white space and comments skipped)."""
    end = pos
    while True:
        end = len(text[:end].rstrip())
        if text.endswith("*/", 0, end) and text.rfind("/*", 0, end - 2) >= 0:
            end = text.rfind("/*", 0, end - 2)
            continue
        line_start = text.rfind("\n", 0, end) + 1
        comment = text.find("//", line_start, end)
        if comment < 0:
            return end
        end = comment


def _unclosed_brace(text: str) -> int | None:
    """Offset of the innermost '{' that is never closed (comments and strings skipped)."""
    stack = []
    for m in re.finditer(r'//[^\n]*|/\*[\s\S]*?\*/|"(?:[^"\\\n]|\\.)*"|[{}]', text):
        c = m.group()
        if c == "{":
            stack.append(m.start())
        elif c == "}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def explain_syntax_error(error: InputError, text: str, statements: bool = False,
                         line: int = 1, col: int = 1) -> InputError | None:
    """The grammar's account of the syntax error the hand parser reported as `error`: an
    InputError at the column where the grammar stops, or None when the grammar finds no error
    on that line (the hand parser's message then stands).  `line`/`col` place inline-asm text."""
    if error.message.startswith(_HAND_WORDS_KEPT):
        return None
    plain = _line_col(text)

    def locate(offset: int) -> tuple[int, int]:
        ln, c = plain(offset)
        return ln + line - 1, c + (col - 1 if ln == 1 else 0)

    begin = 0
    if not statements:  # the function the error is in (or the module text after the last one)
        at = _offset(text, error.loc.line, error.loc.col)
        starts = [m.start() for m in _FUNCTION_START.finditer(text, 0, at + 1)]
        begin = starts[-1] if starts else 0
    found = grammar_error(text, "statements" if statements else "module", begin, locate)
    if found is None:
        return None
    eln, ecol = locate(found[0])
    if eln != error.loc.line:
        return None
    message = found[1]
    inside = re.search(r"end of file inside function '[^']*'", error.message)
    if message.startswith("unexpected end of input"):
        where = inside.group() if inside else "end of input" if statements else "end of file"
        message = "unexpected " + where + message[len("unexpected end of input"):]
    return InputError(Loc(error.loc.path, eln, ecol), message)


def _offset(text: str, line: int, col: int) -> int:
    start = 0
    for _ in range(line - 1):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    return min(start + col - 1, len(text))


# -- the IR from the parse tree -------------------------------------------------------------------
def build_module(text: str, path: str, map_locations: bool = True) -> Module:
    """The IR of a PTX module, built from the grammar's parse tree (raises lark errors)."""
    tree = ptx_parser().parse(text, start="module")
    b = _Builder(text, path, False, 1, 1, map_locations)
    b.module_items(tree.children)
    b.finish_locations()
    return b.module


def build_statements(text: str, path: str, line: int = 1, col: int = 1) -> list:
    """The IR of function-body statements (an inline-asm template)."""
    tree = ptx_parser().parse(text, start="statements")
    b = _Builder(text, path, True, line, col, True)
    out: list = []
    b.function_body(tree.children, out, set())
    return out


def _tokens(tree: Tree, kind: str) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token) and c.type == kind]


def _names(tree: Tree) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token) and c.type in _NAME_TOKENS]


def _subtrees(tree: Tree, name: str) -> list[Tree]:
    return [c for c in tree.children if isinstance(c, Tree) and c.data == name]


class _Scope:
    """A function body being built: name scopes, labels, branch fix-ups."""

    def __init__(self, fn_regs: set):
        self.fn_regs = fn_regs
        self.names: list[dict] = [{}]  # innermost last; [0] is the function body
        self.ids: list[int] = [0]  # label scope ids, innermost last
        self.counter = 0
        self.nested_labels: dict[int, dict[str, str]] = {}
        self.branch_fixups: list = []
        self.branchtargets: dict[str, list[str]] = {}


class _Builder:
    def __init__(self, text, path, statements, line, col, map_locations):
        self.text = text
        self.path = path
        self.statements = statements
        self.line_off = line - 1
        self.col_off = col - 1
        self.map_locations = map_locations
        self.tag = f"{line}.{col}." if statements else ""
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.module = Module(path, "ptx", text=text)
        self.files: dict[int, str] = {}
        self.cur_loc = None
        self.frames: dict[tuple, tuple] = {}  # .loc (file, line, col) -> its inlining chain
        self.pending: list[Instr] = []
        self.mapped: list = []

    def pos(self, offset: int) -> tuple[int, int]:
        ln = bisect_right(self.line_starts, offset)
        col = offset - self.line_starts[ln - 1] + 1
        if ln == 1:
            col += self.col_off
        return ln + self.line_off, col

    # -- module ---------------------------------------------------------------------------------
    def module_items(self, items) -> None:
        start = None  # where the current linkage prefix began
        for item in items:
            if isinstance(item, Token):
                continue
            kind = item.data
            if kind == "linkage":
                start = item.meta.start_pos if start is None else start
                continue
            if kind == "version":
                parts = item.children[0].value.split(".")
                self.module.ptx_version = (int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1] else 0)
            elif kind == "target":
                if self.module.target is None:
                    self.module.target = parse_ptx_target(" ".join(t.value for t in _names(item)))
            elif kind == "file":
                self.file(item)
            elif kind == "loc":
                self.loc(item)
            elif kind in ("entry", "func"):
                self.function(item, item.meta.start_pos if start is None else start)
            elif kind == "var_decl":
                space = _SPACES[_tokens(item, "STATE_SPACE")[0].value]
                for name, _count in self.declarators(item):
                    self.module.state_spaces[name] = space
            start = None

    def file(self, item: Tree) -> None:
        raw = item.children[1].value[1:-1]
        try:
            path = raw.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in raw else raw
        except (UnicodeError, ValueError):
            path = raw
        self.files[int(item.children[0].value)] = path

    def loc(self, item: Tree) -> None:
        nums = [int(t.value) for t in _tokens(item, "INT")]
        fileno, line, col = nums[0], nums[1], nums[2] if len(nums) > 2 else 1
        inlined = _subtrees(item, "loc_inlined")
        key = (fileno, line, max(col, 1), "") if line else ()
        at = None
        if inlined:  # code inlined into this function: where it was called (parser.py does the same)
            nums = [int(t.value) for t in _tokens(inlined[0], "INT")]
            nums = nums[1:] if _tokens(inlined[0], "PLUS") else nums  # `function_name f+4`
            at = (nums[0], nums[1], max(nums[2] if len(nums) > 2 else 1, 1)) if nums[1] else None
            if key:
                key = key[:3] + (_names(inlined[0])[0].value,)
            elif at:
                key, at = (*at, ""), None
        if key:
            chain = ((key,) + self.frames.get(at, ((*at, ""),)))[:MAX_FRAMES] if at else (key,)
            self.frames[key[:3]] = chain
        if not key or not self.map_locations:
            self.cur_loc = None
        else:
            self.cur_loc = key
            self.mapped.append((len(self.pending), chain))

    def finish_locations(self) -> None:
        bounds = [m[0] for m in self.mapped[1:]] + [len(self.pending)]
        for (start, chain), end in zip(self.mapped, bounds):
            loc, frames = _placed(chain, self.files)
            if loc is not None:
                for ins in self.pending[start:end]:
                    ins.raw_loc, ins.loc, ins.frames = ins.loc, loc, frames

    def declarators(self, decl: Tree) -> list[tuple[str, int]]:
        out = []
        for d in _subtrees(decl, "declarator"):
            ranges = _subtrees(d, "reg_range")
            out.append((d.children[0].value, _int(ranges[0].children[0].value) if ranges else 0))
        return out

    # -- functions ------------------------------------------------------------------------------
    def params(self, plist: Tree) -> list[tuple[str, str, int]]:
        out = []
        for p in _subtrees(plist, "param"):
            ranges = _subtrees(p, "reg_range")
            count = _int(ranges[0].children[0].value) if ranges else 0
            out.append((_names(p)[0].value, _tokens(p, "PARAM_SPACE")[0].value, count))
        return out

    def function(self, item: Tree, start: int) -> None:
        name = _names(item)[0]
        lists = _subtrees(item, "param_list")
        rets = [self.params(pl) for pl in lists if pl.meta.start_pos < name.start_pos]
        params = [self.params(pl) for pl in lists if pl.meta.start_pos > name.start_pos]
        rets, params = (rets or [[]])[0], (params or [[]])[0]
        body = _subtrees(item, "body")
        if not body:
            return  # a prototype
        fn = Function(name.value, item.data == "entry", [q[0] for q in params], [q[0] for q in rets],
                      [], Loc(self.path, *self.pos(start)), _display_name(name.value))
        self.cur_loc = None
        self.frames = {}
        fn_regs: set = set()
        for q_name, space, count in params + rets:
            if space == ".reg":
                fn_regs.update(f"{q_name}{n}" for n in range(count)) if count else fn_regs.add(q_name)
        self.function_body(body[0].children, fn.body, fn_regs)
        self.module.functions.append(fn)

    def function_body(self, items, out: list, fn_regs: set) -> None:
        scope = _Scope(fn_regs)
        self.block(items, out, scope)
        if scope.branchtargets or scope.nested_labels or scope.branch_fixups:
            self.fix_branches(out, scope)

    def block(self, items, out: list, scope: _Scope) -> None:
        for item in items:
            if isinstance(item, Token):
                continue
            kind = item.data
            if kind == "instruction" or kind == "call":
                self.instruction(item, out, scope)
            elif kind == "label":
                name = item.children[0].value
                if len(scope.names) > 1:
                    sid = scope.ids[-1]
                    new = f"{name}${self.tag}{sid}"
                    scope.nested_labels.setdefault(sid, {})[name] = new
                    name = new
                out.append(Label(name, Loc(self.path, *self.pos(item.meta.start_pos))))
            elif kind == "var_decl":
                self.declare(item, scope)
            elif kind == "loc":
                self.loc(item)
            elif kind == "file":
                self.file(item)
            elif kind == "targets":
                names = _names(item)
                if _tokens(item, "TARGETS_KIND")[0].value == ".branchtargets":
                    scope.branchtargets[names[0].value] = [t.value for t in names[1:]]
            elif kind == "block":
                scope.counter += 1
                scope.names.append({})
                scope.ids.append(scope.counter)
                self.block(item.children, out, scope)
                scope.names.pop()
                scope.ids.pop()

    def declare(self, item: Tree, scope: _Scope) -> None:
        directive = _tokens(item, "STATE_SPACE")[0].value
        space = _SPACES.get(directive)
        names = scope.names[-1]
        for name, count in self.declarators(item):
            for nm in [f"{name}{n}" for n in range(count)] if count else [name]:
                if len(scope.names) == 1:
                    if directive == ".reg":
                        if nm[0] != "%":
                            scope.fn_regs.add(nm)
                        continue
                    names[nm] = Sym(nm)
                    new = nm
                else:
                    new = f"{nm}${self.tag}{scope.ids[-1]}"
                    names[nm] = Reg(new) if directive == ".reg" else Sym(new)
                if directive != ".reg" and space != "param" and not self.statements:
                    self.module.state_spaces.setdefault(new, space)

    def resolve(self, name: str, scope: _Scope, label_pos: bool):
        for names in reversed(scope.names):
            if name in names:
                return names[name]
        if name[0] == "%" or name in scope.fn_regs or name in ("WARP_SZ", "_"):
            return Reg(name)
        if self.statements and not label_pos:
            return Reg(name)
        return Sym(name)

    # -- instructions ---------------------------------------------------------------------------
    def instruction(self, item: Tree, out: list, scope: _Scope) -> None:
        start = item.meta.start_pos
        semi = _tokens(item, "SEMI")[0].start_pos
        guard = None
        for g in _subtrees(item, "guard"):
            reg = self.resolve(_names(g)[0].value, scope, False)
            if not isinstance(reg, Reg):
                raise InputError(Loc(self.path, *self.pos(g.meta.start_pos)), "guard is not a register")
            guard = (reg.name, bool(_tokens(g, "BANG")))
        if item.data == "call":
            opcode = _tokens(item, "CALL")[0].value
            base, label_ops, may_write = _opcode_info(opcode)
            rets = _subtrees(item, "call_returns")
            args = _subtrees(item, "call_args")
            dests = tuple(self.value(c, scope, False) for c in rets[0].children) if rets else ()
            callee = self.resolve(_names(item)[0].value, scope, True)
            srcs = (callee,) + (tuple(self.value(c, scope, False) for c in args[0].children) if args else ())
            negated: frozenset = frozenset()
        else:
            opcode = _tokens(item, "WORD")[0].value
            base, label_ops, may_write = _opcode_info(opcode)
            ops, neg, first_group = [], set(), 0
            for group_no, group in enumerate(_subtrees((_subtrees(item, "operands") or [Tree("x", [])])[0],
                                                       "operand_group")):
                for operand in _subtrees(group, "operand"):
                    if _tokens(operand, "BANG"):
                        neg.add(len(ops))
                    ops.append(self.value(operand.children[-1], scope, label_ops))
                if group_no == 0:
                    first_group = len(ops)
            if may_write and ops and first_group and not isinstance(ops[0], (Addr, Imm)):
                dests, srcs = tuple(ops[:first_group]), tuple(ops[first_group:])
                neg = {n - first_group for n in neg if n >= first_group}
            else:
                dests, srcs = (), tuple(ops)
            negated = frozenset(neg)
        ln, col = self.pos(start)
        eln, ecol = self.pos(semi)
        raw = self.text[start:semi]
        if "\n" in raw:
            raw = " ".join(" ".join(part.split("//", 1)[0].strip() for part in raw.split("\n")).split())
        ins = Instr(opcode, dests, srcs, Loc(self.path, ln, col, eln, ecol + 1), guard, None, raw, negated)
        out.append(ins)
        if self.cur_loc is not None:
            self.pending.append(ins)
        if label_ops and (len(scope.names) > 1 or base == "brx"):
            scope.branch_fixups.append((ins, tuple(scope.ids)))

    def value(self, v, scope: _Scope, label_pos: bool):
        if isinstance(v, Token):  # a bare name (call argument, vector element)
            return self.resolve(v.value, scope, False)
        kind = v.data
        if kind == "name_operand":
            base = self.resolve(v.children[0].value, scope, label_pos)
            if len(v.children) == 1:
                return base
            off = _int(v.children[2].value)
            return Addr(base, off if v.children[1].type == "PLUS" else -off)
        if kind == "immediate":
            t = v.children[-1]
            value = _int(t.value) if t.type == "INT" else _float(t.value)
            return Imm(-value if len(v.children) == 2 else value)
        if kind == "address":
            base, off = None, 0
            b = _subtrees(v, "address_base")[0].children
            if b[-1].type in _NAME_TOKENS:
                base = self.resolve(b[0].value, scope, False)
            else:
                off = -_int(b[-1].value) if len(b) == 2 else _int(b[-1].value)
            for o in _subtrees(v, "address_offset"):
                sign = (1 if o.children[0].type == "PLUS" else -1) * (-1 if len(o.children) == 3 else 1)
                off += sign * _int(o.children[-1].value)
            return Addr(base, off)
        if kind == "tex_address":
            return Addr(self.resolve(v.children[0].value, scope, False), 0)
        if kind == "vector":
            return Vec(tuple(self.value(c, scope, False) for c in v.children if not isinstance(c, Token)
                             or c.type not in ("LBRACE", "RBRACE")))
        raise ValueError(f"unexpected operand {kind}")

    def fix_branches(self, out: list, scope: _Scope) -> None:
        """Branch targets declared in nested scopes and `.branchtargets` tables (as parser.py)."""
        all_nested: dict[str, list[str]] = {}
        for names in scope.nested_labels.values():
            for old, new in names.items():
                all_nested.setdefault(old, []).append(new)
        top_labels = {x.name for x in out if isinstance(x, Label)}
        for ins, chain in scope.branch_fixups:
            new_srcs, changed = [], False
            for s in ins.srcs:
                if not isinstance(s, Sym):
                    new_srcs.append(s)
                    continue
                names = [s.name]
                if s.name in scope.branchtargets and ins.op == "brx":
                    names, changed = scope.branchtargets[s.name], True
                for nm in names:
                    res = nm
                    for sid in reversed(chain):
                        table = scope.nested_labels.get(sid)
                        if table and nm in table:
                            res = table[nm]
                            break
                    else:
                        if nm not in top_labels and len(all_nested.get(nm, ())) == 1:
                            res = all_nested[nm][0]
                    changed |= res != nm
                    new_srcs.append(Sym(res))
            if changed:
                ins.srcs = tuple(new_srcs)
