"""PTX -> warp IR.

A hand-written scanner and statement parser.  One compiled regular expression splits the
whole file into tokens (comments and white space are skipped inside the same match; a `.loc`
line is one token; `.section` blocks are skipped without being tokenized), and a small
parser walks the token list: module directives, function headers, declarations, and the hot
path -- one instruction per statement -- straight into `Instr` objects, without a parse tree.
A one-line instruction whose operands are all simple (registers, names, integers, `[base+off]`)
is a single token and is split with string methods (operand objects cached per function);
everything else goes through the general tokens.  A test checks that both paths build the
same IR.  Every problem with the input is an `InputError` with the line and column where it
was found; nothing here recurses, so nesting depth cannot exhaust the stack.

Why not lark: an LALR grammar for the instruction statements alone, with the transformer
passed to the `Lark` constructor (no tree materialised), took 2.1 s on the function bodies of
the 62k-line benchmark (bench/bench_ptx.py), where ptxas -O3 needs 1.25 s for the whole file
and this parser about 0.3 s including building the IR.  The module-level structure is a
handful of directives, so a second (lark) parser for it would only add import time (about
30 ms for lark) to every pre-commit run.  The grammar (ptx.lark, grammar.py) is the
specification this parser is tested against, and explains the syntax errors found here.
"""
from __future__ import annotations

import re
import struct
from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add
from typing import NamedTuple

from ...callsite import chosen_place, place_in_tree
from ...errors import InputError
from ...ir import Addr, Function, Imm, Instr, Label, Loc, Module, Reg, Sym, Vec
from ...targets import parse_ptx_target

class Token(NamedTuple):
    """Kinds: the token pattern's group names below (`loc` a whole `.loc` line, `directive`,
    `name`, `float`, `int`, `string`, `statement` a whole simple one-line instruction,
    `open_comment` an unterminated `/*`, `bad_char`, `end` of input); punctuation is its own
    kind (`;`, `{`, ...); `section` (made by the tokenizer loop) stands for the skipped body of
    a `.section`."""
    kind: str
    text: str
    offset: int  # into the text


_NAME = r"[A-Za-z_$][\w$]*(?:\.[\w$]+)*"
_INT = r"-?(?:0[xX][0-9a-fA-F]+|\d+)U?"
_FAST_OP = (rf"(?:0[fF][0-9a-fA-F]{{8}}|0[dD][0-9a-fA-F]{{16}}|{_INT}"
            rf"|%?{_NAME}(?:[ \t]*[+-][ \t]*\d+)?"
            rf"|\[[ \t]*(?:%?{_NAME}(?:[ \t]*[+-][ \t]*-?\d+)?|\d+)[ \t]*\])(?![\w$.])")
# the hot path: a whole one-line instruction with simple operands (registers, names, integers,
# addresses) is one `statement` token; anything else is left to the general tokens below
_FAST_OPS = r"[ \t]+[^;\n{}()!\"/:@<>=*]*"
# (a dotted opcode or at least one operand: `name;` is a declaration's last name, not `ret;`)
_FAST = (rf"(?P<statement>(?:@!?%?{_NAME}[ \t]+)?[A-Za-z][\w$]*"
         rf"(?:(?:(?:\.|::)[\w$]+)+(?:{_FAST_OPS})?|{_FAST_OPS})[ \t]*;)")
_GENERAL = r"""
      (?P<loc>\.loc(?![\w$.])[^\n]*)
     |(?P<directive>\.[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*)
     |(?P<name>[A-Za-z_$%][\w$]*(?:(?:\.|::)[\w$]+)*)
     |(?P<float>0[fF][0-9a-fA-F]{8}(?![\w$])|0[dD][0-9a-fA-F]{16}(?![\w$])|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)
     |(?P<int>0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+U?)
     |(?P<string>"(?:[^"\\\n]|\\.)*")
     |(?P<punct>[{}()\[\],;:|!@<>+\-=*])
     |(?P<open_comment>/\*)
     |(?P<end>\Z)
     |(?P<bad_char>[\s\S])
"""
_SKIP = r"(?:[ \t\r\n\f\v\ufeff]+|//[^\n]*|/\*[\s\S]*?\*/)*"


def _token_re(fast: bool):
    rx = re.compile(_SKIP + "(?:" + (_FAST + "|" if fast else "") + _GENERAL + ")", re.X | re.ASCII)
    kinds = [None] * (rx.groups + 1)
    for name, idx in rx.groupindex.items():
        kinds[idx] = name
    return rx, kinds


_TOKEN, _KINDS = _token_re(True)
_TOKEN_SLOW, _KINDS_SLOW = _token_re(False)
_FAST_OP_RE = re.compile(_FAST_OP, re.ASCII)



def _placed(chain: tuple, files: dict, known: _Frames | None = None) -> tuple:
    """(loc, frames) of a `.loc` chain: reported in the function's own code (the outermost
    call site) until the pipeline picks a frame in the linted tree; frames are (Loc, function_name
    label), innermost first, for inlined code only.  `known`: the frames made so far (thousands
    of chains share a few hundred places)."""
    if known is None:
        known = _Frames(files)
    frames = tuple(filter(None, map(known.__getitem__, chain)))
    if not frames:
        return None, ()
    return frames[-1][0], frames if len(frames) > 1 else ()


class _Frames(dict):
    """A `.loc` chain's element (file, line, col, function_name label) -> its frame (Loc, label),
    None when `files` does not name its file; made once each, their `Loc`s once per place."""

    def __init__(self, files: dict):
        super().__init__()
        self.files = files
        self.locs: dict[tuple, Loc] = {}

    def __missing__(self, element: tuple):
        f, line, col, function = element
        frame = None
        if f in self.files:
            loc = self.locs.get((f, line, col))
            if loc is None:
                loc = self.locs[f, line, col] = Loc(self.files[f], line, col)
            frame = (loc, function)
        self[element] = frame
        return frame


def _file_path(quoted: str) -> str:
    """The path of a `.file` directive's string (its escapes decoded when they can be)."""
    raw = quoted[1:-1]
    try:
        return raw.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in raw else raw
    except (UnicodeError, ValueError):
        return raw


def _file_table(text: str) -> dict[int, str]:
    """The `.file` table (nvcc writes it after the code), read ahead with one search of the
    text; the parser checks it against the one it reads (a `.file` in a comment differs)."""
    return {int(m[1]): _file_path(m[2]) for m in _FILE_AHEAD.finditer(text)}


def _section_tokens(text: str, pos: int):
    """`_SECTION_BODY.finditer(text, pos)`, found faster: its tokens start only at `{ } " /`, so
    the search jumps from one of those to the next (debug sections are megabytes of numbers)."""
    while True:
        stop = _SECTION_STOP.search(text, pos)
        if stop is None:
            return
        t = _SECTION_BODY.match(text, stop.start())
        if t is None:  # a `/` that starts no comment
            pos = stop.start() + 1
            continue
        yield t
        pos = t.end()


class _NotSimple(Exception):
    pass


class _Answers(dict):
    """`usable(path)` by path, asked once each without noting the probe (`note=False`): the
    parser notes them, in the order asked, once it knows its `.file` table was read right."""

    def __init__(self, usable):
        super().__init__()
        self.usable = usable

    def __missing__(self, path: str) -> bool:
        answer = self[path] = self.usable(path, note=False)
        return answer

    def note(self) -> None:
        for path in self:
            self.usable(path)


def _dests_and_srcs(ops: tuple, may_write: bool, first_group: int) -> tuple[tuple, tuple]:
    """An instruction's operands split: the first comma group is written, where the opcode may
    write and it is no address or number."""
    if may_write and ops and first_group and not isinstance(ops[0], (Addr, Imm)):
        return ops[:first_group], ops[first_group:]
    return (), ops


def _same_in_every_function(op) -> bool:
    """Whether an operand of a function scope is the same in every function scope that
    declares no `%` name: a number, or a `%` register (alone or as an address base; in a
    function scope a `%` name is a register unless declared there)."""
    if isinstance(op, Addr):
        op = op.base
        if op is None:
            return True
    return isinstance(op, Imm) or isinstance(op, Reg) and op.name[0] == "%"


_FAST_ADDR = re.compile(rf"\[[ \t]*(?:(%?{_NAME})|(\d+))(?:[ \t]*([+-])[ \t]*(-?\d+))?[ \t]*\]", re.ASCII)
_FAST_NAME_OFF = re.compile(rf"(%?{_NAME})[ \t]*([+-])[ \t]*(\d+)", re.ASCII)

_SECTION_HEAD = re.compile(r"[ \t]+[.\w$]+(?:[ \t]*,[^\n{]*)?(?:\s|//[^\n]*|/\*(?:[^*]|\*+[^*/])*\*+/)*(?=\{)")
_SECTION_BODY = re.compile(r'[{}]|"(?:[^"\\\n]|\\.)*"|"|//[^\n]*|/\*(?:[\s\S]*?\*/)?')
_SECTION_STOP = re.compile(r'[{}"/]')  # where a `_SECTION_BODY` token can start
_FILE_ARGS = re.compile(r'[ \t]+(\d+)[ \t]+("(?:[^"\\\n]|\\.)*")[^\n]*')
_FILE_AHEAD = re.compile(r"\.file" + _FILE_ARGS.pattern)
# `.loc` up to its last number: what follows on its line is the next statement
_LOC_ARGS = re.compile(r"[ \t]+(\d+)[ \t]+(\d+)(?:[ \t]+(\d+))?(?:[ \t]*,[ \t]*function_name[ \t]+([\w$.]+)"
                       r"(?:[ \t]*\+[ \t]*\d+)?[ \t]*,[ \t]*inlined_at[ \t]+(\d+)[ \t]+(\d+)(?:[ \t]+(\d+))?)?"
                       r"(?![\w$.])")

MAX_FRAMES = 64  # inlining depth kept per `.loc` (real chains are under 20)

_SPACES = {".global": "global", ".shared": "shared", ".const": "const", ".local": "local",
           ".param": "param", ".tex": "global", ".surf": "global", ".sampler": "global"}
_LINKAGE = frozenset({".visible", ".extern", ".weak", ".common"})
_HEADER_DIRECTIVES = frozenset({
    ".maxntid", ".reqntid", ".minnctapersm", ".maxnctapersm", ".maxnreg", ".noreturn",
    ".maxclusterrank", ".reqnctapercluster", ".explicitcluster", ".blocksareclusters",
    ".abi_preserve", ".abi_preserve_control", ".pragma"})
# opcodes whose first operand is read, not written
_NO_DEST = frozenset({
    "bar", "barrier", "bra", "brx", "ret", "exit", "trap", "brkpt", "membar", "fence",
    "nanosleep", "pmevent", "prefetch", "prefetchu", "griddepcontrol", "setmaxnreg", "st", "red",
    "sust", "sured", "stmatrix", "discard", "applypriority", "cp", "wgmma", "tcgen05",
    "multimem", "mbarrier", "cluster", "cudadebug"})
_HAS_DEST_PREFIX = ("bar.red", "barrier.red", "mbarrier.arrive", "mbarrier.test_wait",
                    "mbarrier.try_wait", "mbarrier.pending_count", "multimem.ld_reduce",
                    "wgmma.mma_async", "tcgen05.ld")
_LABEL_OPERANDS = frozenset({"bra", "brx", "call"})
_CLOSERS = frozenset({",", "(", "{", "[", "|", "+", "-", "!"})
_OPENERS_NEXT = frozenset({")", "}", "]", ",", "|", ";", "+"})
_STOPS = frozenset({"end", "open_comment", "bad_char"})  # the tokens end with one of these
_BROKEN = frozenset({"open_comment", "bad_char"})
_NUMBERS = frozenset({"int", "float"})
_BODY_OR_STOP = _STOPS | {"{", ";"}
_STATEMENT_BOUNDARY = frozenset({";", "{", "}", ":", "loc", "statement", "section"})  # kinds before a statement
_STATEMENT_START = _STOPS | {"directive", "@", ":", "loc", "statement"}  # kinds that end an operand list
_MAX_SHOW = 40
_EMPTY = frozenset()
_UNPLACED = ("not placed yet",)
_NOWHERE = (None, ())  # no `.loc` place: the PTX line
_OPCODE_INFO: dict[str, tuple] = {}


def _opcode_info(opcode: str) -> tuple[str, bool, bool]:
    """(base opcode, takes label operands, may write a destination), cached per opcode."""
    info = _OPCODE_INFO.get(opcode)
    if info is None:
        base = opcode.split(".", 1)[0]
        info = (base, base in _LABEL_OPERANDS,
                base not in _NO_DEST or opcode.startswith(_HAS_DEST_PREFIX))
        if len(_OPCODE_INFO) < 10000:
            _OPCODE_INFO[opcode] = info
    return info


def _show(text: str) -> str:
    text = text if len(text) <= _MAX_SHOW else text[:_MAX_SHOW] + "..."
    return repr(text)[1:-1] if text.isprintable() else repr(text)


def _int(text: str) -> int:
    if text[-1] == "U":
        text = text[:-1]
    if len(text) > 1 and text[0] == "0":
        c = text[1]
        if c in "xX":
            return int(text[2:], 16)
        if c in "bB":
            return int(text[2:], 2)
        if text.isdigit() and all(ch in "01234567" for ch in text):
            return int(text, 8)
    return int(text)


def _float(text: str) -> float:
    c = text[1:2]
    if c in ("f", "F"):
        return struct.unpack(">f", bytes.fromhex(text[2:]))[0]
    if c in ("d", "D"):
        return struct.unpack(">d", bytes.fromhex(text[2:]))[0]
    return float(text)


class _Parser:
    def __init__(self, text: str, path: str, statements_mode: bool = False,
                 line: int = 1, col: int = 1, map_locations: bool = True, fast: bool = True,
                 files: dict | None = None, usable=None):
        self.text = text
        self.path = path
        self.statements_mode = statements_mode
        self.line_off = line - 1
        self.col_off = col - 1
        self.map_locations = map_locations
        # suffix of names declared in nested `{ }` scopes; for inline-asm statements it includes
        # the statement's position so that several asm blocks of one function stay distinct
        self.scope_tag = f"{line}.{col}." if statements_mode else ""
        self.line_starts = [0]
        self.line_starts.extend(accumulate(map(add, map(len, text.split("\n")), repeat(1))))
        self.line_starts.pop()
        toks = []
        append = toks.append
        token_re, kinds = (_TOKEN, _KINDS) if fast else (_TOKEN_SLOW, _KINDS_SLOW)
        new = tuple.__new__  # Token(...) without its keyword handling: the hot loop
        pos = 0
        while True:
            for m in token_re.finditer(text, pos):
                idx = m.lastindex
                k = kinds[idx]
                if k == "punct":
                    v = m.group(idx)
                    append(new(Token, (v, v, m.start(idx))))
                    continue
                v = m.group(idx)
                if k == "statement" and toks and toks[-1].kind not in _STATEMENT_BOUNDARY:
                    # the rest of a statement that began on an earlier line (`mov.u32 %r1,\n
                    # [a + 8];`), not an instruction of its own: general tokens
                    self.general_tokens(m.start(idx), m.end(idx), append)
                    continue
                append(new(Token, (k, v, m.start(idx))))
                if k in _STOPS:
                    break
                if k == "directive" and v == ".section":
                    # debug sections are large and never analysed: find their end without
                    # tokenizing them (the parser sees one `section` token for the contents)
                    end = self.section_end(m.end(idx))
                    if end is not None:
                        append(Token("section", "", m.end(idx)))
                        pos = end
                        break
            else:
                break
            if toks[-1].kind in _STOPS:
                break
        if not toks or toks[-1].kind not in _STOPS:
            append(Token("end", "", len(text)))
        self.toks = toks
        self.i = 0
        self.files: dict[int, str] = {}
        self.cur_loc: tuple | None = None
        # the `.file` table read ahead (`_file_table`): each instruction gets its place from
        # the `.loc` above it as it is built (`cur_place`); without it, `finish_locations`
        self.known_files = files
        # where given, places are chosen as `callsite.place_in_tree` does (`_Answers`)
        self.usable = _Answers(usable) if usable is not None else None
        self.cur_place: tuple = _NOWHERE  # (loc or None, frames) of the current `.loc`
        self.cur_chain: tuple = ()  # the current `.loc` chain (placed by its first instruction)
        self.placed: dict[tuple, tuple] = {}  # `.loc` chain -> (loc, frames)
        self.known_frames = _Frames(files) if files is not None else None  # (`_placed`)
        self.loc_cache: dict[str, tuple] = {}
        self.frames: dict[tuple, tuple] = {}  # .loc (file, line, col) -> its inlining chain, innermost first
        self.fast_cache: dict[str, object] = {}  # operand text as written -> operand (function scope)
        # the same for operands that are the same in every function scope with no `%` name
        # declared in it: numbers and `%` registers (alone or as an address base)
        self.shared_ops: dict[str, object] = {}
        self.pending: list[Instr] = []  # instructions under a `.loc`, in order
        self.mapped: list[tuple[int, tuple]] = []  # (index into pending, (file, line, col))
        self.regcache: dict[str, Reg] = {}
        self.symcache: dict[str, Sym] = {}
        self.fn_name: str | None = None

    def general_tokens(self, start: int, end: int, append) -> None:
        """Append the general (not fast-path) tokens of text[start:end], without the `end`."""
        for m in _TOKEN_SLOW.finditer(self.text, start, end):
            idx = m.lastindex
            k = _KINDS_SLOW[idx]
            if k == "end":
                break
            v = m.group(idx)
            append(Token(v, v, m.start(idx)) if k == "punct" else Token(k, v, m.start(idx)))
            if k in _BROKEN:
                break

    def section_end(self, pos: int) -> int | None:
        """End of a `.section name { ... }` whose name starts at `pos`, or None when the
        section has no (well-formed) block -- then the ordinary tokens report the problem."""
        m = _SECTION_HEAD.match(self.text, pos)
        if not m:
            return None
        depth = 0
        for t in _section_tokens(self.text, m.end()):
            c = t.group()
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return t.end()
            elif c.startswith("/*") and not c.endswith("*/") or c == '"':
                return None
        return None

    # -- locations -------------------------------------------------------------------------
    def pos(self, p: int) -> tuple[int, int]:
        ln = bisect_right(self.line_starts, p)
        col = p - self.line_starts[ln - 1] + 1
        if ln == 1:
            col += self.col_off
        return ln + self.line_off, col

    def loc(self, p: int) -> Loc:
        ln, col = self.pos(p)
        return Loc(self.path, ln, col)

    def error(self, p: int, message: str) -> InputError:
        return InputError(self.loc(p), message)

    def tok_error(self, tok, expected: str) -> InputError:
        k, v, p = tok
        if k == "end":
            if self.fn_name is not None:
                return self.error(p, f"unexpected end of file inside function '{self.fn_name}': expected {expected}")
            return self.error(p, f"unexpected end of file: expected {expected}")
        if k == "open_comment":
            return self.error(p, "unterminated comment '/*'")
        if k == "bad_char":
            if v == '"':
                return self.error(p, "unterminated string")
            return self.error(p, f"unexpected character {v!r}")
        return self.error(p, f"expected {expected}, found '{_show(v)}'")

    def expect(self, kind: str, what: str):
        tok = self.toks[self.i]
        if tok.kind != kind:
            raise self.tok_error(tok, what)
        self.i += 1
        return tok

    def end_of_line(self, p: int) -> int:
        e = self.text.find("\n", p)
        return len(self.text) if e < 0 else e

    def skip_to(self, end: int) -> None:
        toks = self.toks
        i = self.i
        while toks[i].offset < end and toks[i].kind not in _STOPS:
            i += 1
        self.i = i

    def reg(self, name: str) -> Reg:
        r = self.regcache.get(name)
        if r is None:
            r = self.regcache[name] = Reg(name)
        return r

    def sym(self, name: str) -> Sym:
        s = self.symcache.get(name)
        if s is None:
            s = self.symcache[name] = Sym(name)
        return s

    def finish_locations(self) -> None:
        pending, mapped, files = self.pending, self.mapped, self.files
        if not pending:
            return
        bounds = [m[0] for m in mapped[1:]] + [len(pending)]
        cache: dict = {}
        known = _Frames(files)
        for (start, chain), end in zip(mapped, bounds):
            if start >= end:
                continue
            placed = cache.get(chain)
            if placed is None:
                placed = cache[chain] = _placed(chain, files, known)
            loc, frames = placed
            if loc is None:
                continue
            for n in range(start, end):
                ins = pending[n]
                ins.raw_loc = ins.loc
                ins.loc = loc
                ins.frames = frames

    # -- module ----------------------------------------------------------------------------
    def parse_module(self) -> Module:
        toks = self.toks
        if toks[0].kind == "end":
            raise self.error(0, "empty file: no PTX found")
        module = Module(self.path, "ptx", text=self.text)
        self.module = module
        while True:
            k, v, p = toks[self.i]
            if k == "end":
                break
            if k == "loc":
                self.loc_directive(p, v)
            elif k == "directive":
                self.module_directive(module, k, v, p)
            elif k == "@" and toks[self.i + 1].kind == "@":
                self.i += 1
                self.skip_to(self.end_of_line(p))
            elif k == "}":
                raise self.error(p, "unbalanced '}'")
            elif k == "{":
                raise self.error(p, "unbalanced '{': a block outside any function")
            elif k == ";":
                self.i += 1
            else:
                raise self.tok_error(toks[self.i], "a directive")
        self.finish_locations()
        return module

    def module_directive(self, module: Module, k, v, p) -> None:
        toks = self.toks
        if v == ".version":
            self.i += 1
            tk, tv, tp = toks[self.i]
            if tk not in _NUMBERS:
                raise self.tok_error(toks[self.i], "a version number after '.version'")
            parts = tv.split(".")
            try:
                module.ptx_version = (int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1] else 0)
            except ValueError:
                raise self.error(tp, f"bad PTX version '{_show(tv)}'") from None
            self.i += 1
        elif v == ".target":
            end = self.end_of_line(p)
            args = self.text[p + 7:end]
            cut = args.find("//")
            if cut >= 0:
                args = args[:cut]
            self.i += 1
            if toks[self.i].kind != "name":
                raise self.tok_error(toks[self.i], "a target name after '.target'")
            while True:
                self.expect("name", "a target name")
                if toks[self.i].kind != ",":
                    break
                self.i += 1
            if module.target is None:
                module.target = parse_ptx_target(args)
        elif v == ".address_size":
            self.i += 1
            self.expect("int", "a number after '.address_size'")
        elif v == ".file":
            self.file_directive(p)
        elif v == ".section":
            self.skip_section(p)
        elif v == ".pragma":
            self.i += 1
            while toks[self.i].kind == "string" or toks[self.i].kind == ",":
                self.i += 1
            self.expect(";", "';' after '.pragma'")
        elif v in _LINKAGE or v in (".entry", ".func") or v in _SPACES or v == ".alias":
            linkage = []
            while toks[self.i].kind == "directive" and toks[self.i].text in _LINKAGE:
                linkage.append(toks[self.i].text)
                self.i += 1
            k2, v2, p2 = toks[self.i]
            if k2 != "directive":
                raise self.tok_error(toks[self.i], "'.entry', '.func' or a variable declaration")
            if v2 == ".entry" or v2 == ".func":
                self.function(p, v2 == ".entry")
            elif v2 in _SPACES or v2.split(".")[1:2] and "." + v2.split(".")[1] in _SPACES:
                space = _SPACES.get(v2) or _SPACES["." + v2.split(".")[1]]
                for name in self.var_decl():
                    module.state_spaces[name] = space
            elif v2 == ".alias":
                self.i += 1
                while toks[self.i].kind != ";" and toks[self.i].kind not in _STOPS:
                    self.i += 1
                self.expect(";", "';' after '.alias'")
            else:
                raise self.error(p2, f"unknown directive '{_show(v2)}'")
        else:
            raise self.error(p, f"unknown directive '{_show(v)}'")

    def file_directive(self, p: int) -> None:
        end = self.end_of_line(p)
        m = _FILE_ARGS.match(self.text, p + 5, end)
        if not m:
            raise self.error(p, "expected '.file <number> \"<path>\"'")
        self.files[int(m[1])] = _file_path(m[2])
        self.i += 1
        self.skip_to(end)

    def loc_args(self, p: int, v: str) -> tuple:
        """`.loc file line col[, function_name f, inlined_at file line col]` (token text `v`) ->
        (key, its place, the call site, the call site's chain when none is known, where more on
        the line starts or 0, the chain of key alone), remembered by its text."""
        m = _LOC_ARGS.match(v, 4)
        if not m:
            raise self.error(p, "expected '.loc <file> <line> <column>'")
        line = int(m[2])
        key = (int(m[1]), line, max(int(m[3] or 1), 1), m[4] or "") if line else ()
        # code inlined into this function (often from a toolkit header): where it was called
        at = (int(m[5]), int(m[6]), max(int(m[7] or 1), 1)) if m[5] and int(m[6]) else None
        if at and not key:
            key, at = (*at, ""), None
        args = self.loc_cache[v] = (key, key[:3], at, ((*at, ""),) if at else None,
                                    (m.end() if v[m.end():].strip() else 0), (key,))
        return args

    def loc_directive(self, p: int, v: str) -> None:
        """A `.loc` line (token text `v`): `body` takes those with nothing more on the line
        itself, the same way."""
        self.i += 1
        key, place, at, outer, rest, alone = self.loc_cache.get(v) or self.loc_args(p, v)
        if key:
            # the call site is the latest `.loc` naming that place: chains nest one `.loc` per level
            chain = ((key,) + self.frames.get(at, outer))[:MAX_FRAMES] if at else alone
            self.frames[place] = chain
        if rest:  # more on the line (a comment, a statement): its tokens come next
            more: list = []
            self.general_tokens(p + rest, p + len(v), more.append)
            self.toks[self.i:self.i] = more
        if not key or not self.map_locations:
            self.cur_loc, self.cur_place = None, _NOWHERE
        elif self.known_files is not None:
            self.cur_chain, self.cur_place = chain, _UNPLACED
        else:
            # nvcc writes the `.file` table at the end: resolved in `finish_locations`
            self.cur_loc = key
            self.mapped.append((len(self.pending), chain))

    def place(self) -> tuple:
        """(loc, frames) of the instructions under the current `.loc` chain (the `.file` table
        read ahead), found for its first instruction; loc None: at their PTX line."""
        chain = self.cur_chain
        placed = self.placed.get(chain)
        if placed is None:
            loc, frames = _placed(chain, self.known_files, self.known_frames)
            if loc is not None and self.usable is not None:
                loc = chosen_place(loc, frames, self.usable.__getitem__)
            placed = self.placed[chain] = (loc, frames)
        self.cur_place = placed
        return placed

    def skip_section(self, p: int) -> None:
        toks = self.toks
        self.i += 1
        if toks[self.i].kind == "section":
            self.i += 1
            return
        while toks[self.i].kind not in _BODY_OR_STOP:
            self.i += 1
        if toks[self.i].kind == ";":
            self.i += 1
            return
        open_tok = self.expect("{", "'{' after '.section'")
        depth = 1
        i = self.i
        while depth:
            k = toks[i].kind
            if k == "{":
                depth += 1
            elif k == "}":
                depth -= 1
            elif k == "end":
                raise self.error(open_tok.offset, "unbalanced '{': '.section' is never closed")
            elif k in _BROKEN:
                self.i = i
                raise self.tok_error(toks[i], "section contents")
            i += 1
        self.i = i

    def var_decl(self) -> list[str]:
        """`.global .align 4 .b8 name[16] = {...}, other;` -> names (at self.i: the space)."""
        toks = self.toks
        self.i += 1
        names = []
        while True:
            k, v, p = toks[self.i]
            if k == "directive" or k == "int" or k == "(" or k == ")":
                self.i += 1
                continue
            if k != "name":
                raise self.tok_error(toks[self.i], "a variable name")
            break
        while True:
            k, v, p = self.expect("name", "a variable name")
            names.append(v)
            k = toks[self.i].kind
            if k == "<":
                self.i += 1
                self.expect("int", "a register count")
                self.expect(">", "'>'")
                k = toks[self.i].kind
            while k == "[":
                self.i += 1
                if toks[self.i].kind == "int":
                    self.i += 1
                self.expect("]", "']'")
                k = toks[self.i].kind
            self.skip_initialiser()
            k = toks[self.i].kind
            if k == ",":
                self.i += 1
                continue
            self.expect(";", "';' after the declaration")
            return names

    def skip_initialiser(self) -> None:
        """Step over `= {...}` up to the `,` or `;` that ends the declarator (the values of
        initialisers do not matter to the analysis)."""
        toks = self.toks
        if toks[self.i].kind != "=":
            return
        self.i += 1
        depth = 0
        while True:
            k = toks[self.i].kind
            if k in "{(":
                depth += 1
            elif k in "})":
                depth -= 1
                if depth < 0:
                    raise self.tok_error(toks[self.i], "an initialiser")
            elif (k == "," and depth == 0) or k == ";" or k in _STOPS or k == "directive":
                break
            self.i += 1

    # -- functions -------------------------------------------------------------------------
    def param_list(self) -> list[tuple[str, str, int]]:
        """`( .param .b32 a, .reg .u32 b )` -> [(name, space, count)] (self.i at '(')."""
        toks = self.toks
        self.expect("(", "'('")
        out = []
        if toks[self.i].kind == ")":
            self.i += 1
            return out
        while True:
            space = None
            while toks[self.i].kind in ("directive", "int"):
                if space is None and toks[self.i].kind == "directive":
                    space = toks[self.i].text
                self.i += 1
            k, name, p = self.expect("name", "a parameter name")
            count = 0
            if toks[self.i].kind == "<":
                self.i += 1
                count = _int(self.expect("int", "a register count")[1])
                self.expect(">", "'>'")
            while toks[self.i].kind == "[":
                self.i += 1
                if toks[self.i].kind == "int":
                    self.i += 1
                self.expect("]", "']'")
            out.append((name, space or ".param", count))
            k = toks[self.i].kind
            if k == ",":
                self.i += 1
                continue
            self.expect(")", "',' or ')' in the parameter list")
            return out

    def function(self, start: int, is_kernel: bool) -> None:
        toks = self.toks
        self.i += 1
        rets: list = []
        if toks[self.i].kind == "(":
            rets = self.param_list()
        k, name, p = self.expect("name", "a function name")
        params: list = []
        if toks[self.i].kind == "(":
            params = self.param_list()
        while toks[self.i].kind == "directive":
            d = toks[self.i].text
            if d not in _HEADER_DIRECTIVES:
                raise self.error(toks[self.i].offset, f"unknown directive '{_show(d)}'")
            self.i += 1
            while toks[self.i].kind in ("int", "string", ","):
                self.i += 1
            if d == ".pragma" and toks[self.i].kind == ";":
                self.i += 1
        k = toks[self.i].kind
        if k == ";":  # a prototype / .extern declaration: no body
            self.i += 1
            return
        if k != "{":
            raise self.tok_error(toks[self.i], f"'{{' or ';' after the header of '{name}'")
        fn = Function(name, is_kernel, [q[0] for q in params], [q[0] for q in rets], [], self.loc(start),
                      _display_name(name))
        self.fn_name = name
        self.cur_loc, self.cur_place = None, _NOWHERE
        self.frames = {}
        fn_regs = set()
        for q in params + rets:
            if q[1] == ".reg":
                self.declare_top(fn_regs, q[0], q[2])
        self.body(fn.body, fn_regs)
        self.fn_name = None
        self.module.functions.append(fn)

    @staticmethod
    def declare_top(regs: set, name: str, count: int) -> None:
        if count:
            regs.update(f"{name}{n}" for n in range(count))
        else:
            regs.add(name)

    # -- bodies ----------------------------------------------------------------------------
    def body(self, out: list, fn_regs: set) -> None:
        """Statements up to the '}' closing the block whose '{' is at self.i."""
        toks = self.toks
        text = self.text
        first_open = toks[self.i].offset
        self.i += 1
        self.fast_cache = self.shared_ops.copy()
        # scopes: list of (dict name -> operand, open position); index 0 is the function body
        scopes: list = [({}, first_open)]
        top = scopes[0][0]
        scope_counter = 0
        nested_labels: dict = {}  # scope id -> {name: new name}
        label_scope_ids: list = [0]
        branch_fixups: list = []
        branchtargets: dict[str, list[str]] = {}
        regcache = self.regcache
        statements = self.statements_mode
        loc_cache, frames, mapped, pending = self.loc_cache, self.frames, self.mapped, self.pending
        map_locations, known_files = self.map_locations, self.known_files
        i = self.i
        while True:
            k, v, p = toks[i]
            if k == "statement":
                try:
                    self.fast_instruction(v, p, out, scopes, fn_regs, statements, label_scope_ids,
                                          branch_fixups)
                except _NotSimple:
                    self.slow_instruction(v, p, out, scopes, fn_regs, statements, label_scope_ids,
                                          branch_fixups)
                i += 1
                continue
            if k == "name" or k == "@":
                if k == "name" and toks[i + 1].kind == ":":
                    # a label, or a `.branchtargets` / `.calltargets` / `.callprototype` declaration
                    nk, nv, np_ = toks[i + 2]
                    if nk == "directive" and nv in (".branchtargets", ".calltargets", ".callprototype"):
                        j = i + 3
                        names = []
                        depth = 0
                        while True:
                            tk = toks[j].kind
                            if tk == ";" and depth == 0:
                                break
                            if (tk in _STOPS or tk in ("statement", "{", "}")
                                    or tk == "directive" and nv != ".callprototype"):
                                self.i = j
                                raise self.tok_error(toks[j], f"';' after '{nv}'")
                            if tk == "(":
                                depth += 1
                            elif tk == ")":
                                depth -= 1
                            elif tk == "name":
                                names.append(toks[j].text)
                            j += 1
                        if nv == ".branchtargets":
                            branchtargets[v] = names
                        i = j + 1
                        continue
                    name = v
                    if len(scopes) > 1:
                        sid = label_scope_ids[-1]
                        name = f"{v}${self.scope_tag}{sid}"
                        nested_labels.setdefault(sid, {})[v] = name
                    out.append(Label(name, self.loc(p)))
                    i += 2
                    continue
                i = self.instruction(i, out, scopes, top, fn_regs, regcache, statements,
                                     label_scope_ids, branch_fixups, text)
                continue
            if k == "loc":
                key, place, at, outer, rest, alone = loc_cache.get(v) or self.loc_args(p, v)
                if rest:
                    self.i = i
                    self.loc_directive(p, v)
                    i = self.i
                    continue
                i += 1  # `loc_directive`, inline
                if key:
                    chain = ((key,) + frames.get(at, outer))[:MAX_FRAMES] if at else alone
                    frames[place] = chain
                    if map_locations:
                        if known_files is not None:
                            self.cur_chain, self.cur_place = chain, _UNPLACED
                        else:
                            self.cur_loc = key
                            mapped.append((len(pending), chain))
                        continue
                self.cur_loc, self.cur_place = None, _NOWHERE
                continue
            if k == "directive":
                if v == ".reg" or v in _SPACES:
                    self.i = i
                    space = _SPACES.get(v)
                    names = self.var_decl_ranges()
                    i = self.i
                    depth = len(scopes)
                    scope = scopes[-1][0]
                    if depth == 1 and v == ".reg" and all(name[0] == "%" for name, _ in names):
                        continue  # `%` registers: nothing to remember, no operand changes
                    for name, count in names:
                        expanded = [f"{name}{n}" for n in range(count)] if count else [name]
                        for nm in expanded:
                            if depth == 1:
                                if v == ".reg":
                                    if nm[0] != "%":
                                        fn_regs.add(nm)
                                else:
                                    scope[nm] = self.sym(nm)
                                    if space != "param" and not statements:
                                        self.module.state_spaces.setdefault(nm, space)
                            else:
                                new = f"{nm}${self.scope_tag}{label_scope_ids[-1]}"
                                scope[nm] = self.reg(new) if v == ".reg" else self.sym(new)
                                if v != ".reg" and space != "param" and not statements:
                                    self.module.state_spaces.setdefault(new, space)
                    if depth == 1:  # names of the function scope changed: its operands too
                        self.fast_cache = ({} if any(name[0] == "%" for name in top)
                                           else self.shared_ops.copy())
                    continue
                if v == ".pragma":
                    i += 1
                    while toks[i].kind in ("string", ","):
                        i += 1
                    if toks[i].kind != ";":
                        self.i = i
                        raise self.tok_error(toks[i], "';' after '.pragma'")
                    i += 1
                    continue
                if v == ".file":
                    self.i = i
                    self.file_directive(p)
                    i = self.i
                    continue
                if v == ".section":
                    self.i = i
                    self.skip_section(p)
                    i = self.i
                    continue
                raise self.error(p, f"unknown directive '{_show(v)}'")
            if k == "{":
                scope_counter += 1
                scopes.append(({}, p))
                label_scope_ids.append(scope_counter)
                i += 1
                continue
            if k == "}":
                if len(scopes) == 1:
                    if statements:
                        raise self.error(p, "unbalanced '}'")
                    i += 1
                    break
                scopes.pop()
                label_scope_ids.pop()
                i += 1
                continue
            if k == ";":
                i += 1
                continue
            if k == "end":
                if statements and len(scopes) == 1:
                    break
                open_p = scopes[-1][1]
                ln, col = self.pos(open_p)
                if self.fn_name is not None:
                    raise self.error(p, f"unexpected end of file inside function '{self.fn_name}' "
                                        f"(unbalanced '{{' at line {ln}, column {col})")
                raise self.error(p, f"unexpected end of input: unbalanced '{{' at line {ln}, column {col}")
            self.i = i
            raise self.tok_error(toks[i], "an instruction, label or directive")
        self.i = i
        if branchtargets or nested_labels or branch_fixups:
            self.fix_branches(out, branchtargets, nested_labels, branch_fixups)

    def fix_branches(self, out, branchtargets, nested_labels, branch_fixups) -> None:
        all_nested = {}
        for sid, names in nested_labels.items():
            for old, new in names.items():
                all_nested.setdefault(old, []).append(new)
        top_labels = {x.name for x in out if isinstance(x, Label)}
        for ins, chain in branch_fixups:
            new_srcs = []
            changed = False
            for s in ins.srcs:
                if isinstance(s, Sym):
                    names = [s.name]
                    if s.name in branchtargets and ins.op == "brx":
                        names = branchtargets[s.name]
                        changed = True
                    for nm in names:
                        res = nm
                        for sid in reversed(chain):
                            table = nested_labels.get(sid)
                            if table and nm in table:
                                res = table[nm]
                                break
                        else:
                            if nm not in top_labels and len(all_nested.get(nm, ())) == 1:
                                res = all_nested[nm][0]
                        changed |= res != nm
                        new_srcs.append(self.sym(res))
                else:
                    new_srcs.append(s)
            if changed:
                ins.srcs = tuple(new_srcs)

    def var_decl_ranges(self) -> list[tuple[str, int]]:
        """`.reg .b32 %r<5>, x;` -> [('%r', 5), ('x', 0)] (self.i at the space)."""
        toks = self.toks
        self.i += 1
        while toks[self.i].kind in ("directive", "int", "(", ")"):
            self.i += 1
        out = []
        while True:
            k, v, p = self.expect("name", "a variable name")
            count = 0
            if toks[self.i].kind == "<":
                self.i += 1
                count = _int(self.expect("int", "a register count")[1])
                self.expect(">", "'>'")
                if count > 1_000_000:
                    raise self.error(p, f"register range '{_show(v)}<{count}>' is too large")
            while toks[self.i].kind == "[":
                self.i += 1
                if toks[self.i].kind == "int":
                    self.i += 1
                self.expect("]", "']'")
            self.skip_initialiser()
            out.append((v, count))
            if toks[self.i].kind == ",":
                self.i += 1
                continue
            self.expect(";", "';' after the declaration")
            return out

    def instruction(self, i, out, scopes, top, fn_regs, regcache, statements,
                    label_scope_ids, branch_fixups, text) -> int:
        toks = self.toks
        start = toks[i].offset
        guard = None
        if toks[i].kind == "@":
            neg = toks[i + 1].kind == "!"
            j = i + 2 if neg else i + 1
            gk, gv, gp = toks[j]
            if gk != "name":
                self.i = j
                raise self.tok_error(toks[j], "a predicate register after '@'")
            g = self.resolve(gv, scopes, fn_regs, statements, False)
            if not isinstance(g, Reg):
                self.i = j
                raise self.error(gp, f"expected a predicate register after '@', found '{_show(gv)}'")
            guard = (g.name, neg)
            i = j + 1
        k, opcode, p = toks[i]
        if k != "name" or not opcode[0].isalpha():  # opcodes start with a letter (not `%r1`)
            self.i = i
            raise self.tok_error(toks[i], "an instruction opcode")
        base, label_ops, may_write = _opcode_info(opcode)
        ops, negated, first_group, j = self.operands(i + 1, scopes, fn_regs, statements, label_ops)
        semi = toks[j].offset
        raw = text[start:semi]
        if "\n" in raw:
            self.check_newlines(i, j)
        self.finish(opcode, base, label_ops, may_write, ops, negated, first_group, start, semi, raw,
                    guard, out, scopes, label_scope_ids, branch_fixups)
        return j + 1

    def finish(self, opcode, base, label_ops, may_write, ops, negated, first_group, start, semi,
               raw, guard, out, scopes, label_scope_ids, branch_fixups) -> None:
        ln = bisect_right(self.line_starts, start)
        col = start - self.line_starts[ln - 1] + 1
        if "\n" in raw:
            raw = " ".join(part.split("//", 1)[0].strip() for part in raw.split("\n"))
            raw = " ".join(raw.split())
            eln, ecol = self.pos(semi)
            if ln == 1:
                col += self.col_off
            ln += self.line_off
        else:
            if ln == 1:
                col += self.col_off
            ln += self.line_off
            eln, ecol = ln, col + (semi - start)
        if base == "call":
            dests, srcs = self.call_operands(ops, first_group, semi)
        else:
            dests, srcs = _dests_and_srcs(tuple(ops), may_write, first_group)
            if negated and dests:
                negated = frozenset(n - first_group for n in negated if n >= first_group)
        self.emit(opcode, dests, srcs, Loc(self.path, ln, col, eln, ecol + 1), guard, raw, negated or _EMPTY,
                  out, base, label_ops, scopes, label_scope_ids, branch_fixups)

    def emit(self, opcode, dests, srcs, raw_loc, guard, raw, negated, out, base, label_ops, scopes,
             label_scope_ids, branch_fixups) -> None:
        """The instruction joins the body (and the instructions under the current `.loc`), at
        its place when known (else `finish_locations` places it); its labels are resolved at
        the end of the function where a nested scope or `brx` may name them."""
        place = self.cur_place
        if place is _UNPLACED:
            place = self.place()
        loc, frames = place
        if loc is None:
            ins = Instr(opcode, dests, srcs, raw_loc, guard, None, raw, negated, False, frames)
        else:
            ins = Instr(opcode, dests, srcs, loc, guard, raw_loc, raw, negated, False, frames)
        out.append(ins)
        if self.cur_loc is not None:
            self.pending.append(ins)
        if label_ops and (len(scopes) > 1 or base == "brx"):
            branch_fixups.append((ins, tuple(label_scope_ids)))

    def fast_instruction(self, v, start, out, scopes, fn_regs, statements, label_scope_ids,
                         branch_fixups) -> None:
        """A `statement` token: a one-line instruction whose operands are all simple, built here
        from start to end (what `finish` does, for one line and no `!` operands)."""
        raw = v[:-1]
        if raw[0] == "@":
            guard, body = self.fast_guard(raw, start, scopes, fn_regs, statements)
        else:
            guard = None
            body = raw
        parts = body.split(None, 1)
        opcode = parts[0]
        info = _OPCODE_INFO.get(opcode)
        base, label_ops, may_write = info if info is not None else _opcode_info(opcode)
        if len(parts) == 1:
            ops: tuple = ()
            first_group = 0
        elif len(scopes) > 1 or statements:
            group_ops, first_group = self.fast_operand_groups(parts[1], start, scopes, fn_regs,
                                                              statements, label_ops)
            ops = tuple(group_ops)
        else:
            # function scope: operands by their text as written (` %r5`), remembered per function
            rest = parts[1]
            if "|" in rest:
                first_group = rest.split(",", 1)[0].count("|") + 1
                texts = rest.replace("|", ",").split(",")
            else:
                first_group = 1
                texts = rest.split(",")
            ops = tuple(map(self.fast_cache.get, texts))
            if not all(ops):
                ops = tuple([op or self.fast_operand(t, start, scopes, fn_regs, label_ops)
                             for op, t in zip(ops, texts)])
        if base == "call":
            self.finish(opcode, base, label_ops, may_write, ops, None, first_group, start,
                        start + len(raw), raw, guard, out, scopes, label_scope_ids, branch_fixups)
            return
        line_starts = self.line_starts
        ln = bisect_right(line_starts, start)
        col = start - line_starts[ln - 1] + 1
        if ln == 1:
            col += self.col_off
        ln += self.line_off
        dests, srcs = _dests_and_srcs(ops, may_write, first_group)
        self.emit(opcode, dests, srcs, Loc(self.path, ln, col, ln, col + len(raw) + 1), guard, raw, _EMPTY,
                  out, base, label_ops, scopes, label_scope_ids, branch_fixups)

    def fast_guard(self, raw, start, scopes, fn_regs, statements) -> tuple:
        """`@%p` / `@!%p` at the start of `raw` -> ((name, negated), the rest)."""
        g, body = raw.split(None, 1)
        neg = g[1] == "!"
        gname = g[2:] if neg else g[1:]
        r = self.resolve(gname, scopes, fn_regs, statements, False)
        if not isinstance(r, Reg):
            raise self.error(start + (2 if neg else 1),
                             f"expected a predicate register after '@', found '{_show(gname)}'")
        return (r.name, neg), body

    def fast_operand_groups(self, text, start, scopes, fn_regs, statements, label_ops):
        """Operands `a|b, c` -> (list, size of the first comma group), each operand resolved
        afresh (nested scopes, inline asm) or remembered by its text (function scope)."""
        cache = self.fast_cache if len(scopes) == 1 and not statements else None
        ops = []
        first_group = 0
        for item in text.split(","):
            for t in item.split("|") if "|" in item else (item,):
                t = t.strip()
                op = cache.get(t) if cache is not None else None
                if op is None:
                    op = self.simple_operand(t, start, scopes, fn_regs, statements, label_ops)
                    if cache is not None:
                        cache[t] = op
                ops.append(op)
            if not first_group:
                first_group = len(ops)
        return ops, first_group

    def fast_operand(self, text, start, scopes, fn_regs, label_ops):
        """An operand of the function scope by its text as written, remembered (its operand
        stays the same until a declaration of the function scope: `body` forgets them then)."""
        t = text.strip()
        op = self.fast_cache.get(t)
        if op is None:
            op = self.fast_cache[t] = self.simple_operand(t, start, scopes, fn_regs, False, label_ops)
        self.fast_cache[text] = op
        if _same_in_every_function(op):
            self.shared_ops[t] = self.shared_ops[text] = op
        return op

    def slow_instruction(self, v, start, out, scopes, fn_regs, statements, label_scope_ids,
                         branch_fixups) -> None:
        """A `statement` token whose operands are not all simple: tokenize it the general way."""
        sub: list = []
        self.general_tokens(start, start + len(v), sub.append)
        sub.append(Token("end", "", start + len(v)))
        saved = self.toks
        self.toks = sub
        try:
            self.instruction(0, out, scopes, scopes[0][0], fn_regs, self.regcache, statements,
                             label_scope_ids, branch_fixups, self.text)
        finally:
            self.toks = saved

    def simple_operand(self, t: str, start: int, scopes, fn_regs, statements, label_ops):
        if not _FAST_OP_RE.fullmatch(t):
            raise _NotSimple
        c = t[0]
        if c == "[":
            m = _FAST_ADDR.match(t)
            base = self.resolve(m[1], scopes, fn_regs, statements, False) if m[1] else None
            off = _int(m[2]) if m[2] else 0
            if m[3]:
                off += _int(m[4]) if m[3] == "+" else -_int(m[4])
            return Addr(base, off)
        if c == "-" or c.isdigit():
            if len(t) > 2 and t[1] in "fFdD" and c == "0":
                return Imm(_float(t))
            return Imm(-_int(t[1:]) if c == "-" else _int(t))
        if "+" in t or "-" in t:
            m = _FAST_NAME_OFF.fullmatch(t)
            base = self.resolve(m[1], scopes, fn_regs, statements, label_ops)
            return Addr(base, _int(m[3]) if m[2] == "+" else -_int(m[3]))
        return self.resolve(t, scopes, fn_regs, statements, label_ops)

    def missing_semicolon(self, j: int) -> None:
        k, v, p = self.toks[j]
        end = p + len(v)
        nk = self.toks[j + 1]
        if nk.kind == "end" and self.fn_name is not None:
            raise self.error(end, f"unexpected end of file inside function '{self.fn_name}': "
                                  f"expected ';' after instruction")
        if nk.kind in _BROKEN:
            raise self.tok_error(nk, "';'")
        raise self.error(end, "expected ';' after instruction")

    def check_newlines(self, i: int, j: int) -> None:
        """An instruction may continue on the next line only after an operator or a comma,
        or before a closing bracket; otherwise a ';' is missing."""
        toks = self.toks
        text = self.text
        for n in range(i, j):
            k, v, p = toks[n]
            nk, nv, np_ = toks[n + 1]
            if text.find("\n", p + len(v), np_) >= 0:
                if k in _CLOSERS or nk in _OPENERS_NEXT:
                    continue
                if n == i and (nk in "[{(" or k == "name" and v.startswith("call")):
                    continue  # opcode, then the operands on the next line (nvcc -G: `call.uni`)
                raise self.error(p + len(v), "expected ';' after instruction")

    def resolve(self, name: str, scopes, fn_regs, statements, label_pos: bool):
        if len(scopes) > 1:
            for scope, _ in reversed(scopes):
                r = scope.get(name)
                if r is not None:
                    return r
        else:
            r = scopes[0][0].get(name)
            if r is not None:
                return r
        if name[0] == "%" or name in fn_regs or name == "WARP_SZ" or name == "_":
            r = self.regcache.get(name)
            if r is None:
                r = self.regcache[name] = Reg(name)
            return r
        if statements and not label_pos:
            return self.reg(name)
        return self.sym(name)

    def operands(self, n, scopes, fn_regs, statements, label_ops):
        """Operands from toks[n] up to the ';' -> (list, negated indices, size of the first
        comma group, index of the ';')."""
        toks = self.toks
        ops: list = []
        negated = None
        first_group = -1
        regcache = self.regcache
        nested = len(scopes) > 1
        top = scopes[0][0]
        k, v, p = toks[n]
        if k == ";":
            return ops, None, 0, n
        while True:
            neg = False
            if k == "!":
                neg = True
                n += 1
                k, v, p = toks[n]
            if k == "name":
                if nested or v in top or v[0] != "%":
                    op = self.resolve(v, scopes, fn_regs, statements, label_ops)
                else:
                    op = regcache.get(v)
                    if op is None:
                        op = regcache[v] = Reg(v)
                n += 1
                k2 = toks[n].kind
                if (k2 == "+" or k2 == "-") and toks[n + 1].kind == "int":
                    off = self.number(toks[n + 1].text, toks[n + 1].offset)
                    op = Addr(op, off if k2 == "+" else -off)
                    n += 2
            elif k == "int":
                op = Imm(self.number(v, p))
                n += 1
            elif k == "[":
                op, n = self.address(n + 1, scopes, fn_regs, statements)
            elif k == "float":
                op = Imm(_float(v))
                n += 1
            elif k == "-" and toks[n + 1].kind in _NUMBERS:
                t = toks[n + 1]
                op = Imm(-(self.number(t.text, t.offset) if t.kind == "int" else _float(t.text)))
                n += 2
            elif k == "{" or k == "(":
                op, n = self.group(n, scopes, fn_regs, statements)
            else:
                self.operand_error(n)
            if neg:
                if negated is None:
                    negated = set()
                negated.add(len(ops))
            ops.append(op)
            k, v, p = toks[n]
            if k == ",":
                if first_group < 0:
                    first_group = len(ops)
                n += 1
                k, v, p = toks[n]
                if k == ";":
                    raise self.tok_error(toks[n], "an operand after ','")
                continue
            if k == ";":
                if first_group < 0:
                    first_group = len(ops)
                return ops, (frozenset(negated) if negated else None), first_group, n
            if k == "|":
                n += 1
                k, v, p = toks[n]
                continue
            self.operand_error(n, after=True)

    def operand_error(self, n: int, after: bool = False):
        toks = self.toks
        k, v, p = toks[n]
        prev = toks[n - 1]
        if k in _STATEMENT_START or k == "}" or k == "{" and after or (
                self.text.find("\n", prev[2] + len(prev[1]), p) >= 0 and after):
            self.missing_semicolon(n - 1)
        if after:
            raise self.tok_error(toks[n], "',' or ';' after an operand")
        raise self.tok_error(toks[n], "an operand")

    def group(self, n, scopes, fn_regs, statements):
        """`{a, b}` (a vector) or `(a, b)` (call arguments / returns) at toks[n]."""
        toks = self.toks
        close = "}" if toks[n].kind == "{" else ")"
        items = []
        n += 1
        if close == ")" and toks[n].kind == ")":
            return _Group(items), n + 1
        while True:
            tk, tv, tp = toks[n]
            if tk == "name":
                items.append(self.resolve(tv, scopes, fn_regs, statements, False))
                n += 1
            elif tk in _NUMBERS:
                items.append(Imm(self.number(tv, tp) if tk == "int" else _float(tv)))
                n += 1
            elif tk == "-" and toks[n + 1].kind in _NUMBERS:
                t = toks[n + 1]
                items.append(Imm(-(self.number(t.text, t.offset) if t.kind == "int" else _float(t.text))))
                n += 2
            elif tk == "[" and close == ")":
                a, n = self.address(n + 1, scopes, fn_regs, statements)
                items.append(a)
            else:
                if tk in _STATEMENT_START or tk == ";":
                    self.missing_semicolon(n - 1)
                raise self.tok_error(toks[n], "a vector element" if close == "}" else "a call argument")
            tk = toks[n].kind
            if tk == ",":
                n += 1
                continue
            if tk == close:
                n += 1
                break
            if tk in _STATEMENT_START or tk == ";":
                self.missing_semicolon(n - 1)
            raise self.tok_error(toks[n], f"',' or '{close}'")
        return (Vec(tuple(items)) if close == "}" else _Group(items)), n

    def number(self, v: str, p: int) -> int:
        try:
            return _int(v)
        except ValueError:
            raise self.error(p, f"bad number '{_show(v)}'") from None

    def address(self, n, scopes, fn_regs, statements):
        toks = self.toks
        base = None
        off = 0
        k, v, p = toks[n]
        if k == "name":
            base = self.resolve(v, scopes, fn_regs, statements, False)
            n += 1
        elif k == "int":
            off = self.number(v, p)
            n += 1
        elif k == "-" and toks[n + 1].kind == "int":
            off = -self.number(toks[n + 1].text, toks[n + 1].offset)
            n += 2
        else:
            raise self.tok_error(toks[n], "an address")
        if toks[n].kind == "," and base is not None:
            # texture / surface operand `[tex, {x, y}]`, `[tex, sampler, {x}]`: the handle
            depth = 0
            while True:
                k = toks[n].kind
                if k in "{(":
                    depth += 1
                elif k in "})":
                    depth -= 1
                elif k == "]" and depth <= 0:
                    return Addr(base, 0), n + 1
                elif k in _STATEMENT_START or k == ";" or k == "[":
                    break
                n += 1
        while toks[n].kind in "+-":
            sign = 1 if toks[n].kind == "+" else -1
            n += 1
            if toks[n].kind == "-":
                sign = -sign
                n += 1
            if toks[n].kind != "int":
                raise self.tok_error(toks[n], "an address offset")
            off += sign * self.number(toks[n].text, toks[n].offset)
            n += 1
        if toks[n].kind != "]":
            if toks[n].kind in _STATEMENT_START or toks[n].kind == ";":
                self.missing_semicolon(n - 1) if toks[n].kind != ";" else None
            raise self.tok_error(toks[n], "']' after the address")
        return Addr(base, off), n + 1

    def call_operands(self, ops, first_group, semi: int):
        """call [(rets),] callee [, (args)] [, proto | targets]"""
        rets: tuple = ()
        rest = list(ops)
        if rest and isinstance(rest[0], _Group):
            rets = tuple(rest.pop(0).items)
        if not rest or isinstance(rest[0], _Group):
            raise self.error(semi, "call without a callee")
        callee = rest.pop(0)
        args: tuple = ()
        if rest and isinstance(rest[0], _Group):
            args = tuple(rest.pop(0).items)
        return rets, (callee,) + args


def _display_name(name: str) -> str:
    if not name.startswith("_Z"):
        return ""
    from .demangle import demangle
    try:
        return demangle(name)
    except (IndexError, ValueError, RecursionError):
        return ""


class _Group:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = items


def _explained(error: InputError, text: str, statements: bool = False, line: int = 1,
               col: int = 1) -> InputError:
    """The syntax error as the PTX grammar (ptx.lark) explains it, when it does: what was
    expected at the exact column.  lark is imported here only, so valid input never pays for it."""
    try:
        from .grammar import explain_syntax_error
        return explain_syntax_error(error, text, statements, line, col) or error
    except (ImportError, RecursionError):  # no lark, or too deep for it: the hand parser's message stands
        return error


def parse_module(text: str, path: str, map_locations: bool = True, fast: bool = True, usable=None) -> Module:
    """A PTX module; `usable(path, note=True)`: see `parse_ptx`."""
    files = _file_table(text) if fast and map_locations else None
    p = _Parser(text, path, map_locations=map_locations, fast=fast, files=files, usable=usable)
    try:
        module = p.parse_module()
        if files is not None and p.files != files:  # read ahead wrongly: placed the long way
            files = None
            p = _Parser(text, path, map_locations=map_locations, fast=fast)
            module = p.parse_module()
    except InputError as e:
        raise _explained(e, text) from None
    except RecursionError:
        raise InputError(Loc(path, 1, 1), "input nested too deeply to parse") from None
    if usable is not None and files is None:
        place_in_tree(module, usable)
    elif usable is not None:
        p.usable.note()
    return module


def parse_statements(text: str, path: str, line: int = 1, col: int = 1, fast: bool = True) -> list:
    p = _Parser(text, path, statements_mode=True, line=line, col=col, fast=fast)
    out: list = []
    try:
        p.toks.insert(0, Token("{", "{", 0))  # a synthetic outer block, closed by the end of input
        p.body(out, set())
        tok = p.toks[p.i] if p.i < len(p.toks) else p.toks[-1]
        if tok.kind != "end":
            raise p.tok_error(tok, "end of input")
        return out
    except InputError as e:
        raise _explained(e, text, True, line, col) from None
    except RecursionError:
        raise InputError(Loc(path, line, col), "input nested too deeply to parse") from None
