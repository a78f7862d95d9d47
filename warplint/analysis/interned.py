"""Hash-consing, in one place: each distinct key gets a small int, counted from 1 (so that
-id can stand for a negation), with what it stands for in `info[id]`."""
from __future__ import annotations


class Interned:
    def __init__(self, placeholder=None):
        self.info: list = [placeholder]  # id 0 stands for nothing
        self._ids: dict = {}
        self._keys: list = [None]  # id -> its key

    def items(self):
        """(key, id) of everything interned so far."""
        return self._ids.items()

    def key_of(self, i: int):
        """The key that id `i` was made for (None for 0 or an id not made here)."""
        return self._keys[i] if 0 < i < len(self._keys) else None

    def intern(self, key, info) -> int:
        n = len(self.info)
        i = self._ids.setdefault(key, n)  # (one hash of the key, found or not)
        if i == n:
            self.info.append(info)
            self._keys.append(key)
        return i
