"""C++/CUDA token stream -> C that pycparser reads; every token keeps its original location.

CUDA qualifiers become `_Alignas(<marker>)` specifiers (pycparser keeps them in `Decl.align`),
so the lowering knows `__global__`, `__device__`, `__shared__` ... without re-reading source.
"""
from __future__ import annotations

from .cxx import Facts
from .lexer import Tok, closing as _match

MARK = {"__shared__": 7001, "__constant__": 7002, "__device__": 7003, "__managed__": 7003,
        "__host__": 7004, "__global__": 7010}
MARKERS = {v: k for k, v in MARK.items()}
MARKERS[7003] = "__device__"

DROP = {"__forceinline__", "__noinline__", "__inline__", "inline", "__inline", "__restrict__",
        "__restrict", "restrict", "constexpr", "explicit", "virtual", "mutable", "typename",
        "__host__device__", "__grid_constant__", "CUDA_CALLABLE", "static_assert_dummy",
        "__extension__", "consteval", "constinit", "thread_local", "__thread", "noexcept",
        "final", "override", "__cluster_dims__dummy"}
DROP_WITH_PARENS = {"__launch_bounds__", "__align__", "__attribute__", "__declspec", "alignas",
                    "__maxnreg__", "__cluster_dims__", "__builtin_assume_aligned_dummy",
                    "noexcept", "decltype_dummy"}

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Bool", "_Alignas", "_Alignof", "_Atomic",
    "_Static_assert", "_Thread_local", "_Noreturn", "_Complex", "inline", "restrict"}
TYPE_KEYWORDS = {"char", "double", "float", "int", "long", "short", "signed", "unsigned",
                 "void", "_Bool", "bool"}
# the names `Rewriter._rewrite` does something with wherever they stand (a name not among them,
# nor a struct's, and not before `(` or `<`, is copied as it is)
_SPECIAL_NAMES = frozenset(MARK) | DROP | DROP_WITH_PARENS | TYPE_KEYWORDS | {
    "asm", "__asm__", "__asm", "constexpr", "template", "static_cast", "reinterpret_cast", "const_cast",
    "dynamic_cast", "using", "true", "false", "nullptr", "NULL", "__int128", "auto", "class", "bool",
    "tiled_partition", "typedef"}

_SCOPE_MARKS = frozenset(("::", "namespace", "extern", "{", "}"))  # what Rewriter._scopes acts on
_TEMPLATE_MARKS = frozenset(("struct", "class", "template"))  # what Rewriter._collect_templates reads

VECTOR_BASE = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8,
               "ulong": 8, "longlong": 8, "ulonglong": 8, "float": 4, "double": 8}
BUILTIN_TYPES: dict[str, int] = {  # typedef name -> element size in bytes
    "bool": 1, "size_t": 8, "ptrdiff_t": 8, "intptr_t": 8, "uintptr_t": 8, "ssize_t": 8,
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
    "int64_t": 8, "uint64_t": 8, "uint": 4, "ushort": 2, "uchar": 1, "ulong": 8,
    "__half": 2, "half": 2, "__half2": 4, "half2": 4, "__nv_bfloat16": 2, "__nv_bfloat162": 4,
    "dim3": 12, "cudaStream_t": 8, "cudaError_t": 4, "__auto_t": 4, "wchar_t": 4,
    "cudaTextureObject_t": 8, "cudaSurfaceObject_t": 8, "char16_t": 2, "char32_t": 4,
    "__int128_t": 16, "__uint128_t": 16,
}
for _b, _s in VECTOR_BASE.items():
    for _n in (1, 2, 3, 4):
        BUILTIN_TYPES[f"{_b}{_n}"] = _s * _n


def _tok(t: Tok, kind: str, text: str) -> Tok:
    return Tok(kind, text, t.path, t.line, t.col, frozenset(), False)


def _match_angle(toks, i, limit=64):
    """Matching `>` for a template argument list opening at toks[i] == '<'."""
    depth = 0
    paren = 0
    for j in range(i, min(len(toks), i + limit)):
        x = toks[j].text
        if x in (";", "{", "}", "&&", "||"):
            return None
        if x == "(":
            paren += 1
        elif x == ")":
            paren -= 1
            if paren < 0:
                return None
        elif paren == 0:
            if x == "<":
                depth += 1
            elif x == ">":
                depth -= 1
            elif x == ">>":
                depth -= 2
            if depth <= 0 and x in (">", ">>"):
                return j if depth == 0 else None
    return None


class Rewriter:
    def __init__(self):
        self.typedefs: set[str] = set(BUILTIN_TYPES)
        self.templates: set[str] = set()
        self.structs: set[str] = set()  # struct/class names
        self.shared_structs: set[str] = set()  # SharedMemory<T>-style wrappers of extern __shared__
        self.facts = Facts()  # from the C++ layer (cxx.py), for the lowering
        self.signatures: dict[str, set] = {}  # function -> {(number of parameters, ((index, default tokens), ...))}
        self.cooperative_groups = False  # does the file use cooperative groups (warpcode.uses_cooperative_groups)?

    def run(self, toks: list[Tok]) -> list[Tok]:
        toks = self._scopes(toks)
        self.templates |= self.facts.templates  # cxx.py took their `template <...>` away
        self._collect_templates(toks)
        return self._rewrite(toks)

    def _scopes(self, toks):
        """`A::b` -> `A__b`; drop `namespace X {` ... `}` and `extern "C" {` ... `}`."""
        out: list[Tok] = []
        i = 0
        n = len(toks)
        closers: list[bool] = []  # per open brace: drop its closer?
        for mark in [k for k, t in enumerate(toks) if t.text in _SCOPE_MARKS]:
            if mark < i:
                continue  # passed over with the mark before
            out += toks[i:mark]  # the tokens up to it are copied as they are
            i = mark
            t = toks[i]
            x = t.text
            if x == "::":
                if out and out[-1].kind == "id" and i + 1 < n and toks[i + 1].kind == "id":
                    prev = out[-1]
                    if prev.text in ("std", "cub", "thrust", "cuda", "cooperative_groups", "cg") \
                            and toks[i + 1].text not in ("numeric_limits",):
                        out[-1] = toks[i + 1].copy(path=prev.path, line=prev.line, col=prev.col)
                    else:
                        out[-1] = prev.named(prev.text + "__" + toks[i + 1].text)
                    i += 2
                    continue
                if i + 1 < n and toks[i + 1].kind == "str":  # asm("..." ::"r"(x)): two colons, kept
                    out.append(t)
                    i += 1
                    continue
                i += 1  # leading ::, or A<..>::b
                continue
            if x == "namespace" and t.kind == "id":
                j = i + 1
                while j < n and toks[j].text not in ("{", ";", "="):
                    j += 1
                if j < n and toks[j].text == "{":
                    closers.append(True)
                    i = j + 1
                    continue
                while j < n and toks[j].text != ";":
                    j += 1
                if out and out[-1].text == "using":  # `using namespace X;` goes as a whole
                    out.pop()
                i = j + 1
                continue
            if x == "extern" and i + 1 < n and toks[i + 1].kind == "str":
                if i + 2 < n and toks[i + 2].text == "{":
                    closers.append(True)
                    i += 3
                else:
                    i += 2
                continue
            if x == "{":
                closers.append(False)
            elif x == "}":
                if closers and closers.pop():
                    i += 1
                    continue
            out.append(t)
            i += 1
        out += toks[i:]
        return out

    def _collect_templates(self, toks):
        n = len(toks)
        for i in [k for k, t in enumerate(toks) if t.text in _TEMPLATE_MARKS]:
            t = toks[i]
            if t.text in ("struct", "class") and i + 2 < n and toks[i + 1].kind == "id" and \
                    toks[i + 2].text in ("{", "<", ":"):
                name = toks[i + 1].text
                self.structs.add(name)
                j = i + 2
                while j < n and j < i + 64 and toks[j].text != "{":
                    j += 1
                if j < n and toks[j].text == "{":
                    e = _match(toks, j, "{", "}")
                    body = {x.text for x in toks[j:e]} if e is not None and e - j < 400 else set()
                    if "__shared__" in body and "operator" in body:
                        self.shared_structs.add(name)
            if t.text == "template" and i + 1 < n and toks[i + 1].text == "<":
                j = _match_angle(toks, i + 1, 256)
                if j is None:
                    continue
                k = j + 1
                depth = 0
                while k < n and k < j + 200:
                    x = toks[k].text
                    if x in ("(", ";", "{", "=") and depth == 0:
                        break
                    if x == "<":
                        depth += 1
                    elif x == ">":
                        depth -= 1
                    k += 1
                if k < n and toks[k].text in ("(", "{", ";") and k > 0 and toks[k - 1].kind == "id":
                    self.templates.add(toks[k - 1].text)

    def _rewrite(self, toks: list[Tok]) -> list[Tok]:
        out: list[Tok] = []
        n = len(toks)
        i = 0
        typedefs = self.typedefs
        sig_depth = None  # paren depth of a function signature being read (top level)
        depth_paren = 0
        depth_brace = 0
        kinds: list[str] = []  # per open brace: "code" (a body) or "type" (struct/enum/initialiser)
        sig = None  # the signature being read: [name, commas so far, {index: default tokens}, index of its `(`]
        defaults: dict[int, list[Tok]] = {}  # index of a call's `)` -> default arguments to add before it
        while i < n:
            t = toks[i]
            x = t.text
            k = t.kind
            if i in defaults:
                out.extend(defaults.pop(i))
            if k == "id" and x not in _SPECIAL_NAMES and x not in self.structs and \
                    (i + 1 >= n or toks[i + 1].text not in ("(", "<")):
                out.append(t)  # a plain name: none of the cases below reads it
                i += 1
                continue
            if k == "id" and sig_depth is None and x in self.signatures and "code" in kinds[-1:] and \
                    i + 1 < n and toks[i + 1].text == "(":
                self._default_arguments(toks, i, defaults)
            if k == "id":
                if x in MARK:
                    m = MARK[x]
                    out += [_tok(t, "id", "_Alignas"), _tok(t, "op", "("), _tok(t, "num", str(m)), _tok(t, "op", ")")]
                    i += 1
                    continue
                if x in ("asm", "__asm__", "__asm") and i + 1 < n:
                    j = i + 1
                    while j < n and toks[j].text in ("volatile", "__volatile__", "goto", "inline"):
                        j += 1
                    if j < n and toks[j].text == "(":
                        e = _match(toks, j, "(", ")")
                        if e is not None:
                            out.extend(self._asm(t, toks[j + 1:e]))
                            i = e + 1
                            continue
                if x == "constexpr" and not (out and out[-1].text == "if"):  # a constexpr variable is const
                    out.append(_tok(t, "id", "const"))
                    i += 1
                    continue
                if x in DROP:
                    i += 1
                    if x == "noexcept" and i < n and toks[i].text == "(":
                        j = _match(toks, i, "(", ")")
                        i = (j + 1) if j is not None else i
                    continue
                if x in DROP_WITH_PARENS:
                    i += 1
                    if i < n and toks[i].text == "(":
                        j = _match(toks, i, "(", ")")
                        i = (j + 1) if j is not None else i
                    continue
                if x == "template" and i + 1 < n and toks[i + 1].text == "<":
                    j = _match_angle(toks, i + 1, 256)
                    if j is not None:
                        self._template_params(toks[i + 2:j])
                        i = j + 1
                        continue
                if x in ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast") \
                        and i + 1 < n and toks[i + 1].text == "<":
                    j = _match_angle(toks, i + 1)
                    if j is not None:
                        out.append(_tok(t, "op", "("))
                        out.extend(self._rewrite(toks[i + 2:j]))
                        out.append(_tok(t, "op", ")"))
                        i = j + 1
                        continue
                if x == "using":
                    j = i
                    while j < n and toks[j].text != ";":
                        j += 1
                    if i + 2 < n and toks[i + 1].kind == "id" and toks[i + 2].text == "=":
                        name = toks[i + 1]
                        typedefs.add(name.text)
                        out.append(_tok(t, "id", "typedef"))
                        out.extend(self._rewrite(toks[i + 3:j]))
                        out.append(name)
                        out.append(_tok(toks[j] if j < n else t, "op", ";"))
                    i = j + 1
                    continue
                if x in ("true", "false"):
                    out.append(_tok(t, "num", "1" if x == "true" else "0"))
                    i += 1
                    continue
                if x in ("nullptr", "NULL"):
                    out.append(_tok(t, "num", "0"))
                    i += 1
                    continue
                if x == "__int128":  # an integer to the analysis, like the widest C type
                    out += [_tok(t, "id", "long"), _tok(t, "id", "long")]
                    i += 1
                    continue
                if x == "auto":
                    out.append(_tok(t, "id", "__auto_t"))
                    i += 1
                    continue
                if x == "class" and not (out and out[-1].text in ("enum",)):
                    out.append(_tok(t, "id", "struct"))
                    i += 1
                    continue
                if x == "class":
                    i += 1
                    continue
                if x == "bool":
                    out.append(t)
                    i += 1
                    continue
                # constructor-style initialisation inside a body: T x(a, b); -> T x = __ctor(a, b);
                if kinds and kinds[-1] == "code" and i + 2 < n and toks[i + 1].text == "(" and out and \
                        toks[i + 2].text != ")" and \
                        (out[-1].text in typedefs or out[-1].text in TYPE_KEYWORDS) and \
                        x not in C_KEYWORDS and x not in typedefs and \
                        (len(out) < 2 or out[-2].text not in (".", "->")):
                    out += [t, _tok(t, "op", "="), _tok(t, "id", "__ctor")]
                    i += 1
                    continue
                # cooperative groups: tiled_partition<32>(g) -> __tiled_partition_32(g)
                if x == "tiled_partition" and i + 3 < n and toks[i + 1].text == "<" and \
                        toks[i + 2].kind == "num" and toks[i + 3].text == ">":
                    out.append(_tok(t, "id", f"__tiled_partition_{toks[i + 2].text}"))
                    i += 4
                    continue
                # temporaries of a struct: SharedMemory<T>() -> __ctor_SharedMemory()
                if x in self.structs and out and (out[-1].kind == "op" and out[-1].text not in (")", "]")
                                                  or out[-1].text == "return"):
                    j = i + 1
                    if j < n and toks[j].text == "<":
                        j2 = _match_angle(toks, j)
                        j = j2 + 1 if j2 is not None else j
                    if j < n and toks[j].text == "(":
                        out.append(_tok(t, "id", "__ctor_" + x))
                        i = j
                        continue
                # Name<args> followed by a declarator: a template type
                if i + 1 < n and toks[i + 1].text == "<" and x not in C_KEYWORDS and (
                        not out or out[-1].kind != "op" or out[-1].text in (";", "{", "}", "(", ",")):
                    j = _match_angle(toks, i + 1)
                    if j is not None and j + 1 < n and (toks[j + 1].kind == "id" or toks[j + 1].text in ("*", "&")) \
                            and all(y.kind in ("id", "num") or y.text in (",", "::", "*", "<", ">", ">>")
                                    for y in toks[i + 2:j]):
                        typedefs.add(x)
                        out.append(t)
                        i = j + 1
                        continue
                # template arguments on a known template, or before ::, or f<type>(...), or f<N>(...)
                if i + 1 < n and toks[i + 1].text == "<" and x not in C_KEYWORDS:
                    j = _match_angle(toks, i + 1)
                    if j is not None and j + 1 < n and toks[j + 1].text in ("(", "::") and all(
                            y.kind in ("id", "num") or y.text in (",", "::", "*", "<", ">", ">>")
                            for y in toks[i + 2:j]):
                        out.append(t)
                        i = j + 1
                        continue
                if i + 1 < n and toks[i + 1].text == "<" and (
                        x in self.templates or x in typedefs or
                        (i + 2 < n and (toks[i + 2].text in TYPE_KEYWORDS or toks[i + 2].text in typedefs
                                        or toks[i + 2].text in ("const", "unsigned")))):
                    j = _match_angle(toks, i + 1)
                    if j is not None and (j + 1 >= n or toks[j + 1].text in ("(", "::", "*", "&", ")", ",", ">")
                                          or toks[j + 1].kind == "id"):
                        out.append(t)
                        i = j + 1
                        continue
                # functional casts: int(x) -> (int)(x)
                in_params = sig_depth is not None and depth_paren == sig_depth  # `float (a)[4]`: a declarator
                if x in TYPE_KEYWORDS and i + 1 < n and toks[i + 1].text == "(" and out and not in_params and (
                        out[-1].kind == "op" and out[-1].text not in (")", "]") or out[-1].text == "return"):
                    out += [_tok(t, "op", "("), t, _tok(t, "op", ")")]
                    i += 1
                    continue
                # reference declarators: T &x -> T x
            if x == "(" and sig_depth is not None and i + 3 < n and toks[i + 1].text in ("&", "&&") \
                    and toks[i + 2].kind == "id" and toks[i + 3].text == ")":
                out.append(toks[i + 2])  # T (&a)[N] -> T a[N]
                i += 4
                continue
            if x in ("&", "&&") and i + 1 < n and toks[i + 1].kind == "id" and out:
                prev = out[-1]
                nxt2 = toks[i + 2].text if i + 2 < n else ""
                in_sig = sig_depth is not None and depth_paren >= sig_depth
                if ((prev.text in TYPE_KEYWORDS or prev.text in typedefs or prev.text in (">", "*", "const"))
                        and nxt2 in ("=", ",", ")", ";", "[")) or (
                        in_sig and prev.kind == "id" and prev.text not in C_KEYWORDS - TYPE_KEYWORDS
                        and nxt2 in (",", ")", "=", "[")):
                    i += 1
                    continue
            if x in ("&", "&&") and i + 1 < n and toks[i + 1].text in (",", ")") and out and \
                    sig_depth is not None and (out[-1].kind == "id" or out[-1].text == "*"):
                i += 1  # unnamed reference parameter
                continue
            if x == "=" and sig_depth is not None and depth_paren == sig_depth:
                # default argument: skip to , or ) at this depth (calls that leave it out get it back)
                j = i + 1
                d = 0
                while j < n:
                    y = toks[j].text
                    if y in ("(", "[", "{"):
                        d += 1
                    elif y in (")", "]", "}"):
                        if d == 0:
                            break
                        d -= 1
                    elif y == "," and d == 0:
                        break
                    j += 1
                if sig is not None:
                    sig[2][sig[1]] = toks[i + 1:j]
                i = j
                continue
            if x == "->" and out and out[-1].text == ")" and "code" not in kinds:
                # trailing return type `auto f(...) -> T {`: the declared `auto` stands for it
                j = _trailing_return_end(toks, i + 1)
                if j is not None:
                    i = j
                    continue
            if x == "[" and i + 1 < n and toks[i + 1].text == "[":  # [[attributes]]
                j = _match(toks, i, "[", "]")
                if j is not None:
                    i = j + 1
                    continue
            if x == "(":
                depth_paren += 1
                if sig_depth is None and _sig_start(out):
                    sig_depth = depth_paren
                    sig = [out[-1].text, 0, {}, i]
            elif x == ")":
                depth_paren -= 1
                if depth_paren < (sig_depth or 0):
                    sig_depth = None
                    self._note_signature(toks, sig, i)
                    sig = None
            elif x == "," and sig is not None and depth_paren == sig_depth:
                sig[1] += 1
            elif x == "{":
                depth_brace += 1
                sig_depth = None
                kinds.append(_brace_kind(out))
            elif x == "}":
                depth_brace = max(0, depth_brace - 1)
                if kinds:
                    kinds.pop()
            elif x == ";" and depth_brace == 0:
                sig_depth = None
            if x == "typedef":
                self._note_typedef(toks, i)
            out.append(t)
            i += 1
        self._guess_types(out)
        return out

    def _asm(self, t, inner):
        """asm("tmpl" : "=r"(x) : "r"(y) : "memory") -> __warplint_asm("tmpl", __asm_out("=r", x), __asm_in("r", y))"""
        groups: list[list[Tok]] = [[]]
        depth = 0
        for x in inner:
            if x.text in ("(", "["):
                depth += 1
            elif x.text in (")", "]"):
                depth -= 1
            elif x.text == ":" and depth == 0 and len(groups) < 4:
                groups.append([])
                continue
            elif x.text == "::" and depth == 0 and len(groups) < 3:  # `::"r"(x)`: no outputs, lexed as one token
                groups += [[], []]
                continue
            groups[-1].append(x)
        out = [_tok(t, "id", "__warplint_asm"), _tok(t, "op", "(")]
        out.extend(x for x in groups[0] if x.kind == "str")
        if not groups[0] or groups[0][0].kind != "str":
            out.append(_tok(t, "str", '""'))
        for gi, kind in ((1, "__asm_out"), (2, "__asm_in")):
            if gi >= len(groups):
                break
            g = groups[gi]
            k = 0
            while k < len(g):
                if g[k].text == "[":  # [name] "r"(x)
                    while k < len(g) and g[k].text != "]":
                        k += 1
                    k += 1
                    continue
                if g[k].kind == "str" and k + 1 < len(g) and g[k + 1].text == "(":
                    e = _match(g, k + 1, "(", ")")
                    if e is None:
                        break
                    out += [_tok(g[k], "op", ","), _tok(g[k], "id", kind), _tok(g[k], "op", "("), g[k],
                            _tok(g[k], "op", ",")]
                    out.extend(self._rewrite(g[k + 2:e]))
                    out.append(_tok(g[k], "op", ")"))
                    k = e + 1
                    continue
                k += 1
        out.append(_tok(t, "op", ")"))
        return out

    def _note_signature(self, toks, sig, close):
        """Remember a function's number of parameters and its default arguments."""
        if sig is None:
            return
        name, commas, given, open_ = sig
        inner = [t.text for t in toks[open_ + 1:close]]
        count = 0 if inner in ([], ["void"]) else commas + 1
        self.signatures.setdefault(name, set()).add(
            (count, tuple((k, tuple(given[k])) for k in sorted(given))))

    def _default_arguments(self, toks, i, defaults):
        """For the call `f(...)` at i that leaves out arguments which the one declaration of f
        with that many parameters or more gives defaults for: the tokens to add before its `)`
        (no overload takes exactly the arguments written)."""
        sigs = self.signatures[toks[i].text]
        close = _match(toks, i + 1, "(", ")") if any(d for _, d in sigs) else None
        if close is None:
            return
        depth, commas = 0, 0
        for t in toks[i + 2:close]:
            if t.text in ("(", "[", "{"):
                depth += 1
            elif t.text in (")", "]", "}"):
                depth -= 1
            elif t.text == "," and depth == 0:
                commas += 1
        given = 0 if close == i + 2 else commas + 1
        if any(count == given for count, _ in sigs):
            return
        fits = [dict(d) for count, d in sigs if count > given and all(k in dict(d) for k in range(given, count))]
        if len(fits) != 1:
            return
        added: list[Tok] = []
        for k in range(given, max(fits[0]) + 1):
            if added or given:
                added.append(_tok(toks[close], "op", ","))
            added.extend(self._rewrite(list(fits[0][k])))
        defaults[close] = added

    def _note_typedef(self, toks, i):
        depth = 0
        for j in range(i + 1, min(len(toks), i + 4000)):
            x = toks[j].text
            if x in ("{", "(", "["):
                depth += 1
            elif x in ("}", ")", "]"):
                depth -= 1
            elif x == ";" and depth <= 0:
                k = j - 1
                while k > i and toks[k].kind != "id":
                    k -= 1
                # function-pointer typedef: typedef void (*name)(...)
                for q in range(i + 1, j):
                    if toks[q].text == "(" and q + 2 < j and toks[q + 1].text == "*" and toks[q + 2].kind == "id":
                        k = q + 2
                        break
                self.typedefs.add(toks[k].text)
                return

    def _template_params(self, ps):
        # split at top-level commas
        parts: list[list[Tok]] = [[]]
        depth = 0
        for t in ps:
            if t.text in ("<", "("):
                depth += 1
            elif t.text in (">", ")"):
                depth -= 1
            elif t.text == "," and depth == 0:
                parts.append([])
                continue
            parts[-1].append(t)
        for p in parts:
            if not p:
                continue
            eq = next((j for j, t in enumerate(p) if t.text == "="), len(p))
            names = [t for t in p[:eq] if t.kind == "id"]
            if not names:
                continue
            name = names[-1].text
            if p[0].text in ("typename", "class", "template"):
                self.typedefs.add(name)

    def _guess_types(self, toks):
        """Identifiers used as types: `Foo x`, `Foo *x` in declarations, `(Foo *)` casts."""
        typedefs = self.typedefs
        n = len(toks)
        for i in range(n - 1):
            t = toks[i]
            if t.kind != "id" or t.text in C_KEYWORDS or t.text in typedefs or t.text in self.facts.values:
                continue
            prev = toks[i - 1].text if i else ";"
            if prev in ("struct", "union", "enum", "goto", ".", "->"):
                continue
            nx = toks[i + 1]
            if nx.kind == "id" and nx.text not in C_KEYWORDS and nx.text != "_Alignas":
                typedefs.add(t.text)
            elif nx.kind == "id" and nx.text in ("const", "volatile"):
                typedefs.add(t.text)
            elif nx.text == "*" and prev in ("(", ",", "{", ";", "}", "const", "volatile", ")") and i + 2 < n:
                j = i + 1
                while j < n and toks[j].text in ("*", "const", "volatile"):
                    j += 1
                if j < n and (toks[j].text == ")" and prev == "(" or
                              toks[j].kind == "id" and j + 1 < n and toks[j + 1].text in (",", ")", "=", ";", "[")
                              and prev in ("(", ",", "{", ";", "}", "const", "volatile")):
                    if prev in ("(", ",") and toks[j].kind == "id":
                        # a * b inside a call is ambiguous; only in a declaration-like context
                        if not (j + 1 < n and toks[j + 1].text in (",", ")") and _sig_like(toks, i)):
                            continue
                    typedefs.add(t.text)
            elif nx.text == ")" and prev == "(" and i + 2 < n and (toks[i + 2].kind in ("id", "num")
                                                                  and toks[i + 2].text not in C_KEYWORDS):
                typedefs.add(t.text)


def _trailing_return_end(toks, i):
    """Index of the `{` or `;` ending the trailing return type that starts at i (outside
    brackets), or None."""
    depth = 0
    for j in range(i, min(len(toks), i + 256)):
        x = toks[j].text
        if x in ("(", "[", "<"):
            depth += 1
        elif x in (")", "]", ">"):
            depth -= 1
        elif x == ">>":
            depth -= 2
        elif x in ("{", ";", "=") and depth <= 0:
            return j
    return None


def _brace_kind(out) -> str:
    """Kind of the `{` about to be appended: a code block, or a struct/enum body / initialiser."""
    for j in range(len(out) - 1, max(-1, len(out) - 64), -1):
        x = out[j].text
        if x in ("struct", "union", "enum", "=", ","):
            return "type"
        if x in (")", ";", "{", "}", "else", "do", ":"):
            return "code"
    return "type"


def _sig_start(out) -> bool:
    """Is the `(` about to be appended the parameter list of a declared function `T name(`?"""
    if len(out) < 2:
        return False
    name, prev = out[-1], out[-2]
    if name.kind != "id" or name.text in C_KEYWORDS or name.text in ("__ctor", "_Alignas"):
        return False
    if prev.kind == "id":
        return prev.text not in C_KEYWORDS or prev.text in TYPE_KEYWORDS or prev.text in ("const", "volatile")
    if prev.text in ("*", "&", ">"):
        return True
    return prev.text == ")" and len(out) >= 5 and out[-5].text == "_Alignas"


def _sig_like(toks, i) -> bool:
    """Is toks[i] inside a parameter list of a top-level declaration?"""
    depth = 0
    for j in range(i - 1, max(-1, i - 400), -1):
        x = toks[j].text
        if x == ")":
            depth += 1
        elif x == "(":
            if depth == 0:
                return j > 0 and toks[j - 1].kind == "id" and _top_level(toks, j - 1)
            depth -= 1
        elif x in ("{", "}", ";"):
            return False
    return False


def _top_level(toks, i) -> bool:
    depth = 0
    for j in range(i - 1, max(-1, i - 4000), -1):
        x = toks[j].text
        if x == "}":
            depth += 1
        elif x == "{":
            if depth == 0:
                return False
            depth -= 1
    return True
