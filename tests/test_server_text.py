"""Positions between warplint (1-based, lines end at `\\n` only, columns in code points) and LSP
(0-based, lines end at `\\n`, `\\r\\n` or `\\r`, characters in UTF-16 units by default)."""
from __future__ import annotations

import pytest

from warplint.server.text import LineMap, units


def test_ascii_lines():
    m = LineMap("ab\ncd\n")
    assert m.to_lsp(2, 2) == (1, 1)
    assert m.from_lsp(1, 1) == (2, 2)
    assert m.warplint_line(2) == "cd"


@pytest.mark.parametrize("encoding,character", [("utf-16", 7), ("utf-8", 10), ("utf-32", 6)])
def test_characters_count_in_the_negotiated_encoding(encoding, character):
    m = LineMap("x = \U0001F600\u00e9 + __any(v);\n", encoding)  # an emoji (2 UTF-16 units) and é
    col = m.text.index("__any") + 1
    line, ch = m.to_lsp(1, col)
    assert line == 0 and ch == units(m.text[:col - 1], encoding)
    assert m.from_lsp(line, ch) == (1, col)
    assert m.to_lsp(1, 7) == (0, character)  # just after "é"


def test_crlf_lines_keep_their_numbers():
    m = LineMap("a\r\nbc\r\n")
    assert m.to_lsp(2, 2) == (1, 1)
    assert m.warplint_line(1) == "a\r"
    assert m.from_lsp(0, 99) == (1, 2)  # past the end of a line: its end, before the CR


def test_a_lone_cr_ends_an_lsp_line_but_not_a_warplint_line():
    m = LineMap("a\rb\nc")
    assert m.to_lsp(1, 3) == (1, 0)  # 'b'
    assert m.to_lsp(2, 1) == (2, 0)  # 'c'
    assert m.from_lsp(1, 0) == (1, 3)


def test_out_of_range_positions_are_clamped():
    m = LineMap("ab\n")
    assert m.to_lsp(1, 50) == (0, 2)
    assert m.to_lsp(9, 1) == (1, 0)
    assert m.from_lsp(9, 0) == (2, 1)
    assert m.warplint_line(9) == ""
