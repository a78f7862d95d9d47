"""A small in-process C preprocessor that keeps every token's original location.

Expanded macro bodies take the location of the macro name at the invocation; arguments keep
their own.  `#include "x/y.h"` is looked for next to the including file, then in the include
paths, then under each directory above the including file up to the linted tree's root and
its `include/` folder (the `-I include` a build system gives, when a nested file includes
"proj/x.h"); `#include <x/y.h>`
the same way without the first step.  Toolkit, C/C++ library and OS <headers> are never looked
for (warplint knows the CUDA intrinsics), and a <header> found nowhere gets no note.  Only
regular files inside the linted tree (`pipeline.linted_tree`) or an `-I` directory are read, at
most MAX_INCLUDE_BYTES in all: anything else is not read, with a note at the `#include`.
"""
from __future__ import annotations

import os

from ...cache import note_probe, note_read
from ...pipeline import within
from ...errors import InputError
from ...inputs import InputFileError, read_regular
from ...memo import remember
from ... import intops
from ...ir import Loc
from .lexer import Tok, brief, lined_rows, make_toks, quotable, tokenize

MAX_INCLUDE_DEPTH = 24
MAX_EXPANSION = 50_000  # macro expansion steps per file (bench/kernels/big.cu: 2,790)
MAX_INCLUDES = 1000  # files included per file (an include tree doubling per level: 2^depth)
MAX_INCLUDE_BYTES = 1024 * 1024  # all the files one file includes, together (parsing 1 MiB: ~6 s)
# quoted toolkit headers are <system> headers: not looked for, no note when absent
TOOLKIT_HEADERS = {"cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "device_launch_parameters.h",
                   "device_functions.h", "cooperative_groups.h", "cuda_fp16.h", "cuda_bf16.h",
                   "vector_types.h", "math_constants.h", "helper_cuda.h"}


_CANDIDATES: dict[tuple, tuple[str, ...]] = {}  # include_candidates' answers


_PLACE_MACROS = ("__LINE__", "__FILE__")  # expanded to where they stand
ARCH_MACROS = frozenset({"__CUDA_ARCH__", "__CUDA_ARCH_LIST__"})  # what differs between targets


def cuda_defines(arch: int) -> dict[str, str]:
    """The macros nvcc predefines when it compiles device code for `arch` (e.g. 700 for sm_70)."""
    return {"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": str(arch), "CUDART_VERSION": "13000",
            "CUDA_VERSION": "13000", "__CUDACC_VER_MAJOR__": "13", "__CUDACC_VER_MINOR__": "0",
            "__CUDACC_VER_BUILD__": "0", "__cplusplus": "201703L", "__CUDA_ARCH_LIST__": str(arch)}


class _Macro:
    __slots__ = ("name", "params", "body", "variadic")

    def __init__(self, name, params, body, variadic=False):
        self.name = name
        self.params = params  # None: object-like
        self.body = body
        self.variadic = variadic


class PPError(Exception):
    def __init__(self, tok: Tok, msg: str):
        super().__init__(msg)
        self.tok = tok
        self.msg = msg


def _row_tok(row: tuple, path: str) -> Tok:
    kind, text, line, col, bol = row
    return Tok(kind, text, path, line, col, frozenset(), bol)


def _header_name(rest: list[Tok]) -> tuple[str, bool]:
    """The header an #include names, and whether it is a <header>; ("", False) for neither."""
    if rest and rest[0].kind == "str":
        return rest[0].text[1:-1], False
    if not rest or rest[0].text != "<":
        return "", False
    name, prev = "", rest[0]
    for t in rest[1:]:
        if t.text == ">":
            return name.strip(), True
        gap = t.col - (prev.col + len(prev.text)) if (t.path, t.line) == (prev.path, prev.line) else 0
        name += " " * max(gap, 0) + t.text
        prev = t
    return "", False  # no closing '>'


# <header>s of the toolkit, the C and C++ libraries and the OS: never looked for
SYSTEM_HEADER_DIRS = {"cub", "thrust", "nv", "crt", "sys", "bits", "linux", "c++", "libcudacxx"}
C_HEADERS = {"assert.h", "ctype.h", "errno.h", "float.h", "limits.h", "locale.h", "math.h",
             "setjmp.h", "signal.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h",
             "stdlib.h", "string.h", "time.h", "inttypes.h", "wchar.h", "unistd.h", "pthread.h",
             "fcntl.h", "dlfcn.h", "malloc.h", "memory.h", "strings.h", "complex.h", "mma.h"}


def _is_system_header(name: str) -> bool:
    """<vector>, <stdio.h>, <cuda_fp16.h>, <cub/cub.cuh>, <sys/time.h>: not a project header."""
    first = name.split("/")[0]
    return ("/" not in name and "." not in name) or name in C_HEADERS or first in SYSTEM_HEADER_DIRS \
        or first.startswith(("cuda", "cublas", "cufft", "curand", "cusparse", "cusolver", "cudnn",
                             "cupti", "cooperative_groups", "nvtx", "nvToolsExt", "nvml", "sm_"))


def _dirs_up_to(start: str, root: str) -> list[str]:
    """`start` and the directories above it, up to and with `root`; none when `start` is not
    under `root`."""
    dirs = []
    d = start
    while d == root or d.startswith(root.rstrip(os.sep) + os.sep):
        dirs.append(d)
        if d == root:
            break
        d = os.path.dirname(d)
    return dirs


def _guard_macro(line: list[Tok]) -> str | None:
    """X for `#ifndef X` and `#if !defined X` / `#if !defined(X)`."""
    words = [t.text for t in line if t.text not in ("(", ")")]
    if len(words) == 3 and words[:2] == ["#", "ifndef"]:
        return words[2]
    if len(words) == 5 and words[:4] == ["#", "if", "!", "defined"]:
        return words[4]
    return None


class Preprocessor:
    def __init__(self, defines: dict[str, str], include_paths: list[str], main_path: str,
                 tree: str | None = None):
        self.macros: dict[str, _Macro] = {}
        self.include_paths = list(include_paths)
        self.main_path = main_path
        self.budget = MAX_EXPANSION
        self.includes_left = MAX_INCLUDES
        self.include_bytes_left = MAX_INCLUDE_BYTES
        self.readable_roots = [tree or os.path.dirname(main_path) or "."] + self.include_paths
        self.missing_includes: list[tuple[Tok, str]] = []
        self.notes: list[tuple[Tok, str]] = []  # (where, message): parts not analysed as written
        self.once: set[str] = set()
        self.guards: dict[str, str] = {}  # file -> the macro whose definition skips all of it
        # every place the output depends on the target's __CUDA_ARCH__: (where, what it gave);
        # two targets with the same trace get the same tokens (see arch_trace)
        self.arch_trace: list[tuple] = []
        self._arch_read = False  # an arch macro was read since this was last cleared
        for k, v in defines.items():
            self.define_text(k, v)

    def define_text(self, name: str, value: str) -> None:
        body = [t for t in tokenize(str(value), "<command line>") if t.kind != "nl"]
        if "(" in name and name.endswith(")"):
            n, _, ps = name[:-1].partition("(")
            params = [p.strip() for p in ps.split(",") if p.strip()]
            self.macros[n.strip()] = _Macro(n.strip(), params, body)
        else:
            self.macros[name] = _Macro(name, None, body)

    # -- driver ---------------------------------------------------------------------------
    def run(self, text: str, path: str, depth: int = 0) -> list[Tok]:
        out: list[Tok] = []
        self._file(text, path, depth, out)
        return out

    def _file(self, text, path, depth, out):
        rows, spans = lined_rows(text)
        end = len(rows)  # rows[:end]: the file's tokens
        if rows and rows[-1][0] == "open":
            end -= 1
            self.notes.append((_row_tok(rows[end], path), "unterminated comment: the rest of the file is not analysed"))
            start = spans[-1][0]  # the last line ends with it
            spans = spans[:-1] + ([(start, end)] if end > start else [])
        stack: list[list[bool]] = []  # [active, taken_any, parent_active]
        active = True
        pending: list[Tok] = []

        def flush():
            if pending:
                out.extend(self.expand(pending))
                pending.clear()

        guard, guard_closed = None, False  # an include guard wrapping the whole file
        code = None  # the first row of the active code lines since the last directive
        code_end = 0
        for i, (start, stop) in enumerate(spans):
            if i == 0:
                guard = _guard_macro(make_toks(rows[start:stop], path))
            elif guard_closed:
                guard = None  # something after the guard's #endif
            kind, x, _, _, bol = rows[start]
            if not (x == "#" and kind == "op" and bol):
                if active:
                    if code is None:
                        code = start
                    code_end = stop
                continue
            if code is not None:  # the code lines before this directive, at once
                pending += make_toks(rows[code:code_end], path)
                code = None
            if stop - start == 1:
                continue
            ln = make_toks(rows[start:stop], path)
            d = ln[1].text
            rest = ln[2:]
            if d in ("if", "ifdef", "ifndef"):
                if not active:
                    stack.append([False, True, False])
                    continue
                if d == "if":
                    cond = self.eval_if(rest, ln[1])
                elif d == "ifdef":
                    cond = bool(rest) and rest[0].text in self.macros
                else:
                    cond = not (rest and rest[0].text in self.macros)
                if d != "if" and rest and rest[0].text in ARCH_MACROS:
                    self.arch_trace.append((ln[1].path, ln[1].line, cond))
                flush()
                stack.append([cond, cond, True])
                active = cond
            elif d == "elif":
                if not stack:
                    raise PPError(ln[1], "#elif without #if")
                if len(stack) == 1:
                    guard = None  # the file has a part for when the guard is defined
                st = stack[-1]
                if st[2] and not st[1]:
                    cond = self.eval_if(rest, ln[1])
                    st[0] = cond
                    st[1] = cond
                else:
                    st[0] = False
                active = st[0]
            elif d == "else":
                if not stack:
                    raise PPError(ln[1], "#else without #if")
                if len(stack) == 1:
                    guard = None  # the file has a part for when the guard is defined
                st = stack[-1]
                st[0] = st[2] and not st[1]
                st[1] = True
                active = st[0]
            elif d == "endif":
                if not stack:
                    raise PPError(ln[1], "#endif without #if")
                flush()
                stack.pop()
                active = stack[-1][0] if stack else True
                guard_closed = not stack
            elif not active:
                continue
            elif d == "define":
                flush()
                self.define(rest, ln[1])
            elif d == "undef":
                flush()
                if rest:
                    self.macros.pop(rest[0].text, None)
            elif d == "include":
                flush()
                self.include(rest, ln[0], path, depth, out)
            elif d == "pragma":
                if rest and rest[0].text == "once":
                    self.once.add(os.path.abspath(path))
            elif d == "error":
                self.notes.append((ln[0], self.error_note(ln[0], rest)))
            # #line, #warning, #ident and unknown directives are ignored
        if code is not None:
            pending += make_toks(rows[code:code_end], path)
        flush()
        if stack:
            raise PPError(_row_tok(rows[end - 1], path) if end else Tok("nl", "", path, 1, 1), "unterminated #if")
        if guard and guard_closed:
            self.guards[os.path.abspath(path)] = guard

    def error_note(self, at: Tok, rest: list[Tok]) -> str:
        """An `#error` that is compiled: nvcc stops there; we analyse the rest anyway."""
        msg = " ".join(t.text for t in rest)
        said = f" ({brief(msg)})" if msg and at.path == self.main_path and quotable(msg, len(msg)) else ""
        return f"#error in code that is compiled{said}: nvcc would stop here; analysing the rest anyway"

    def include(self, rest, dtok, path, depth, out):
        if rest and rest[0].kind == "id":
            rest = self.expand(rest)
        name, angled = _header_name(rest)
        if not name:
            return
        if depth >= MAX_INCLUDE_DEPTH:
            raise PPError(dtok, f"#include nested deeper than {MAX_INCLUDE_DEPTH}")
        if name in TOOLKIT_HEADERS or angled and _is_system_header(name):
            return
        if self.includes_left <= 0:
            if self.includes_left == 0:
                self.notes.append((dtok, f"more than {MAX_INCLUDES} #include files: this and later "
                                         "ones are not read"))
                self.includes_left = -1
            return
        refused = None
        cands = self.include_candidates(name, angled, path)
        for c in cands:
            note_probe(c)  # the result cache keys on what stood at every candidate
            if not os.path.lexists(c):
                continue
            ab = os.path.abspath(c)
            if ab in self.once or self.guards.get(ab) in self.macros:
                return  # included before, and all of it would be skipped: not read again
            why = None if within(c, self.readable_roots) else \
                "it is outside the linted tree and the -I directories (see -I)"
            text = None
            if why is None:
                try:
                    text = self.read_include(c)
                except InputFileError as e:
                    why = str(e)
            if text is None:
                refused = refused or why
                continue
            self.includes_left -= 1
            shown = os.path.relpath(c) if not os.path.isabs(path) else ab
            self._file(text, os.path.normpath(shown), depth + 1, out)
            return
        if angled and not refused:
            return  # a <header> found nowhere is a system one: normal, no note
        self.missing_includes.append((dtok, name))
        quoted = f" '{name}'" if dtok.path == self.main_path and quotable(name, 80) else ""
        self.notes.append((dtok, f"#include{quoted} not read: {refused}" if refused else
                           f"#include{quoted} not found (next to the file, in an -I directory or "
                           "under a directory above it): what it defines is unknown"))

    def include_candidates(self, name: str, angled: bool, path: str) -> tuple[str, ...]:
        """Where `name` is looked for, in order: next to the including file (for "name" only),
        the -I directories, then under each directory above the including file up to the linted
        tree's root, under its `include/` folder (the -I a build system would give:
        include/<proj>/... from a nested file, nccl's src/include for src/device/x.h) and, for
        "proj/x.h", under its `proj/include/` folder (a package's own include tree).  Remembered
        (a header is included from the same folder again and again)."""
        key = (name, angled, os.path.dirname(path), tuple(self.include_paths), self.readable_roots[0], os.getcwd())
        cands = _CANDIDATES.get(key)
        if cands is None:
            cands = remember(_CANDIDATES, key, tuple(self._candidates(name, angled, path)))
        return cands

    def _candidates(self, name: str, angled: bool, path: str) -> list[str]:
        here = os.path.dirname(path) or "."
        cands = [] if angled else [os.path.join(here, name)]
        cands += [os.path.join(p, name) for p in self.include_paths]
        seen = set(map(os.path.abspath, cands))
        project = name.split("/")[0] if "/" in name else None  # <proj/x.h> in proj/include/proj/x.h
        for d in _dirs_up_to(os.path.abspath(here), os.path.abspath(self.readable_roots[0])):
            nested = (os.path.join(d, project, "include", name),) if project else ()
            for c in (os.path.join(d, name), os.path.join(d, "include", name), *nested):
                if os.path.abspath(c) not in seen:
                    seen.add(os.path.abspath(c))
                    cands.append(c)
        return cands

    def read_include(self, candidate: str) -> str:
        """The text of an include file (regular, within what is left of MAX_INCLUDE_BYTES)."""
        if self.include_bytes_left <= 0:
            raise InputFileError(f"the files included exceed {MAX_INCLUDE_BYTES} bytes")
        data = read_regular(candidate, self.include_bytes_left)
        note_read(candidate, data)
        self.include_bytes_left -= len(data)
        return data.decode("utf-8", errors="replace").replace("\0", " ")

    def define(self, rest, dtok):
        if not rest or rest[0].kind != "id":
            return
        name = rest[0].text
        if len(rest) > 1 and rest[1].text == "(" and rest[1].line == rest[0].line \
                and rest[1].col == rest[0].col + len(name):
            params = []
            variadic = False
            i = 2
            while i < len(rest) and rest[i].text != ")":
                t = rest[i]
                if t.text == "...":
                    variadic = True
                    params.append("__VA_ARGS__")
                elif t.kind == "id":
                    if i + 1 < len(rest) and rest[i + 1].text == "...":
                        variadic = True
                        i += 1
                    params.append(t.text)
                i += 1
            self.macros[name] = _Macro(name, params, rest[i + 1:], variadic)
        else:
            self.macros[name] = _Macro(name, None, rest[1:])

    # -- #if ------------------------------------------------------------------------------
    def eval_if(self, toks, dtok) -> bool:
        # resolve `defined` before expansion
        pre = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.text == "defined":
                if i + 1 < len(toks) and toks[i + 1].text == "(":
                    name = toks[i + 2].text if i + 2 < len(toks) else ""
                    i += 4
                else:
                    name = toks[i + 1].text if i + 1 < len(toks) else ""
                    i += 2
                pre.append(t.copy(kind="num", text="1" if name in self.macros else "0"))
                continue
            pre.append(t)
            i += 1
        self._arch_read = any(t.text in ARCH_MACROS for t in toks)  # `defined(__CUDA_ARCH__)` too
        exp = self.expand(pre, in_if=True)
        try:
            v = bool(_IfEval(exp).run())
        except (ValueError, RecursionError):
            v = False  # e.g. __has_include(<...>): take the #else branch, as for an unknown macro
        if self._arch_read:
            self.arch_trace.append((dtok.path, dtok.line, v))
        return v

    # -- macro expansion ------------------------------------------------------------------
    def expand(self, toks: list[Tok], in_if: bool = False) -> list[Tok]:
        macros = self.macros
        out: list[Tok] = []
        pushed: list[Tok] = []  # the tokens of expansions, last first: read before toks[i:]
        n = len(toks)
        # the tokens of `toks` that may change: names of macros, __LINE__, __FILE__ (the others are copied)
        starts = [k for k, t in enumerate(toks) if t.kind == "id" and (t.text in macros or t.text in _PLACE_MACROS)]
        starts.append(n)
        s = 0  # starts[s]: the next of them
        i = 0
        while True:
            if pushed:
                t = pushed.pop()
            else:
                while starts[s] < i:
                    s += 1
                out += toks[i:starts[s]]
                i = starts[s]
                if i == n:
                    break
                t = toks[i]
                i += 1
            if t.kind != "id" or t.text not in macros or t.text in t.hide:
                if t.kind == "id" and t.text in _PLACE_MACROS:
                    t = t.copy(kind="num", text=str(t.line)) if t.text == "__LINE__" else \
                        t.copy(kind="str", text='"' + t.path.replace("\\", "/") + '"')
                if in_if and t.text == "defined":
                    pass
                out.append(t)
                continue
            m = macros[t.text]
            if m.name in ARCH_MACROS:
                self._arch_read = True
                if not in_if:  # its value is in the code
                    self.arch_trace.append((t.path, t.line, " ".join(b.text for b in m.body)))
            if self.budget >= 0:
                self.budget -= 1 + len(m.body)
                if self.budget < 0:
                    self.notes.append((t, f"macro expansion budget ({MAX_EXPANSION} steps) reached: this "
                                          "and later macro uses are left unexpanded"))
            if self.budget < 0:  # past the budget: left as written (an unknown name)
                out.append(t)
                continue
            if m.params is None:
                hide = t.hide | {m.name}
                body = [b.copy(path=t.path, line=t.line, col=t.col, hide=hide | b.hide, bol=False)
                        for b in m.body]
                pushed.extend(reversed(body))
                continue
            nxt = pushed[-1] if pushed else toks[i] if i < n else None
            if nxt is None or nxt.text != "(":
                out.append(t)
                continue
            if pushed:
                pushed.pop()
            else:
                i += 1
            args: list[list[Tok]] = [[]]
            level = 0
            closing = None
            while pushed or i < n:
                if pushed:
                    a = pushed.pop()
                else:
                    a = toks[i]
                    i += 1
                if a.text == "(" and a.kind == "op":
                    level += 1
                elif a.text == ")" and a.kind == "op":
                    if level == 0:
                        closing = a
                        break
                    level -= 1
                elif a.text == "," and level == 0 and a.kind == "op" and not (
                        m.variadic and len(args) >= len(m.params)):
                    args.append([])
                    continue
                args[-1].append(a)
            if closing is None:
                raise PPError(t, f"unterminated call of macro '{m.name}'")
            if len(m.params) == 0 and args == [[]]:
                args = []
            hide = t.hide | closing.hide | {m.name}
            body = self.substitute(m, args, t, in_if)
            for b in body:
                b.hide = b.hide | hide
            pushed.extend(reversed(body))
        return out

    def substitute(self, m: _Macro, args, at: Tok, in_if) -> list[Tok]:
        params = {p: i for i, p in enumerate(m.params)}
        while len(args) < len(m.params):
            args.append([])
        body = m.body
        out: list[Tok] = []
        expanded: dict[int, list[Tok]] = {}
        i = 0
        n = len(body)
        here = dict(path=at.path, line=at.line, col=at.col, bol=False)
        while i < n:
            b = body[i]
            if b.text == "#" and i + 1 < n and body[i + 1].text in params:
                arg = args[params[body[i + 1].text]]
                s = " ".join(x.text for x in arg).replace("\\", "\\\\").replace('"', '\\"')
                out.append(b.copy(kind="str", text=f'"{s}"', **here))
                i += 2
                continue
            if b.text == "##" and out and i + 1 < n:
                nxt = body[i + 1]
                rhs = [x.copy() for x in args[params[nxt.text]]] if nxt.text in params else [nxt.copy(**here)]
                left = out.pop()
                if rhs:
                    glued = tokenize(left.text + rhs[0].text, at.path)
                    glued = [g for g in glued if g.kind != "nl"]
                    if len(glued) == 1:
                        out.append(left.copy(kind=glued[0].kind, text=glued[0].text))
                    else:
                        out.extend([left, rhs[0]])
                    out.extend(rhs[1:])
                else:
                    out.append(left)
                i += 2
                continue
            if b.text in params:
                k = params[b.text]
                if i + 1 < n and body[i + 1].text == "##":
                    out.extend(x.copy() for x in args[k])
                else:
                    if k not in expanded:
                        expanded[k] = self.expand(args[k], in_if)
                    out.extend(x.copy() for x in expanded[k])
                i += 1
                continue
            out.append(b.copy(**here))
            i += 1
        return out


class _IfEval:
    """Integer constant expressions of `#if`."""

    _BIN = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
            ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

    def __init__(self, toks):
        self.t = [x.text for x in toks]
        self.kinds = [x.kind for x in toks]
        self.i = 0

    def run(self):
        v = self.cond()
        if self.i != len(self.t):
            raise ValueError("junk")
        return v

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def cond(self):
        c = self.binary(0)
        if self.peek() == "?":
            self.i += 1
            a = self.cond()
            if self.peek() != ":":
                raise ValueError(":")
            self.i += 1
            b = self.cond()
            return a if c else b
        return c

    def binary(self, level):
        if level == len(self._BIN):
            return self.unary()
        v = self.binary(level + 1)
        while self.peek() in self._BIN[level]:
            op = self.t[self.i]
            self.i += 1
            w = self.binary(level + 1)
            v = intops.binary(intops.C_BINARY[op], v, w)
            if v is None:
                raise ValueError(op)  # division by zero, a negative shift count
        return v

    def unary(self):
        p = self.peek()
        if p is None:
            raise ValueError("end")
        if p in ("!", "~", "-", "+"):
            self.i += 1
            return intops.c_unary(p, self.unary())
        if p == "(":
            self.i += 1
            v = self.cond()
            if self.peek() != ")":
                raise ValueError(")")
            self.i += 1
            return v
        k = self.kinds[self.i]
        self.i += 1
        if k == "num":
            return parse_int(p)
        if k == "chr":
            return char_value(p)
        if k == "id":
            return 1 if p == "true" else 0
        raise ValueError(p)


def parse_int(text: str) -> int:
    s = text.replace("'", "").rstrip("uUlLzZ")
    if s.lower().startswith("0x"):
        return int(s, 16)
    if s.lower().startswith("0b"):
        return int(s[2:], 2)
    if len(s) > 1 and s.startswith("0") and s.isdigit():
        return int(s, 8)
    return int(s)


def char_value(text: str) -> int:
    body = text[text.index("'") + 1:-1]
    if body.startswith("\\"):
        esc = {"n": 10, "t": 9, "0": 0, "\\": 92, "'": 39, '"': 34, "r": 13, "a": 7, "b": 8,
               "f": 12, "v": 11}
        if body[1:2] == "x":
            return int(body[2:], 16)
        if body[1:].isdigit():
            return int(body[1:], 8)
        return esc.get(body[1:2], 0)
    return ord(body[0]) if body else 0


def arch_trace(text: str, path: str, defines: dict, include_paths: list, tree: str | None = None):
    """Where and how the preprocessed text depends on the target architecture (the `#if`
    decisions and expansions that read __CUDA_ARCH__): two architectures with equal traces give
    equal tokens.  Returns (trace, run): `run` is what `preprocess(..., run=run)` goes on from
    when this architecture needs a module of its own.  None when the file does not preprocess."""
    pp = Preprocessor(defines, include_paths, path, tree)
    try:
        toks = pp.run(text, path)  # reads what parsing reads: the result cache's dependencies stay the same
    except PPError:
        return None
    return tuple(pp.arch_trace), (toks, pp)


def preprocess(text: str, path: str, defines: dict, include_paths: list,
               tree: str | None = None, run=None) -> tuple[list[Tok], Preprocessor]:
    """The file preprocessed (or `run`, arch_trace's run with these very arguments), then with
    the qualifier and pragma macros nothing defines read as what they spell (`qualifiers.py`;
    its notes join the preprocessor's)."""
    from .qualifiers import resolve
    if run is not None:
        toks, pp = run
    else:
        pp = Preprocessor(defines, include_paths, path, tree)
        try:
            toks = pp.run(text, path)
        except PPError as e:
            raise InputError(Loc(e.tok.path, e.tok.line, e.tok.col), e.msg) from None
    toks, guessed = resolve(toks, path)
    pp.notes.extend(guessed)
    return toks, pp
