"""The warp code of a CUDA-C file as written: every function definition (at namespace or class
scope) whose body calls a warp primitive or barrier, found on the preprocessed tokens without
parsing.  This is what coverage is measured against (`warplint/coverage.py`): a function here
is either analysed or gets a note, never dropped silently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import attrgetter

from ...ir import Loc
from .lexer import Tok, closing

# calls that are warp primitives or barriers
PRIMITIVES = frozenset(
    ["__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
     "__shfl_xor_sync", "__ballot", "__all", "__any", "__uni", "__ballot_sync", "__all_sync", "__any_sync",
     "__uni_sync", "__match_any_sync", "__match_all_sync", "__activemask", "__syncwarp", "__syncthreads",
     "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__barrier_sync"]
    + [f"__reduce_{op}_sync" for op in ("add", "min", "max", "and", "or", "xor")])
CG_FREE = frozenset(["reduce", "inclusive_scan", "exclusive_scan", "sync"])  # cg::NAME(
# creating a group: no instruction of its own, so it counts as analysed when its function is
GROUP_CREATION = frozenset(["tiled_partition", "coalesced_threads", "labeled_partition", "binary_partition"])
CG_METHODS = frozenset(["shfl", "shfl_up", "shfl_down", "shfl_xor", "ballot", "any", "all", "match_any",
                        "match_all", "sync"])  # group.NAME( in files that use cooperative groups
CG_NAMESPACES = frozenset(["cg", "cooperative_groups"])
PTX_PRIMITIVE = re.compile(r"\b(?:shfl\.|vote\.|bar\.|barrier\.|redux\.sync|match\.(?:any|all)|activemask)")
NOT_NAMES = frozenset(["if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype",
                       "alignas", "__launch_bounds__", "__attribute__", "__align__", "__declspec", "static_assert",
                       "noexcept", "throw", "_Alignas", "defined", "__builtin_expect", "new", "delete"])
SCOPE_KEYWORDS = frozenset(["namespace", "struct", "class", "union", "enum"])
TRAILER_WORDS = frozenset(["const", "volatile", "noexcept", "override", "final", "mutable", "&", "&&",
                           "throw", "__attribute__"])


@dataclass
class Primitive:
    name: str
    line: int
    end_line: int  # the last line of an inline asm statement
    creates_group: bool = False  # tiled_partition(...) and the like (GROUP_CREATION)


@dataclass
class WarpFunction:
    name: str
    loc: Loc  # the name in the definition
    end_line: int  # the closing brace
    start_line: int  # the first token of the declaration
    primitives: list[Primitive] = field(default_factory=list)
    specifiers: list[Tok] = field(default_factory=list)  # the tokens before the name, template parameters left out


def warp_functions(toks: list[Tok], path: str, cg: bool | None = None) -> list[WarpFunction]:
    """The functions defined in `path` (not in an included file) that call warp primitives;
    `cg`: `uses_cooperative_groups(toks)` when the caller has it."""
    if cg is None:
        cg = uses_cooperative_groups(toks)
    out = []
    for head, named, body, end in definitions(toks):
        name = toks[named]
        prims = _primitives(toks, body, end, cg)
        if prims and name.path == path:
            out.append(WarpFunction(name.text, Loc(path, name.line, name.col), toks[end].line,
                                    toks[head].line, prims, _specifiers(toks, head, named)))
    return out


_text = attrgetter("text")
_CG_NAMES = frozenset(("cooperative_groups", "thread_block_tile", "coalesced_group", "cg"))


def uses_cooperative_groups(toks: list[Tok]) -> bool:
    if _CG_NAMES.isdisjoint(map(_text, toks)):
        return False  # no token to look at (a set test per token, in C)
    return any(t.kind == "id" and t.text in _CG_NAMES and (t.text != "cg" or i + 1 < len(toks) and toks[i + 1].text == "::")
               for i, t in enumerate(toks))


def _specifiers(toks, head: int, named: int) -> list[Tok]:
    """The tokens before a function's name, its `template <...>` parameter lists left out (a
    `typename CG` there is a type parameter, not a macro nothing defines)."""
    out = []
    k = head
    while k < named:
        if toks[k].text == "template" and k + 1 < named and toks[k + 1].text == "<":
            k = template_end(toks, k + 1, named) + 1
            continue
        out.append(toks[k])
        k += 1
    return out


def definitions(toks: list[Tok]):
    """(first token, name, `{`, `}`) indices of each function definition at namespace or class
    scope (bodies are not searched: a lambda or local class is part of its function)."""
    head = 0  # first token of the declaration being read at namespace/class scope
    i, n = 0, len(toks)
    while i < n:
        x = toks[i].text
        if x in (";", "}"):
            head = i + 1
        elif x == "{":
            named = _function_name(toks, head, i)
            if named is None:  # namespace, class, extern "C", initialiser: look inside
                head = i + 1
            else:
                end = _closing(toks, i, "{", "}")
                yield head, named, i, end
                i = end
                head = end + 1
        i += 1


def _closing(toks, i, open_, close) -> int:
    """Index of the closing token, or the last token when the text ends first."""
    k = closing(toks, i, open_, close)
    return len(toks) - 1 if k is None else k


def _function_name(toks, a: int, b: int) -> int | None:
    """Index of the name when toks[a:b] is the header of a function definition."""
    depth = 0
    k = a
    while k < b:
        t = toks[k]
        if t.text == "template" and k + 1 < b and toks[k + 1].text == "<":
            k = template_end(toks, k + 1, b)
        elif t.text in ("(", "["):
            depth += 1
            name = _name_before(toks, k, a) if depth == 1 and t.text == "(" else None
            if name is not None:
                close = _closing(toks, k, "(", ")")
                if close < b and _is_trailer(toks, close + 1, b):
                    return name
        elif t.text in (")", "]"):
            depth -= 1
        elif depth == 0 and (t.text == "=" or t.text in SCOPE_KEYWORDS) and not _after_operator(toks, k, a):
            return None
        k += 1
    return None


def _name_before(toks, k: int, a: int) -> int | None:
    """The function name right before the `(` at k: an identifier, or `operator` and its symbol."""
    for j in range(k - 1, max(a, k - 4) - 1, -1):
        if toks[j].text == "operator":
            return j
    prev = toks[k - 1] if k > a else None
    return k - 1 if prev is not None and prev.kind == "id" and prev.text not in NOT_NAMES else None


def template_end(toks, k: int, b: int) -> int:
    """Index of the `>` closing the template parameter list opened at k."""
    depth = 0
    while k < b:
        x = toks[k].text
        if x in ("<", "(", "["):
            depth += 1
        elif x in (">", ")", "]"):
            depth -= 1
        elif x == ">>":
            depth -= 2
        if depth <= 0:
            return k
        k += 1
    return b


def _after_operator(toks, k, a) -> bool:
    return any(toks[j].text == "operator" for j in range(max(a, k - 2), k))


def _is_trailer(toks, a: int, b: int) -> bool:
    """const/noexcept/override/... then optionally `-> type` or a constructor's `: init-list`."""
    k = a
    while k < b:
        x = toks[k].text
        if x in ("->", ":"):
            return True
        if x not in TRAILER_WORDS:
            return False
        if k + 1 < b and toks[k + 1].text == "(":  # noexcept(...), throw(), __attribute__((...))
            k = _closing(toks, k + 1, "(", ")")
        k += 1
    return True


_ASM = frozenset(("asm", "__asm__", "__asm"))
_CALLED = PRIMITIVES | GROUP_CREATION | CG_FREE | _ASM  # a primitive needs one of these in its body
_CALLED_CG = _CALLED | CG_METHODS


def _primitives(toks, a: int, b: int, cg: bool) -> list[Primitive]:
    if (_CALLED_CG if cg else _CALLED).isdisjoint(map(_text, toks[a:b])):
        return []  # no name a case below looks for (a set test per token, in C)
    out = []
    for k in range(a, b):
        t = toks[k]
        if t.kind != "id" or k + 1 >= b:
            continue
        nxt = toks[k + 1].text
        if t.text in PRIMITIVES and nxt in ("(", "<"):
            out.append(Primitive(t.text, t.line, t.line))
        elif t.text in GROUP_CREATION and nxt in ("(", "<"):
            out.append(Primitive(t.text, t.line, t.line, creates_group=True))
        elif t.text in CG_FREE and nxt in ("(", "<") and k >= 2 and toks[k - 1].text == "::" \
                and toks[k - 2].text in CG_NAMESPACES:
            out.append(Primitive(f"{toks[k - 2].text}::{t.text}", t.line, t.line))
        elif cg and t.text in CG_METHODS and nxt == "(" and toks[k - 1].text == ".":
            out.append(Primitive("." + t.text, t.line, t.line))
        elif t.text in _ASM:
            j = k + 1
            while j < b and toks[j].text in ("volatile", "__volatile__"):
                j += 1
            if j < b and toks[j].text == "(":
                close = _closing(toks, j, "(", ")")
                if any(s.kind == "str" and PTX_PRIMITIVE.search(s.text) for s in toks[j:close]):
                    out.append(Primitive("asm", t.line, toks[close].line))
    return out
