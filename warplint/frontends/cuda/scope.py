"""The code a file's report covers: its own functions and the functions of other files that its
code is connected to by calls.

A file's text holds every function of the headers it includes.  Those that no function of the
file calls, directly or through others, and that call none of its functions, are the headers'
own business: their findings come from linting the header (as clang-tidy leaves diagnostics in
headers to a run on the header).  They are not parsed, lowered or analysed here, which is most
of the work for a file that includes a large header tree (nccl's all_reduce.h: 400 of the 508
function definitions of its text are left out, 20 are its code).  Two kinds of functions are
lowered but not analysed on their own (`Function.outside`): one that may hold an instruction
some architectures lack, since the targets a file can be built for are decided on all of its
text (availability.py; 89 in all_reduce.h, with what they call), and one of the file's code
that left-out code calls, whose analysis in context belongs to those callers.

Calls are seen by name on the tokens of each top-level function definition (after the C++ layer
and the rewriter, so a method is a function of its own), which keeps at least every function the
analysis would connect by a call: a name written in a function's body counts whether or not it
is a call there.  A definition holding any token of the file itself (its own functions, macro
expansions in it, an `#include` inside a function) is the file's."""
from __future__ import annotations


class FileCode:
    """The top-level items to parse and lower (`chunks`: every item that is not a function
    definition, and the function definitions of the file's code or kept for its targets), which
    of them are outside the file's code (`outside`, by id), and the names of functions of the
    file's code that left-out functions call (`called_outside`)."""
    __slots__ = ("chunks", "outside", "called_outside")

    def __init__(self, chunks: list, outside: set[int], called_outside: frozenset[str]):
        self.chunks, self.outside, self.called_outside = chunks, outside, called_outside


def file_code(chunks: list, path: str) -> FileCode:
    """A function definition is the file's code when it is the file's, calls a function of the
    file's code (so it reaches the file's), or is called by one."""
    funcs = [c for c in chunks if c.is_func and c.name_tok is not None]
    defs: dict[str, list] = {}
    for c in funcs:
        defs.setdefault(c.name_tok.text, []).append(c)
    names = {id(c): {t.text for t in c.toks if t.kind == "id"} for c in funcs}
    calls = {k: written & defs.keys() for k, written in names.items()}
    callers: dict[str, list] = {}
    for c in funcs:
        for name in calls[id(c)]:
            callers.setdefault(name, []).append(c)

    def callees(c):
        return (d for name in calls[id(c)] for d in defs[name])
    code = _closure([c for c in funcs if any(t.path == path for t in c.toks)],
                    lambda c: callers.get(c.name_tok.text, ()))
    code = _closure(list(code.values()), callees)
    if len(code) == len(funcs):
        return FileCode(chunks, set(), frozenset())
    targets = _target_names()
    outside = _closure([c for c in funcs if id(c) not in code and not targets.isdisjoint(names[id(c)])], callees)
    outside = {k: c for k, c in outside.items() if k not in code}
    left_out_calls = {name for c in funcs if id(c) not in code and id(c) not in outside for name in calls[id(c)]}
    return FileCode([c for c in chunks if not (c.is_func and c.name_tok is not None) or id(c) in code
                     or id(c) in outside], set(outside),
                    frozenset(left_out_calls & {c.name_tok.text for c in code.values()}))


def _target_names() -> frozenset[str]:
    """The names whose call may hold an instruction that some architectures lack
    (availability.py), so that a function writing one may decide the file's targets: inline asm
    (`__warplint_asm` after the rewriter), and the warp intrinsics declared for newer
    architectures only (match: sm_70, `labeled_partition` is one; redux: sm_80)."""
    from .intrinsics import _REDUX  # (with the lowering: pycparser's AST classes)
    return frozenset(["__warplint_asm", "__match_any_sync", "__match_all_sync", "match_any", "match_all",
                      "labeled_partition", *_REDUX])


def _closure(start: list, step) -> dict[int, object]:
    """`start` and every item `step` leads to from them, by id."""
    seen = {id(c): c for c in start}
    todo = list(start)
    while todo:
        for d in step(todo.pop()):
            if id(d) not in seen:
                seen[id(d)] = d
                todo.append(d)
    return seen
