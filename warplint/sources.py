"""Source lines by path, read once (for suppressions, fingerprints and fixes).

The one line model of warplint: a line ends at `\\n` and only there (a `\\r` before it stays in
the line; form feeds, `\\v`, NEL and U+2028 are characters within a line), as the lexers, the
suppression parser and the fixer count.  `str.splitlines` must not be used on source text.
"""
from __future__ import annotations

import os
from functools import lru_cache


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """`text` split at `\\n` only; with `keepends`, each line keeps its `\\n`."""
    lines = text.split("\n")
    if not keepends:
        return lines
    out = [ln + "\n" for ln in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


@lru_cache(maxsize=8)
def lines_of(text: str) -> tuple[str, ...]:
    """`split_lines(text, keepends=True)`, once per text (checks look up many lines of one file)."""
    return tuple(split_lines(text, keepends=True))


class Sources:
    def __init__(self):
        self._text: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}

    def add(self, path: str, text: str) -> None:
        if text:
            key = os.path.abspath(path)
            self._text[key] = text
            self._lines.pop(key, None)

    def update(self, other: "Sources") -> None:
        """Take the texts another run read (one run over several configurations)."""
        self._text.update(other._text)
        self._lines.update(other._lines)

    def text(self, path: str) -> str | None:
        key = os.path.abspath(path)
        if key not in self._text:
            try:
                with open(key, encoding="utf-8", errors="replace", newline="") as f:
                    self._text[key] = f.read()
            except OSError:
                self._text[key] = None
        return self._text[key]

    def lines(self, path: str) -> list[str]:
        """The file's lines (split once per file; do not modify the list)."""
        key = os.path.abspath(path)
        ls = self._lines.get(key)
        if ls is None:
            t = self.text(path)
            ls = self._lines[key] = split_lines(t) if t else []
        return ls

    def line(self, path: str, line: int) -> str:
        ls = self.lines(path)
        return ls[line - 1] if 1 <= line <= len(ls) else ""
