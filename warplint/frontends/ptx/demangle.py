"""Readable names for Itanium-mangled (nvcc) function names, for messages only.

Only the qualified name is recovered (`_ZN3cub6detail6reduceIiEEvPT_` -> `cub::detail::reduce`):
parameter and template argument lists are dropped.  Anything not understood returns "".
"""
from __future__ import annotations

_CTOR_DTOR = {"C1", "C2", "C3", "CI1", "CI2", "D0", "D1", "D2"}


def _skip_template_args(s: str, i: int) -> int:
    """`s[i]` is the 'I' opening template arguments; returns the index after the closing 'E'."""
    depth = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c.isdigit():
            j = i
            while j < n and s[j].isdigit():
                j += 1
            length = int(s[i:j])
            i = j + length if (j < n and (s[j].isalpha() or s[j] == "_")) and length else j
            continue
        if c == "L" and i + 1 < n and s[i + 1] != "_":  # literal: L <type> [n] <digits> E
            j = _after_nested_name(s, i + 1) if s[i + 1] == "N" else i + 2  # an enum's type is a name
            if j < n and s[j] == "n":
                j += 1
            while j < n and s[j].isalnum() and s[j] != "E":
                j += 1
            if j < n and s[j] == "E":
                i = j + 1
                continue
            return -1
        if c in "INLX":
            depth += 1
        elif c == "E":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in "ST" and i + 1 < n:  # substitutions S_, S0_, T_, T1_
            j = s.find("_", i + 1)
            if j > 0 and s[i + 1:j].isalnum() or j == i + 1:
                i = j + 1
                continue
        i += 1
    return -1


def _after_nested_name(s: str, i: int) -> int:
    """`s[i]` is the 'N' of a nested name without template arguments (an enumeration type in a
    literal); returns the index after its closing 'E' (len(s) when there is none)."""
    j = i + 1
    while j < len(s) and s[j] != "E":
        if s[j].isdigit():
            named = _source_name(s, j)
            j = named[1] if named else len(s)
        elif s[j] == "S":  # a substitution, S_ or S0_
            k = s.find("_", j)
            j = k + 1 if k > 0 else len(s)
        else:
            j += 1
    return j + 1


def _source_name(s: str, i: int) -> tuple[str, int] | None:
    j = i
    while j < len(s) and s[j].isdigit():
        j += 1
    if j == i:
        return None
    length = int(s[i:j])
    if length <= 0 or j + length > len(s):
        return None
    return s[j:j + length], j + length


def demangle(name: str) -> str:
    if not name.startswith("_Z") or len(name) > 4096:
        return ""
    s = name
    i = 2
    if i < len(s) and s[i] == "L":  # internal linkage
        i += 1
    if i < len(s) and s[i] == "N":
        i += 1
        while i < len(s) and s[i] in "rVKRO":  # cv / ref qualifiers of member functions
            i += 1
        parts: list[str] = []
        while i < len(s) and s[i] != "E":
            c = s[i]
            if c.isdigit():
                r = _source_name(s, i)
                if r is None:
                    return ""
                parts.append(r[0])
                i = r[1]
            elif c == "I":
                i = _skip_template_args(s, i)
                if i < 0 or not parts:
                    return ""
                parts[-1] += "<...>"
            elif s[i:i + 2] in _CTOR_DTOR or s[i:i + 3] in _CTOR_DTOR:
                if not parts:
                    return ""
                parts.append(("~" if c == "D" else "") + parts[-1].split("<", 1)[0])
                i += 3 if s[i:i + 3] in _CTOR_DTOR else 2
            elif s.startswith("St", i):
                parts.append("std")
                i += 2
            elif c == "S" or c == "T":
                j = s.find("_", i)
                if j < 0:
                    return ""
                i = j + 1
            elif c == "L":
                i += 1
            else:
                return ""
        parts = [p.replace("_GLOBAL__N_1", "(anonymous namespace)") for p in parts]
        return "::".join(parts) if parts else ""
    if s.startswith("St", i):
        r = _source_name(s, i + 2)
        return "std::" + r[0] if r else ""
    r = _source_name(s, i)
    if not r:
        return ""
    if r[1] < len(s) and s[r[1]] == "I" and _skip_template_args(s, r[1]) > 0:
        return r[0] + "<...>"
    return r[0]
