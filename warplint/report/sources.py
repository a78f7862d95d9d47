"""Source lines by path, read once (for suppressions, fingerprints and fixes)."""
from __future__ import annotations

import os


class Sources:
    def __init__(self):
        self._text: dict[str, str | None] = {}

    def add(self, path: str, text: str) -> None:
        if text:
            self._text[os.path.abspath(path)] = text

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
        t = self.text(path)
        return t.splitlines() if t else []

    def line(self, path: str, line: int) -> str:
        ls = self.lines(path)
        return ls[line - 1] if 1 <= line <= len(ls) else ""
