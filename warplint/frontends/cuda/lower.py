"""pycparser AST -> PTX-shaped warp IR (see the lowering contract in the package docstring)."""
from __future__ import annotations

from typing import NamedTuple

from pycparser import c_ast as A  # lower is imported where pycparser is: by parse_cuda

from ...intops import C_BINARY, binary, c_unary
from ...ir import Addr, Diagnostic, Function, Imm, Instr, Label, Loc, Reg, Sym, Vec
from ...specials import CUDA_BUILTINS
from .cxx import REF_MARK
from .ctype import BOOL, DOUBLE, FLOAT, INT, LL, OPAQUE, UINT, ULL, Kind, T, Unsupported
from .intrinsics import auto_group_type, call
from .lexer import brief
from .preprocess import char_value, parse_int
from .rewrite import BUILTIN_TYPES, MARKERS

_CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "&": "and", "|": "or",
          "^": "xor", "<<": "shl", ">>": "shr"}


def type_from_names(names, typedefs) -> T:
    ns = [n for n in names if n not in ("const", "volatile", "static", "extern", "register")]
    if not ns:
        return INT
    if len(ns) == 1 and ns[0] in typedefs:
        return typedefs[ns[0]]
    if len(ns) == 1 and ns[0] in BUILTIN_TYPES:
        name = ns[0]
        size = BUILTIN_TYPES[name]
        if name in ("size_t", "uintptr_t", "uint64_t"):
            return ULL
        if name in ("ptrdiff_t", "intptr_t", "ssize_t", "int64_t"):
            return LL
        if name in ("uint32_t", "uint", "char32_t", "wchar_t"):
            return UINT
        if name in ("int32_t", "cudaError_t"):
            return INT
        if name in ("uint8_t", "uchar", "bool"):
            return T(Kind.UNSIGNED, 8)
        if name == "int8_t":
            return T(Kind.SIGNED, 8)
        if name in ("uint16_t", "ushort", "char16_t"):
            return T(Kind.UNSIGNED, 16)
        if name == "int16_t":
            return T(Kind.SIGNED, 16)
        if name in ("__half", "half", "__nv_bfloat16"):
            return T(Kind.FLOAT, 16)
        return T(Kind.BITS, size * 8, name=name)
    if "float" in ns:
        return FLOAT
    if "double" in ns:
        return DOUBLE
    if "void" in ns:
        return T(Kind.BITS, 8, name="void")
    if "_Bool" in ns or "bool" in ns:
        return BOOL
    if len(ns) == 1 and ns[0] not in ("int", "signed", "unsigned", "long", "short", "char"):
        return T(Kind.SIGNED, 32, name=ns[0])  # unknown type name (template parameter, library type)
    unsigned = "unsigned" in ns
    k = Kind.UNSIGNED if unsigned else Kind.SIGNED
    if "long" in ns:
        return T(k, 64)
    if "char" in ns:
        return T(k, 8)
    if "short" in ns:
        return T(k, 16)
    return T(k, 32)


def _has_effects(node) -> bool:
    """Does evaluating `node` call a function, assign or read memory (so it must not run for
    every lane: `tid == 0 && *flag` reads *flag in lane 0 only)?"""
    stack = [node]
    n = 0
    while stack:
        x = stack.pop()
        n += 1
        if n > 2000:
            return True
        if isinstance(x, (A.FuncCall, A.Assignment)):
            return True
        if isinstance(x, A.UnaryOp) and x.op in ("++", "--", "p++", "p--", "*"):
            return True
        if isinstance(x, A.ArrayRef) or (isinstance(x, A.StructRef) and x.type == "->"):
            return True
        stack.extend(c for _, c in x.children())
    return False


class Var(NamedTuple):
    """A name in scope: a register ("reg"), a variable in memory ("mem": its symbol and state
    space) or a folded constant ("imm": `name` is its value)."""
    kind: str
    name: object
    type: T
    space: str | None = None


class Place(NamedTuple):
    """Where an lvalue lives: a register ("reg": `where` is its name) or memory ("mem": `where`
    is the address operand, with its state space and volatility)."""
    kind: str
    where: object
    type: T
    space: str | None = None
    vol: bool = False


class Scope:
    def __init__(self, parent=None):
        self.parent = parent
        self.vars: dict[str, Var] = {}

    def find(self, name):
        s = self
        while s is not None:
            v = s.vars.get(name)
            if v is not None:
                return v
            s = s.parent
        return None


class Lowerer:
    def __init__(self, module, path, rewriter):
        self.module = module
        self.path = path
        self.rw = rewriter
        self.globals = Scope()
        self.typedefs: dict[str, T] = {}
        self.structs: dict[str, list] = {}  # tag -> [(field, T)]
        self.enums: dict[str, int] = {}
        self.bounds: frozenset[str] | None = None  # array bounds of the function (each >= 1), on first need
        self.funcs: set[str] = set()
        self.func_types: dict[str, T] = {}
        self.read_only_refs: dict[str, set[int]] = {}  # function -> reference parameters it never writes
        self.returned_parts: dict[str, int] = {}  # function -> how many positional parts its braced returns give
        self.written_ref_fields: dict[str, dict[int, list[str]]] = {}  # function -> reference parameter -> fields it writes
        self.nasm = 0
        self.discard = False
        self.chunk_toks = None
        self.line_offset = 0
        self._tok_index = {}
        self.tok_locs: dict[int, Loc] = {}
        self.line_locs: dict[int, Loc] = {}

    # -- locations ------------------------------------------------------------------------
    @property
    def tok_index(self) -> dict:
        """id of a token of the item -> its (last) index in the item's tokens."""
        if self._tok_index is None:
            toks = self.chunk_toks
            self._tok_index = {id(t): i for i, t in enumerate(toks)} if toks is not None else {}
        return self._tok_index

    def tok_at(self, coord):
        """The original token a pycparser coordinate stands for (its line is the token index)."""
        line = getattr(coord, "line", None)
        toks = self.chunk_toks
        if not line or toks is None:
            return None
        line -= self.line_offset
        if 0 < line <= len(toks):
            return toks[line - 1]
        return None

    def loc(self, node_or_coord) -> Loc:
        coord = getattr(node_or_coord, "coord", node_or_coord)
        line = getattr(coord, "line", None)
        loc = self.line_locs.get(line)  # the token a line stands for is fixed within an item
        if loc is None:
            t = self.tok_at(coord)
            if t is None:
                return self.cur_loc
            loc = self.tok_locs.get(id(t))  # one Loc per token of the item (it is immutable)
            if loc is None:
                loc = self.tok_locs[id(t)] = Loc(t.path, t.line, t.col)
            self.line_locs[line] = loc
        return loc

    def cond_loc(self, node) -> Loc:
        """Start of a condition expression, including parentheses that open it."""
        t = self.tok_at(getattr(node, "coord", None))
        toks = self.chunk_toks
        k = self.tok_index.get(id(t)) if t is not None else None
        if k is None or toks is None:
            return self.loc(node)
        while k >= 2 and toks[k - 1].text == "(" and toks[k - 2].text not in (
                "if", "while", "switch", "for", ")", "]") and toks[k - 2].kind != "id":
            k -= 1
        s = toks[k]
        return Loc(s.path, s.line, s.col)

    # -- top level --------------------------------------------------------------------------
    def top(self, ast, toks, line_offset=0):
        self.chunk_toks = toks
        self.line_offset = line_offset
        self._tok_index = None  # built when first asked for (tok_index)
        self.tok_locs = {}  # id of a token of the item -> its Loc
        self.line_locs = {}  # coordinate line -> that Loc
        if line_offset:  # drop the typedef line the text route puts in front
            ast.ext = [x for x in ast.ext if getattr(getattr(x, "coord", None), "line", 0) > line_offset]
        for ext in ast.ext:
            d = ext.decl if isinstance(ext, A.FuncDef) else ext
            if isinstance(d, A.Decl) and isinstance(d.type, A.FuncDecl) and d.name:
                self.func_types[d.name] = self.ctype(d.type.type)
                if self.marks(d) & {"__global__", "__device__"}:
                    self.funcs.add(d.name)
        for ext in ast.ext:
            if isinstance(ext, A.FuncDef):
                marks = self.marks(ext.decl)
                if "__global__" in marks or "__device__" in marks:
                    self.funcs.add(ext.decl.name)
                    self.lower_function(ext, "__global__" in marks)
            elif isinstance(ext, A.Decl):
                self.global_decl(ext)
            elif isinstance(ext, A.Typedef):
                self.typedefs[ext.name] = self.ctype(ext.type)

    def finish(self):
        pass

    def marks(self, decl) -> set:
        return {MARKERS.get(v, "") for v in self.marks_of(decl)}

    @staticmethod
    def marks_of(decl) -> set[int]:
        """The markers on a declaration: `_Alignas(7010)` of the rewriter, `_Alignas(7020)` of cxx."""
        out = set()
        for a in getattr(decl, "align", None) or ():
            v = getattr(a.alignment, "value", None)
            if isinstance(v, str) and v.isdigit():
                out.add(int(v))
        return out

    def global_decl(self, d):
        ty = d.type
        if isinstance(ty, A.FuncDecl) or d.name is None:
            self.ctype(ty)  # registers struct/enum definitions
            return
        t = self.ctype(ty)
        marks = self.marks(d)
        space = "shared" if "__shared__" in marks else "const" if "__constant__" in marks else \
            "global" if "__device__" in marks else None
        if space is None:
            if "const" in (d.quals or []) and d.init is not None and not t.is_ptr:
                v = self.const_eval(d.init)
                if v is not None:
                    self.globals.vars[d.name] = Var("imm", v, t)
                    return
            space = "global"  # host globals are not visible in device code; treat as memory
        else:
            self.module.state_spaces[d.name] = space
        self.globals.vars[d.name] = Var("mem", d.name, t.with_(space=space) if t.kind == Kind.ARRAY else t, space)

    def const_eval(self, e):
        """The integer (or float constant) `e` folds to, else None."""
        if isinstance(e, A.Constant):
            return self.constant_value(e)
        if isinstance(e, A.ID):
            v = self.enums.get(e.name)
            if v is not None:
                return v
            g = self.globals.find(e.name)
            return g.name if g and g.kind == "imm" else None
        if isinstance(e, A.UnaryOp):
            v = self.const_eval(e.expr)
            return c_unary(e.op, v) if isinstance(v, int) else None
        if isinstance(e, A.BinaryOp):
            a, b = self.const_eval(e.left), self.const_eval(e.right)
            if not isinstance(a, int) or not isinstance(b, int) or e.op not in C_BINARY:
                return None
            return binary(C_BINARY[e.op], a, b)
        if isinstance(e, A.Cast):
            return self.const_eval(e.expr)
        if isinstance(e, A.TernaryOp):
            c = self.const_eval(e.cond)
            if c is None:
                return None
            return self.const_eval(e.iftrue if c else e.iffalse)
        return None

    def constant_value(self, c):
        v = c.value
        if c.type == "char":
            return char_value(v)
        if c.type == "string":
            return None
        if c.type in ("float", "double", "long double") or (
                ("." in v or "e" in v.lower() and not v.lower().startswith("0x") or "p" in v.lower()) and
                not v.lower().startswith("0x")):
            try:
                return float(v.rstrip("fFlL"))
            except ValueError:
                return 0.0
        try:
            return parse_int(v)
        except ValueError:
            try:
                return float(v.rstrip("fFlL"))
            except ValueError:
                return 0

    def ctype(self, ty) -> T:
        if isinstance(ty, A.TypeDecl):
            t = self.ctype(ty.type)
            if "volatile" in (ty.quals or []):
                t = t.with_(vol=True)
            return t
        if isinstance(ty, A.IdentifierType):
            names = ty.names
            if len(names) == 1 and names[0] not in self.typedefs and names[0] in self.structs:
                fields = self.structs[names[0]]  # C++: a struct tag used as a type name
                return T(Kind.BITS, (sum(f[1].size for f in fields) or 4) * 8, name=("struct", names[0], tuple(fields)))
            return type_from_names(names, self.typedefs)
        if isinstance(ty, A.PtrDecl):
            inner = self.ctype(ty.type)
            return T(Kind.POINTER, 64, elem=inner, vol=False)
        if isinstance(ty, A.ArrayDecl):
            inner = self.ctype(ty.type)
            d = self.const_eval(ty.dim) if ty.dim is not None else None
            d = d if isinstance(d, int) and d >= 0 else None
            if inner.kind == Kind.ARRAY:
                return T(Kind.ARRAY, 64, elem=inner.elem, dims=(d,) + inner.dims, vol=inner.vol)
            return T(Kind.ARRAY, 64, elem=inner, dims=(d,), vol=inner.vol)
        if isinstance(ty, (A.Struct, A.Union)):
            fields = []
            if ty.decls:
                for dd in ty.decls:
                    if dd.name:
                        fields.append((dd.name, self.ctype(dd.type)))
                if ty.name:
                    self.structs[ty.name] = fields
            elif ty.name in self.structs:
                fields = self.structs[ty.name]
            size = sum(f[1].size for f in fields) if fields else 4
            return T(Kind.BITS, size * 8, name=("struct", ty.name, tuple(fields)))
        if isinstance(ty, A.Enum):
            if ty.values:
                v = -1
                for e in ty.values.enumerators:
                    if e.value is not None:
                        c = self.const_eval(e.value)
                        v = c if isinstance(c, int) else None  # never invent a constant
                    elif v is not None:
                        v += 1
                    if v is None:
                        self.enums.pop(e.name, None)  # unknown: read as a uniform unknown
                    else:
                        self.enums[e.name] = v
            return INT
        if isinstance(ty, A.FuncDecl):
            return T(Kind.BITS, 64, name="function")
        return OPAQUE

    # -- functions --------------------------------------------------------------------------
    def lower_function(self, fd, is_kernel):
        name = fd.decl.name
        self.cur_loc = self.loc(fd.decl)
        fn = Function(name, is_kernel, loc=self.cur_loc, display_name=self.rw.facts.display.get(name, name))
        self.fn = fn
        self.body = fn.body
        self.names: dict[str, int] = {}
        self.ntemp = 0
        self.nlabel = 0
        self.scope = Scope(self.globals)
        self.loops: list[tuple[str, str | None]] = []  # (break label, continue label)
        self.user_labels: dict[str, str] = {}
        self.assigned: set[str] = set()  # by-value struct parameters whose fields are written
        fdecl = fd.decl.type
        try:
            args = fdecl.args.params if isinstance(fdecl, A.FuncDecl) and fdecl.args else []
            refs: dict[int, str] = {}  # argument position -> register of a reference parameter
            for index, p in enumerate(args):
                if isinstance(p, A.EllipsisParam):
                    continue
                if isinstance(p, A.ID):  # K&R-style or untyped parameter
                    reg = self.unique(p.name)
                    fn.params.append(reg)
                    self.scope.vars[p.name] = Var("reg", reg, INT)
                    continue
                pt = self.ctype(p.type)
                if pt.kind == Kind.BITS and pt.name == "void" and not p.name:
                    continue
                pname = p.name or f"$param{len(fn.params)}"
                if pt.kind == Kind.ARRAY:
                    pt = T(Kind.POINTER, 64, elem=pt.elem)
                if pt.kind == Kind.POINTER and is_kernel:
                    pt = pt.with_(space="global")
                reg = self.unique(pname)
                fn.params.append(reg)
                if REF_MARK in self.marks_of(p):  # a C++ reference: copied back out to the caller
                    fn.ret_params.append(reg)
                    refs[index] = reg
                self.scope.vars[pname] = Var("reg", reg, pt)
            self.ret_type = self.ctype(fdecl.type) if isinstance(fdecl, A.FuncDecl) else OPAQUE
            self.parts = _braced_return_arity(fd.body)
            self.fd, self.bounds = fd, None
            self.stmt(fd.body)
            if not self.body or not (isinstance(self.body[-1], Instr) and self.body[-1].op == "ret"):
                end = self.end_loc(fd.body)
                self.emit("ret", loc=end)
            if not (self.ret_type.kind == Kind.BITS and self.ret_type.name == "void"):
                fn.ret_params.append("$ret")  # after the reference parameters (intrinsics.call)
            for lab in self.user_labels.values():
                if lab not in self.defined_labels():
                    raise Unsupported("goto to undefined label")
        except Unsupported as e:
            self.not_analysed(fn, e.msg)
            return
        except RecursionError:
            self.not_analysed(fn, "nested too deeply")
            return
        written = _written_registers(fn.body)
        if self.parts:
            self.returned_parts[name] = self.parts
        self.read_only_refs[name] = {i for i, reg in refs.items()
                                     if reg not in written and not any(w.startswith(reg + ".") for w in written)}
        self.written_ref_fields[name] = {i: sorted(w[len(reg):] for w in written if w.startswith(reg + "."))
                                         for i, reg in refs.items()}
        self.module.functions.append(fn)

    def not_analysed(self, fn, why: str) -> None:
        self.module.diagnostics.append(Diagnostic(fn.loc, "note", f"function '{brief(fn.display_name)}' not analysed: {why}"))

    def defined_labels(self):
        return {i.name for i in self.body if isinstance(i, Label)}

    def end_loc(self, compound):
        """The function's closing brace (its last token), else its last statement."""
        toks = self.chunk_toks
        start = self.tok_at(getattr(compound, "coord", None))
        if toks and start is not None:
            k = self.tok_index.get(id(start))
            if k is not None and toks[k].text == "{":
                depth = 0
                for j in range(k, len(toks)):
                    x = toks[j].text
                    if x == "{":
                        depth += 1
                    elif x == "}":
                        depth -= 1
                        if depth == 0:
                            return Loc(toks[j].path, toks[j].line, toks[j].col)
        items = getattr(compound, "block_items", None) or []
        return self.loc(items[-1]) if items else self.loc(compound)

    def unique(self, name):
        n = self.names.get(name)
        if n is None:
            self.names[name] = 0
            return name
        n += 1
        self.names[name] = n
        return f"{name}${n}"

    def temp(self, prefix="$t"):
        self.ntemp += 1
        return Reg(f"{prefix}{self.ntemp}")

    def pred(self):
        self.ntemp += 1
        return Reg(f"$p{self.ntemp}")

    def label(self):
        self.nlabel += 1
        return f"$L{self.nlabel}"

    def emit(self, opcode, dests=(), srcs=(), loc=None, guard=None, text="", negated=frozenset()):
        ins = Instr(opcode, tuple(dests), tuple(srcs), loc or self.cur_loc, guard, None, text, negated,
                    from_cuda=True)
        self.body.append(ins)
        return ins

    def put_label(self, name, loc=None):
        self.body.append(Label(name, loc or self.cur_loc))

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s):
        if s is None:
            return
        if getattr(s, "coord", None) is not None:
            self.cur_loc = self.loc(s)
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            if isinstance(s, (A.EmptyStatement, A.Pragma, A.StaticAssert)):
                return
            if isinstance(s, A.FuncCall):
                self.discard = True  # a call whose value is not used gets no destination
                try:
                    self.rvalue(s)
                finally:
                    self.discard = False
                return
            if isinstance(s, A.Node):
                self.rvalue(s)
                return
            raise Unsupported(f"unsupported statement {type(s).__name__}")
        m(s)

    def s_Compound(self, s):
        self.scope = Scope(self.scope)
        for item in s.block_items or ():
            self.stmt(item)
        self.scope = self.scope.parent

    def s_DeclList(self, s):
        for d in s.decls:
            self.s_Decl(d)

    def s_Typedef(self, s):
        self.typedefs[s.name] = self.ctype(s.type)

    def s_Decl(self, d):
        if d.name is None or isinstance(d.type, A.FuncDecl):
            self.ctype(d.type)
            return
        t = self.ctype(d.type)
        marks = self.marks(d)
        loc = self.loc(d)
        if "__shared__" in marks:
            uname = self.unique(d.name)
            self.module.state_spaces[uname] = "shared"
            self.scope.vars[d.name] = Var("mem", uname, t, "shared")
            return
        if "__constant__" in marks:
            uname = self.unique(d.name)
            self.module.state_spaces[uname] = "const"
            self.scope.vars[d.name] = Var("mem", uname, t, "const")
            return
        if "extern" in (d.storage or []):
            self.scope.vars[d.name] = Var("mem", d.name, t, "global")
            return
        if t.kind == Kind.ARRAY:
            uname = self.unique(d.name)
            self.module.state_spaces[uname] = "local"  # each thread's own array
            self.scope.vars[d.name] = Var("mem", uname, t, "local")
            if d.init is not None and isinstance(d.init, A.InitList):
                base = self.temp("$a")
                self.emit("mov.u64", (base,), (Sym(uname),), loc)
                for k, e in enumerate(d.init.exprs[:64]):
                    v, vt = self.rvalue(e)
                    et = t.elem
                    a2 = self.temp("$a")
                    self.emit("add.s64", (a2,), (base, Imm(k * et.size)), loc)
                    self.emit(f"st.local.{et.ptx}", (), (Addr(a2, 0), v), loc)
            return
        uname = self.unique(d.name)
        reg = Reg(uname)
        t = auto_group_type(self, d.init, t)
        if d.init is not None:
            if isinstance(d.init, A.InitList):
                vals = [self.rvalue(e)[0] for e in d.init.exprs]
                self.emit("call", (reg,), (Sym("$initlist"),) + tuple(vals[:8]), loc)
            else:
                v, vt = self.rvalue(d.init)
                if isinstance(vt.name, tuple) and vt.name[0] in ("tile", "coalesced"):
                    t = vt  # a cooperative-groups group: remember its size or mask with the variable
                if t.kind == Kind.POINTER and vt.is_ptr and t.space is None and vt.space is not None:
                    t = t.with_(space=vt.space)
                self.move(reg, v, t, vt, loc)
                self.copy_parts(uname, d.init, v, loc)
        self.scope.vars[d.name] = Var("reg", uname, t)

    def move(self, dest, v, t, vt, loc):
        if self.needs_cvt(t, vt) and not isinstance(v, Imm):
            self.emit(f"cvt.{t.ptx}.{vt.ptx}", (dest,), (v,), loc)
        else:
            if isinstance(v, Imm) and t.kind == Kind.FLOAT and isinstance(v.value, int):
                v = Imm(float(v.value))
            self.emit(f"mov.{t.ptx if t.kind != Kind.PRED else 'pred'}", (dest,), (v,), loc)

    @staticmethod
    def needs_cvt(t, vt):
        if t.kind == Kind.PRED or vt.kind == Kind.PRED:
            return False
        if t.kind in (Kind.BITS,) or vt.kind in (Kind.BITS,):
            return False
        if t.is_ptr and vt.is_ptr:
            return False
        return (t.kind == Kind.FLOAT) != (vt.kind == Kind.FLOAT) or t.bits != vt.bits and not (t.is_ptr or vt.is_ptr)

    def s_If(self, s):
        p = self.cond(s.cond)
        loc = self.cond_loc(s.cond)
        lelse = self.label()
        self.emit("bra", (), (Sym(lelse),), loc, guard=(p.name, True))
        self.stmt(s.iftrue)
        if s.iffalse is not None:
            lend = self.label()
            self.emit("bra", (), (Sym(lend),), loc)
            self.put_label(lelse, loc)
            self.stmt(s.iffalse)
            self.put_label(lend, loc)
        else:
            self.put_label(lelse, loc)

    def s_While(self, s):
        kw = self.loc(s)
        head, end = self.label(), self.label()
        self.put_label(head, kw)
        cl = self.cond_loc(s.cond)
        p = self.cond(s.cond)
        self.emit("bra", (), (Sym(end),), cl, guard=(p.name, True))
        self.loops.append((end, head))
        self.stmt(s.stmt)
        self.loops.pop()
        self.emit("bra", (), (Sym(head),), kw)
        self.put_label(end, kw)

    def s_DoWhile(self, s):
        kw = self.loc(s)
        top, cont, end = self.label(), self.label(), self.label()
        self.put_label(top, kw)
        self.loops.append((end, cont))
        self.stmt(s.stmt)
        self.loops.pop()
        self.put_label(cont, kw)
        cl = self.cond_loc(s.cond)
        p = self.cond(s.cond)
        self.emit("bra", (), (Sym(top),), cl, guard=(p.name, False))
        self.put_label(end, kw)

    def s_For(self, s):
        kw = self.loc(s)
        self.scope = Scope(self.scope)
        if s.init is not None:
            if isinstance(s.init, A.DeclList):
                self.s_DeclList(s.init)
            else:
                self.rvalue(s.init)
        head, cont, end = self.label(), self.label(), self.label()
        body = self.label() if s.cond is not None and self.first_test_holds(s) else None
        if body is not None:  # the loop runs at least once: its test comes after each iteration
            self.emit("bra", (), (Sym(body),), kw)
        self.put_label(head, kw)
        if s.cond is not None:
            cl = self.cond_loc(s.cond)
            p = self.cond(s.cond)
            self.emit("bra", (), (Sym(end),), cl, guard=(p.name, True))
        if body is not None:
            self.put_label(body, kw)
        self.loops.append((end, cont))
        self.stmt(s.stmt)
        self.loops.pop()
        self.put_label(cont, kw)
        if s.next is not None:
            self.cur_loc = self.loc(s.next)
            self.rvalue(s.next)
        self.emit("bra", (), (Sym(head),), kw)
        self.put_label(end, kw)
        self.scope = self.scope.parent

    def first_test_holds(self, s) -> bool:
        """Is the test of `for (i = a; i < b; ...)` true before the first iteration?  a is a
        constant; b a constant, or a name that bounds an array of this function (`float r[N]`:
        N >= 1, as an array bound is greater than zero) that nothing assigns, with a <= 0."""
        name, cond = _counter(s.init), s.cond
        if name is None or not isinstance(cond, A.BinaryOp) or cond.op not in _SWAPPED:
            return False
        init = s.init.decls[0].init if isinstance(s.init, A.DeclList) else s.init.rvalue
        a = self.const_eval(init)
        if isinstance(cond.left, A.ID) and cond.left.name == name:
            op, other = cond.op, cond.right
        elif isinstance(cond.right, A.ID) and cond.right.name == name:
            op, other = _SWAPPED[cond.op], cond.left
        else:
            return False
        if not isinstance(a, int):
            return False
        b = self.const_eval(other)
        if isinstance(b, int):
            return bool(binary(C_BINARY[op], a, b))
        if not isinstance(other, A.ID) or other.name == name:
            return False
        if self.bounds is None:  # walked only for a loop whose bound is a name
            self.bounds = _array_bound_names(self.fd)
        return other.name in self.bounds and (op == "<" and a <= 0 or op == "<=" and a <= 1)

    def s_Break(self, s):
        if not self.loops:
            raise Unsupported("break outside a loop or switch")
        self.emit("bra", (), (Sym(self.loops[-1][0]),), self.loc(s))

    def s_Continue(self, s):
        target = next((c for b, c in reversed(self.loops) if c is not None), None)
        if target is None:
            raise Unsupported("continue outside a loop")
        self.emit("bra", (), (Sym(target),), self.loc(s))

    def s_Return(self, s):
        loc = self.loc(s)
        if s.expr is not None:
            rt = self.ret_type
            v, vt = self.returned_braces(s.expr, loc) if self.parts else self.rvalue(s.expr)
            if rt.kind == Kind.BITS and rt.name == "void":
                pass
            else:
                self.move(Reg("$ret"), v, rt, vt, loc)
        self.emit("ret", loc=loc)

    def returned_braces(self, e, loc):
        """`return {a, b};` in a function whose every return is braced: the value, and its parts
        `$ret.__0 = a`, `$ret.__1 = b` that a structured binding of the result reads
        (`auto [x, y] = f()`); each element evaluated once."""
        vals = [self.rvalue(x)[0] for x in _braced(e).exprs]
        for k, v in enumerate(vals):
            self.emit("mov.b32", (Reg(f"$ret.__{k}"),), (v,), loc)
        return self.initlist(vals, loc), self.ctype(e.type.type) if isinstance(e, A.CompoundLiteral) else OPAQUE

    def copy_parts(self, reg: str, init, v, loc) -> None:
        """`T x = f(...)` of a function with braced returns: x's parts are the result's."""
        if not (isinstance(init, A.FuncCall) and isinstance(init.name, A.ID) and isinstance(v, Reg)):
            return
        for k in range(self.returned_parts.get(init.name.name, 0)):
            self.emit("mov.b32", (Reg(f"{reg}.__{k}"),), (Reg(f"{v.name}.__{k}"),), loc)

    def user_label(self, name):
        lab = self.user_labels.get(name)
        if lab is None:
            lab = self.user_labels[name] = f"{name}$"
        return lab

    def s_Label(self, s):
        lab = self.user_label(s.name)
        if any(isinstance(i, Label) and i.name == lab for i in self.body):
            raise Unsupported(f"label '{s.name}' defined twice")
        self.put_label(lab, self.loc(s))
        self.stmt(s.stmt)

    def s_Goto(self, s):
        self.emit("bra", (), (Sym(self.user_label(s.name)),), self.loc(s))

    def s_Switch(self, s):
        loc = self.cond_loc(s.cond)
        v, vt = self.rvalue(s.cond)
        end = self.label()
        items = s.stmt.block_items if isinstance(s.stmt, A.Compound) else [s.stmt]
        items = items or []
        cases = []  # (label, node)
        default = None
        for it in items:
            if isinstance(it, (A.Case, A.Default)):
                lab = self.label()
                cases.append((lab, it))
                if isinstance(it, A.Default):
                    default = lab
        for lab, it in cases:
            if isinstance(it, A.Case):
                cv, ct = self.rvalue(it.expr)
                p = self.pred()
                self.emit(f"setp.eq.{vt.arith}", (p,), (v, cv), loc)
                self.emit("bra", (), (Sym(lab),), loc, guard=(p.name, False))
        self.emit("bra", (), (Sym(default or end),), loc)
        self.loops.append((end, None))
        self.scope = Scope(self.scope)
        labels = {id(it): lab for lab, it in cases}
        for it in items:
            if id(it) in labels:
                self.put_label(labels[id(it)], self.loc(it))
                for st in it.stmts or ():
                    self.stmt(st)
            else:
                self.stmt(it)
        self.scope = self.scope.parent
        self.loops.pop()
        self.put_label(end, loc)

    # -- expressions --------------------------------------------------------------------------
    def cond(self, e) -> Reg:
        """Lower a condition to a predicate register."""
        loc = self.loc(e)
        if isinstance(e, A.BinaryOp) and e.op in _CMP:
            a, at = self.rvalue(e.left)
            b, bt = self.rvalue(e.right)
            ty = self.common(at, bt)
            p = self.pred()
            self.emit(f"setp.{_CMP[e.op]}.{self.cmp_type(ty, at, bt)}", (p,), (a, b), loc, text=source_text(e))
            return p
        if isinstance(e, A.BinaryOp) and e.op in ("&&", "||"):
            a = self.cond(e.left)
            if _has_effects(e.right):
                # the right side calls or assigns: only the lanes that need it evaluate it
                p = self.pred()
                self.emit("mov.pred", (p,), (a,), loc)
                skip = self.label()
                self.emit("bra", (), (Sym(skip),), self.cond_loc(e.left), guard=(a.name, e.op == "&&"))
                b = self.cond(e.right)
                self.emit("mov.pred", (p,), (b,), loc)
                self.put_label(skip, loc)
                return p
            b = self.cond(e.right)
            p = self.pred()
            self.emit("and.pred" if e.op == "&&" else "or.pred", (p,), (a, b), loc)
            return p
        if isinstance(e, A.UnaryOp) and e.op == "!":
            a = self.cond(e.expr)
            p = self.pred()
            self.emit("not.pred", (p,), (a,), loc)
            return p
        v, t = self.rvalue(e)
        if t.kind == Kind.PRED:
            return v
        p = self.pred()
        self.emit(f"setp.ne.{t.arith if t.kind != Kind.FLOAT else t.arith}", (p,), (v, Imm(0.0 if t.kind == Kind.FLOAT else 0)), loc,
                  text=source_text(e))
        return p

    def cmp_type(self, ty, at, bt):
        if ty.kind == Kind.FLOAT:
            return ty.arith
        if at.is_ptr or bt.is_ptr:
            return "u64"
        return ty.arith

    def common(self, a: T, b: T) -> T:
        if a.kind == Kind.FLOAT or b.kind == Kind.FLOAT:
            return DOUBLE if (a.kind == Kind.FLOAT and a.bits == 64 or b.kind == Kind.FLOAT and b.bits == 64) else FLOAT
        if a.is_ptr:
            return a
        if b.is_ptr:
            return b
        if a.kind == Kind.PRED:
            a = UINT
        if b.kind == Kind.PRED:
            b = UINT
        bits = max(a.bits, b.bits, 32)
        if bits > 64:
            bits = 64
        unsigned = (a.kind == Kind.UNSIGNED and a.bits >= bits) or (b.kind == Kind.UNSIGNED and b.bits >= bits)
        return T(Kind.UNSIGNED if unsigned else Kind.SIGNED, bits)

    def rvalue(self, e):
        """Lower an expression; returns (operand, type)."""
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise Unsupported(f"unsupported expression {type(e).__name__}")
        return m(e)

    def e_Constant(self, e):
        v = self.constant_value(e)
        if v is None:
            d = self.temp()
            self.emit("mov.u64", (d,), (Sym("$string"),), self.loc(e))
            return d, T(Kind.POINTER, 64, elem=T(Kind.SIGNED, 8), space="const")
        if isinstance(v, float):
            return Imm(v), (FLOAT if e.value.lower().endswith("f") else DOUBLE)
        suf = e.value.lower()
        t = ULL if "u" in suf and "ll" in suf else LL if "ll" in suf else \
            UINT if "u" in suf or (v > 0x7fffffff and v <= 0xffffffff) else INT
        if v > 0xffffffff:
            t = ULL if "u" in suf else LL
        return Imm(v), t

    def e_ID(self, e):
        name = e.name
        loc = self.loc(e)
        if name == "warpSize":
            return Imm(32), INT
        v = self.scope.find(name)
        if v is None:
            if name in self.enums:
                return Imm(self.enums[name]), INT
            if name in self.funcs:
                d = self.temp()
                self.emit("mov.u64", (d,), (Sym(name),), loc)
                return d, T(Kind.POINTER, 64, elem=OPAQUE)
            # unknown identifier (template value, macro we did not see, host global): uniform unknown
            d = self.temp()
            self.emit("ld.const.b32", (d,), (Addr(Sym(name), 0),), loc)
            return d, INT
        kind = v.kind
        if kind == "reg":
            return Reg(v.name), v.type
        if kind == "imm":
            return Imm(v.name), v.type
        _, sym, t, space = v
        if t.kind == Kind.ARRAY:
            d = self.temp("$a")
            self.emit("mov.u64", (d,), (Sym(sym),), loc)
            return d, T(Kind.POINTER, 64, elem=self.row_type(t), space=space, vol=t.vol)
        # scalar in memory
        d = self.temp()
        op = "ld." + ("volatile." if t.vol else "") + (space + "." if space else "") + t.ptx
        self.emit(op, (d,), (Addr(Sym(sym), 0),), loc)
        return d, t

    @staticmethod
    def row_type(t):
        """The element type an array decays to a pointer to (a row for 2-D arrays)."""
        if len(t.dims) > 1:
            return T(Kind.ARRAY, 64, elem=t.elem, dims=t.dims[1:], vol=t.vol)
        e = t.elem
        return e.with_(vol=True) if t.vol and not e.vol else e

    def address(self, e):
        """Where the lvalue `e` lives: a register variable, or an address in memory."""
        loc = self.loc(e)
        if isinstance(e, A.ID):
            v = self.scope.find(e.name)
            if v is not None and v.kind == "reg":
                return Place("reg", v.name, v.type)
            if v is not None and v.kind == "mem":
                _, sym, t, space = v
                d = self.temp("$a")
                self.emit("mov.u64", (d,), (Sym(sym),), loc)
                return Place("mem", d, t, space, t.vol)
            if v is None and e.name in CUDA_BUILTINS:
                raise Unsupported(f"assignment to '{e.name}'")
            if v is None:
                d = self.temp("$a")
                self.emit("mov.u64", (d,), (Sym(e.name),), loc)
                return Place("mem", d, INT, None, False)
            raise Unsupported("assignment to a constant")
        if isinstance(e, A.ArrayRef):
            base, bt = self.rvalue(e.name)
            sub_v, st = self.rvalue(e.subscript)
            if not bt.is_ptr and st.is_ptr:  # `i[p]`: the pointer is the subscript
                base, bt, sub_v, st = sub_v, st, base, bt
            elif not bt.is_ptr:  # `p[i]` with p of a type not known here (typedef from an unread header)
                bt = T(Kind.POINTER, 64, elem=OPAQUE)
            elem = bt.elem or OPAQUE
            a = self.offset(base, sub_v, st, elem, loc)
            return Place("mem", a, elem, bt.space, bt.vol or elem.vol)
        if isinstance(e, A.UnaryOp) and e.op == "*":
            base, bt = self.rvalue(e.expr)
            elem = bt.elem if bt.is_ptr and bt.elem is not None else OPAQUE
            return Place("mem", base, elem, bt.space if bt.is_ptr else None, bt.vol or elem.vol)
        if isinstance(e, A.StructRef):
            if e.type == ".":
                inner = self.address(e.name) if not (isinstance(e.name, A.ID) and e.name.name in CUDA_BUILTINS) else None
                if inner is None:
                    raise Unsupported("assignment to a built-in variable")
                if inner.kind == "reg":
                    ft = self.field_type(inner.type, e.field.name)
                    return Place("reg", f"{inner.where}.{e.field.name}", ft)
                st = inner.type
                off, ft = self.field_offset(st, e.field.name)
                a = inner.where
                if off:
                    a2 = self.temp("$a")
                    self.emit("add.s64", (a2,), (a, _field_operand(off)), loc)
                    a = a2
                return Place("mem", a, ft, inner.space, inner.vol or ft.vol)
            base, bt = self.rvalue(e.name)
            st = bt.elem if bt.is_ptr and bt.elem is not None else OPAQUE
            off, ft = self.field_offset(st, e.field.name)
            a = base
            if off:
                a = self.temp("$a")
                self.emit("add.s64", (a,), (base, _field_operand(off)), loc)
            return Place("mem", a, ft, bt.space if bt.is_ptr else None, bt.vol or ft.vol)
        if isinstance(e, A.Cast):
            return self.address(e.expr)
        # anything else: compute as an rvalue pointer
        v, t = self.rvalue(e)
        return Place("mem", v, t.elem if t.is_ptr and t.elem is not None else OPAQUE, t.space if t.is_ptr else None, False)

    def local_address(self, info, loc):
        """`&x` of a register variable: a location of the thread's own (state space local), so
        the same name is a different address in every lane."""
        name = "&" + info.where
        self.module.state_spaces[name] = "local"
        fields = info.type.name[2] if isinstance(info.type.name, tuple) and info.type.name[0] == "struct" else None
        if fields:  # where each field lies, as `field_offset` places it (a load through `&x + 8` reads x.f)
            self.module.local_fields[info.where] = {self.field_offset(info.type, f)[0]: f for f, _ in fields}
        d = self.temp("$a")
        self.emit("mov.u64", (d,), (Sym(name),), loc)
        return d

    def address_of_pointer(self, e):
        if isinstance(e, A.UnaryOp) and e.op == "&":
            info = self.address(e.expr)
            if info.kind == "reg":
                return Place("mem", self.local_address(info, self.loc(e)), info.type, "local", False)
            return info
        v, t = self.rvalue(e)
        return Place("mem", v, t.elem if t.is_ptr and t.elem is not None else OPAQUE, t.space if t.is_ptr else None,
                t.vol)

    def field_type(self, st, name):
        if st.kind == Kind.BITS and isinstance(st.name, tuple) and st.name[0] == "struct":  # not a ("tile", n)
            for fname, ft in st.name[2] or ():
                if fname == name:
                    return ft
        if st.kind == Kind.BITS and isinstance(st.name, str) and st.name[-1:].isdigit():
            base = st.name.rstrip("1234")
            return {"float": FLOAT, "double": DOUBLE, "int": INT, "uint": UINT, "longlong": LL,
                    "ulonglong": ULL, "char": T(Kind.SIGNED, 8), "uchar": T(Kind.UNSIGNED, 8), "short": T(Kind.SIGNED, 16),
                    "ushort": T(Kind.UNSIGNED, 16), "long": LL, "ulong": ULL}.get(base, OPAQUE)
        return OPAQUE

    def field_offset(self, st, name):
        if st.kind == Kind.BITS and isinstance(st.name, tuple) and st.name[0] == "struct":
            off = 0
            for fname, ft in st.name[2] or ():
                if fname == name:
                    return off, ft
                off += ft.size
        ft = self.field_type(st, name)
        if name in ("x", "y", "z", "w") and ft is not OPAQUE:  # a vector type (float2)
            return "xyzw".index(name) * ft.size, ft
        # a struct not defined here (`real2` from an unread header, its size unknown too): an
        # unknown offset, one per field name (no state space: the same in every thread), so
        # that different fields are different addresses
        return Sym(f"offsetof.{name}"), ft

    def offset(self, base, idx, it, elem, loc):
        """`base + idx * sizeof(elem)`.  A row whose length is a macro the file does not define
        (`float s[32][TILE]`) has an unknown size, the same in every thread: so are the
        offsets it scales (an assumed length would place rows at made-up addresses)."""
        size = elem.size
        if elem.kind == Kind.ARRAY and None in elem.dims:
            size = Sym(f"sizeof{elem.dims}")  # no state space: an unknown uniform value
        o = self.temp("$o")
        if isinstance(idx, Imm) and isinstance(idx.value, int) and isinstance(size, int):
            a = self.temp("$a")
            self.emit("add.s64", (a,), (base, Imm(idx.value * size)), loc)
            return a
        if it.bits == 64 or it.is_ptr:
            self.emit("mul.lo.s64", (o,), (idx, Imm(size)), loc)
        else:
            self.emit(f"mul.wide.{'u' if it.kind == Kind.UNSIGNED else 's'}32", (o,), (idx, Imm(size)), loc)
        a = self.temp("$a")
        self.emit("add.s64", (a,), (base, o), loc)
        return a

    def load(self, addr_info, loc):
        _, a, t, space, vol = addr_info
        if t.kind == Kind.ARRAY:  # row of a 2-D array: decays to a pointer
            return a, T(Kind.POINTER, 64, elem=self.row_type(t), space=space, vol=vol)
        d = self.temp()
        op = "ld." + ("volatile." if vol else "") + (space + "." if space else "") + t.ptx
        self.emit(op, (d,), (Addr(a, 0),), loc)
        return d, t

    def store(self, addr_info, v, vt, loc):
        if addr_info.kind == "reg":
            name, t = addr_info.where, addr_info.type
            if "." in name:
                self.assigned.add(name.split(".", 1)[0])
            self.move(Reg(name), v, t, vt, loc)
            return
        _, a, t, space, vol = addr_info
        if self.needs_cvt(t, vt) and not isinstance(v, Imm):
            c = self.temp()
            self.emit(f"cvt.{t.ptx}.{vt.ptx}", (c,), (v,), loc)
            v = c
        op = "st." + ("volatile." if vol else "") + (space + "." if space else "") + t.ptx
        self.emit(op, (), (Addr(a, 0), v), loc)

    def read_lvalue(self, info, loc):
        if info.kind == "reg":
            return Reg(info.where), info.type
        return self.load(info, loc)

    def e_ArrayRef(self, e):
        return self.load(self.address(e), self.loc(e))

    def e_StructRef(self, e):
        loc = self.loc(e)
        if isinstance(e.name, A.ID) and e.name.name in CUDA_BUILTINS and self.scope.find(e.name.name) is None:
            f = e.field.name
            if f in ("x", "y", "z"):
                return Reg(f"{CUDA_BUILTINS[e.name.name]}.{f}"), UINT
        if e.type == "." and isinstance(e.name, A.ID) and self.fn.is_kernel:
            v = self.scope.find(e.name.name)
            if v is not None and v.kind == "reg" and v.name in self.fn.params and v.name not in self.assigned:
                # a field of a by-value kernel parameter: a uniform load from the parameter space
                off, ft = self.field_offset(v.type, e.field.name)
                if ft.kind != Kind.ARRAY:
                    d = self.temp()
                    self.emit(f"ld.param.{ft.ptx}", (d,), (Addr(Sym(v.name), off if isinstance(off, int) else 0),), loc)
                    return d, ft
        info = self.address(e)
        return self.read_lvalue(info, loc)

    def e_Assignment(self, e):
        loc = self.loc(e)
        if e.op == "=":
            v, vt = self.rvalue(e.rvalue)
            info = self.address(e.lvalue)
            self.store(info, v, vt, loc)
            if info.kind == "reg" and info.type.kind == Kind.POINTER and vt.is_ptr and vt.space and info.type.space is None:
                self.retag(e.lvalue, vt.space)
            return (Reg(info.where), info.type) if info.kind == "reg" else (v, vt)
        op = e.op[:-1]
        info = self.address(e.lvalue)
        cur, ct = self.read_lvalue(info, loc)
        v, vt = self.rvalue(e.rvalue)
        r, rt = self.binop(op, cur, ct, v, vt, loc)
        self.store(info, r, rt, loc)
        return (Reg(info.where), info.type) if info.kind == "reg" else (r, rt)

    def retag(self, lv, space):
        if isinstance(lv, A.ID):
            s = self.scope
            while s is not None:
                if lv.name in s.vars:
                    v = s.vars[lv.name]
                    if v.kind == "reg":
                        s.vars[lv.name] = Var("reg", v.name, v.type.with_(space=space))
                    return
                s = s.parent

    def binop(self, op, a, at, b, bt, loc):
        if op in ("+", "-") and (at.is_ptr or bt.is_ptr) and not (at.is_ptr and bt.is_ptr):
            if bt.is_ptr:
                a, at, b, bt = b, bt, a, at
            elem = at.elem or OPAQUE
            if op == "-":
                n = self.temp()
                self.emit(f"neg.{bt.arith}", (n,), (b,), loc)
                b = n
            r = self.offset(a, b, bt, elem, loc)
            return r, (at if at.kind == Kind.POINTER else T(Kind.POINTER, 64, elem=elem, space=at.space, vol=at.vol))
        if op == "-" and at.is_ptr and bt.is_ptr:
            d = self.temp()
            self.emit("sub.s64", (d,), (a, b), loc)
            return d, LL
        if op in ("<<", ">>"):
            ty = self.common(at, at)
        else:
            ty = self.common(at, bt)
        d = self.temp()
        base = _ARITH[op]
        if ty.kind == Kind.FLOAT:
            if op in ("%", "&", "|", "^", "<<", ">>"):
                opcode = f"{base}.b{ty.bits}"
            else:
                opcode = f"{base}.{ty.arith}"
        elif base == "mul":
            opcode = f"mul.lo.{ty.arith}"
        elif base in ("and", "or", "xor", "shl"):
            opcode = f"{base}.b{ty.bits}"
        else:
            opcode = f"{base}.{ty.arith}"
        if ty.kind == Kind.FLOAT:
            a = Imm(float(a.value)) if isinstance(a, Imm) and isinstance(a.value, int) else a
            b = Imm(float(b.value)) if isinstance(b, Imm) and isinstance(b.value, int) else b
        self.emit(opcode, (d,), (a, b), loc)
        return d, ty

    def e_BinaryOp(self, e):
        loc = self.loc(e)
        if e.op in _CMP or e.op in ("&&", "||"):
            p = self.cond(e)
            d = self.temp()
            self.emit("selp.u32", (d,), (Imm(1), Imm(0), p), loc)
            return d, INT
        a, at = self.rvalue(e.left)
        b, bt = self.rvalue(e.right)
        if e.op not in _ARITH:
            raise Unsupported(f"operator '{e.op}'")
        return self.binop(e.op, a, at, b, bt, loc)

    def e_UnaryOp(self, e):
        loc = self.loc(e)
        op = e.op
        if op == "!":
            p = self.cond(e)
            d = self.temp()
            self.emit("selp.u32", (d,), (Imm(1), Imm(0), p), loc)
            return d, INT
        if op == "sizeof":
            if isinstance(e.expr, A.Typename):
                return Imm(self.ctype(e.expr.type).size), ULL
            return Imm(4), ULL
        if op == "&":
            x = e.expr
            info = self.address(x)
            if info.kind == "reg":
                return self.local_address(info, loc), T(Kind.POINTER, 64, elem=info.type, space="local")
            return info.where, T(Kind.POINTER, 64, elem=info.type, space=info.space, vol=info.vol)
        if op == "*":
            return self.load(self.address(e), loc)
        if op in ("++", "--", "p++", "p--"):
            info = self.address(e.expr)
            cur, ct = self.read_lvalue(info, loc)
            if info.kind == "reg":
                old = self.temp()
                if op.startswith("p"):
                    self.emit(f"mov.{ct.ptx}", (old,), (cur,), loc)
            r, rt = self.binop("+" if "+" in op else "-", cur, ct, Imm(1), INT, loc)
            self.store(info, r, rt, loc)
            if op.startswith("p"):
                return (old, ct) if info.kind == "reg" else (cur, ct)
            return (Reg(info.where), ct) if info.kind == "reg" else (r, rt)
        v, t = self.rvalue(e.expr)
        if op == "+":
            return v, t
        if op == "-":
            if isinstance(v, Imm):
                return Imm(-v.value), t
            d = self.temp()
            self.emit(f"neg.{t.arith}", (d,), (v,), loc)
            return d, self.common(t, t) if t.kind != Kind.FLOAT else t
        if op == "~":
            if isinstance(v, Imm) and isinstance(v.value, int):
                ty = self.common(t, t)
                return Imm(~v.value & ((1 << ty.bits) - 1) if ty.kind == Kind.UNSIGNED else ~v.value), ty
            ty = self.common(t, t)
            d = self.temp()
            self.emit(f"not.b{ty.bits}", (d,), (v,), loc)
            return d, ty
        raise Unsupported(f"operator '{op}'")

    def e_TernaryOp(self, e):
        loc = self.loc(e)
        if _has_effects(e.iftrue) or _has_effects(e.iffalse):
            # an arm calls or assigns: branch, so only the selected lanes evaluate it
            p = self.cond(e.cond)
            lelse, lend = self.label(), self.label()
            bloc = self.cond_loc(e.cond)
            self.emit("bra", (), (Sym(lelse),), bloc, guard=(p.name, True))
            d = self.temp()
            a, at = self.rvalue(e.iftrue)
            self.emit(f"mov.{at.ptx if at.kind != Kind.PRED else 'pred'}", (d,), (a,), loc)
            self.emit("bra", (), (Sym(lend),), bloc)
            self.put_label(lelse, loc)
            b, bt = self.rvalue(e.iffalse)
            self.emit(f"mov.{bt.ptx if bt.kind != Kind.PRED else 'pred'}", (d,), (b,), loc)
            self.put_label(lend, loc)
            ty = self.common(at, bt) if not (at.is_ptr or bt.is_ptr) else (at if at.is_ptr else bt)
            return d, ty
        p = self.cond(e.cond)
        a, at = self.rvalue(e.iftrue)
        b, bt = self.rvalue(e.iffalse)
        ty = self.common(at, bt) if not (at.is_ptr or bt.is_ptr) else (at if at.is_ptr else bt)
        d = self.temp()
        self.emit(f"selp.{ty.ptx if ty.kind != Kind.FLOAT else ty.arith}", (d,), (a, b, p), loc)
        return d, ty

    def e_Cast(self, e):
        loc = self.loc(e)
        t = self.ctype(e.to_type.type)
        v, vt = self.rvalue(e.expr)
        if t.kind == Kind.BITS and t.name == "void":
            return v, vt
        if t.is_ptr and vt.is_ptr and t.space is None:
            t = t.with_(space=vt.space)
        if isinstance(v, Imm):
            if t.kind == Kind.FLOAT:
                return Imm(float(v.value)), t
            if t.kind in (Kind.SIGNED, Kind.UNSIGNED) and isinstance(v.value, (int, float)):
                iv = int(v.value)
                if t.kind == Kind.UNSIGNED and 0 < t.bits <= 64:
                    iv &= (1 << t.bits) - 1
                return Imm(iv), t
            return v, t
        if self.needs_cvt(t, vt) or (t.kind != vt.kind and t.kind in (Kind.SIGNED, Kind.UNSIGNED, Kind.FLOAT) and vt.kind in (Kind.SIGNED, Kind.UNSIGNED, Kind.FLOAT)):
            d = self.temp()
            self.emit(f"cvt.{t.ptx}.{vt.ptx}", (d,), (v,), loc)
            return d, t
        return v, t

    def e_ExprList(self, e):
        r = (Imm(0), INT)
        for x in e.exprs:
            r = self.rvalue(x)
        return r

    def e_InitList(self, e):
        return self.initlist([self.rvalue(x)[0] for x in e.exprs], self.loc(e)), OPAQUE

    def initlist(self, vals: list, loc) -> Reg:
        """The value of braces `{a, b}` (an opaque value built from the first 8)."""
        d = self.temp()
        self.emit("call", (d,), (Sym("$initlist"),) + tuple(vals[:8]), loc)
        return d

    def e_CompoundLiteral(self, e):
        """`(T){x}` of a number or pointer type is `(T)x` (C++'s brace cast `T{x}`: `index_type
        {threadIdx.x}`, T a type parameter or a type not known here); other braces are an opaque
        value made of their values."""
        t = self.ctype(e.type.type)
        values = e.init.exprs if isinstance(e.init, A.InitList) else []
        if t.kind in _SCALARS and len(values) == 1 and not isinstance(values[0], (A.InitList, A.NamedInitializer)):
            return self.e_Cast(A.Cast(e.type, values[0], e.coord))
        v, _ = self.e_InitList(e.init)
        return v, t

    def e_Typename(self, e):
        return Imm(0), INT

    def e_FuncCall(self, e):
        return call(self, e)


_SCALARS = (Kind.SIGNED, Kind.UNSIGNED, Kind.FLOAT, Kind.POINTER)


def _field_operand(off):
    """A field offset as an operand: a number, or the unknown offset of a field of a struct
    not defined here."""
    return Imm(off) if isinstance(off, int) else off


def source_text(e) -> str:
    """A condition as the user wrote it (after preprocessing), for messages: `i < n`."""
    from pycparser.c_generator import CGenerator
    try:
        return CGenerator(reduce_parentheses=True).visit(e)
    except Exception:  # a node the generator cannot print: messages fall back to operands
        return ""


def _braced(e):
    """The braces of `{a, b}` or `(T){a, b}` (positional values, no designators), else None."""
    if isinstance(e, A.CompoundLiteral):
        e = e.init
    if isinstance(e, A.InitList) and e.exprs and not any(isinstance(x, A.NamedInitializer) for x in e.exprs):
        return e
    return None


def _braced_return_arity(body) -> int:
    """How many values every return of a function body gives in braces (`return {a, b};`: 2);
    0 when some return gives a value otherwise, or the counts differ."""
    holders = (A.Compound, A.If, A.For, A.While, A.DoWhile, A.Switch, A.Case, A.Default, A.Label)
    found, todo = [], [body]
    while todo:  # the statements only: a return is no part of an expression or a declaration
        node = todo.pop()
        if isinstance(node, A.Return):
            found.append(node.expr)
        elif isinstance(node, holders):
            todo.extend(node)  # its child nodes
    counts = {len(b.exprs) if (b := _braced(e)) is not None else 0 for e in found if e is not None}
    return counts.pop() if len(counts) == 1 else 0


_SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!=", "==": "=="}  # the comparisons, sides swapped


def _counter(init) -> str | None:
    """The variable `for (int i = a; ...)` or `for (i = a; ...)` sets."""
    if isinstance(init, A.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None \
            and isinstance(init.decls[0].type, A.TypeDecl):
        return init.decls[0].name
    if isinstance(init, A.Assignment) and init.op == "=" and isinstance(init.lvalue, A.ID):
        return init.lvalue.name
    return None


def _array_bound_names(fd) -> frozenset[str]:
    """Names that are the whole bound of an array declarator of the function (`T r[N]`, a
    parameter `T a[WIDTH]`), and that it never declares as a variable, assigns or steps: each
    is at least 1 ([dcl.array]: an array bound is greater than zero)."""
    bounds, written, todo = set(), set(), [fd.decl, fd.body]
    while todo:
        node = todo.pop()
        if isinstance(node, A.ArrayDecl) and isinstance(node.dim, A.ID):
            bounds.add(node.dim.name)
        elif isinstance(node, A.Decl) and node.name:
            written.add(node.name)
        elif isinstance(node, A.Assignment) and isinstance(node.lvalue, A.ID):
            written.add(node.lvalue.name)
        elif isinstance(node, A.UnaryOp) and node.op in ("p++", "++", "p--", "--", "&") \
                and isinstance(node.expr, A.ID):
            written.add(node.expr.name)
        todo.extend(node)
    return frozenset(bounds - written)


def _written_registers(body) -> set[str]:
    """The registers (struct fields `p.f` included) that some instruction of `body` writes."""
    out: set[str] = set()
    for ins in body:
        if isinstance(ins, Instr):
            for x in ins.dests:
                items = x.items if isinstance(x, Vec) else (x,)
                out.update(r.name for r in items if isinstance(r, Reg))
    return out
