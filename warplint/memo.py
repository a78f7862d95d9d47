"""Bounded in-process memory of work done on a text, by the text itself: a run that meets the
same text again (a header included by many files, or preprocessed for several targets; one
function of it parsed again) reuses what was made of it.  Only pure functions of the text are
kept, so a result never depends on what the process linted before."""
from __future__ import annotations

MAX_WORDS = 10_000  # entries of a memory keyed by the input's words (opcodes, names, line texts)


def remember(table: dict, key, value, limit: int = MAX_WORDS):
    """Keep `value` for `key` in `table`, a per-process memory of what the input's words map to,
    emptied when it holds `limit` entries (a fuzzed input may name any number of words); returns
    `value`.  Only for values that are a function of the key alone."""
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


class TextMemo:
    """Values by key (a text, or a tuple holding one), most recently used last, up to
    `max_chars` characters of text in all (a value's size goes with its text's; or another
    measure of size: instructions, analysis/reuse.py)."""

    def __init__(self, max_chars: int):
        self.max_chars = max_chars
        self.chars = 0
        self.entries: dict = {}  # key -> (value, characters)

    def get(self, key):
        entry = self.entries.pop(key, None)
        if entry is None:
            return None
        self.entries[key] = entry  # most recently used last
        return entry[0]

    def clear(self) -> None:
        self.entries.clear()
        self.chars = 0

    def put(self, key, value, chars: int) -> None:
        """Keep `value` for `key`, made from `chars` characters of text; the least recently
        used values are forgotten past the bound."""
        if chars > self.max_chars or key in self.entries:
            return
        self.entries[key] = (value, chars)
        self.chars += chars
        while self.chars > self.max_chars:
            oldest = next(iter(self.entries))
            self.chars -= self.entries.pop(oldest)[1]
