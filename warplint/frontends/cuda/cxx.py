"""The C++ layer: C++ constructs desugared on a syntax tree into C that means the same.

The preprocessed tokens are parsed with tree-sitter (grammar `tree-sitter-cuda`); each construct
this layer knows is replaced by C with the same meaning for the analysis, as token edits that keep
every token's original location (new tokens take the location of the token they stand for).
What the tree does not show with certainty (a subtree with a parse error) is left as it was; a
construct left that the C parser then rejects is named in the function's note (`Facts.construct`).

  functional cast       `T(x)`, `idx_t(e)`, `X<A>(x)`, `ns::X(x)` -> `(T)(x)`; `T()` -> `(T)0`;
                        `T(a, b)` -> `__ctor(a, b)` (T a type named in a declaration of the file)
  direct initialisation `T x(a)`, `T x{a}`         -> `T x = a`, `T x = {a}`; several values:
                                                      `T x = __ctor(a, b)` (an opaque constructor)
  braced values         `return {a, b};`, `v = {a}`, `T{a, b}` -> compound literals `(T){a, b}`;
                        `T{}` -> `(T){0}`; of a type not known here: `__ctor(a, b)`
  template-ids          `f<A>(x)`, `o.template f<A>(x)`, `std::is_same_v<A, B>` -> `f(x)`, `o.f(x)`,
                        `std::is_same_v` (templates are erased: a uniform unknown)
  type aliases          `using X = ns::Y<A>;`, `typedef ns::Y<A> X;` -> `typedef ns__Y X;` (opaque);
                        `decltype(e)` -> `auto`
  parameter packs       `Args... args` -> `Args args`, `f(args...)` -> `f(args)` (one opaque
                        value); `sizeof...(args)` -> `__sizeof_pack_args` (a uniform unknown)
  conversion calls      `o.operator T()`, `p->operator T()` -> `o`, `p[0]` (the value converted: the same
                        value for the analysis)
  placement new         `new (p) T{v}`             -> `(*(p) = v)`
  if/switch initialiser `if (init; c) s`           -> `{ init; if (c) s }`
  names `final`, `override` (variables)            -> `__final`, `__override` (the rewriter drops the words)
  alternative tokens    `and`, `or`, `not`, ...    -> `&&`, `||`, `!`, ...
  reference parameters  `int &x` (not const)       -> `int _Alignas(7020) x`: the lowering passes it
                                                      in and copies it back out at each call
  references as locals  `T &r = v;`                -> every later `r` reads `v` (an alias)
                        `T &r = a[i];`             -> `T *r = &(a[i]);` and `r` -> `(*r)`
  const references      `const T &x`               -> `const T x` (a value: it is never written)
  qualified names       `detail::lane_id`          -> `detail__lane_id`, also for a function
                                                      defined in `namespace detail` and called
                                                      from inside it without the qualifier
                                                      (`lane_id()`, `lane_id<T>()`);
                                                      `cg::x` with `namespace cg = cooperative_groups`
                                                      -> `cooperative_groups::x`; `ns::S`, `ns::S<A>` of a class
                                                      defined in `namespace ns` -> `S` (its C name)
  templates             `template <typename T, int N> f` -> `f`: T a type name (opaque), N a
                                                      name declared nowhere (a uniform unknown)
  template values       `f<T, 24>(v)`, `g(x)` with `template <bool S = false> g` -> `f__values_K(v)`,
                        `g__values_K(x)`: a copy of the callee (outside classes) with N, S bound to
                        the constants (`if constexpr (S)` folds; a launch `k<24><<<g, b>>>(x)` too);
                        a type parameter bound to a class of the file the call names or constructs
                        (`reduce(v, Sum<T>{})`: `op(a, b)` -> `Sum__call(&op, a, b)`);
                        at most MAX_TEMPLATE_COPIES a file
  compile-time choices  a kernel with `constexpr int U = H % 512 == 0 ? 4 : 2;` (H fixed nowhere
                        here) -> one copy per value, `k (U = 4)` and `k (U = 2)`, the uses of U
                        its constant (`_Choices`; at most MAX_CHOICE_COPIES per kernel)
  type parameters       `G::size()` with G a type parameter used only through static members,
                        and one class template here with all of them (`warp_group<W, S>`) ->
                        `(32 * G__W)`: what the member returns, its class's values G's own
                        unknowns (`_TypeParameters`); `T *p` with T a type parameter whose
                        members used here one class (not a template) has all of -> that class
                        (its fields placed, `p->f(i)` its member function)
  class members         `struct S { int a; int f(int x) { return a + x; } };` -> `struct S { int
                        a; };` then `int S__f(struct S *this, int x) { return this->a + x; }`;
                        `o.f(1)`, `p->f(1)`, `o(1)` -> `S__f(&o, 1)`, `S__f(p, 1)`, `S__call(&o, 1)`;
                        on a temporary `S<A>().f(1)` -> `S__f(&(struct S){0}, 1)`;
                        constructors' initialiser lists as assignments; `S::g` of a static member;
                        a specialisation `struct S<int, T> {...}` a class of its own (`S__L`, L its
                        line), `S<2>::g` the member of the explicit specialisation `S<2>`; a class
                        with member functions defined in a function body (`union S {...} x;`) goes
                        before the function as `S__L` (L its line), and so does each `S` there
  lambdas               `auto f = [&](int x) {...};` -> a function before the enclosing one, the
                        captured variables its last parameters (by reference and written: copied
                        in and out; `[t = e]`: a parameter whose argument is e; `this`: the
                        object); invoked where it stands `[&]{...}()` -> a call of it; passed to a
                        function the file defines -> a copy of the callee, whose calls of that
                        parameter call it; passed elsewhere: analysed alone, with a note
  structured bindings   `auto [a, b] = e;`         -> `auto __binding = e; auto a = __binding.__0;
                                                      auto b = __binding.__1;` (positional parts:
                                                      `return {x, y};` gives x, y)
  range-for             `for (T x : r) s`          -> `for (int i = 0; i < __ctor(r); i++) { T x = r[i];
                                                      s }` (an array's count: `__ctor(sizeof(r))`, a
                                                      constant; a written `T &x`: `T *x = &(r[i])`)
  cooperative groups    `tiled_partition<kTile>(g)` -> `tiled_partition(g, kTile)`
  static_assert         `__builtin_assume(cond);` in a function body, else removed
"""
from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter

from .lexer import Tok

REF_MARK = 7020  # `_Alignas(7020)` on a parameter: a C++ reference (copy in, copy out)

ALTERNATIVE_TOKENS = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^",
                      "compl": "~", "and_eq": "&=", "or_eq": "|=", "xor_eq": "^=", "not_eq": "!="}

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_cuda
        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    return _PARSER


_ARITHMETIC = frozenset({"identifier", "number_literal", "binary_expression", "unary_expression",
                         "parenthesized_expression", "true", "false"})


def _arithmetic(n) -> bool:
    """Is `n` arithmetic on names and numbers only (what a C expression reads the same)?"""
    return n.type in _ARITHMETIC and all(_arithmetic(c) for c in n.named_children)


def _new(at: Tok, kind: str, text: str) -> Tok:
    return Tok(kind, text, at.path, at.line, at.col)


def alternative_tokens(toks: list[Tok]) -> list[Tok]:
    """`and` -> `&&` ...: C++ keywords, operators wherever they appear."""
    return [t.copy(kind="op", text=ALTERNATIVE_TOKENS[t.text]) if t.kind == "id" and t.text in ALTERNATIVE_TOKENS
            else t for t in toks]


_tok_text = attrgetter("text")
_CUDA_SPECIFIERS = frozenset(("__device__", "__host__", "__align__"))


def cuda_specifiers(toks: list[Tok]) -> list[Tok]:
    """CUDA's specifiers the grammar does not know go (the rewriter drops them too):
    `[&] __device__ (int r) {...}`, the execution space of a lambda (mapped to a `__device__`
    function), only after a lone `]` (after `]]`, an attribute, it is a function's qualifier);
    `__align__(16)`, an alignment (no meaning for the analysis)."""
    out: list[Tok] = []
    i = 0  # toks[:i] are decided
    for k in [k for k, x in enumerate(map(_tok_text, toks)) if x in _CUDA_SPECIFIERS]:
        if k < i:
            continue  # inside `__align__ ( n )`
        out.extend(toks[i:k])
        i = k  # kept unless dropped below
        if toks[k].text == "__align__":
            if k + 3 < len(toks) and toks[k + 1].text == "(" and toks[k + 3].text == ")":
                i = k + 4  # `__align__ ( n )`
        elif out and out[-1].text == "]" and (k < 2 or toks[k - 2].text != "]"):
            i = k + 1
    if i == 0:
        return toks  # nothing dropped
    out.extend(toks[i:])
    return out


def conversion_calls(toks: list[Tok]) -> list[Tok]:
    """`o.operator T()` -> `o`, `p->operator T()` -> `p[0]`: the value converted to T, the same
    value for the analysis (the grammar does not read these calls)."""
    out: list[Tok] = []
    i = 0  # toks[:i] are decided
    for k in [k for k, x in enumerate(map(_tok_text, toks)) if x == "operator"]:  # a call starts at k - 1
        if k - 1 < i or (end := _conversion_call_end(toks, k - 1)) is None:
            continue
        out.extend(toks[i:k - 1])
        if toks[k - 1].text == "->":
            out += [_new(toks[k - 1], "op", "["), _new(toks[k - 1], "num", "0"), _new(toks[k - 1], "op", "]")]
        i = end + 1
    if i == 0:
        return toks  # no conversion call
    out.extend(toks[i:])
    return out


def _conversion_call_end(toks: list[Tok], i: int) -> int | None:
    """The index of the `)` ending `. operator T ( )` (or `->`) at toks[i]; None if none starts there.
    T: names, `::`, `*` and `&` (`operator __half`, `operator unsigned int`, `operator ns::T *`)."""
    if toks[i].text not in (".", "->") or i + 1 >= len(toks) or toks[i + 1].text != "operator":
        return None
    j = i + 2
    if j >= len(toks) or toks[j].kind != "id":
        return None  # `o.operator()(x)`, `o.operator+(x)`: a member of its own
    while j < len(toks) and (toks[j].kind == "id" or toks[j].text in ("::", "*", "&")):
        j += 1
    if j + 1 < len(toks) and toks[j].text == "(" and toks[j + 1].text == ")":
        return j + 1
    return None


class Source:
    """The tokens as text for the parser, and the way back from byte offsets to tokens.  Between
    two tokens: nothing where they touched in the source (`operator()` is one name to the
    grammar), else a space, or a line break where the line changes."""

    def __init__(self, toks: list[Tok]):
        self.toks = toks
        parts = []
        self.starts = starts = []  # in characters; in bytes where a token is not ASCII (below)
        pos = 0
        line = path = end = None  # of the token before
        for t in toks:
            x = t.text
            if line is None:
                sep = ""
            elif t.line != line or t.path != path:
                sep = "\n"
            else:
                sep = "" if t.col == end else " "
            pos += len(sep)
            parts.append(sep)
            parts.append(x)
            starts.append(pos)
            pos += len(x)
            line, path, end = t.line, t.path, t.col + len(x)
        text = "".join(parts)
        self.text = text.encode("utf-8", "surrogateescape")
        if len(self.text) != len(text):  # some character is several bytes
            self.starts = _byte_starts(parts)

    def span(self, node) -> tuple[int, int]:
        """The tokens [a, b) a node covers (a leaf inside one token covers none or that one)."""
        return bisect_left(self.starts, node.start_byte), bisect_left(self.starts, node.end_byte)


def _byte_starts(parts: list[str]) -> list[int]:
    """The byte offset of each token in `Source`'s parts (separator, token, separator, ...)."""
    starts = []
    pos = 0
    for i in range(0, len(parts), 2):
        pos += len(parts[i])  # a separator is ASCII
        starts.append(pos)
        pos += len(parts[i + 1].encode("utf-8", "surrogateescape"))
    return starts


class Facts:
    """What the lowering needs to know of the C++ it no longer sees."""

    def __init__(self, ref_params=None, display=None, notes=None, values=None, tree=None, src=None):
        self.ref_params: dict[str, tuple[int, ...]] = ref_params or {}  # function -> reference parameters
        self.display: dict[str, str] = display or {}  # mangled name -> `a::b`
        self.notes: list[tuple[Tok, str]] = notes or []
        self.values: set[str] = values or set()  # template value parameters: never type names
        self.tree, self.src = tree, src
        self.templates: set[str] = set()  # names of function and class templates (their `<...>` is gone)
        self.mapped: set[int] = set()  # ids of the nodes of UNSUPPORTED types this layer did map
        self.at: dict | None = None  # (path, line, col) -> byte offset, built on the first question

    def construct(self, tok: Tok) -> str | None:
        """The C++ construct this layer does not map around the token (the C it left fails to
        parse there), in words; None when there is none."""
        if self.tree is None:
            return None
        if self.at is None:
            # the first token at a place wins: the pairs are taken last to first
            self.at = {(t.path, t.line, t.col): start
                       for t, start in zip(reversed(self.src.toks), reversed(self.src.starts))}
        b = self.at.get((tok.path, tok.line, tok.col))
        n = self.tree.root_node.descendant_for_byte_range(b, b) if b is not None else None
        statement = None
        while n is not None:
            if n.type in UNSUPPORTED and n.id not in self.mapped:
                return UNSUPPORTED[n.type]
            if statement is None and (n.type.endswith("statement") or n.type == "declaration"):
                statement = n
            n = n.parent
        inside = _nodes(statement, tuple(UNSUPPORTED)) if statement is not None else []
        inside = [m for m in inside if m.id not in self.mapped]
        return UNSUPPORTED[inside[0].type] if inside else None  # in the statement of the error


UNSUPPORTED = {  # C++ this layer leaves as it is, in the words of a note
    "for_range_loop": "range-for", "lambda_expression": "a lambda not named by a local",
    "structured_binding_declarator": "a structured binding", "throw_statement": "throw",
    "try_statement": "try/catch", "new_expression": "new", "delete_expression": "delete",
    "fold_expression": "a fold expression", "decltype": "decltype", "static_assert_declaration": "static_assert",
    "operator_cast": "a conversion operator", "template_function": "a template-id", "template_type": "a template-id",
    "template_method": "a template-id", "user_defined_literal": "a user-defined literal",
    "variadic_parameter_declaration": "a parameter pack", "parameter_pack_expansion": "a parameter pack",
}


def desugar(toks: list[Tok], typenames: set[str]) -> tuple[list[Tok], Facts]:
    """The tokens with the C++ constructs this layer knows desugared, and the facts about them."""
    toks = conversion_calls(cuda_specifiers(alternative_tokens(toks)))
    if not toks:
        return toks, Facts()
    src = Source(toks)
    tree = _parser().parse(src.text)
    layer = _Layer(src, typenames)
    try:
        layer.collect(tree.root_node)
        try:
            out = layer.items(tree.root_node)
        except RecursionError:
            return toks, Facts(notes=[(toks[0], "C++ constructs nested too deeply: read as C")])
        layer.typenames -= layer.values
        facts = Facts(layer.ref_params, layer.display, layer.notes, layer.values, tree, src)
        facts.templates = layer.templates
        facts.mapped = layer.lambdas | set(layer.range_fors) | layer.bindings
        return out, facts
    finally:  # its parts hold it (templates, choices, handlers): a reference cycle, else left to
        vars(layer).clear()  # the cyclic collector with all they hold


def _walk(root):
    """Every node below `root`, in document order, without recursion."""
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


_NAMING = ("template_declaration", "namespace_alias_definition", "type_definition", "alias_declaration", "type_parameter_declaration",
           "optional_type_parameter_declaration", "struct_specifier", "class_specifier", "union_specifier",
           "enum_specifier", "function_definition", "declaration", "parameter_declaration",
           "optional_parameter_declaration", "variadic_type_parameter_declaration")
_TARGETS = ("call_expression", "init_declarator", "declaration", "reference_declarator", "qualified_identifier",
            "function_declarator", "template_declaration", "abstract_reference_declarator", "return_statement",
            "assignment_expression", "static_assert_declaration", "compound_literal_expression", "for_range_loop")
_CONTEXTUAL_KEYWORDS = ("final", "override")  # names, but for a class's or a member's specifier
_KEEPS_TEMPLATE_ARGUMENTS = ("tiled_partition", "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast")
_TARGETS += ("template_function", "parameter_pack_expansion", "variadic_declarator", "sizeof_expression",
             "new_expression", "decltype", "if_statement", "switch_statement", "alias_declaration",
             "type_definition", "template_method", "dependent_name")  # types and expressions
def _nodes(root, types) -> list:
    """The nodes of these types under `root` (and `root`), in document order, outer ones first
    (a tree cursor's walk: fast, and no query to compile in every process)."""
    wanted = set(types)
    out = []
    cur = root.walk()
    while True:
        if cur.node.type in wanted:
            out.append(cur.node)
        if cur.goto_first_child():
            continue
        while not cur.goto_next_sibling():
            if not cur.goto_parent() or cur.node == root:
                return out


def _in_error(n) -> bool:
    """Is `n` in (or) a part the parser could not read?"""
    while n is not None:
        if n.type == "ERROR" or n.is_missing:
            return True
        n = n.parent
    return False


def _nodes_spans(root, types, spanned) -> tuple[list, dict]:
    """`_nodes(root, types)`, and for each node of a type in `spanned` (and in `types`), the
    slice of that list its subtree's nodes make: node id -> (start, end)."""
    wanted = set(types)
    out = []
    spans: dict[int, tuple[int, int]] = {}
    open_: list[tuple] = []  # (depth, node id, start) of the spanned nodes being walked
    depth = 0
    cur = root.walk()
    while True:
        n = cur.node
        t = n.type
        if t in spanned:
            open_.append((depth, n.id, len(out)))
        if t in wanted:
            out.append(n)
        if cur.goto_first_child():
            depth += 1
            continue
        while True:  # n's subtree is done, and so are those of the ancestors left
            while open_ and open_[-1][0] >= depth:
                _, i, start = open_.pop()
                spans[i] = (start, len(out))
            if cur.goto_next_sibling():
                break
            if not cur.goto_parent():
                return out, spans
            depth -= 1


def _identifiers(root) -> list[tuple]:
    """(identifier, its parent) of every identifier under `root` (and `root`), in document order:
    the parents are kept on the way down (a node's `parent` is found from the root)."""
    out = []
    path = [root.parent if root.type == "identifier" else None]
    cur = root.walk()
    while True:
        n = cur.node
        if n.type == "identifier":
            out.append((n, path[-1]))
        if cur.goto_first_child():
            path.append(n)
            continue
        while not cur.goto_next_sibling():
            if not cur.goto_parent():
                return out
            path.pop()


_DECLARATIONS = ("parameter_declaration", "declaration")
_DECLARING = frozenset({"init_declarator", "parameter_declaration", "declaration", "pointer_declarator",
                        "array_declarator", "reference_declarator", "optional_parameter_declaration"})


def _error_ids(root) -> set[int]:
    """The ids of the nodes `_in_error` says are in a part the parser could not read, in one walk
    down the subtrees with an error (a node's `parent` is found from the root: asking for every
    node's ancestors costs their depth squared)."""
    out: set[int] = set()
    if not root.has_error:
        return out
    cur = root.walk()
    while True:
        n = cur.node
        if n.type == "ERROR" or n.is_missing:
            out.update(m.id for m in _nodes_all(n))
        elif n.has_error and cur.goto_first_child():
            continue
        while not cur.goto_next_sibling():
            if not cur.goto_parent():
                return out


def _nodes_all(root) -> list:
    """Every node under `root` (and `root`), in document order."""
    out = []
    cur = root.walk()
    while True:
        out.append(cur.node)
        if cur.goto_first_child():
            continue
        while not cur.goto_next_sibling():
            if not cur.goto_parent():
                return out


def _text(node) -> str:
    return node.text.decode("utf-8", "surrogateescape")


def _declarator_name(d):
    """The name node a (function) declarator declares, through pointers, references, arrays."""
    while d is not None and d.type not in ("identifier", "qualified_identifier", "field_identifier",
                                           "operator_name", "destructor_name", "type_identifier"):
        inner = d.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in d.named_children if c.type.endswith("declarator") or c.type == "identifier"),
                         None)
        d = inner
    return d


def _is_const(decl) -> bool:
    return any(c.type == "type_qualifier" and _text(c) == "const" for c in decl.children)


_WRITES = ("assignment_expression", "update_expression")
_PLACES = ("identifier", "field_expression", "qualified_identifier")  # a range named, not computed


def _written_reference(param, d) -> bool:
    """Is declarator `d` of parameter `param` a non-const reference the function may write (one
    to copy in and back out)?"""
    return d is not None and d.type == "reference_declarator" and _text(d.children[0]) == "&" \
        and not _is_const(param) and _may_write(param, d)


def _may_write(param, declarator) -> bool:
    """May the function body write the reference parameter?  Written: assigned (`x = `, `x += `),
    incremented, its address taken, bound to a local reference, passed to a call (perhaps to
    another reference), named by inline asm or used as an object (`x.f()`, `x[i]`).  Read only:
    it is a value (no copy-out, so the caller's place is not written)."""
    name = _declarator_name(declarator)
    fn = param.parent.parent if param.parent is not None else None  # parameter_list -> declarator
    while fn is not None and fn.type != "function_definition" and fn.type != "lambda_expression":
        fn = fn.parent
    body = fn.child_by_field_name("body") if fn is not None else None
    if name is None or body is None:
        return True
    return _written_in(body, _text(name))


def _written_in(body, wanted: str) -> bool:
    """Is the variable named `wanted` perhaps written in `body` (as `_may_write` says)?"""
    for use in _nodes(body, ("identifier",)):
        if _text(use) != wanted:
            continue
        up, use = _place_of(use)
        if up is None:
            continue
        if up.type == "init_declarator" and up.child_by_field_name("declarator").type == "reference_declarator":
            return True  # a local reference to it: written through the alias
        if up.type in _WRITES and up.child_by_field_name("left" if up.type != "update_expression" else "argument") == use:
            return True
        if up.type == "pointer_expression" and _text(up.children[0]) == "&":
            return True
        if up.type in ("argument_list", "field_expression", "subscript_expression") or "asm" in up.type:
            return True  # passed on, used as an object, or an operand of inline asm (an output?)
    return False


def _place_of(use):
    """The node that uses the place `use` names, through parentheses and `c ? a : b`; and the
    child of it that holds the place."""
    up = use.parent
    while up is not None and up.type in ("parenthesized_expression", "conditional_expression", "comma_expression"):
        use, up = up, up.parent
    return up, use


def _called_name(f):
    """The name a call's function (or a declarator) spells: `f` of `f<A>`."""
    return f.child_by_field_name("name") if f.type == "template_function" else f


def _namespace_path(n) -> tuple[str, ...]:
    """The namespaces around node `n`, outermost first."""
    path = []
    p = n.parent
    while p is not None:
        if p.type == "namespace_definition":
            name = p.child_by_field_name("name")
            if name is not None:
                path[:0] = _text(name).replace(" ", "").split("::")
        p = p.parent
    return tuple(path)


def mangle(parts) -> str:
    return "__".join(parts)


class _Layer:
    def __init__(self, src: Source, typenames: set[str]):
        self.src = src
        self.typenames = typenames  # the rewriter's type names: those found here are added
        self.edits: dict[int, list] = {}  # first token -> nodes to rewrite starting there, outer first
        self.starts: list[int] = []  # sorted keys of edits
        self.active: set[int] = set()  # ids of the nodes being rewritten
        self.ref_params: dict[str, tuple[int, ...]] = {}
        self.display: dict[str, str] = {}
        self.notes: list[tuple[Tok, str]] = []
        self.functions: set[tuple[str, ...]] = set()  # qualified names of the functions in namespaces
        self.alias: dict[int, object] = {}  # token index of a use of a local reference -> its declaration
        self.local_refs: dict[int, str] = {}  # id of a local reference's init_declarator -> "alias"/"pointer"
        self.fixed: dict[int, object] = {}  # node id -> its handler (class members, decided per class)
        self.fixed_nodes: list = []
        self.alias_nodes: list = []  # uses of local references
        self.decls: dict[int, dict] = {}  # function id -> name -> [(start, type node, declarator)]
        self.pending: list[Tok] = []  # member functions taken out of a class, for after its item
        self.classes: dict[str, _Class] = {}  # classes whose members are functions now
        self.before: list[Tok] = []  # lambdas as functions, for before the item that defines them
        self.values: set[str] = set()  # names of template value parameters
        self.templates: set[str] = set()  # names of the templates defined
        self.variables: set[str] = set()  # names declared as variables or parameters (never templates)
        self.ns_alias: dict[str, object] = {}  # `namespace cg = cooperative_groups;`: alias -> target node
        self.class_bodies: set[str] = set()  # names of the classes defined here (with a body)
        self.class_places: set[tuple[str, ...]] = set()  # their namespaces and names: `ns::X` -> X
        self.lambdas: set[int] = set()  # ids of the lambdas mapped to functions
        self.specialisations: dict[str, str] = {}  # `R<2>` -> the name of that explicit specialisation
        self.bound_types: dict[int, str] = {}  # type node of a type parameter (or of a local class) -> the
        # class it is read as
        self.bindings: set[int] = set()  # ids of the structured bindings mapped
        self.range_fors: dict[int, str] = {}  # id of a range-for mapped -> its loop variable's kind
        self.definitions: dict[str, list] = {}  # name -> definitions of functions outside classes
        self.specialising = None  # what a callee's copy is rendered for: a _Lambda, a _TemplateCopy
        self.template_values = _TemplateValues(self)
        self.choices = _Choices(self)
        self._error_ids: set[int] | None = None  # of the file's tree (error_ids)
        self.function_nodes: tuple[list, dict] = ([], {})  # collect's walk, and the functions' spans in it

    # -- collecting --------------------------------------------------------------------------
    def collect(self, root) -> None:
        """Type names, functions and references first (uses may come before definitions), then
        the nodes to rewrite (none inside a part the parser could not read)."""
        everything, spans = _nodes_spans(root, set(_NAMING) | set(_TARGETS) | {
            "struct_specifier", "class_specifier", "union_specifier", "lambda_expression"}, ("function_definition",))
        self.function_nodes = (everything, spans)

        kinds = [n.type for n in everything]

        def of(*types):  # the nodes of the one walk, in document order
            return [n for n, kind in zip(everything, kinds) if kind in types]

        for n in of(*_NAMING):
            self._names(n)
        for n in of("struct_specifier", "class_specifier", "union_specifier"):
            if n.child_by_field_name("body") is not None:
                _Class(self, n).plan()
        for n in of("init_declarator"):
            if (d := n.child_by_field_name("declarator")) is not None and d.type == "reference_declarator":
                self._local_reference(n, d)
            elif (v := n.child_by_field_name("value")) is not None and v.type == "lambda_expression":
                _Lambda(self, v, n).plan()
        for n in of("for_range_loop"):
            self._plan_range_for(n)
        for n in of("lambda_expression"):
            if n.id not in self.lambdas:
                _Lambda(self, n).plan()
        _TypeParameters(self).plan(of("template_declaration"))  # first: calls through bound types are targets
        self.template_values.plan(of("call_expression"))
        self.choices.plan()
        found = of(*_TARGETS) + self.fixed_nodes + self.alias_nodes + self._keyword_names(root)
        named = [c for n in found if n.type in ("call_expression", "function_declarator")
                 for c in map(_called_name, n.children_by_field_name(
                     "function" if n.type == "call_expression" else "declarator"))
                 if c is not None and c.type == "identifier"]
        in_error = self.error_ids(root)
        for n in sorted(found + named, key=lambda n: (n.start_byte, -n.end_byte)):
            if n.id in in_error:
                continue
            if self._is_target(n):
                a, b = self.src.span(n)
                if b > a and n not in self.edits.get(a, ()):
                    self.edits.setdefault(a, []).append(n)
        self.starts = sorted(self.edits)

    def error_ids(self, root) -> set[int]:
        """`_error_ids(root)`, found once."""
        if self._error_ids is None:
            self._error_ids = _error_ids(root)
        return self._error_ids

    def fix(self, node, handler) -> None:
        """Node `node` is rewritten by `handler` (decided by its class)."""
        self.fixed[node.id] = handler
        self.fixed_nodes.append(node)

    def fix_specialised(self, node, handler) -> None:
        """Node `node` is rewritten by `handler` while a callee's copy is rendered (for a lambda
        passed to it, or for template values) when the handler gives something, else as before."""
        self.fix_first(node, lambda n: handler(n) if self.specialising is not None else None)

    def fix_first(self, node, handler) -> None:
        """Node `node` is rewritten by `handler` when it gives something, else as before."""
        prior = self.fixed.get(node.id)
        plain = prior is None and self._is_target(node)

        def rewrite(n):
            if (new := handler(n)) is not None:
                return new
            if prior is not None:
                return prior(n)
            return getattr(self, "r_" + n.type)(n) if plain else None
        if prior is None:
            self.fixed_nodes.append(node)
        self.fixed[node.id] = rewrite

    def copy_of(self, fn, specialiser) -> list[Tok]:
        """Function definition `fn` rendered again, for `specialiser` (what `fix_specialised`
        handlers read in `self.specialising`)."""
        outer, self.specialising = self.specialising, specialiser
        try:
            return self.node(fn)
        finally:
            self.specialising = outer

    def declarations(self, fn) -> dict:
        """name -> [(start byte, type node, declarator)] of the parameters and locals of `fn`."""
        got = self.decls.get(fn.id)
        if got is None:
            got = self.decls[fn.id] = {}
            for d in self.declaration_nodes(fn):
                ty = d.child_by_field_name("type")
                for decl in d.children_by_field_name("declarator"):
                    target = decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
                    name = _declarator_name(target)
                    if name is not None:
                        got.setdefault(_text(name), []).append((d.start_byte, ty, target))
        return got

    def declaration_nodes(self, fn) -> list:
        """`_nodes(fn, ("parameter_declaration", "declaration"))`, from collect's walk where it
        spans `fn` (it gathers both types)."""
        everything, spans = self.function_nodes
        span = spans.get(fn.id)
        if span is None:
            return _nodes(fn, _DECLARATIONS)
        return [n for n in everything[span[0]:span[1]] if n.type in _DECLARATIONS]

    def declared(self, ident):
        """(type node, declarator) of the last declaration of `ident`'s name before it in its function."""
        fn = ident.parent
        while fn is not None and fn.type != "function_definition":
            fn = fn.parent
        if fn is None:
            return None
        found = None
        for start, ty, target in self.declarations(fn).get(_text(ident), ()):
            if start < ident.start_byte:
                found = (ty, target)
        return found

    def _variables_declared(self, n) -> None:
        """Remember the variables and parameters `n` declares: a name lookup that finds one never
        finds a template, so `x < H && y > 0` on them is comparisons, whatever the parser guessed."""
        for d in n.children_by_field_name("declarator"):
            if d.type in ("function_declarator", "abstract_function_declarator"):
                continue
            name = _declarator_name(d)
            if name is not None and name.type == "identifier":
                self.variables.add(_text(name))

    def inside_class(self, n) -> bool:
        p = n.parent
        while p is not None:
            if p.type in ("field_declaration_list", "compound_statement"):
                return True
            p = p.parent
        return False

    def _names(self, n) -> None:
        t = n.type
        if t == "template_declaration":
            for c in n.named_children:
                d = c.child_by_field_name("declarator") if c.type != "struct_specifier" else None
                name = c.child_by_field_name("name") if d is None else _declarator_name(d)
                if name is not None and name.type in ("identifier", "type_identifier", "field_identifier"):
                    self.templates.add(_text(name))
            return
        if t == "namespace_alias_definition":
            name, target = n.child_by_field_name("name"), n.named_children[-1] if n.named_child_count > 1 else None
            if name is not None and target is not None:
                self.ns_alias[_text(name)] = target
            return
        if t in ("parameter_declaration", "optional_parameter_declaration") and n.parent is not None and \
                n.parent.type == "template_parameter_list":
            name = _declarator_name(n.child_by_field_name("declarator"))
            if name is not None:
                self.values.add(_text(name))
            return
        if t == "declaration" or t in ("parameter_declaration", "optional_parameter_declaration") and \
                n.child_by_field_name("declarator") is not None:  # not `b` in `int a(b);` (a value)
            self._type_used(n.child_by_field_name("type"))
            self._variables_declared(n)
        if t in ("struct_specifier", "class_specifier") and n.child_by_field_name("body") is not None and \
                (name := n.child_by_field_name("name")) is not None:
            self.class_bodies.add(_text(name))
            self.class_places.add(_namespace_path(n) + (_text(name),))
        if t in ("type_definition", "alias_declaration", "type_parameter_declaration",
                 "optional_type_parameter_declaration", "struct_specifier", "class_specifier",
                 "union_specifier", "enum_specifier", "variadic_type_parameter_declaration"):
            for c in n.children:
                if c.type == "type_identifier":
                    self.typenames.add(_text(c))
            if t == "type_definition":
                for c in n.children_by_field_name("declarator"):
                    if c.type == "type_identifier":
                        self.typenames.add(_text(c))
        elif t in ("function_definition", "declaration"):
            d = n.child_by_field_name("declarator")
            if d is None or d.type != "function_declarator":
                return
            name = _declarator_name(d)
            if name is None or name.type != "identifier" or (n.parent is not None and n.parent.type in (
                    "field_declaration_list", "compound_statement")):
                return
            qual = _namespace_path(n) + (_text(name),)
            if t == "function_definition":
                self.definitions.setdefault(_text(name), []).append(n)
            if len(qual) > 1:
                self.functions.add(qual)
                self.display[mangle(qual)] = "::".join(qual)
            refs = self._reference_params(d)
            if refs:
                self.ref_params[mangle(qual)] = refs

    def _reference_params(self, fd) -> tuple[int, ...]:
        params = fd.child_by_field_name("parameters")
        out = []
        for i, p in enumerate(params.named_children if params is not None else ()):
            d = p.child_by_field_name("declarator")
            if _written_reference(p, d):
                out.append(i)
        return tuple(out)

    def _local_reference(self, init, ref) -> None:
        """`T &r = v;`: uses of `r` after it in its block read `v` (a name), or `*r` (a pointer
        to the place `v` names); a const reference is a copy (it is never written)."""
        decl = init.parent
        block = decl.parent if decl is not None else None
        name = _declarator_name(ref)
        value = init.child_by_field_name("value")
        if block is None or block.type != "compound_statement" or name is None or name.type != "identifier" \
                or value is None or value.type in ("initializer_list", "argument_list"):
            return
        if _is_const(decl) or _text(ref.children[0]) == "&&" or \
                any(c.type == "structured_binding_declarator" for c in ref.children):
            return  # `auto &[a, b] = v`: a structured binding (see _binding)
        r = _text(name)
        uses = []
        for m in _walk(block):
            if m.start_byte < init.end_byte:
                continue
            if m.type == "identifier" and _text(m) == r:
                uses.append(m)
            elif m.type in ("init_declarator", "parameter_declaration", "declaration") and \
                    (d := _declarator_name(m.child_by_field_name("declarator"))) is not None and _text(d) == r:
                self.notes.append((self.tok(name), f"reference '{r}' is taken for a copy: a later declaration "
                                   "hides it"))
                return
        kind = "alias" if value.type == "identifier" else "pointer"
        self.local_refs[init.id] = kind
        for m in uses:
            self.alias[self.src.span(m)[0]] = (kind, name, value)
            self.alias_nodes.append(m)

    def _is_target(self, n) -> bool:
        if n.id in self.fixed:
            return True
        t = n.type
        if t == "call_expression":
            return self._cast_type(n) is not None or self._method_call(n) is not None or \
                self._tile_size(n) is not None or self._constructed(n) is not None
        if t == "template_function":
            return self._template_value(n)
        if t in ("parameter_pack_expansion", "variadic_declarator", "template_method"):
            return True
        if t == "dependent_name":
            return n.parent is not None and n.parent.type == "field_expression"
        if t == "sizeof_expression":
            return any(c.type == "..." for c in n.children)
        if t == "new_expression":
            return n.child_by_field_name("placement") is not None and n.child_by_field_name("declarator") is None
        if t == "decltype":
            return n.parent is None or n.parent.type != "qualified_identifier"
        if t in ("if_statement", "switch_statement"):
            return self._with_initialiser(n) is not None
        if t in ("alias_declaration", "type_definition"):
            return self._aliased(n) is not None
        if t == "init_declarator":
            v = n.child_by_field_name("value")
            return v is not None and v.type in ("argument_list", "initializer_list") or n.id in self.local_refs
        if t == "for_range_loop":
            return n.id in self.range_fors
        if t == "declaration":
            return self._direct_init(n) is not None or self._binding(n) is not None or any(
                c.type == "init_declarator" and self.local_refs.get(c.id) == "alias"
                for c in n.children_by_field_name("declarator"))
        if t in ("reference_declarator", "qualified_identifier", "function_declarator", "template_declaration",
                 "abstract_reference_declarator"):
            return True
        if t in ("return_statement", "assignment_expression"):
            return self._braced_value(n) is not None
        if t == "static_assert_declaration":
            return True
        if t == "compound_literal_expression":  # `T{x}` (C's `(T){x}` is left as it is)
            return n.children[0].type != "("
        if t == "identifier":
            return self.src.span(n)[0] in self.alias or self._call_in_namespace(n) is not None or \
                _text(n) in _CONTEXTUAL_KEYWORDS
        return False

    # -- rendering ---------------------------------------------------------------------------
    def render(self, a: int, b: int) -> list[Tok]:
        """Tokens [a, b) with the nodes inside that are rewritten replaced."""
        toks = self.src.toks
        out: list[Tok] = []
        i = a
        k = bisect_left(self.starts, a)
        while k < len(self.starts) and self.starts[k] < b:
            s = self.starts[k]
            k += 1
            if s < i:
                continue
            for node in self.edits[s]:
                e = self.src.span(node)[1]
                if e > b or node.id in self.active:
                    continue
                self.active.add(node.id)
                try:
                    fixed = self.fixed.get(node.id)
                    new = fixed(node) if fixed is not None else getattr(self, "r_" + node.type)(node)
                finally:
                    self.active.discard(node.id)
                if new is not None:
                    out.extend(toks[i:s])
                    out.extend(new)
                    i = e
                    break
        out.extend(toks[i:b])
        return out

    def items(self, container) -> list[Tok]:
        """The top-level items of a file or namespace, each followed by the member functions
        taken out of the classes it defines."""
        toks = self.src.toks
        a, b = self.src.span(container)
        out: list[Tok] = []
        i = a
        for c in container.children:
            ca, cb = self.src.span(c)
            if ca < i or cb <= ca:
                continue
            if self.pending and c.type != ";":
                out.extend(self.pending)
                self.pending = []
            out.extend(toks[i:ca])
            if c.type in ("namespace_definition", "linkage_specification", "declaration_list"):
                out.extend(self.items(c))
            else:
                item = self.choices.render(c) or self.render(ca, cb)
                self.template_values.render_copies()
                out.extend(self.before)
                self.before = []
                out.extend(item)
            i = cb
        out.extend(toks[i:b])
        out.extend(self.pending)
        self.pending = []
        return out

    def node(self, n) -> list[Tok]:
        return self.render(*self.src.span(n))

    def tok(self, n) -> Tok:
        return self.src.toks[self.src.span(n)[0]]

    # -- casts and initialisation ------------------------------------------------------------
    def _cast_type(self, call):
        f = call.child_by_field_name("function")
        if f is None:
            return None
        if f.type == "primitive_type" or f.type in ("identifier", "type_identifier") and _text(f) in self.typenames:
            args = call.child_by_field_name("arguments")
            if args is not None and args.type == "argument_list" and args.named_child_count <= 1:
                return f
        return None

    def r_call_expression(self, n):
        method = self._method_call(n)
        if method is not None:
            return self._call_method(n, *method)
        size = self._tile_size(n)
        if size is not None:
            return self._tiled_partition(n, size)
        spelling = self._constructed(n)
        if spelling is not None:
            return self._construction(n, spelling)
        return self._construction(n, self.node(self._cast_type(n)))

    # -- cooperative groups --------------------------------------------------------------------
    def _tile_size(self, call):
        """The size argument of `tiled_partition<N>(g)` when N is a name or an expression (a
        number the token rewriter reads itself)."""
        f = call.child_by_field_name("function")
        if f is not None and f.type == "qualified_identifier":
            f = f.child_by_field_name("name")
        if f is None or f.type != "template_function" or _text(f.child_by_field_name("name")) != "tiled_partition":
            return None
        targs = f.child_by_field_name("arguments")
        if targs is None or targs.named_child_count != 1:
            return None
        size = targs.named_children[0]
        if size.type == "number_literal":
            return None
        return size

    def _tiled_partition(self, call, size):
        """`tiled_partition<N>(g)` -> `tiled_partition(g, N)`: the same tile, through the form
        with the size as an argument."""
        args = call.child_by_field_name("arguments")
        t = self.tok(call)
        a, b = self.src.span(args)
        f = call.child_by_field_name("function")
        name = f.child_by_field_name("name") if f.type == "qualified_identifier" else f
        inner = self.render(a + 1, b - 1)
        value = [self.tok(size).named(_text(size))] if size.type == "type_descriptor" and \
            size.named_child_count == 1 and size.named_children[0].type == "type_identifier" else self.node(size)
        return [self.tok(name.child_by_field_name("name")).named("tiled_partition"), self.src.toks[a], *inner,
                *([_new(t, "op", ",")] if inner else []), *value, self.src.toks[b - 1]]

    # -- calls of members from outside the class ---------------------------------------------
    def _method_call(self, call):
        """(class, member, object node, object is a pointer) for `o.f(a)`, `p->f(a)`, `o(a)`,
        with `o` declared in the function as an object of a class whose members are functions."""
        if not self.classes:
            return None
        f = call.child_by_field_name("function")
        if f is None:
            return None
        if f.type == "field_expression":
            obj = f.child_by_field_name("argument")
            field = f.child_by_field_name("field")
            member = _text(field) if field is not None else None
        elif f.type == "identifier":
            obj, member = f, "call"
        else:
            return None
        if obj is not None and obj.type == "call_expression":  # `S<A>().f(a)`: a member of a temporary
            declared = self._temporary_class(obj)
        elif obj is None or obj.type != "identifier":
            return None
        else:
            declared = self._declared_class(obj)
        if declared is None:
            return None
        cls, pointer = declared
        if member not in cls.methods or cls.methods[member]:
            return None
        arrow = f.type == "field_expression" and any(c.type == "->" for c in f.children)
        if arrow != pointer:
            return None
        return cls, member, obj, pointer

    def _declared_class(self, ident):
        """(class, declared as a pointer) of the variable `ident` names, from its declaration in
        the enclosing function (parameter or local before it); None when not one of ours."""
        found = self.declared(ident)
        if found is None:
            return None
        ty, target = found
        if ty is not None and ty.type == "template_type":
            ty = ty.child_by_field_name("name")
        spec = self.specialising
        name = None if ty is None else self.bound_types.get(ty.id) or \
            (spec.types.get(_text(ty)) if isinstance(spec, _TemplateCopy) else None) or _text(ty)
        if ty is None or ty.type != "type_identifier" or name not in self.classes:
            return None
        return self.classes[name], target.type == "pointer_declarator"

    def _temporary_class(self, call):
        """(class, False) for `S()`, `S<A>()`, `ns::S<A>()`: an object of a class of this file
        whose members are functions, made without values; else None."""
        args = call.child_by_field_name("arguments")
        named = self._type_name(call.child_by_field_name("function"))
        if named is None or args is None or args.type != "argument_list" or args.named_child_count:
            return None
        cls = self.classes.get(_text(named[1]))
        return None if cls is None or cls.specialisation is not None else (cls, False)

    def _call_method(self, call, cls, member, obj, pointer):
        """`o.f(a)` -> `S__f(&o, a)`; `p->f(a)` -> `S__f(p, a)`; `S<A>().f(a)` -> `S__f(&(struct S){0}, a)`
        (a compound literal: the temporary, its fields zero)."""
        args = call.child_by_field_name("arguments")
        t = self.tok(call.child_by_field_name("function"))
        a, b = self.src.span(args)
        inner = self.render(a + 1, b - 1)
        if obj.type == "call_expression":
            this = [_new(t, "op", "&"), _new(t, "op", "("), _new(t, "id", cls.tag), _new(t, "id", cls.name),
                    _new(t, "op", ")"), _new(t, "op", "{"), _new(t, "num", "0"), _new(t, "op", "}")]
        else:
            this = self.node(obj) if pointer else [_new(t, "op", "&"), *self.node(obj)]
        return [t.named(cls.mangled(member)), self.src.toks[a], *this, *([_new(t, "op", ",")] if inner else []),
                *inner, self.src.toks[b - 1]]

    def r_init_declarator(self, n):
        d = n.child_by_field_name("declarator")
        v = n.child_by_field_name("value")
        t = self.tok(v)
        kind = self.local_refs.get(n.id)
        if kind == "pointer":  # T &r = place;  ->  T *r = &(place);
            return [_new(t, "op", "*"), *self.node(_declarator_name(d)), _new(t, "op", "="), _new(t, "op", "&"),
                    _new(t, "op", "("), *self.node(v), _new(t, "op", ")")]
        head = self.node(d) + [_new(t, "op", "=")]
        if v.type == "initializer_list":
            if v.named_child_count == 0:
                return head + [_new(t, "num", "0")]
            return head + self.node(v)
        return head + self._ctor(t, v.named_children)

    def _ctor(self, t, values) -> list[Tok]:
        if len(values) == 1:
            return self.node(values[0])
        out = [_new(t, "id", "__ctor"), _new(t, "op", "(")]
        for i, v in enumerate(values):
            if i:
                out.append(_new(t, "op", ","))
            out.extend(self.node(v))
        return out + [_new(t, "op", ")")]

    def _direct_init(self, decl):
        """`T x(a, b);` in a body, which the grammar reads as a function declaration: the name and
        the values, when each "parameter" is a name that is no type."""
        if decl.parent is None or decl.parent.type != "compound_statement":
            return None
        ds = decl.children_by_field_name("declarator")
        if len(ds) != 1 or ds[0].type != "function_declarator":
            return None
        params = ds[0].child_by_field_name("parameters")
        name = ds[0].child_by_field_name("declarator")
        if params is None or name is None or name.type != "identifier" or params.named_child_count == 0:
            return None
        values = []
        for p in params.named_children:
            ty = p.child_by_field_name("type")
            if p.type != "parameter_declaration" or p.named_child_count != 1 or ty is None or \
                    ty.type != "type_identifier" or _text(ty) in self.typenames:
                return None
            values.append(ty)
        return name, values

    def r_declaration(self, n):
        a, end = self.src.span(n)
        binding = self._binding(n)
        if binding is not None:
            return self._bindings(n, *binding)
        direct = self._direct_init(n)
        if direct is not None:
            name, values = direct
            d = n.child_by_field_name("declarator")
            t = self.tok(values[0])
            return self.render(a, self.src.span(d)[0]) + self.node(name) + [_new(t, "op", "=")] + \
                self._ctor(t, values) + [self.src.toks[end - 1]]
        # `T &r = v;` with r an alias of v: the declarator goes (the declaration too when alone)
        ds = n.children_by_field_name("declarator")
        keep = [d for d in ds if self.local_refs.get(d.id) != "alias"]
        if not keep:
            return [self.src.toks[end - 1]]  # `;`: an empty statement
        return None  # several declarators, some aliases: rare; the aliases stay copies

    def r_function_declarator(self, n):
        return None  # its parts are rewritten (reference parameters, qualified names)

    # -- templates ---------------------------------------------------------------------------
    def r_template_declaration(self, n):
        """`template <typename T, int N> item` -> `item`: a type parameter is a type name (an
        opaque type), a value parameter an unknown that is the same in every thread (as any name
        declared nowhere is to the lowering)."""
        params = n.child_by_field_name("parameters")
        if params is None:
            return None
        _, b = self.src.span(params)
        return self.render(b, self.src.span(n)[1])

    def r_compound_literal_expression(self, n):
        """`T{a, b}` -> `(T){a, b}`: a value of type T from the braces."""
        ty, value = n.child_by_field_name("type"), n.child_by_field_name("value")
        if ty is None or value is None:
            return None
        return self._compound_literal(ty, value)

    # -- structured bindings and range-for ---------------------------------------------------
    def _binding(self, decl):
        """(names, value) of `auto [a, b] = e;` in a block; by reference only when no name is
        written after it (then the names are copies with the same values)."""
        ds = decl.children_by_field_name("declarator")
        if len(ds) != 1 or ds[0].type != "init_declarator" or decl.parent is None or \
                decl.parent.type != "compound_statement":
            return None
        d, value = ds[0].child_by_field_name("declarator"), ds[0].child_by_field_name("value")
        ref = d is not None and d.type == "reference_declarator"
        if ref:
            d = d.named_children[0] if d.named_child_count else None
        if d is None or d.type != "structured_binding_declarator" or value is None or \
                value.type in ("initializer_list", "argument_list"):
            return None
        names = d.named_children
        if any(x.type != "identifier" for x in names):
            return None
        if ref and not _is_const(decl) and any(_written_in(decl.parent, _text(x)) for x in names):
            return None
        self.bindings.add(d.id)
        return names, value

    def _bindings(self, decl, names, value):
        """`T [a, b] = e;` -> `T __binding_L_C = e; T a = __binding_L_C.__0; T b = ...`: each
        name a positional part of the one value, evaluated once (the lowering gives a braced
        value's parts; other values' parts are parts of the whole)."""
        a, end = self.src.span(decl)
        d = decl.child_by_field_name("declarator")
        ty = self.render(a, self.src.span(d)[0])
        t = self.tok(d)
        hidden = f"__binding_{t.line}_{t.col}"
        out = [*ty, _new(t, "id", hidden), _new(t, "op", "="), *self.node(value), _new(t, "op", ";")]
        for i, x in enumerate(names):
            at = self.tok(x)
            out += [*[y.copy(path=at.path, line=at.line, col=at.col) for y in ty], at, _new(at, "op", "="),
                    _new(at, "id", hidden), _new(at, "op", "."), _new(at, "id", f"__{i}"), _new(at, "op", ";")]
        return out

    def _plan_range_for(self, loop) -> None:
        """`for (T x : r)`: the loop variable a value, or, a reference the body writes, a pointer
        to the element (its uses `(*x)`), which needs `r` to be a place (no copy of it)."""
        d, r = loop.child_by_field_name("declarator"), loop.child_by_field_name("right")
        body = loop.child_by_field_name("body")
        if d is None or r is None or body is None or loop.has_error or r.type == "initializer_list":
            return
        name = _declarator_name(d)
        if name is None or name.type != "identifier" or d.type not in ("identifier", "reference_declarator"):
            return
        x = _text(name)
        written = d.type == "reference_declarator" and not _is_const(loop) and _written_in(body, x)
        if not written:
            self.range_fors[loop.id] = "value"
            return
        if r.type not in _PLACES:
            return
        self.range_fors[loop.id] = "pointer"
        for m in _nodes(body, ("identifier",)):
            if _text(m) == x:
                self.alias[self.src.span(m)[0]] = ("pointer", name, None)
                self.alias_nodes.append(m)

    def r_for_range_loop(self, n):
        """`for (T x : r) body` -> `{ for (int __i_L = 0; __i_L < __ctor(r); __i_L++) { T x =
        r[__i_L]; body } }`: as many times as `r` says, x each element in turn (a written
        reference: `T *x = &(r[__i_L]);`).  A range that is no place is evaluated once, into
        `auto __range_L` (then a written reference is not mapped)."""
        d, r = n.child_by_field_name("declarator"), n.child_by_field_name("right")
        body = n.child_by_field_name("body")
        t = self.tok(n)
        a = self.src.span(n)[0]
        ty = self.render(a + 2, self.src.span(d)[0])  # after `for (`
        i = f"__i_{t.line}_{t.col}"
        pointer = self.range_fors[n.id] == "pointer"
        place = r.type in _PLACES  # C++ binds a reference to the range: no copy of a place
        rng = self.node(r) if place else [_new(t, "id", f"__range_{t.line}_{t.col}")]
        out = [_new(t, "op", "{")]
        if not place:
            out += [_new(t, "id", "auto"), *rng, _new(t, "op", "="), *self.node(r), _new(t, "op", ";")]
        out += [t, _new(t, "op", "("), _new(t, "id", "int"), _new(t, "id", i), _new(t, "op", "="),
                _new(t, "num", "0"), _new(t, "op", ";"), _new(t, "id", i), _new(t, "op", "<"),
                *self._range_count(t, r, rng), _new(t, "op", ";"),
                _new(t, "id", i), _new(t, "op", "++"), _new(t, "op", ")"), _new(t, "op", "{"), *ty]
        x = self.node(_declarator_name(d)) if not pointer else [self.tok(_declarator_name(d))]
        element = [*rng, _new(t, "op", "["), _new(t, "id", i), _new(t, "op", "]")]
        if pointer:
            out += [_new(t, "op", "*"), *x, _new(t, "op", "="), _new(t, "op", "&"), _new(t, "op", "("),
                    *element, _new(t, "op", ")"), _new(t, "op", ";")]
        else:
            out += [*x, _new(t, "op", "="), *element, _new(t, "op", ";")]
        return out + self.node(body) + [_new(t, "op", "}"), _new(t, "op", "}")]

    def _range_count(self, t, r, rng) -> list[Tok]:
        """How many elements range `r` has: an array's, a constant (`__ctor(sizeof(r))`); else
        something of r's value (`__ctor(r)`)."""
        found = self.declared(r) if r.type == "identifier" else None
        if found is not None and found[1].type == "array_declarator":
            return [_new(t, "id", "__ctor"), _new(t, "op", "("), _new(t, "id", "sizeof"), _new(t, "op", "("),
                    *self.node(r), _new(t, "op", ")"), _new(t, "op", ")")]
        return [_new(t, "id", "__ctor"), _new(t, "op", "("), *rng, _new(t, "op", ")")]

    def r_static_assert_declaration(self, n):
        """In a function body its condition is a fact there (`CGSize == 1`, `N % 32 == 0`):
        `__builtin_assume(cond);`.  Elsewhere it has no run-time meaning."""
        cond = n.child_by_field_name("condition")
        if cond is None or n.parent is None or n.parent.type != "compound_statement" or not _arithmetic(cond):
            return []
        t = self.tok(n)
        return [_new(t, "id", "__builtin_assume"), _new(t, "op", "("), *self.node(cond),
                _new(t, "op", ")"), _new(t, "op", ";")]

    def r_abstract_reference_declarator(self, n):
        """`reinterpret_cast<const T &>(x)` -> a cast to `const T`: the value it reads."""
        return []

    # -- braced values -----------------------------------------------------------------------
    def _braced_value(self, n):
        """(type node, braces) of `return {a, b};` or `v = {a, b}`: the function's return type or
        v's declared type, when that is a plain type name."""
        if n.type == "return_statement":
            value = n.named_children[0] if n.named_child_count else None
            fn = n.parent
            while fn is not None and fn.type != "function_definition":
                fn = fn.parent
            d = fn.child_by_field_name("declarator") if fn is not None else None
            ty = fn.child_by_field_name("type") if d is not None and d.type == "function_declarator" else None
        else:
            value = n.child_by_field_name("right")
            left = n.child_by_field_name("left")
            ty = self._declared_type(left) if left is not None and left.type == "identifier" and \
                _text(n.children[1]) == "=" else None
        if value is None or value.type != "initializer_list" or \
                n.type == "assignment_expression" and _text(n.children[1]) != "=":
            return None
        if ty is None or ty.type not in ("type_identifier", "primitive_type"):
            return None, value  # a type not known here: an opaque value made of the braces
        return ty, value

    def _declared_type(self, ident):
        """The type node of the declaration of the variable `ident` names, in its function."""
        found = self.declared(ident)
        return found[0] if found is not None and found[1].type == "identifier" else None

    def _compound_literal(self, ty, braces) -> list[Tok]:
        t = self.tok(braces)
        if ty is None:
            return self._ctor(t, braces.named_children) if braces.named_child_count else \
                [_new(t, "id", "__ctor"), _new(t, "op", "("), _new(t, "op", ")")]
        spelling = self._type_spelling(ty) if ty.type != "primitive_type" else None
        value = self.node(braces) if braces.named_child_count else \
            [_new(t, "op", "{"), _new(t, "num", "0"), _new(t, "op", "}")]  # `T{}`: value-initialised
        return [_new(t, "op", "("), *(spelling or self.node(ty)), _new(t, "op", ")"), *value]

    def r_return_statement(self, n):
        ty, braces = self._braced_value(n)
        a, b = self.src.span(n)
        return [self.src.toks[a], *self._compound_literal(ty, braces), *self.src.toks[self.src.span(braces)[1]:b]]

    def r_assignment_expression(self, n):
        ty, braces = self._braced_value(n)
        a, _ = self.src.span(n)
        ba, _ = self.src.span(braces)
        return self.render(a, ba) + self._compound_literal(ty, braces)

    # -- references --------------------------------------------------------------------------
    def r_reference_declarator(self, n):
        """`&` goes; a reference parameter that is written is marked for copy-in/copy-out."""
        inner = self.node(n.named_children[0]) if n.named_child_count else []
        p = n.parent
        if p is not None and p.type == "parameter_declaration" and p.child_by_field_name("declarator") == n \
                and _written_reference(p, n):
            t = self.tok(n)
            return [_new(t, "id", "_Alignas"), _new(t, "op", "("), _new(t, "num", str(REF_MARK)),
                    _new(t, "op", ")"), *inner]
        return inner

    def r_identifier(self, n):
        a = self.src.span(n)[0]
        if a in self.alias:
            kind, name, value = self.alias[a]
            t = self.tok(n)
            if kind == "alias":
                return [v.copy(path=t.path, line=t.line, col=t.col) for v in self.node(value)]
            return [_new(t, "op", "("), _new(t, "op", "*"), t, _new(t, "op", ")")]
        qual = self._call_in_namespace(n)
        if qual is not None:
            return [self.tok(n).named(mangle(qual))]
        if _text(n) in _CONTEXTUAL_KEYWORDS:
            return [self.tok(n).named("__" + _text(n))]
        return None

    # -- namespaces --------------------------------------------------------------------------
    def _resolve(self, n, parts: tuple[str, ...]):
        """The function `parts` names from where `n` is (inner namespaces first), or None."""
        ns = _namespace_path(n)
        for k in range(len(ns), -1, -1):
            q = ns[:k] + parts
            if q in self.functions:
                return q
        return None

    def _call_in_namespace(self, n):
        """A function of a namespace named without its qualifier from inside the namespace, or
        the name of a function defined in a namespace."""
        p = n.parent
        if p is None or not self.functions:
            return None
        called = n
        if p.type == "template_function" and p.child_by_field_name("name") == n:
            called, p = p, p.parent  # `f<A>(x)`: the template-id is the call's function
        if p is not None and p.type == "call_expression" and p.child_by_field_name("function") == called:
            return self._resolve(n, (_text(n),))
        if p.type == "function_declarator" and p.child_by_field_name("declarator") == n:
            q = _namespace_path(n) + (_text(n),)
            return q if q in self.functions else None
        return None

    def r_qualified_identifier(self, n):
        """`a::b::f` -> `a__b__f` when it names a function defined in the file; `Math<T>::add` ->
        `Math__add` (a static member, named without its template arguments)."""
        parts = []
        m = n
        while m is not None and m.type == "qualified_identifier":
            scope = m.child_by_field_name("scope")
            if scope is not None:
                if scope.type == "template_type":
                    scope = scope.child_by_field_name("name")
                if scope.type not in ("namespace_identifier", "type_identifier"):
                    return None
                parts.append(_text(scope))
            m = m.child_by_field_name("name")
        if m is not None and m.type in ("template_type", "template_function") and parts and \
                (base := m.child_by_field_name("name")) is not None and self._class_here(n, parts + [_text(base)]):
            return [self.tok(n).named(_text(base))]  # `ns::S<A>`: templates are erased
        if m is None or m.type not in ("identifier", "type_identifier") or not parts:
            return None
        parts.append(_text(m))
        t = self.tok(n)
        q = self._resolve(n, tuple(parts))
        if q is not None:
            return [t.named(mangle(q))]
        scope = n.child_by_field_name("scope")
        cls = self.classes.get(parts[0]) if len(parts) == 2 else None
        if len(parts) == 2 and scope is not None and scope.type == "template_type":  # `R<2>::f`, specialised
            cls = self.classes.get(self.specialisations.get("".join(_text(scope).split()), ""), cls)
        if cls is not None and cls.methods.get(parts[1]):  # `S::f` of a static member function
            return [t.named(cls.mangled(parts[1]))]
        if scope is not None and scope.type == "template_type":
            return [t.named(mangle(parts))]
        if self._class_here(n, parts):  # `layout::Span` of `namespace layout { struct Span {...}; }`
            return [t.named(parts[-1])]
        if scope is not None and parts[0] in self.ns_alias:  # `cg::x` -> `cooperative_groups::x`
            target = self.ns_alias[parts[0]]
            at = [x.copy(path=t.path, line=t.line, col=t.col) for x in self.node(target)]
            return at + self.render(self.src.span(scope)[1], self.src.span(n)[1])
        return None

    def _class_here(self, n, parts) -> bool:
        """Does qualified name `n` (`parts`: `a::b::X`) name a class defined in a namespace here, as
        C++ looks it up from where `n` stands (the namespaces around it, innermost first)?  Classes
        keep their own names in C."""
        around = _namespace_path(n)
        return any(around[:k] + tuple(parts) in self.class_places for k in range(len(around), -1, -1))

    # -- types and expressions (issue 13) ----------------------------------------------------
    @staticmethod
    def _type_name(ty):
        """(C name, name node) of a type named by `T`, `X<A>`, `ns::X<A>`: `T`, `X`, `ns__X`
        (template arguments go, as templates are erased); None when it is no such name."""
        parts = []
        while ty is not None and ty.type == "qualified_identifier":
            scope = ty.child_by_field_name("scope")
            if scope is None or scope.type not in ("namespace_identifier", "type_identifier"):
                return None
            parts.append(_text(scope))
            ty = ty.child_by_field_name("name")
        if ty is not None and ty.type in ("template_type", "template_function"):
            ty = ty.child_by_field_name("name")
        if ty is None or ty.type not in ("identifier", "type_identifier"):
            return None
        return mangle(parts + [_text(ty)]), ty

    def _type_used(self, ty) -> None:
        """The type of a declaration (`Foo x`, `X<A> x`, `ns::X x`) is a type name, also where it
        makes a value (`X<A>(v)`)."""
        if ty is not None and ty.type in ("type_identifier", "template_type", "qualified_identifier"):
            named = self._type_name(ty)
            if named is not None:
                self.typenames.add(named[0])

    def _type_spelling(self, ty) -> list[Tok] | None:
        """A type named in an expression as one C type name token (a type name from now on)."""
        named = self._type_name(ty)
        if named is None:
            return None
        self.typenames.add(named[0])
        return [self.tok(named[1]).named(named[0])]

    def _constructed(self, call):
        """The type a call constructs (`T(a, b)`, `X<A>(a)`, `ns::X<A>()`: a name used as a type
        in a declaration of this file, not a class defined here), as its C spelling; None for a
        call of a function."""
        f = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        named = self._type_name(f) if f is not None and args is not None and args.type == "argument_list" else None
        if named is None or f.type in ("identifier", "type_identifier") and args.named_child_count <= 1:
            return None  # `T(x)`, `T()`: the cast `_cast_type` makes
        name, base = named
        if name not in self.typenames or _text(base) in self.class_bodies or _text(base) == "tiled_partition":
            return None
        return self._type_spelling(f)

    def _construction(self, call, spelling) -> list[Tok]:
        """`T(x)` -> `(T)(x)`; `T()` -> `(T)0`; `T({a, b})` -> `(T){a, b}`; `T(a, b)` ->
        `__ctor(a, b)`: an opaque value made of a and b (the constructor is not known here)."""
        args = call.child_by_field_name("arguments")
        t = spelling[0]
        if args.named_child_count > 1:
            return self._ctor(t, args.named_children)
        if args.named_child_count and args.named_children[0].type == "initializer_list":
            return [_new(t, "op", "("), *spelling, _new(t, "op", ")"), *self.node(args.named_children[0])]
        value = self.node(args.named_children[0]) if args.named_child_count else [_new(t, "num", "0")]
        cast = [_new(t, "op", "("), *spelling, _new(t, "op", ")"), _new(t, "op", "("), *value, _new(t, "op", ")")]
        if call.parent is not None and call.parent.type == "field_expression":  # `T(x).f()`: the member
            return [_new(t, "op", "("), *cast, _new(t, "op", ")")]              # of the object made
        return cast

    def _keyword_names(self, root) -> list:
        """Variables named `final` or `override`: C++ words only after a class or a member
        declarator, which the rewriter drops (`DType final;` is a variable `__final`)."""
        out = []
        for t, start in zip(self.src.toks, self.src.starts):
            if t.text in _CONTEXTUAL_KEYWORDS:
                n = root.descendant_for_byte_range(start, start + len(t.text))
                if n is not None and n.type == "identifier" and n.id not in self.error_ids(root):
                    out.append(n)
        return out

    def _template_value(self, n) -> bool:
        """Is template-id `n` (`f<A>`, `is_same_v<A, B>`) in an expression, where it names a
        function template or a variable template?  Not `static_cast<T>` and its kin, nor the size
        of `tiled_partition<N>` (their own mappings), nor a declarator (an explicit
        specialisation)."""
        name = n.child_by_field_name("name")
        if name is not None and name.type == "identifier" and _text(name) in self.variables \
                and _text(name) not in self.templates:
            return False  # `x < H && y > 0`: comparisons, read as written
        up = n.parent
        while up is not None and up.type == "qualified_identifier":
            up = up.parent
        return name is not None and _text(name) not in _KEEPS_TEMPLATE_ARGUMENTS and up is not None and \
            not up.type.endswith("declarator")

    def r_template_function(self, n):
        """`f<A>(x)` -> `f(x)`, `std::is_same_v<A, B>` -> `std::is_same_v`: templates are erased
        (a value parameter inside is a uniform unknown, and so is a variable template)."""
        return self.node(n.child_by_field_name("name"))

    def r_template_method(self, n):
        """`o.f<A>(x)` -> `o.f(x)`: a member template, erased like any template."""
        return self.node(n.child_by_field_name("name") or n.named_children[0])

    def r_dependent_name(self, n):
        """`o.template f<A>(x)` -> `o.f(x)`: `template` only tells a C++ parser that f is one."""
        return self.node(n.named_children[-1]) if n.named_child_count else None

    def r_parameter_pack_expansion(self, n):
        """`f(args...)` -> `f(args)`: a pack is one opaque argument."""
        return self.node(n.named_children[0]) if n.named_child_count else None

    def r_variadic_declarator(self, n):
        """`Args... args` -> `Args args`: a parameter pack is one parameter of an opaque type."""
        return self.node(n.named_children[0]) if n.named_child_count else None

    def r_sizeof_expression(self, n):
        """`sizeof...(args)` -> `__sizeof_pack_args`: a name declared nowhere, a uniform unknown."""
        pack = n.named_children[-1] if n.named_child_count else None
        if pack is None or not any(c.type == "..." for c in n.children):
            return None
        return [self.tok(n).named("__sizeof_pack_" + _text(pack).strip("() "))]

    def r_new_expression(self, n):
        """Placement new `new (p) T{v}` -> `(*(p) = v)`: the object is made in the place p
        points to (several values: an opaque value made of them; none: 0)."""
        place, init = n.child_by_field_name("placement"), n.child_by_field_name("arguments")
        if place is None or place.named_child_count != 1 or n.child_by_field_name("declarator") is not None:
            return None
        t = self.tok(n)
        values = init.named_children if init is not None else []
        value = self._ctor(t, values) if values else [_new(t, "num", "0")]
        return [_new(t, "op", "("), _new(t, "op", "*"), _new(t, "op", "("), *self.node(place.named_children[0]),
                _new(t, "op", ")"), _new(t, "op", "="), *value, _new(t, "op", ")")]

    def r_decltype(self, n):
        """`decltype(e) x = e;` -> `auto x = e;`: the type of e, known to the lowering only from a
        value (without one, an opaque type)."""
        return [self.tok(n).named("auto")]

    def _with_initialiser(self, n):
        """The init-statement of `if (init; cond)` / `switch (init; cond)`, or None."""
        cc = n.child_by_field_name("condition")
        if cc is None or cc.type != "condition_clause":
            return None
        return next((c for c in cc.children if c.type == "init_statement"), None)

    def r_if_statement(self, n):
        """`if (init; cond) s` -> `{ init; if (cond) s }`: the same scope for what init declares."""
        init = self._with_initialiser(n)
        a, b = self.src.span(n)
        ia, ib = self.src.span(init)
        t = self.tok(n)
        return [_new(t, "op", "{"), *self.render(ia, ib), *self.render(a, ia), *self.render(ib, b), _new(t, "op", "}")]

    r_switch_statement = r_if_statement

    def _aliased(self, n):
        """(type node, name node) of `using X = ns::Y<A>;` or `typedef ns::Y<A> X;` (a qualified
        name or a template-id, and nothing else), outside a class; None otherwise."""
        if n.parent is not None and n.parent.type == "field_declaration_list":
            return None
        if n.type == "alias_declaration":
            name, desc = n.child_by_field_name("name"), n.child_by_field_name("type")
            if desc is None or desc.named_child_count != 1:
                return None
            ty = desc.named_children[0]
        else:
            ds = n.children_by_field_name("declarator")
            name, ty = (ds[0] if len(ds) == 1 else None), n.child_by_field_name("type")
            if n.named_child_count != 2:
                return None
        if ty is not None and ty.type == "dependent_type" and ty.named_child_count == 1:
            ty = ty.named_children[0]  # `typename C::T`
        if name is None or name.type != "type_identifier" or ty is None or \
                ty.type not in ("qualified_identifier", "template_type"):
            return None
        return ty, name

    def r_alias_declaration(self, n):
        """`using X = ns::Y<A>;` -> `typedef ns__Y X;`: templates are erased, and a type from a
        header not read is an opaque type."""
        ty, name = self._aliased(n)
        spelling = self._type_spelling(ty)
        if spelling is None:
            return None
        t = self.tok(n)
        self.typenames.add(_text(name))
        return [t.named("typedef"), *spelling, self.tok(name), self.src.toks[self.src.span(n)[1] - 1]]

    r_type_definition = r_alias_declaration


_OPERATORS = {"()": "call", "[]": "index", "+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem",
              "==": "eq", "!=": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "=": "assign",
              "+=": "add_assign", "-=": "sub_assign", "*=": "mul_assign", "/=": "div_assign", "&": "and",
              "|": "or", "^": "xor", "<<": "shl", ">>": "shr", "!": "not", "~": "compl", "++": "inc",
              "--": "dec", "->": "arrow"}


def _member_name(d) -> str | None:
    """The C name part of a member function's declarator name: `f`, `S` (constructor), `dtor`,
    `call` (operator()), ... ; None for a conversion operator or anything else."""
    if d.type in ("identifier", "field_identifier"):
        return _text(d)
    if d.type == "destructor_name":
        return "dtor"
    if d.type == "operator_name":
        op = _text(d)[len("operator"):].replace(" ", "")
        return _OPERATORS.get(op)
    return None


class _Class:
    """Members as functions with an object parameter: each member function of class `S` leaves
    the class and follows it as `S__f(struct S *this, ...)` (a static one without `this`); in its
    body a field `x` is `this->x` and a member call `g(a)` is `S__g(this, a)`.  Declarations the
    C subset does not allow in a struct (access specifiers, member prototypes, static data,
    friends, static_assert) leave it too."""

    def __init__(self, layer: _Layer, spec):
        self.layer = layer
        self.spec = spec
        name = spec.child_by_field_name("name")
        self.name = _text(name) if name is not None and name.type == "type_identifier" else None
        self.shown = self.name  # the class as notes name it
        self.specialisation = None  # `struct S<int, T> {...}`: the name node `S<int, T>`
        if name is not None and name.type == "template_type" and name.child_by_field_name("name") is not None:
            # a partial or explicit specialisation: a class of its own, named after the line
            self.specialisation = name
            self.name = f"{_text(name.child_by_field_name('name'))}__{layer.tok(name).line}"
            self.shown = "".join(_text(name).split())
            params = spec.parent.child_by_field_name("parameters") if spec.parent.type == "template_declaration" \
                else None
            if params is not None and params.named_child_count == 0:  # `template <>`: named by its arguments
                layer.specialisations[self.shown] = self.name
        self.constructor = self.name  # a constructor's name (a local class's own name)
        self.body = spec.child_by_field_name("body")
        self.fields: set[str] = set()
        self.methods: dict[str, bool] = {}  # name -> static

    def plan(self) -> None:
        local = self.local_definition()
        if self.name is None or self.layer.inside_class(self.spec) and local is None:
            return
        if self.body.has_error:
            return  # the class stays as it is (and gets a note if it holds device code)
        members = []
        drop = []
        for c in self.body.named_children:
            fd = c.named_children[-1] if c.type == "template_declaration" and c.named_child_count else c
            if fd.type == "function_definition":
                d = _function_declarator(fd)
                name = _member_name(_declarator_name(d)) if d is not None else None
                if name is None:  # a conversion operator (shared-memory wrappers: rewrite.py knows them)
                    return
                members.append((c, fd, d, name))
                self.methods[name] = _has_storage(fd, "static")
            elif c.type == "field_declaration":
                if _function_declarator(c) is not None or _has_storage(c, "static"):
                    drop.append(c)
                else:
                    self.fields.update(_text(x) for x in _walk(c) if x.type == "field_identifier")
            elif c.type in ("access_specifier", "friend_declaration", "static_assert_declaration",
                            "using_declaration", "alias_declaration", "type_definition", "declaration",
                            "template_declaration"):
                drop.append(c)
        if self.specialisation is not None:
            t = self.layer.tok(self.specialisation)
            self.layer.fix(self.specialisation, lambda n: [t.named(self.name)])
        if not members and not drop:
            return
        if local is not None:
            self.hoist_local(local)
        self.layer.classes[self.name] = self
        for c in drop:
            self.layer.fix(c, self.remove)
        for c, fd, d, name in members:
            self.prepare(fd, d, name)
            self.layer.fix(c, self.hoist)
        # `public:`: the colon after the access specifier goes with it
        for c in self.body.children:
            if c.type == ":" and c.prev_sibling is not None and c.prev_sibling.type == "access_specifier":
                self.layer.fix(c, self.remove)

    def local_definition(self):
        """The function whose body defines this class (`struct S {...};`, `union S {...} x;`),
        not in another class or a lambda; None for any other class."""
        spec, up = self.spec, self.spec.parent
        if up is not None and up.type == "declaration" and up.child_by_field_name("type") == spec:
            up = up.parent  # `union S {...} x;`
        elif spec.next_sibling is None or spec.next_sibling.type != ";":
            return None  # the grammar reads `struct S {...};` in a body as the class and a `;`
        if up is None or up.type != "compound_statement":
            return None
        fn = up
        while fn is not None and fn.type != "function_definition":
            if fn.type in ("field_declaration_list", "lambda_expression"):
                return None
            fn = fn.parent
        return None if fn is None or self.specialisation is not None else fn

    def hoist_local(self, fn) -> None:
        """A class defined in a function body (`union loader { ...; __device__ loader() {} };`)
        goes before the function with its member functions, named `S__L` (L its line, as two
        functions may each define an `S`), and so is every `S` in the function; `union S {...} x;`
        leaves `S__L x;`."""
        lay = self.layer
        name = self.spec.child_by_field_name("name")
        own = self.name
        self.name = f"{own}__{lay.tok(name).line}"
        self.constructor = own
        lay.typenames.add(self.name)
        for n in _walk(fn):
            if n.type == "type_identifier" and _text(n) == own:
                t = lay.tok(n)
                lay.bound_types[n.id] = self.name
                lay.fix(n, lambda n, t=t: [t.named(self.name)])
        lay.fix(self.spec, self.before_function)

    def before_function(self, spec):
        """The class and its member functions, for before the function; here its name where it
        declares a variable, else nothing."""
        lay = self.layer
        outer, lay.pending = lay.pending, []
        end = lay.src.toks[lay.src.span(spec)[1] - 1]
        lay.before.extend(lay.node(spec) + [_new(end, "op", ";")] + lay.pending)
        lay.pending = outer
        t = lay.tok(spec)
        return [t.named(self.name)] if spec.parent.type == "declaration" else []

    @property
    def tag(self) -> str:
        return "union" if self.spec.type == "union_specifier" else "struct"

    def remove(self, n):
        return []

    def mangled(self, name: str) -> str:
        return mangle((self.name, name))

    def hoist(self, item):
        """The member function leaves the class (nothing here) and follows its item."""
        lay = self.layer
        a, b = lay.src.span(item)
        params = item.child_by_field_name("parameters") if item.type == "template_declaration" else None
        if params is not None:  # a member template: its parameters go as a function template's do
            a = lay.src.span(params)[1]
        lay.pending.extend(lay.render(a, b))
        return []

    def prepare(self, fd, d, name) -> None:
        """How the parts of member function `fd` are rewritten when it is taken out."""
        lay = self.layer
        static = self.methods[name]
        fn_name = _declarator_name(d)
        params = d.child_by_field_name("parameters")
        mangled = self.mangled(name)
        lay.display[mangled] = f"{self.shown}::{_text(fn_name)}"
        t = lay.tok(fn_name)
        ctor = name == self.constructor or name == "dtor"
        lay.fix(fn_name, lambda n: ([_new(t, "id", "void")] if ctor else []) + [t.named(mangled)])
        if not static and params is not None:
            lay.fix(params, lambda n: self.object_parameter(n))
        for q in d.children:
            if q.type == "type_qualifier":  # `) const`
                lay.fix(q, self.remove)
        inits = [c for c in fd.children if c.type == "field_initializer_list"]
        body = fd.child_by_field_name("body")
        for c in inits:
            lay.fix(c, self.remove)
        if inits and body is not None and body.type == "compound_statement":
            lay.fix(body, lambda n: self.constructor_body(n, inits[0]))
        self.member_uses(fd, static)

    def object_parameter(self, params):
        lay = self.layer
        a, b = lay.src.span(params)
        t = lay.src.toks[a]
        this = [_new(t, "id", self.tag), _new(t, "id", self.name), _new(t, "op", "*"), _new(t, "id", "this")]
        inner = lay.render(a + 1, b - 1)
        if [x.text for x in inner] == ["void"]:
            inner = []
        return [lay.src.toks[a], *this, *([_new(t, "op", ",")] if inner else []), *inner, lay.src.toks[b - 1]]

    def constructor_body(self, body, inits):
        """`S(int x) : a(x) { ... }` -> `{ this->a = x; ... }`."""
        lay = self.layer
        a, b = lay.src.span(body)
        out = [lay.src.toks[a]]
        for fi in inits.named_children:
            f = fi.named_children[0] if fi.named_child_count else None
            args = fi.named_children[1] if fi.named_child_count > 1 else None
            if f is None or f.type != "field_identifier" or args is None or args.named_child_count != 1:
                continue
            t = lay.tok(f)
            out += [_new(t, "id", "this"), _new(t, "op", "->"), t, _new(t, "op", "="),
                    *lay.node(args.named_children[0]), _new(t, "op", ";")]
        return out + lay.render(a + 1, b)

    def member_uses(self, fd, static) -> None:
        """Fields and member calls named without `this->` in a member function's body."""
        lay = self.layer
        body = fd.child_by_field_name("body")
        if body is None:
            return
        named = _identifiers(fd)
        declared = {_text(x) for x, up in named if up is not None and up.type in _DECLARING}
        # those of the body: its class has no part the parser could not read (plan), so every
        # identifier has a width and the body's are those within its bytes
        start, end = body.start_byte, body.end_byte
        for n, p in named:
            if n.start_byte < start or n.end_byte > end:
                continue
            x = _text(n)
            if x in declared:
                continue
            if p is not None and p.type == "call_expression" and p.child_by_field_name("function") == n \
                    and x in self.methods:
                if self.methods[x] or static:
                    lay.fix(n, lambda m, x=x: [lay.tok(m).named(self.mangled(x))])
                else:
                    lay.fix(p, lambda m, x=x: self.member_call(m, x))
            elif x in self.fields and not static:
                lay.fix(n, lambda m: self.this_field(m))

    def this_field(self, n):
        t = self.layer.tok(n)
        return [_new(t, "id", "this"), _new(t, "op", "->"), t]

    def member_call(self, call, x):
        """`g(a)` -> `S__g(this, a)`."""
        lay = self.layer
        f = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        t = lay.tok(f)
        a, b = lay.src.span(args)
        inner = lay.render(a + 1, b - 1)
        return [t.named(self.mangled(x)), lay.src.toks[a], _new(t, "id", "this"),
                *([_new(t, "op", ",")] if inner else []), *inner, lay.src.toks[b - 1]]


def _function_declarator(n):
    """The function declarator of a definition or member declaration, through pointers/references."""
    d = n.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator") or next(
            (c for c in d.named_children if c.type.endswith("declarator")), None)
    return d


def _parameters(fn) -> list:
    """The parameter declarations of function definition `fn`."""
    params = _function_declarator(fn).child_by_field_name("parameters")
    return [p for p in params.named_children if "parameter" in p.type] if params is not None else []


def _has_storage(n, word: str) -> bool:
    return any(c.type == "storage_class_specifier" and _text(c) == word for c in n.children)


class _Lambda:
    """A lambda as a function: in function `g`, `[&](int x) { ... }` becomes
    `__device__ auto g__lambda_L(int x, <captured variables>) { ... }` before `g`, a variable
    captured by reference a reference parameter (copied in and out).  Named by a local
    (`auto f = [&](...) {...};`), each call `f(a)` in `g` is the call `g__lambda_L(a, <the
    variables>)`; invoked where it stands (`[&] {...}()`), that call too.  Anywhere else (an
    argument, a returned value) the lambda is analysed as that function of its own, and the
    expression becomes its name: what the callee does with it is opaque (a note says so)."""

    def __init__(self, layer: _Layer, lam, init=None):
        self.layer = layer
        self.lam = lam
        self.init = init  # the local's init_declarator, for a named lambda
        self.initialised: dict[str, object] = {}  # `[t = e]`: name -> e
        self.emitted = self.copied = False  # its function, its callee's copy: rendered once

    def plan(self) -> None:
        lay = self.layer
        fn = self.lam.parent
        while fn is not None and fn.type != "function_definition":
            fn = fn.parent
        if fn is None or self.lam.child_by_field_name("body") is None or self.lam.has_error:
            return
        if self.init is not None and not self.named_here():
            return
        by_ref = self.capture_modes()
        if by_ref is None:
            return
        lay.lambdas.add(self.lam.id)
        fname = _declarator_name(fn.child_by_field_name("declarator"))
        at = lay.tok(self.lam)
        base = "f" if fname is None else (_member_name(fname) or "operator") if fname.type in (
            "operator_name", "destructor_name") else _text(fname).replace("::", "__").replace(" ", "")
        self.mangled = mangle((base, f"lambda_{at.line}"))
        if self.mangled in lay.display:  # two lambdas on one line
            self.mangled += f"_{at.col}"
        self.captures = self.captured(fn, by_ref)
        ldecl = self.lam.child_by_field_name("declarator")
        params = ldecl.child_by_field_name("parameters") if ldecl is not None else None
        self.nparams = params.named_child_count if params is not None else 0
        refs = tuple(self.nparams + i for i, (_, _, _, ref) in enumerate(self.captures) if ref)
        if refs:
            lay.ref_params[self.mangled] = refs
        lay.display[self.mangled] = f"lambda at line {at.line}"
        up = self.lam.parent
        while up is not None and up.type == "parenthesized_expression":
            up = up.parent
        if self.init is not None:
            self.plan_named(fn)
        elif up is not None and up.type == "call_expression" and self.lam.start_byte == up.start_byte \
                or up is not None and up.type == "call_expression" and \
                up.child_by_field_name("function").type == "parenthesized_expression" and \
                self.lam.start_byte - up.start_byte <= 1:
            lay.fix(up, self.invoke)
        else:
            self.callee = self.passed_to(up, fn)
            lay.fix(self.lam, self.value)

    def named_here(self) -> bool:
        """Is the lambda the one value of a declaration in a block (`auto f = [..](..) {..};`)?"""
        decl = self.init.parent
        name = self.init.child_by_field_name("declarator")
        return decl is not None and decl.type == "declaration" and \
            len(decl.children_by_field_name("declarator")) == 1 and name is not None and name.type == "identifier"

    def plan_named(self, fn) -> None:
        lay = self.layer
        decl = self.init.parent
        lay.fix(decl, self.hoist)
        x = _text(self.init.child_by_field_name("declarator"))
        for c in _nodes(fn, ("call_expression",)):
            f = c.child_by_field_name("function")
            if c.start_byte > decl.end_byte and f is not None and f.type == "identifier" and _text(f) == x:
                lay.fix(c, lambda c: self.call(c, c.child_by_field_name("function")))

    def capture_modes(self):
        """name -> by reference, with "" for the default; None for a capture we cannot map (`this`)."""
        spec = self.lam.child_by_field_name("captures")
        modes = {}
        for c in spec.named_children if spec is not None else ():
            if c.type == "lambda_default_capture":
                modes[""] = _text(c) == "&"
            elif c.type == "identifier":
                prev = c.prev_sibling
                modes[_text(c)] = prev is not None and prev.type == "&"
            elif c.type == "this":
                modes["this"] = False
            elif c.type == "lambda_capture_initializer" and c.named_child_count == 2 and \
                    c.named_children[0].type == "identifier" and c.children[0].type != "&":
                self.initialised[_text(c.named_children[0])] = c.named_children[1]  # `[t = e]`: a value
            else:
                return None
        return modes

    def captured(self, fn, by_ref) -> list:
        """(name, type node, declarator, by reference) of the variables of `fn` the lambda uses."""
        lay = self.layer
        decls = lay.declarations(fn)
        lo, hi = self.lam.start_byte, self.lam.end_byte
        out = [(x, None, e, False) for x, e in self.initialised.items()]
        seen = set(self.initialised)
        for m in _nodes(self.lam.child_by_field_name("body"), ("identifier",)):
            x = _text(m)
            if x in seen:
                continue
            seen.add(x)
            if any(lo <= start < hi for start, _, _ in decls.get(x, ())):
                continue  # a parameter or local of the lambda
            before = [(ty, target) for start, ty, target in decls.get(x, ()) if start < lo]
            if not before or (x not in by_ref and "" not in by_ref):
                continue
            ty, target = before[-1]
            ref = by_ref.get(x, by_ref.get("")) and _written_in(self.lam, x)  # read only: a value
            out.append((x, ty, target, ref))
        cls = self.object_class(fn, decls)
        if cls is not None and by_ref:
            out.append(("this", cls, None, False))
        return out

    def object_class(self, fn, decls):
        """The class whose object the lambda reaches through `this` (named, or a field named
        alone in a member function), or None."""
        p = fn.parent
        while p is not None and p.type in ("template_declaration", "field_declaration_list"):
            p = p.parent
        name = p.child_by_field_name("name") if p is not None and p.type in ("struct_specifier",
                                                                            "class_specifier") else None
        cls = self.layer.classes.get(_text(name)) if name is not None else None
        if cls is None or _has_storage(fn, "static"):
            return None
        uses = _nodes(self.lam, ("this", "identifier"))
        if any(m.type == "this" or _text(m) in cls.fields and _text(m) not in decls for m in uses):
            return cls.name
        return None

    def capture_parameter(self, at, x, ty, target, ref) -> list[Tok]:
        lay = self.layer
        if x == "this":
            return [_new(at, "id", "struct"), _new(at, "id", ty), _new(at, "op", "*"), _new(at, "id", "this")]
        out = lay.node(ty) if ty is not None else [_new(at, "id", "auto")]
        if ref:  # a specifier: before the declarator's `*`
            out += [_new(at, "id", "_Alignas"), _new(at, "op", "("), _new(at, "num", str(REF_MARK)), _new(at, "op", ")")]
        d = target
        while d is not None and d.type in ("pointer_declarator", "array_declarator"):
            out.append(_new(at, "op", "*"))
            d = d.child_by_field_name("declarator")
        return out + [_new(at, "id", x)]

    def hoisted(self) -> list:
        """The function goes before the item that holds the lambda (an empty list: it is there),
        once (the item may be rendered again, as a callee's copy)."""
        lay = self.layer
        if self.emitted:
            return []
        self.emitted = True
        at = lay.tok(self.lam)
        ldecl = self.lam.child_by_field_name("declarator")
        params = ldecl.child_by_field_name("parameters") if ldecl is not None else None
        ret = next((c for c in ldecl.children if c.type == "trailing_return_type"), None) if ldecl else None
        if ret is not None and ret.named_child_count:
            rtype = lay.node(ret.named_children[0])
        else:
            body = self.lam.child_by_field_name("body")
            returns = any(r.named_child_count for r in _nodes(body, ("return_statement",))
                          if self.own_return(r))
            rtype = [_new(at, "id", "auto" if returns else "void")]
        out = [_new(at, "id", "__device__"), *rtype, at.named(self.mangled), _new(at, "op", "(")]
        if params is not None:
            a, b = lay.src.span(params)
            inner = lay.render(a + 1, b - 1)
            out += [] if [x.text for x in inner] == ["void"] else inner
        for i, cap in enumerate(self.captures):
            if i or self.nparams:
                out.append(_new(at, "op", ","))
            out += self.capture_parameter(at, *cap)
        out += [_new(at, "op", ")"), *lay.node(self.lam.child_by_field_name("body"))]
        lay.before.extend(out)
        return []

    def own_return(self, r) -> bool:
        """Is return statement `r` the lambda's own (not a nested lambda's)?"""
        p = r.parent
        while p is not None and p.type != "lambda_expression":
            p = p.parent
        return p == self.lam

    def hoist(self, decl):
        """The declaration goes (an empty statement); the function goes before the item."""
        self.hoisted()
        return [self.layer.src.toks[self.layer.src.span(decl)[1] - 1]]

    def invoke(self, c):
        """`[..](..) {..}(a)`: the function before the item, and its call here."""
        self.hoisted()
        return self.call(c, self.lam)

    def value(self, lam):
        """A lambda passed on or returned: its function's name, with a note."""
        lay = self.layer
        self.hoisted()
        at = lay.tok(lam)
        if self.callee is None:
            lay.notes.append((at, f"lambda at line {at.line} is analysed as a function of its own (its "
                              "captures as parameters); where it is passed, its calls are opaque"))
        return [at.named(self.mangled)]

    # -- a lambda passed to a function the file defines ---------------------------------------
    def _argument(self, args):
        """The argument of `args` that is the lambda, in parentheses or not (`f(([&] {..}))`)."""
        arg = self.lam
        while arg.parent is not None and arg.parent != args:
            arg = arg.parent
        return arg

    def passed_to(self, args, fn):
        """For a lambda passed to a function defined in the file, outside classes, with as many
        parameters as the call has arguments: the callee is rendered again for it (a copy,
        `callee__lambda_L`, whose calls of that parameter call the lambda, the captured
        variables added as its last parameters) and the call calls the copy.  Returns the
        callee's definition, or None (then the lambda is analysed alone)."""
        lay = self.layer
        call = args.parent if args is not None and args.type == "argument_list" else None
        if call is None or call.type != "call_expression" or call.id in lay.fixed:
            return None
        f = call.child_by_field_name("function")
        while f is not None and f.type in ("qualified_identifier", "template_function"):
            f = f.child_by_field_name("name")
        if f is None or f.type != "identifier":
            return None
        k = args.named_children.index(self._argument(args))
        found = [d for d in lay.definitions.get(_text(f), ()) if _function_declarator(d) is not None and
                 len(_parameters(d)) == args.named_child_count]
        if len(found) != 1 or found[0].start_byte <= self.lam.start_byte < found[0].end_byte:
            return None
        callee = found[0]
        d = _function_declarator(callee)
        param = _declarator_name(_parameters(callee)[k].child_by_field_name("declarator"))
        if param is None or param.type != "identifier":
            return None
        self.param = _text(param)
        name = _declarator_name(d)
        qual = _namespace_path(callee) + (_text(name),)
        self.copy_name = mangle(qual) + "__" + self.mangled
        refs = lay.ref_params.get(mangle(qual), ()) + tuple(
            len(_parameters(callee)) + i for i, cap in enumerate(self.captures) if cap[3])
        if refs:
            lay.ref_params[self.copy_name] = refs
        lay.display[self.copy_name] = f"{lay.display.get(mangle(qual), _text(name))} (with the lambda at line " \
                                      f"{lay.tok(self.lam).line})"
        lay.fix(call, self.call_copy)
        mine = lambda: lay.specialising is self  # noqa: E731
        lay.fix_specialised(name, lambda n: [lay.tok(n).named(self.copy_name)] if mine() else None)
        lay.fix_specialised(d.child_by_field_name("parameters"), lambda n: self.copy_parameters(n) if mine() else None)
        body = callee.child_by_field_name("body")
        for c in _nodes(body, ("call_expression",)) if body is not None else ():
            g = c.child_by_field_name("function")
            if g is not None and g.type == "identifier" and _text(g) == self.param:
                lay.fix_specialised(c, lambda c: self.call(c, c.child_by_field_name("function"), "__cap_")
                                    if mine() else None)
        return callee

    def copy_parameters(self, params):
        """The callee's parameters, then the captured variables (`__cap_x`)."""
        lay = self.layer
        a, b = lay.src.span(params)
        at = lay.src.toks[a]
        inner = lay.render(a + 1, b - 1)
        inner = [] if [x.text for x in inner] == ["void"] else inner
        out = [at, *inner]
        for i, (x, ty, target, ref) in enumerate(self.captures):
            if i or inner:
                out.append(_new(at, "op", ","))
            out += self.capture_parameter(at, x if x == "this" else "__cap_" + x, ty, target, ref)
        return out + [lay.src.toks[b - 1]]

    def call_copy(self, call):
        """`callee(a, [..](..) {..})` -> `callee__lambda_L(a, g__lambda_L, <captured variables>)`,
        the copy of the callee rendered before the item."""
        lay = self.layer
        copy = []
        if not self.copied:
            self.copied = True
            copy = lay.copy_of(self.callee, self)
        args = call.child_by_field_name("arguments")
        t = lay.tok(call)
        a, b = lay.src.span(args)
        out = [t.named(self.copy_name), lay.src.toks[a], *lay.render(a + 1, b - 1)]
        lay.before.extend(copy)
        for cap in self.captures:
            out += [_new(t, "op", ","), *self.capture_argument(t, cap)]
        return out + [lay.src.toks[b - 1]]

    def capture_argument(self, t, cap, prefix="") -> list[Tok]:
        """What a call passes for a captured variable: the variable (`prefix`ed in a callee's
        copy, where it is a parameter), or the value of an initialised capture (`[t = e]`)."""
        x, ty, target, _ = cap
        if prefix == "" and ty is None and target is not None:
            return self.layer.node(target)
        return [_new(t, "id", x if x == "this" else prefix + x)]

    def call(self, c, f, prefix=""):
        """`f(a)` (or `[..](..) {..}(a)`) -> `g__lambda_L(a, <captured variables>)` (named with
        `prefix` in a callee's copy)."""
        lay = self.layer
        args = c.child_by_field_name("arguments")
        t = lay.tok(f)
        a, b = lay.src.span(args)
        out = [t.named(self.mangled), lay.src.toks[a], *lay.render(a + 1, b - 1)]
        given = args.named_child_count
        for i, value in enumerate(self.defaults_after(given)):
            if i or given:
                out.append(_new(t, "op", ","))
            out += lay.node(value)
            given += 1
        for i, cap in enumerate(self.captures):
            if i or given:
                out.append(_new(t, "op", ","))
            out += self.capture_argument(t, cap, prefix)
        return out + [lay.src.toks[b - 1]]

    def defaults_after(self, given: int) -> list:
        """The default values of the lambda's parameters past the `given` arguments of a call
        (`[&](bool last = false) {..}` called as `f()`): they go before the captured variables."""
        ldecl = self.lam.child_by_field_name("declarator")
        params = ldecl.child_by_field_name("parameters") if ldecl is not None else None
        rest = params.named_children[given:] if params is not None else []
        values = [p.child_by_field_name("default_value") for p in rest]
        return values if all(v is not None for v in values) else []


MAX_TEMPLATE_COPIES = 32  # per file: copies of function templates for their value arguments
_CONSTANT_NODES = ("number_literal", "true", "false", "parenthesized_expression", "unary_expression",
                   "binary_expression", "conditional_expression")


class _TemplateCopy:
    """A function template's copy for some values of its value parameters and some classes of its
    type parameters."""

    def __init__(self, callee, name: str, values: dict[str, list[Tok]], types: dict[str, str] | None = None):
        self.callee, self.name, self.values, self.types = callee, name, values, types or {}


class _TemplateValues:
    """Template value arguments per call: a call of a function template the file defines, with
    value arguments written (`f<true>(x)`, `f<T, 24>(v)`) or left to their defaults (`f(x)`),
    calls a copy of the callee (`f__values_K`) in which each bound value parameter is its
    constant, so `if constexpr (use_sync)` folds and a shuffle width is known.  A type parameter
    is bound where the call names a class of the file for it (`f<Sum>(v)`, or an argument that
    constructs one: `reduce(v, Sum<T>{})`): in the copy its declarations are that class and
    `op(a, b)` calls its member (`Sum__call`); other type parameters stay erased.  A value argument is a constant of literals and operators, or of the value
    parameters of the copy being rendered (`g<N>(x)` inside `f<N>`).  A template never called
    with values keeps them uniform unknowns; past MAX_TEMPLATE_COPIES calls do too (a note)."""

    def __init__(self, layer: _Layer):
        self.layer = layer
        self.params: dict[int, list] = {}  # template's definition id -> [(name, default, is value)]
        self.copies: dict[tuple, _TemplateCopy] = {}  # (definition id, values) -> its copy
        self.unrendered: list[_TemplateCopy] = []
        self.made = 0  # copies made (named in order)
        self.noted = False

    # -- planning --------------------------------------------------------------------------
    def plan(self, calls) -> None:
        lay = self.layer
        for call in calls:
            f = call.child_by_field_name("function")
            callee = self.callee(f)
            if callee is not None:
                lay.fix_first(f, lambda n, callee=callee: self.call(n, callee))

    def callee(self, f):
        """The one definition of a function template with value parameters that `f` (the
        function of a call) names, outside classes (a member template stays erased); None otherwise."""
        name = f
        while name is not None and name.type in ("qualified_identifier", "template_function"):
            name = name.child_by_field_name("name")
        if name is None or name.type != "identifier":
            return None
        found = [d for d in self.layer.definitions.get(_text(name), ())
                 if d.parent is not None and d.parent.type == "template_declaration"
                 and not self.layer.inside_class(d.parent)]  # a member: a class's function (_Class)
        if len(found) != 1 or not self.parameters(found[0]):
            return None
        return found[0]

    def parameters(self, fn) -> list:
        """(name, default, is a value) of template `fn`'s parameters up to a pack; planned once:
        in the copies, the function's name and the uses of its value parameters are rewritten."""
        if fn.id in self.params:
            return self.params[fn.id]
        out = []
        plist = fn.parent.child_by_field_name("parameters")
        for p in plist.named_children if plist is not None else ():
            if p.type.startswith("variadic") or p.type not in (
                    "parameter_declaration", "optional_parameter_declaration",
                    "type_parameter_declaration", "optional_type_parameter_declaration"):
                break
            value = p.type in ("parameter_declaration", "optional_parameter_declaration")
            name = _declarator_name(p.child_by_field_name("declarator")) if value else \
                next((c for c in p.named_children if c.type == "type_identifier"), None)
            out.append((_text(name) if name is not None else None, p.child_by_field_name("default_value"), value))
        self.params[fn.id] = out = out if any(x for x, _, _ in out) else []
        if out:
            self.plan_copies(fn, {x for x, _, v in out if v and x}, {x for x, _, v in out if not v and x})
        return out

    def plan_copies(self, fn, names: set[str], types: frozenset[str] = frozenset()) -> None:
        lay = self.layer
        mine = lambda: lay.specialising if isinstance(lay.specialising, _TemplateCopy) and \
            lay.specialising.callee == fn else None  # noqa: E731
        name = _declarator_name(_function_declarator(fn))
        lay.fix_specialised(name, lambda n: [lay.tok(n).named(c.name)] if (c := mine()) else None)
        for m in _nodes(fn, ("identifier", "type_identifier", "call_expression")):
            if m.type == "identifier" and _text(m) in names:
                lay.fix_specialised(m, lambda n: self.bound(n, c) if (c := mine()) else None)
            elif m.type == "type_identifier" and _text(m) in types:
                lay.fix_specialised(m, lambda n: [lay.tok(n).named(t)]
                                    if (c := mine()) and (t := c.types.get(_text(n))) else None)
            elif m.type == "call_expression" and types:  # `op(a, b)` of an `Op op` bound to a class
                lay.fix_specialised(m, lambda n: lay._call_method(n, *found)
                                    if mine() and (found := lay._method_call(n)) else None)

    # -- rendering -------------------------------------------------------------------------
    def bound(self, n, copy: _TemplateCopy):
        """A use of a value parameter in a copy: its constant, at the use's place."""
        t = self.layer.tok(n)
        value = copy.values.get(_text(n))
        return None if value is None else [v.copy(path=t.path, line=t.line, col=t.col) for v in value]

    def call(self, f, callee):
        """`f<true>(x)` / `f(x)` -> `f__values_K(x)`, the copy rendered before the item (after
        it is rendered: a recursive template's call is then no node being rendered); None (the
        template as it is) when no value is known."""
        lay = self.layer
        values, types = self.values(f, callee), self.types(f, callee)
        if not values and not types:
            return None
        key = (callee.id, tuple((x, tuple(t.text for t in v)) for x, v in values.items()), tuple(types.items()))
        copy = self.copies.get(key)
        if copy is None:
            if len(self.copies) >= MAX_TEMPLATE_COPIES:
                self.note(f)
                return None
            copy = self.copies[key] = self.new_copy(callee, values, types)
            self.unrendered.append(copy)
        return [lay.tok(f).named(copy.name)]

    def values(self, f, callee) -> dict[str, list[Tok]]:
        """Value parameter -> its constant's tokens, for the call whose function is `f`."""
        current = self.layer.specialising
        outer = current.values if isinstance(current, _TemplateCopy) else {}
        while f.type == "qualified_identifier":
            f = f.child_by_field_name("name")
        targs = f.child_by_field_name("arguments") if f.type == "template_function" else None
        args = targs.named_children if targs is not None else []
        out: dict[str, list[Tok]] = {}
        for i, (x, default, value) in enumerate(self.params[callee.id]):
            if i < len(args):
                v = self.constant(args[i], outer) if value else None
            else:
                v = self.constant(default, out) if value and default is not None else None
            if x and v is not None:
                out[x] = v
        return out

    def types(self, f, callee) -> dict[str, str]:
        """Type parameter -> the class of the file it is at the call whose function is `f`: a
        template argument naming the class, or the argument of a parameter declared with the
        type parameter that constructs one (`reduce(v, Sum<T>{})`, `reduce(v, Sum())`)."""
        lay = self.layer
        call = f.parent
        while f.type == "qualified_identifier":
            f = f.child_by_field_name("name")
        targs = f.child_by_field_name("arguments") if f.type == "template_function" else None
        given = targs.named_children if targs is not None else []
        params = self.params[callee.id]
        out = {x: c for (x, _, value), a in zip(params, given) if x and not value and (c := self.class_named(a))}
        args = call.child_by_field_name("arguments") if call is not None and call.type == "call_expression" else None
        wanted = {x for x, _, value in params if x and not value} - set(out)
        for p, a in zip(_parameters(callee), args.named_children if args is not None and wanted else ()):
            ty = p.child_by_field_name("type")
            if ty is not None and ty.type == "type_identifier" and _text(ty) in wanted:
                made = a.child_by_field_name("type") if a.type == "compound_literal_expression" else \
                    a.child_by_field_name("function") if a.type == "call_expression" and \
                    (a.child_by_field_name("arguments") or a).named_child_count == 0 else None
                if made is not None and (c := self.class_named(made)):
                    out[_text(ty)] = c
        return out

    def class_named(self, ty) -> str | None:
        """The class (with member functions) that type node `ty` names: `Sum`, `Sum<T>`."""
        if ty.type == "type_descriptor" and ty.named_child_count:
            ty = ty.named_children[0]
        if ty.type in ("template_type", "template_function"):
            ty = ty.child_by_field_name("name")
        name = _text(ty) if ty is not None and ty.type in ("type_identifier", "identifier") else None
        return name if name in self.layer.classes else None

    def constant(self, e, env: dict[str, list[Tok]]):
        """The tokens of constant expression `e` (literals, operators and the names in `env`,
        replaced by their values), parenthesised; None when it is not one (or missing: the
        parser leaves out a part it could not read, as in `c ? : 3`)."""
        lay = self.layer
        if e is None:
            return None
        if e.type == "type_descriptor":  # `g<N>`: a name the parser took for a type
            return env.get(_text(e).strip())
        for m in _walk(e):
            if m.is_named and m.type not in _CONSTANT_NODES and not (m.type == "identifier" and _text(m) in env):
                return None
        a, b = lay.src.span(e)
        t = lay.src.toks[a]
        out = [_new(t, "op", "(")]
        for x in lay.src.toks[a:b]:
            out += env[x.text] if x.kind == "id" and x.text in env else [x]
        return out + [_new(t, "op", ")")]

    def new_copy(self, callee, values, types=None) -> _TemplateCopy:
        lay = self.layer
        name = _declarator_name(_function_declarator(callee))
        qual = _namespace_path(callee) + (_text(name),)
        copy = _TemplateCopy(callee, f"{mangle(qual)}__values_{self.made}", values, types)
        self.made += 1
        shown = ", ".join([f"{x} = {' '.join(t.text for t in v[1:-1])}" for x, v in values.items()] +
                          [f"{x} = {c}" for x, c in (types or {}).items()])
        lay.display[copy.name] = f"{lay.display.get(mangle(qual), _text(name))} ({shown})"
        if mangle(qual) in lay.ref_params:
            lay.ref_params[copy.name] = lay.ref_params[mangle(qual)]
        return copy

    def render_copies(self) -> None:
        """The copies the item just rendered calls (and those they call), before the item."""
        while self.unrendered:
            copy = self.unrendered.pop(0)
            self.layer.before.extend(self.layer.copy_of(copy.callee, copy))

    def note(self, f) -> None:
        if not self.noted:
            self.noted = True
            self.layer.notes.append((self.layer.tok(f), f"more than {MAX_TEMPLATE_COPIES} copies of function "
                                     "templates for their value arguments: this call and later ones use the "
                                     "template with its values unknown"))


class _TypeParameters:
    """Type parameters read through the one class of the file that has the members they are used
    with (code compiled at run time binds them only in source made then; erased, their members
    are unknowns and opaque calls).  No such class, or several: the parameter stays erased.
    - Objects (`Layout *p` with `p->row_len`, `p->slot(i)`): the one class, not a template, with
      all those fields and member functions; its fields have their places and `p->slot(i)` is its
      member function, so the object does not escape into an unknown call.
    - Static members only (`G::size()`, `G::thread_rank()`): the one class template with all of
      them as static members returning one expression (`template <int W, int S> struct
      warp_group { static int size() { return 32 * W; } ... }`): `G::size()` -> `(32 * G__W)`,
      the class's value parameters unknowns of G's own.  Erased, `G::size()` need not be a
      multiple of 32, and warp roles split at it looked divergent."""

    MAX_DEPTH = 4  # members calling members

    def __init__(self, layer: _Layer):
        self.layer = layer

    def plan(self, templates) -> None:
        read_as: dict[str, tuple] = {}  # class -> (the class, its type parameters' names)
        for tmpl in templates:
            fn = tmpl.named_children[-1] if tmpl.named_child_count else None
            params = self.type_parameters(tmpl)
            if not params or fn is None or fn.type != "function_definition" or self.layer.inside_class(tmpl):
                continue
            for name, calls in self.member_calls(params, fn).items():
                cls = self.only_class({m for m, _ in calls})
                if cls is None:
                    continue
                read_as.setdefault(cls.name, (cls, set()))[1].add(name)
                for member, call in calls:
                    self.layer.fix_first(call, lambda n, c=cls, g=name, m=member: self.expand(c, m, g, n, 0))
            self.plan_objects(params, fn, read_as)
        for cls, names in read_as.values():
            shown = ", ".join(f"'{x}'" for x in sorted(names))
            template = cls.spec.parent is not None and cls.spec.parent.type == "template_declaration"
            self.layer.notes.append((self.layer.tok(cls.spec), f"type parameter{'s' * (len(names) > 1)} {shown}, "
                                     f"used only through members that {'class template' if template else 'class'} "
                                     f"'{cls.name}' has, {'are' if len(names) > 1 else 'is'} read as it" +
                                     (", with its parameters unknown (their own for each type parameter)"
                                      if template else "")))

    def plan_objects(self, params: set[str], fn, read_as: dict) -> None:
        """A type parameter that declares objects (`T *p`, `T o`) whose members used here (fields,
        member calls) one class here, not a template, has all of: T is that class in `fn`, so its
        fields have their places and its member functions are called (`p->get(i)`)."""
        declared: dict[str, list] = {}  # T -> the type nodes of its declarations
        objects: dict[str, str] = {}  # variable -> T (declared before its uses, in document order)
        used: dict[str, set[str]] = {}
        for n in _nodes(fn, ("parameter_declaration", "declaration", "field_expression")):
            ty = n.child_by_field_name("type") if n.type != "field_expression" else None
            if ty is not None and ty.type == "type_identifier" and _text(ty) in params:
                declared.setdefault(_text(ty), []).append(ty)
                for d in n.children_by_field_name("declarator"):
                    if (x := _declarator_name(d)) is not None:
                        objects[_text(x)] = _text(ty)
            obj = n.child_by_field_name("argument") if n.type == "field_expression" else None
            field = n.child_by_field_name("field") if obj is not None else None
            if obj is not None and obj.type == "identifier" and _text(obj) in objects and field is not None:
                used.setdefault(objects[_text(obj)], set()).add(_text(field))
        for t, members in used.items():
            found = [c for c in self.layer.classes.values()
                     if c.specialisation is None and (c.spec.parent is None or c.spec.parent.type != "template_declaration")
                     and all(c.fields.__contains__(m) or c.methods.get(m) is False for m in members)]
            if len(found) != 1:
                continue
            cls = found[0]
            read_as.setdefault(cls.name, (cls, set()))[1].add(t)
            for ty in declared[t]:
                self.layer.bound_types[ty.id] = cls.name
                self.layer.fix(ty, lambda n, c=cls: [self.layer.tok(n).named(c.name)])

    @staticmethod
    def type_parameters(tmpl) -> set[str]:
        params = tmpl.child_by_field_name("parameters")
        return {_text(c) for p in (params.named_children if params is not None else ())
                if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration")
                for c in p.named_children if c.type == "type_identifier"}

    def member_calls(self, names: set[str], fn) -> dict:
        """Type parameter -> [(member, call)] of its uses in `fn`, for those used only as
        `G::m()` (no arguments)."""
        uses: dict[str, list] = {}
        spoilt: set[str] = set()
        for n in _nodes(fn, ("type_identifier", "namespace_identifier")):
            if _text(n) not in names:
                continue
            q = n.parent
            call = q.parent if q is not None and q.type == "qualified_identifier" else None
            member = q.child_by_field_name("name") if call is not None else None
            if call is not None and call.type == "call_expression" and call.child_by_field_name("function") == q \
                    and q.child_by_field_name("scope") == n and member is not None and member.type == "identifier" \
                    and (call.child_by_field_name("arguments") or call).named_child_count == 0:
                uses.setdefault(_text(n), []).append((_text(member), call))
            elif not self.passed_on(n):
                spoilt.add(_text(n))  # `G x;`, `G::type`, `G::f(x)`: erased as before
        return {g: c for g, c in uses.items() if g not in spoilt}

    @staticmethod
    def passed_on(n) -> bool:
        """Is type name `n` its parameter's declaration, or a template argument (`f<G>(x)`:
        the callee reads its own parameter)?"""
        up = n.parent
        if up is not None and up.type == "type_descriptor":
            up = up.parent
        return up is not None and up.type in ("type_parameter_declaration", "optional_type_parameter_declaration",
                                              "template_argument_list")

    def only_class(self, members: set[str]):
        found = [c for c in self.layer.classes.values()
                 if c.spec.parent is not None and c.spec.parent.type == "template_declaration"
                 and c.specialisation is None and all(self.returned(c, m) is not None for m in members)]
        return found[0] if len(found) == 1 else None

    @staticmethod
    def returned(cls: _Class, member: str):
        """The expression static member function `member()` of `cls` returns, if its body is
        that one return statement."""
        if not cls.methods.get(member):
            return None
        for c in cls.body.named_children:
            fd = c.named_children[-1] if c.type == "template_declaration" and c.named_child_count else c
            d = _function_declarator(fd) if fd.type == "function_definition" else None
            if d is None or _member_name(_declarator_name(d)) != member or _parameters(fd):
                continue
            body = fd.child_by_field_name("body")
            stmts = body.named_children if body is not None else []
            if len(stmts) == 1 and stmts[0].type == "return_statement" and stmts[0].named_child_count == 1:
                return stmts[0].named_children[0]
        return None

    def expand(self, cls: _Class, member: str, g: str, call, depth: int):
        """`G::m()` -> `(e)`: the expression m returns, with the class's value parameters and
        members read as G's, at the call's place; None (left erased) past MAX_DEPTH."""
        lay = self.layer
        e = self.returned(cls, member)
        if e is None or depth > self.MAX_DEPTH:
            return None
        at = lay.tok(call)
        params = cls.spec.parent.child_by_field_name("parameters")
        values = {_text(x) for p in params.named_children if p.type in ("parameter_declaration",
                  "optional_parameter_declaration") and (x := _declarator_name(p.child_by_field_name("declarator")))}
        toks = lay.node(e)
        out = [_new(at, "op", "(")]
        i = 0
        while i < len(toks):
            t = toks[i]
            m = t.text[len(cls.name) + 2:] if t.text.startswith(cls.name + "__") else t.text
            if t.kind == "id" and m in cls.methods and toks[i + 1:i + 3] and \
                    [x.text for x in toks[i + 1:i + 3]] == ["(", ")"]:
                inner = self.expand(cls, m, g, call, depth + 1)
                if inner is None:
                    return None
                out += inner
                i += 3
                continue
            text = f"{g}__{t.text}" if t.kind == "id" and t.text in values else t.text
            out.append(t.copy(text=text, path=at.path, line=at.line, col=at.col))
            i += 1
        return out + [_new(at, "op", ")")]


MAX_CHOICE_COPIES = 4  # copies of one kernel for its compile-time choices


class _Choices:
    """Compile-time choices of a kernel: `constexpr int U = H % 512 == 0 ? 4 : 2;` with `H` a
    template parameter nothing here fixes is 4 in some instantiations and 2 in others.  Read as one
    unknown, `lane * U` varies per lane by an unknown step and `i < align_up(n, 32 * U)` is not seen
    to be warp-uniform.  A kernel (nothing in device code calls it) with such `constexpr` locals is
    analysed once per combination of their values instead, each a copy named with its values
    (`combine (U = 4)`), where the uses of each local are its constant.  Only `constexpr` locals:
    their condition is a compile-time constant, the same in every thread; a run-time condition may
    differ per lane."""

    def __init__(self, layer: _Layer):
        self.layer = layer
        self.kernels: dict[int, list] = {}  # kernel definition id -> [(name, [value tokens, ...])]

    def plan(self) -> None:
        tv = self.layer.template_values
        for fn in (d for ds in self.layer.definitions.values() for d in ds):
            if not any(c.type == "__global__" for c in fn.children):
                continue
            found = self.choices(fn)
            if found and _product(len(v) for _, v, _ in found) <= MAX_CHOICE_COPIES:
                self.kernels[fn.id] = [(x, v) for x, v, _ in found]
                tv.plan_copies(fn, {x for x, _, _ in found})
                for x, _, decl in found:  # in a choice's copy its declaration goes: its uses are constants
                    self.layer.fix_specialised(decl, lambda n, fn=fn, x=x: [] if self.bound(fn, x) else None)

    def bound(self, fn, name: str) -> bool:
        """Is a copy of `fn` with a value for `name` being rendered?"""
        copy = self.layer.specialising
        return isinstance(copy, _TemplateCopy) and copy.callee == fn and name in copy.values

    def choices(self, fn) -> list:
        """(name, [each value's tokens], declaration) of `fn`'s constexpr locals whose value is
        `c ? a : b` with constant branches and a condition that is not constant, declared once."""
        tv, out, env = self.layer.template_values, [], {}
        decls = self.layer.declarations(fn)
        for d in self.layer.declaration_nodes(fn):
            if d.type != "declaration":
                continue
            inits = d.children_by_field_name("declarator")
            if not any(_text(c) == "constexpr" for c in d.children) or len(inits) != 1 or \
                    inits[0].type != "init_declarator":
                continue
            name, value = _declarator_name(inits[0].child_by_field_name("declarator")), \
                inits[0].child_by_field_name("value")
            if name is None or value is None or value.type != "conditional_expression" or \
                    len(decls.get(_text(name), ())) != 1:
                continue
            cond = value.child_by_field_name("condition")
            branches = [tv.constant(value.child_by_field_name(f), env) for f in ("consequence", "alternative")]
            if cond is None or tv.constant(cond, env) is not None or None in branches:
                continue
            out.append((_text(name), branches, d))
            env[_text(name)] = branches[0]  # later conditions on it fold in each copy
        return out

    def render(self, item) -> list[Tok] | None:
        """The top-level `item`, when it is a kernel with choices, as its copies; else None."""
        fn = item.named_children[-1] if item.type == "template_declaration" and item.named_children else item
        found = self.kernels.get(fn.id)
        if not found or self.layer.specialising is not None:
            return None
        out: list[Tok] = []
        for values in _combinations(found):
            copy = self.layer.template_values.new_copy(fn, values)
            out.extend(self.layer.copy_of(fn, copy))
        return out


def _product(ns) -> int:
    out = 1
    for n in ns:
        out *= n
    return out


def _combinations(found) -> list[dict]:
    """Every assignment of one value to each choice, in order."""
    out = [{}]
    for name, values in found:
        out = [dict(o, **{name: v}) for o in out for v in values]
    return out

