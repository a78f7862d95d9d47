"""pycparser's lexer, its work on each line looked up by the line's text.

The front end feeds pycparser one token per line (frontend._Parser), so the same few thousand
line texts (`(`, `i`, `__shfl_sync`, ...) are lexed again in every item.  pycparser's lexer is
context-free within a line: what it makes of a line alone is what it makes of it in the text
(the line and column aside), except for the name lookups and scope callbacks, which this lexer
still makes at the moment pycparser's would (a token is handed over only when the parser asks
for it: whether a name is a type name depends on the declarations parsed so far).  A text with
a line the lexer reports an error on, or with a `#` (directives read the next line), is lexed
by pycparser's own code from its start."""
from __future__ import annotations

import inspect
import re
import threading

from pycparser.c_lexer import CLexer

from ...memo import remember

# pycparser's lexer comes in three forms: a PLY lexer (pycparser 2: its own lexer throughout);
# a hand-written one that calls back for type names and braces (3.0, tokens `_Token`); and one
# that leaves both to the parser (later 3.x, tokens `Token`, with their file name).
try:
    from pycparser.c_lexer import _Token as Token
except ImportError:
    try:
        from pycparser.c_lexer import Token
    except ImportError:
        Token = None
CALLBACKS = "on_lbrace_func" in inspect.signature(CLexer.__init__).parameters

_ATTRIBUTE = re.compile(r"\[\s*\[")
MAX_LINES = 20_000  # distinct line texts remembered (then afresh)
MAX_LINE_CHARS = 200  # longer lines (the typedef line) are not remembered whole: their words are
_HOLDS_BLANKS = re.compile(r"[\"'/\\#]")  # a literal, comment or directive: a token may hold a blank


class _LexError(Exception):
    pass


def _raise(msg, line, column):
    raise _LexError(msg)


def _nothing():
    pass


def _not_a_type(name):
    return False


_SCRATCH = threading.local()  # each thread's lexer of lines alone (the language server lints on its own)
_LINES: dict[str, tuple | None] = {}  # line text -> ((type, value, column), ...), None: lexed by pycparser


def line_tokens(line: str) -> tuple | None:
    """What pycparser's lexer makes of `line` alone, names as `ID` (the type lookup is left to the
    moment of use); None where it reports an error or the line has a `#`."""
    if "#" in line:
        return None
    lexer = getattr(_SCRATCH, "lexer", None)
    if lexer is None:
        lexer = _SCRATCH.lexer = CLexer(error_func=_raise, on_lbrace_func=_nothing, on_rbrace_func=_nothing,
                                        type_lookup_func=_not_a_type) if CALLBACKS else CLexer(error_func=_raise)
    lexer.input(line)
    out = []
    try:
        while (tok := lexer.token()) is not None:
            out.append((tok.type, tok.value, tok.column))
    except _LexError:
        return None
    return tuple(out)


def _rows(text: str) -> list | None:
    """(type, value, line, column) of every token of `text`, or None when a line must be lexed
    by pycparser's own code."""
    rows = []
    append = rows.append
    table = _LINES
    for lineno, line in enumerate(text.split("\n"), 1):
        toks = table.get(line, False)
        if toks is False:
            toks = _line_rows(line)
        if toks is None:
            return None
        for kind, value, col in toks:
            append((kind, value, lineno, col))
    return rows


def _line_rows(line: str) -> tuple | None:
    """line_tokens(line), remembered by the line's text; a long line where no token can hold a
    blank is put together from its words' rows (no token spans a blank there)."""
    if len(line) <= MAX_LINE_CHARS:
        return remember(_LINES, line, line_tokens(line), MAX_LINES)
    if " " not in line or _HOLDS_BLANKS.search(line):
        return line_tokens(line)
    out = []
    start = 0  # the word's offset in the line
    for word in line.split(" "):
        if word:
            toks = _LINES.get(word, False)
            if toks is False:
                toks = _line_rows(word)
            if toks is None:
                return None
            out += [(kind, value, col + start) for kind, value, col in toks]
        start += len(word) + 1
    return tuple(out)


def lexer_class() -> type[CLexer]:
    """The lexer class for pycparser's CParser: this one where pycparser's tokens are known."""
    return TableLexer if Token is not None else CLexer


class TableLexer(CLexer):
    """A CLexer (pycparser's parser takes its class) whose tokens come from the table by line."""

    def input(self, text: str, filename: str = "") -> None:
        super().input(text, filename)
        # a later pycparser 3.x lexes an attribute `[[ .. ]]` as a unit that may span lines
        self._rows = None if not CALLBACKS and _ATTRIBUTE.search(text) else _rows(text)
        self._next = 0
        self._last_line = text.count("\n") + 1

    def token(self):
        rows = self._rows
        if rows is None:
            return super().token()
        i = self._next
        if i == len(rows):
            self._lineno = self._last_line  # pycparser's lexer has read every line then
            return None
        self._next = i + 1
        kind, value, line, col = rows[i]
        self._lineno = line
        if not CALLBACKS:  # the parser looks names up and opens scopes itself
            return Token(kind, value, line, col, self.filename)
        if kind == "ID":
            if self.type_lookup_func(value):
                kind = "TYPEID"
        elif kind == "LBRACE":
            self.on_lbrace_func()
        elif kind == "RBRACE":
            self.on_rbrace_func()
        return Token(kind, value, line, col)
