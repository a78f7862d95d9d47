"""Macros the file uses but nothing warplint read defines (their header is not given or not
found): `RAFT_KERNEL void k()`, `DI float f()`, `LAUNCH_BOUNDS(256) void k()`,
`TCNN_PRAGMA_UNROLL for (...)`.  Left as they are, they make a kernel host code (dropped) or a
parse error.  After preprocessing, each such name in declaration-specifier position of a
function definition is read as what it most likely spells, and a note says so once per name:

- followed by `(...)`: an attribute (`__launch_bounds__`, `__align__`): dropped with its arguments;
- `__global__` when its name says KERNEL/GLOBAL, or the file launches the function with `<<<`;
- `__device__` (`__host__ __device__` when its name also says HOST) when its name says DEV/DI/HD/
  INLINE/CUDA/GPU or the function's body is device code (warp primitives, `threadIdx`, ...);
- otherwise dropped (an export or inline macro of host code), without a note.

Inside a function body, such a name standing alone before `for`/`while`/`do` is a pragma macro
(`#pragma unroll`) and is dropped, as is `_Pragma("...")`; one that says SHARED first in a
declaration (`SHARED uint n;`) is `__shared__` (from its name, with a note).  Configuration `macros` / `-D` say what a
name really is; a name defined there is expanded by the preprocessor and never reaches this.
"""
from __future__ import annotations

import re
from operator import attrgetter

from .lexer import Tok, closing, quotable
from .warpcode import PRIMITIVES, definitions, template_end

MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*[A-Z0-9]")  # an all-caps name: what macros look like
KERNEL_NAME = re.compile(r"KERNEL|GLOBAL")
DEVICE_NAME = re.compile(r"DEV|(?:^|_)(?:DI|HD|HDI|INLINE|FORCEINLINE|CUDA|GPU)(?:_|$)|INLINE")
HOST_NAME = re.compile(r"HOST|(?:^|_)HD(?:_|$)")
DEVICE_WORDS = PRIMITIVES | {"threadIdx", "blockIdx", "blockDim", "gridDim", "__shared__", "warpSize",
                             "__activemask", "__ldg", "atomicAdd", "__syncwarp"}
LOOP_WORDS = {"for", "while", "do"}
_STATEMENT_STARTS = (";", "{", "}")  # what a pragma or shared macro follows
_text = attrgetter("text")


def resolve(toks: list[Tok], path: str) -> tuple[list[Tok], list[tuple[Tok, str]]]:
    """The tokens with undefined qualifier, attribute and pragma macros read as said above,
    and the notes (token, message) for the qualifiers guessed."""
    launched = _launched(toks)
    replace: dict[int, tuple[int, list[Tok]]] = {}  # start index -> (end index, new tokens)
    notes: list[tuple[Tok, str]] = []
    noted: set[str] = set()
    for head, name, body, end in definitions(toks):
        device_body = not DEVICE_WORDS.isdisjoint(map(_text, toks[body:end]))
        for k in _specifiers(toks, head, name):
            if not _undefined_macro(toks, k, name):
                continue
            stop = _after_arguments(toks, k)
            if stop == k + 1 and not any(t.kind == "id" for t in toks[stop:name]):
                continue  # the last specifier before the name: a type, not a qualifier
            if stop < name and toks[stop].text == "template":  # before the declaration: a pragma-like macro
                replace[k] = (stop, [])
                continue
            spelled, why = _spelling(toks[k].text, stop > k + 1, toks[name].text in launched, device_body,
                                     any(t.text == "void" for t in toks[stop:name]))
            replace[k] = (stop, [toks[k].named(w) for w in spelled])
            if why and toks[k].text not in noted:
                noted.add(toks[k].text)
                notes.append((toks[k], _note(toks[k], path, " ".join(spelled), why)))
        for k in range(body + 1, end):
            t = toks[k]
            if t.kind != "id" or toks[k - 1].text not in _STATEMENT_STARTS and t.text != "_Pragma":
                continue  # neither a pragma macro nor a shared one
            if _pragma_macro(toks, k):
                replace[k] = (_after_arguments(toks, k), [])
            elif _shared_macro(toks, k):
                replace[k] = (k + 1, [toks[k].named("__shared__")])
                if toks[k].text not in noted:
                    noted.add(toks[k].text)
                    notes.append((toks[k], _note(toks[k], path, "__shared__", "from its name")))
    return _apply(toks, replace), notes


def _launched(toks: list[Tok]) -> set[str]:
    """The names before `<<<`: functions the file launches."""
    texts = list(map(_text, toks))
    out = set()
    k = 0
    while True:
        try:
            k = texts.index("<<", k + 1)  # the scan in C
        except ValueError:
            return out
        if k + 1 < len(texts) and texts[k + 1] == "<" and toks[k - 1].kind == "id":
            out.add(texts[k - 1])


def _specifiers(toks, head: int, name: int):
    """Indices of the tokens before a function's name, template parameter lists and the
    arguments of attributes (`__launch_bounds__(MAX_THREADS, 1)`) left out."""
    k = head
    while k < name:
        if toks[k].text == "template" and k + 1 < name and toks[k + 1].text == "<":
            k = template_end(toks, k + 1, name) + 1
            continue
        if toks[k].text == "(" and k > head and toks[k - 1].kind == "id":
            end = closing(toks, k, "(", ")")
            k = end + 1 if end is not None and end < name else k + 1
            continue
        yield k
        k += 1


def _undefined_macro(toks, k: int, name: int) -> bool:
    t = toks[k]
    if t.kind != "id" or not MACRO_NAME.fullmatch(t.text):
        return False
    nxt = toks[k + 1].text if k + 1 < len(toks) else ""
    prev = toks[k - 1].text if k else ""
    return nxt not in ("::", "<") and prev not in ("::", "<", ",", "typename", "class", "struct")


def _after_arguments(toks, k: int) -> int:
    """The index after toks[k] and the parenthesised arguments right after it, if any."""
    if k + 1 < len(toks) and toks[k + 1].text == "(":
        end = closing(toks, k + 1, "(", ")")
        if end is not None:
            return end + 1
    return k + 1


def _spelling(macro: str, has_args: bool, launched: bool, device_body: bool, returns_void: bool):
    """(the tokens it stands for, why: None when dropped without a note)."""
    if has_args:
        return [], None
    if KERNEL_NAME.search(macro) and returns_void:
        return ["__global__"], "from its name"
    if launched and returns_void:
        return ["__global__"], "the function is launched with <<<...>>> in this file"
    if DEVICE_NAME.search(macro) or device_body:
        spelled = ["__host__", "__device__"] if HOST_NAME.search(macro) else ["__device__"]
        return spelled, "from its name" if DEVICE_NAME.search(macro) else "the function's body is device code"
    return [], None


def _note(tok: Tok, path: str, spelled: str, why: str) -> str:
    name = f"'{tok.text}'" if tok.path == path and quotable(tok.text) else "a qualifier macro"
    macro = tok.text if quotable(tok.text) else "NAME"
    return (f"{name} is defined nowhere warplint read (its header is not given or not found): taken as "
            f"{spelled} ({why}); if that is wrong, say what it is with configuration "
            f"`macros = {{{macro} = \"{spelled}\"}}` or -D{macro}=...")


def _pragma_macro(toks, k: int) -> bool:
    """`UNROLL_MACRO for (...)` or `_Pragma("unroll")` as a statement of its own."""
    t = toks[k]
    if t.text == "_Pragma":
        return k + 1 < len(toks) and toks[k + 1].text == "("
    if t.kind != "id" or not MACRO_NAME.fullmatch(t.text) or toks[k - 1].text not in _STATEMENT_STARTS:
        return False
    stop = _after_arguments(toks, k)
    return stop < len(toks) and toks[stop].text in LOOP_WORDS


def _shared_macro(toks, k: int) -> bool:
    """`SHARED float v[8];`: a name that says SHARED first in a declaration in a body."""
    if "SHARED" not in toks[k].text or toks[k - 1].text not in _STATEMENT_STARTS or not _undefined_macro(toks, k, k):
        return False
    j = k + 1
    while j < len(toks) and (toks[j].kind == "id" or toks[j].text == "*"):
        j += 1
    return j < len(toks) and j - k >= 3 and toks[j].text in (";", "[", "=")


def _apply(toks, replace) -> list[Tok]:
    """`toks` with toks[start:stop] replaced for each start in `replace` (one inside an earlier
    replaced stretch is not)."""
    if not replace:
        return toks
    out: list[Tok] = []
    i = 0
    for start in sorted(replace):
        if start < i:
            continue
        stop, new = replace[start]
        out += toks[i:start]
        out += new
        i = stop
    out += toks[i:]
    return out
