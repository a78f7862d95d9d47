"""Hash-consing, in one place: each distinct key gets a small int, counted from 1 (so that
-id can stand for a negation), with what it stands for in `info[id]`."""
from __future__ import annotations


class Interned:
    def __init__(self, placeholder=None):
        self.info: list = [placeholder]  # id 0 stands for nothing
        self._ids: dict = {}

    def items(self):
        """(key, id) of everything interned so far."""
        return self._ids.items()

    def intern(self, key, info) -> int:
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self.info)
            self.info.append(info)
        return i
