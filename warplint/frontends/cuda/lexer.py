"""Tokens of CUDA-C source with their exact original positions."""
from __future__ import annotations

import re

from ...memo import TextMemo

# The most frequent tokens are tried first: a name that is not the prefix of a literal (`u8"s"`,
# `L'c'`), an operator that does not start a number or a comment (`.5`, `//`, `/*`).
_TOKEN = re.compile(r"""[ \t\f\v]*(?:  # blanks before a token: part of its match, not one of their own
 (?P<id>(?!(?:u8|u|U|L)(?:"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))[A-Za-z_$][A-Za-z0-9_$]*)
|(?P<op>(?!\.[0-9]|/[/*])(?:\.\.\.|<<=|>>=|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\^=|\|=|\#\#|[-+*/%=<>!&|^~?:;,.()\[\]{}\#]))
|(?P<ws>(?:[ \t\f\v]|\r(?=\n))+|\\\r?\n)
|(?P<nl>\n|\r)
|(?P<lc>//(?:[^\n\r\\]|\r(?=\n)|\\\r?\n|\\)*)
|(?P<bc>/\*.*?\*/)
|(?P<open>/\*)
|(?P<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
|(?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
|(?P<num>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.]|'(?=[0-9A-Za-z]))*)
|(?P<other>.)
)""", re.X | re.S)


class Tok:
    __slots__ = ("kind", "text", "path", "line", "col", "hide", "bol")

    def __init__(self, kind, text, path, line, col, hide=frozenset(), bol=False):
        self.kind = kind  # id num str chr op other nl
        self.text = text
        self.path = path
        self.line = line
        self.col = col
        self.hide = hide
        self.bol = bol  # first token on its line

    def copy(self, **kw):
        t = Tok(self.kind, self.text, self.path, self.line, self.col, self.hide, self.bol)
        for k, v in kw.items():
            setattr(t, k, v)
        return t

    def named(self, text: str) -> "Tok":
        """A name token `text` where this one stands (a name the C++ layer or the rewriter
        makes, such as a mangled method name, is a name whatever token it replaces: `~`)."""
        return self.copy(kind="id", text=text)

    def __repr__(self):
        return f"Tok({self.kind},{self.text!r},{self.line}:{self.col})"


def tokenize(text: str, path: str) -> list[Tok]:
    """All tokens including `nl` tokens (not for escaped newlines); comments dropped.

    Lines are counted at `\n` only (the one line model of the reports and the fixer); a bare
    `\r` still ends a `//` comment and a directive, as it does for a compiler.  A leading
    byte order mark is skipped (it counts as column 1).  An unterminated `/*` comments out the
    rest of the text and becomes the last token, of kind `open`.  Fresh tokens on every call
    (callers change lists and tokens); a file's rows are remembered by its text (`TOKENIZED`)."""
    none = frozenset()
    return [Tok(kind, val, path, line, col, none, bol) for kind, val, line, col, bol in lined_rows(text)[0]]


def lined_rows(text: str) -> tuple[list[tuple], list[tuple[int, int]]]:
    """The rows of `tokenize(text, ...)` (kind, text, line, column, first on its line), and the
    (start, stop) of each line's rows, its `nl` left out, for the lines with a token."""
    entry = TOKENIZED.get(text) if len(text) >= MEMO_MIN_CHARS else None
    if entry is None:
        rows = _rows(text)
        entry = rows, _line_spans(rows)
        if len(text) >= MEMO_MIN_CHARS:
            TOKENIZED.put(text, entry, len(text))
    return entry


def make_toks(rows, path: str) -> list[Tok]:
    """Fresh tokens of `rows` in `path`, the `nl` rows left out."""
    none = frozenset()
    return [Tok(kind, val, path, line, col, none, bol) for kind, val, line, col, bol in rows if kind != "nl"]


# A header is tokenized once per file including it and per target text: its rows are kept.
TOKENIZED = TextMemo(max_chars=2_000_000)  # about 55 MB of rows and line spans
MEMO_MIN_CHARS = 2_000  # files, not macro values or pasted tokens


def _line_spans(rows) -> list[tuple[int, int]]:
    ends = [i for i, row in enumerate(rows) if row[0] == "nl"]
    ends.append(len(rows))
    return [(start, stop) for start, stop in zip([0] + [i + 1 for i in ends], ends) if stop > start]


def _rows(text: str) -> list[tuple]:
    """(kind, text, line, column, first on its line) of each token of `text` (see `tokenize`)."""
    out: list[tuple] = []
    line = 1
    line_start = 0
    bol = True
    append = out.append
    for m in _TOKEN.finditer(text, 1 if text.startswith("\ufeff") else 0):
        kind = m.lastgroup
        s = m.start(kind)
        if kind not in _LINE_KINDS:
            append((kind, m.group(kind), line, s - line_start + 1, bol))
            if kind == "open":
                break
            bol = False
            continue
        val = m.group(kind)
        if kind == "nl":
            append(("nl", val, line, s - line_start + 1, False))
            if val == "\n":
                line += 1
                line_start = m.end()
            bol = True
            continue
        n = val.count("\n")  # blanks and comments
        if n:
            line += n
            line_start = s + val.rfind("\n") + 1
    return out


_LINE_KINDS = frozenset(("nl", "ws", "lc", "bc"))  # a line's end, or what may hold one and is dropped


MAX_QUOTE = 40  # characters of source text a note may quote


def closing(toks, i: int, open_: str, close: str) -> int | None:
    """Index of the token that closes toks[i] (== open_), or None when the text ends first."""
    depth = 0
    for j in range(i, len(toks)):
        x = toks[j].text
        if x == open_:
            depth += 1
        elif x == close:
            depth -= 1
            if depth == 0:
                return j
    return None


def brief(text: str) -> str:
    """A name as a note may quote it: at most MAX_QUOTE characters."""
    return text if len(text) <= MAX_QUOTE else text[:MAX_QUOTE] + "..."


def quotable(text: str, limit: int = MAX_QUOTE) -> bool:
    """May a note quote this source text?  Short, and nothing a terminal would act on."""
    return len(text) <= limit and text.isprintable()
