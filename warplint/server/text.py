"""Positions between warplint and an LSP client, in one document's text.

warplint counts 1-based lines that end at `\\n` only and 1-based columns in code points
(`sources.py`); LSP counts 0-based lines that end at `\\n`, `\\r\\n` or `\\r` and 0-based
characters in the code units of the negotiated position encoding (UTF-16 unless the client
asks for UTF-8 or UTF-32).  Both sides meet at offsets into the text.
"""
from __future__ import annotations

import bisect
import re

_LSP_BREAK = re.compile(r"\r\n|\r|\n")


def units(s: str, encoding: str) -> int:
    """Length of `s` in code units of a position encoding ("utf-8", "utf-16", "utf-32")."""
    if encoding == "utf-32" or s.isascii():
        return len(s)
    if encoding == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)


def _code_points(s: str, n_units: int, encoding: str) -> int:
    """How many code points of `s` the first `n_units` code units cover (clamped to `s`)."""
    if encoding == "utf-32" or s.isascii():
        return min(n_units, len(s))
    used = 0
    for i, c in enumerate(s):
        if used >= n_units:
            return i
        used += units(c, encoding)
    return len(s)


class LineMap:
    def __init__(self, text: str, encoding: str = "utf-16"):
        self.text, self.encoding = text, encoding
        self.wl_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.lsp_starts = [0] + [m.end() for m in _LSP_BREAK.finditer(text)]

    # -- warplint (line, col) <-> offset ---------------------------------------------------------

    def offset(self, line: int, col: int) -> int:
        """The offset of a warplint position, clamped to its line (and the text)."""
        if line < 1:
            return 0
        if line > len(self.wl_starts):
            return len(self.text)
        end = self.wl_starts[line] - 1 if line < len(self.wl_starts) else len(self.text)
        return min(self.wl_starts[line - 1] + max(col, 1) - 1, end)

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.wl_starts, offset)
        return line, offset - self.wl_starts[line - 1] + 1

    # -- LSP (line, character) <-> offset --------------------------------------------------------

    def _lsp_line(self, i: int) -> str:
        """LSP line `i` without its line break."""
        start = self.lsp_starts[i]
        end = self.lsp_starts[i + 1] if i + 1 < len(self.lsp_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def position(self, offset: int) -> tuple[int, int]:
        """The LSP (line, character) of an offset."""
        i = bisect.bisect_right(self.lsp_starts, offset) - 1
        line = self._lsp_line(i)
        return i, units(line[:offset - self.lsp_starts[i]], self.encoding)

    def lsp_offset(self, line: int, character: int) -> int:
        """The offset of an LSP position (past the end of a line: its end; past the text: the end)."""
        if line >= len(self.lsp_starts):
            return len(self.text)
        i = max(line, 0)
        return self.lsp_starts[i] + _code_points(self._lsp_line(i), max(character, 0), self.encoding)

    # -- both ------------------------------------------------------------------------------------

    def to_lsp(self, line: int, col: int) -> tuple[int, int]:
        return self.position(self.offset(line, col))

    def from_lsp(self, line: int, character: int) -> tuple[int, int]:
        return self.line_col(self.lsp_offset(line, character))

    def warplint_line(self, line: int) -> str:
        """Warplint line `line` (1-based), with a `\\r` before its `\\n` kept."""
        if not 1 <= line <= len(self.wl_starts):
            return ""
        end = self.wl_starts[line] - 1 if line < len(self.wl_starts) else len(self.text)
        return self.text[self.wl_starts[line - 1]:end]
