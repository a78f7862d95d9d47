"""Calls: warp/block intrinsics, atomics, inline asm, device functions, opaque calls."""
from __future__ import annotations

import re

from pycparser import c_ast as A

from ...errors import InputError
from ...ir import Addr, Diagnostic, Imm, Instr, Label, Loc, Reg, Sym, map_operand
from ...specials import is_special
from .ctype import INT, OPAQUE, PRED, UINT, Kind, T, Unsupported
from .cub import collective_call

_SHFL = {"__shfl_sync": ("idx", True), "__shfl_up_sync": ("up", True), "__shfl_down_sync": ("down", True),
         "__shfl_xor_sync": ("bfly", True), "__shfl": ("idx", False), "__shfl_up": ("up", False),
         "__shfl_down": ("down", False), "__shfl_xor": ("bfly", False)}
_VOTE = {"__any_sync": ("any", True), "__all_sync": ("all", True), "__uni_sync": ("uni", True),
         "__ballot_sync": ("ballot", True), "__any": ("any", False), "__all": ("all", False),
         "__ballot": ("ballot", False)}
_REDUX = {"__reduce_add_sync": "add", "__reduce_min_sync": "min", "__reduce_max_sync": "max",
          "__reduce_and_sync": "and", "__reduce_or_sync": "or", "__reduce_xor_sync": "xor"}
_ATOM = {"atomicAdd": "add", "atomicSub": "add", "atomicExch": "exch", "atomicMin": "min",
         "atomicMax": "max", "atomicInc": "inc", "atomicDec": "dec", "atomicCAS": "cas",
         "atomicAnd": "and", "atomicOr": "or", "atomicXor": "xor"}
_BITOPS = {"__popc": "popc.b32", "__popcll": "popc.b64", "__ffs": "ffs.b32", "__ffsll": "ffs.b64",
           "__clz": "clz.b32", "__clzll": "clz.b64", "__brev": "brev.b32", "__brevll": "brev.b64"}


_ASM_OPERAND = re.compile(r"%(\d+)|%%|%=")


def _name(e):
    n = e.name
    return n.name if isinstance(n, A.ID) else None


def _args(e):
    return list(e.args.exprs) if e.args is not None else []


def call_loc(lw, e, name) -> Loc:
    """Location of the call name, spanning the whole call up to and including its `)`."""
    start = lw.tok_at(e.name.coord)
    if start is None:
        return lw.loc(e)
    end = _closing(lw, start)
    if end is None or (end.line, end.col) <= (start.line, start.col):  # inside a macro expansion
        return Loc(start.path, start.line, start.col)
    return Loc(start.path, start.line, start.col, end.line, end.col + 1)


def _closing(lw, start):
    toks = getattr(lw, "chunk_toks", None)
    if toks is None:
        return None
    idx = lw.tok_index.get(id(start))
    if idx is None or idx + 1 >= len(toks) or toks[idx + 1].text != "(":
        return None
    depth = 0
    for j in range(idx + 1, min(len(toks), idx + 5000)):
        x = toks[j].text
        if x == "(":
            depth += 1
        elif x == ")":
            depth -= 1
            if depth == 0:
                t = toks[j]
                if t.path != start.path:
                    return None
                return t
    return None


def call(lw, e):
    discard = lw.discard
    lw.discard = False  # only the outermost call of an expression statement
    name = _name(e)
    args = _args(e)
    if name is None:
        n = e.name
        if isinstance(n, A.StructRef) and n.field.name == "sync" and not args and _is_block_group(lw, n.name):
            who = n.name.name if isinstance(n.name, A.ID) else _name(n.name) + "()"
            lw.emit("bar.sync", (), (Imm(0),), call_loc(lw, e, "sync"), text=f"{who}.sync")
            return Imm(0), INT
        if isinstance(n, A.StructRef) and n.field.name in ("size", "num_threads") and not args \
                and isinstance(n.name, A.ID) and _block_group_type(lw, n.name) == "thread_block":
            return _block_size(lw, call_loc(lw, e, n.field.name)), UINT
        if isinstance(n, A.StructRef) and isinstance(n.name, A.ID):
            obj = lw.scope.find(n.name.name)
            group = _group(obj) or _generic_group(lw, obj, n.field.name)
            if group is not None:
                r = tile_method(lw, e, n.field.name, *group, args, discard)
                if r is not None:
                    return r
        if isinstance(n, A.StructRef) and n.field.name == "thread_rank" and not args:
            obj = lw.scope.find(n.name.name) if isinstance(n.name, A.ID) else None
            d = lw.temp()
            if obj is not None and obj[0] == "reg" and _type_name(obj[2]) == "thread_block":
                lw.emit("mov.u32", (d,), (Reg("%tid.x"),), call_loc(lw, e, "thread_rank"), text="thread_rank")
            else:  # rank in a tile or group: depends on the lane
                lw.emit("call", (d,), (Sym("thread_rank"), Reg("%laneid")), call_loc(lw, e, "thread_rank"),
                        text="thread_rank")
            return d, UINT
        if isinstance(n, A.StructRef) and n.type == ".":  # CUB's collectives: cub.py
            r = collective_call(lw, e, args, discard)
            if r is not None:
                return r
        if isinstance(n, A.StructRef):  # method call: the object is an argument
            obj, _ = lw.rvalue(n.name) if not isinstance(n.name, A.ID) or lw.scope.find(n.name.name) else (None, None)
            vals = [lw.rvalue(a)[0] for a in args]
            d = None if discard else lw.temp()
            lw.emit("call", (d,) if d is not None else (), (Sym(n.field.name),) + ((obj,) if obj is not None else ())
                    + tuple(vals), call_loc(lw, e, n.field.name), text=n.field.name)
            return (d if d is not None else Imm(0)), OPAQUE
        vals = [lw.rvalue(a)[0] for a in args]
        f, _ = lw.rvalue(e.name)
        d = lw.temp()
        lw.emit("call", (d,), (f,) + tuple(vals), lw.loc(e))
        return d, OPAQUE
    if name == "__warplint_asm":
        return inline_asm(lw, e, args)
    v = lw.scope.find(name)
    if v is not None and v.kind == "reg" and name not in lw.funcs:
        vals = [lw.rvalue(a)[0] for a in args]
        d = lw.temp()
        lw.emit("call", (d,), (Reg(v.name),) + tuple(vals), lw.loc(e))
        return d, OPAQUE
    loc = call_loc(lw, e, name)
    if name.startswith("__ctor_") and name[7:] in lw.rw.shared_structs:
        sym = "__smem_" + name[7:]
        lw.module.state_spaces[sym] = "shared"
        d = lw.temp("$a")
        lw.emit("mov.u64", (d,), (Sym(sym),), loc)
        return d, T(Kind.POINTER, 64, elem=OPAQUE, space="shared")
    if name.startswith("__tiled_partition_") or name == "tiled_partition":
        size = None
        if name.startswith("__tiled_partition_"):
            try:
                size = int(name[18:].rstrip("uU"), 0)
            except ValueError:
                size = None
        elif len(args) == 2:
            cv = lw.const_eval(args[1])
            size = cv if isinstance(cv, int) else None
        for a in args[:1]:
            lw.rvalue(a)
        if size not in (1, 2, 4, 8, 16, 32):  # a size known at run time only (a macro from an unread header)
            size = None
        if size is not None:
            m = _tile_mask(lw, size, loc)
        elif len(args) == 2:
            m = _tile_mask_of(lw, lw.rvalue(args[1])[0], loc)
        else:
            m = None  # no size: not a tile
        d = lw.temp()  # a group's value is its membermask: a helper it is passed to reads it from there
        lw.emit("mov.u32", (d,), (m if m is not None else Imm(0),), loc, text="tiled_partition")
        return d, (T(Kind.BITS, 32, name=("tile", size)) if m is not None else OPAQUE)
    if name == "coalesced_threads" and not args:  # the active lanes, as a group
        d = lw.temp()
        lw.emit("activemask.b32", (d,), (), loc, text=name)
        return d, T(Kind.BITS, 32, name=("coalesced",))
    group = _group(lw.scope.find(args[0].name)) if args and _is_id(args[0]) else None
    if name == "labeled_partition" and len(args) == 2 and group is not None:
        # the lanes of the group with the same label: their membermask is a match over the group
        label, _ = lw.rvalue(args[1])
        d = lw.temp()
        lw.emit("match.any.sync.b32", (d,), (label, _group_mask(lw, *group, loc)), loc, text=name)
        return d, T(Kind.BITS, 32, name=("coalesced",))
    if name == "reduce" and len(args) >= 2 and group is not None:
        # cg::reduce(group, v, op): a collective of the group's lanes (a butterfly shuffle stands for it)
        v, vt = lw.rvalue(args[1])
        for a in args[2:]:
            lw.rvalue(a)
        m = _group_mask(lw, *group, loc)
        c = _shfl_c(lw, _group_size(lw, *group, loc), 0x1F, loc)
        d = lw.temp()
        lw.emit("shfl.sync.bfly.b32", (d,), (v, Imm(1), c, m), loc, text=name)
        return d, vt
    if name == "sync" and len(args) == 1:
        if isinstance(args[0], A.ID):
            v = lw.scope.find(args[0].name)
            if v is not None and v.kind == "reg" and _type_name(v.type) in _CG_BLOCK:
                lw.emit("bar.sync", (), (Imm(0),), loc, text="sync")
                return Imm(0), INT
    if name in _SHFL:
        return shfl(lw, e, name, args, loc)
    if name in _VOTE:
        mode, sync = _VOTE[name]
        if sync:
            if len(args) != 2:
                raise Unsupported(f"{name} takes 2 arguments")
            m, _ = lw.rvalue(args[0])
            p = lw.cond(args[1])
            srcs = (p, m)
        else:
            if len(args) != 1:
                raise Unsupported(f"{name} takes 1 argument")
            srcs = (lw.cond(args[0]),)
        d = lw.temp() if mode == "ballot" else lw.pred()
        opc = f"vote.{'sync.' if sync else ''}{mode}.{'b32' if mode == 'ballot' else 'pred'}"
        lw.emit(opc, (d,), srcs, loc, text=name)
        if mode == "ballot":
            return d, UINT
        r = lw.temp()
        lw.emit("selp.s32", (r,), (Imm(1), Imm(0), d), loc)
        return r, INT
    if name == "__activemask":
        d = lw.temp()
        lw.emit("activemask.b32", (d,), (), loc, text=name)
        return d, UINT
    if name == "__syncwarp":
        m = lw.rvalue(args[0])[0] if args else Imm(0xFFFFFFFF)
        lw.emit("bar.warp.sync", (), (m,), loc, text=name)
        return Imm(0), INT
    if name == "__syncthreads":
        lw.emit("bar.sync", (), (Imm(0),), loc, text=name)
        return Imm(0), INT
    if name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
        if len(args) != 1:
            raise Unsupported(f"{name} takes 1 argument")
        p = lw.cond(args[0])
        d = lw.temp()
        opc = {"__syncthreads_count": "bar.red.popc.u32", "__syncthreads_and": "bar.red.and.pred",
               "__syncthreads_or": "bar.red.or.pred"}[name]
        if opc.endswith("pred"):
            dp = lw.pred()
            lw.emit(opc, (dp,), (Imm(0), p), loc, text=name)
            lw.emit("selp.s32", (d,), (Imm(1), Imm(0), dp), loc)
        else:
            lw.emit(opc, (d,), (Imm(0), p), loc, text=name)
        return d, INT
    if name in ("__match_any_sync", "__match_all_sync"):
        if len(args) < 2:
            raise Unsupported(f"{name} takes 2 or 3 arguments")
        m, _ = lw.rvalue(args[0])
        v, vt = lw.rvalue(args[1])
        w = "b64" if vt.size == 8 and not vt.is_ptr else "b32"
        d = lw.temp()
        if name == "__match_any_sync":
            lw.emit(f"match.any.sync.{w}", (d,), (v, m), loc, text=name)
            return d, UINT
        p = lw.pred()
        lw.emit(f"match.all.sync.{w}", (d, p), (v, m), loc, text=name)
        if len(args) > 2:
            _store_through(lw, args[2], p, PRED, loc)
        return d, UINT
    if name in _REDUX:
        if len(args) != 2:
            raise Unsupported(f"{name} takes 2 arguments")
        m, _ = lw.rvalue(args[0])
        v, vt = lw.rvalue(args[1])
        op = _REDUX[name]
        ty = "b32" if op in ("and", "or", "xor") else ("u32" if vt.kind == Kind.UNSIGNED else "s32")
        if vt.kind == Kind.FLOAT and op in ("min", "max"):
            ty = "f32"
        d = lw.temp()
        lw.emit(f"redux.sync.{op}.{ty}", (d,), (v, m), loc, text=name)
        return d, UINT if ty != "s32" else INT
    if name.startswith("__lanemask_") and name[11:] in ("lt", "le", "eq", "ge", "gt"):
        d = lw.temp()
        lw.emit("mov.u32", (d,), (Reg("%" + name[2:]),), loc, text=name)
        return d, UINT
    if name in _BITOPS:
        if not args:
            raise Unsupported(f"{name} takes 1 argument")
        v, _ = lw.rvalue(args[0])
        d = lw.temp()
        lw.emit(_BITOPS[name], (d,), (v,), loc, text=name)
        return d, INT if name != "__brev" else UINT
    if name in _ATOM:
        if len(args) < 2:
            raise Unsupported(f"{name} takes 2 or 3 arguments")
        info = lw.address_of_pointer(args[0])
        vals = [lw.rvalue(a) for a in args[1:]]
        _, a, t, space, _v = info
        ty = vals[-1][1] if t.kind == Kind.BITS else t
        op = _ATOM[name]
        d = lw.temp()
        opc = "atom." + (space + "." if space in ("shared", "global") else "") + op + "." + (
            ty.ptx if op not in ("and", "or", "xor", "exch", "cas") else ("b64" if ty.size == 8 else "b32"))
        lw.emit(opc, (d,), (Addr(a, 0),) + tuple(v for v, _ in vals), loc, text=name)
        return d, ty
    if name in ("__threadfence", "__threadfence_block", "__threadfence_system"):
        lw.emit({"__threadfence": "membar.gl", "__threadfence_block": "membar.cta",
                 "__threadfence_system": "membar.sys"}[name], (), (), loc, text=name)
        return Imm(0), INT
    if name == "__builtin_assume" and len(args) == 1:  # a fact from here on (static_assert's too)
        lw.emit("assume", (), (lw.cond(args[0]),), loc, text=name)
        return Imm(0), INT
    if name == "__trap":  # aborts the grid, as PTX `trap`
        lw.emit("trap", (), (), loc, text=name)
        return Imm(0), INT
    if name in ("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv") and len(args) == 1:
        info = lw.address_of_pointer(args[0])
        _, a, t, space, _v = info
        d = lw.temp()
        lw.emit(f"ld.global.nc.{t.ptx}", (d,), (Addr(a, 0),), loc, text=name)
        return d, t
    if name in ("__laneid",):
        d = lw.temp()
        lw.emit("mov.u32", (d,), (Reg("%laneid"),), loc, text=name)
        return d, UINT
    if name in ("min", "max", "umin", "umax", "fminf", "fmaxf", "fmin", "fmax", "llmin", "llmax",
                "ullmin", "ullmax") and len(args) == 2:
        a, at = lw.rvalue(args[0])
        b, bt = lw.rvalue(args[1])
        ty = lw.common(at, bt)
        d = lw.temp()
        lw.emit(f"{'min' if 'min' in name else 'max'}.{ty.arith}", (d,), (a, b), loc, text=name)
        return d, ty
    if name == "__mul24" or name == "__umul24":
        a, at = lw.rvalue(args[0])
        b, bt = lw.rvalue(args[1])
        d = lw.temp()
        lw.emit("mul.lo.s32" if name == "__mul24" else "mul.lo.u32", (d,), (a, b), loc, text=name)
        return d, INT if name == "__mul24" else UINT
    # device function or unknown (math functions, libraries): a call; unknown results are
    # data-dependent unless every input is uniform
    if discard:
        _declare_macro_names(lw, name, args)
    vals = []
    for a in args:
        v, t = lw.rvalue(a)
        vals.append(v)
    outs = _reference_outs(lw, name, args)
    rt = lw.func_types.get(name, OPAQUE)
    if rt.kind == Kind.BITS and rt.name == "void" or discard:
        lw.emit("call", tuple(d for d, _ in outs), (Sym(name),) + tuple(vals), loc, text=name)
        _copy_back(lw, name, args, outs, loc)
        return Imm(0), INT
    d = lw.temp()
    dests = tuple(o for o, _ in outs) + (d,)
    # an update of shared memory behind a macro: every result each thread's own (analysis/calls.py)
    op = ".".join(["call"] + ["lane"] * len(dests)) if _unknown_update(lw, name, args) else "call"
    lw.emit(op, dests, (Sym(name),) + tuple(vals), loc, text=name)
    _copy_back(lw, name, args, outs, loc)
    return d, rt if rt is not OPAQUE else (T(Kind.FLOAT, 32) if name.endswith("f") and name[:1] != "_" and len(name) > 3 else OPAQUE)


def _declare_macro_names(lw, name, args) -> None:
    """`IDS_2D(px, py);`, a statement calling something defined nowhere warplint read (a macro of
    an unread header), with names that nothing declares: a macro takes names, not values, and
    this one declares or sets them (C++ would reject the names otherwise).  They are declared
    here, never written, so what they hold is unknown and may differ between threads; read as
    constants of the unread header, they gave every thread the same index."""
    from .lower import Var
    if name in lw.funcs or name in lw.func_types or lw.scope.find(name) is not None:
        return
    for a in args:
        if isinstance(a, A.ID) and lw.scope.find(a.name) is None and a.name not in lw.enums \
                and a.name not in lw.funcs:
            lw.scope.vars[a.name] = Var("reg", lw.unique(a.name), INT)


def _unknown_update(lw, name, args) -> bool:
    """`slot = ATOMIC_ADD(&count, 1)`: something defined nowhere warplint read, given the address
    of a shared or global scalar, may change it and return what each thread found there (an
    atomic behind a macro): its result may differ between threads even when every argument is
    the same in all of them."""
    if name in lw.funcs or lw.scope.find(name) is not None:
        return False
    for a in args:
        v = lw.scope.find(a.expr.name) if isinstance(a, A.UnaryOp) and a.op == "&" \
            and isinstance(a.expr, A.ID) else None
        if v is not None and v.kind == "mem" and v.space in ("shared", "global") and v.type.kind != Kind.ARRAY:
            return True
    return False


def _reference_outs(lw, name, args):
    """(register, place) for each argument bound to a reference parameter of `name`: the call
    writes the parameter's final value there (the callee's first return values, `lower`)."""
    return [(lw.temp(), lw.address(args[i])) for i in lw.rw.facts.ref_params.get(name, ()) if i < len(args)]


def _copy_back(lw, name, args, outs, loc):
    """Store each reference argument's final value back, except where `name` (lowered
    already) never writes that parameter: no store the source does not make.  A struct in
    registers gets back the fields the callee writes (`s.lane` of `locate(Slot &s)`)."""
    refs = [i for i in lw.rw.facts.ref_params.get(name, ()) if i < len(args)]
    read_only = lw.read_only_refs.get(name, ())
    for (reg, place), i in zip(outs, refs):
        if i not in read_only:
            lw.store(place, reg, place.type, loc)
            for f in lw.written_ref_fields.get(name, {}).get(i, ()) if place.kind == "reg" else ():
                lw.emit("mov.b32", (Reg(place.where + f),), (Reg(reg.name + f),), loc)


_CG_BLOCK = ("thread_block", "grid_group")


def _is_block_group(lw, e) -> bool:
    """Is `e` the thread block or the grid as a group: a variable of that type, or
    `this_thread_block()`/`this_grid()` itself (its `.sync()` is a barrier of the block)?"""
    if isinstance(e, A.ID):
        v = lw.scope.find(e.name)
        return v is not None and v.kind == "reg" and _type_name(v.type) in _CG_BLOCK
    return isinstance(e, A.FuncCall) and _name(e) in ("this_thread_block", "this_grid") and not _args(e)


def _block_group_type(lw, e) -> str | None:
    """"thread_block" or "grid_group" for a variable holding the block or the grid as a group."""
    v = lw.scope.find(e.name)
    return _type_name(v.type) if v is not None and v.kind == "reg" and _type_name(v.type) in _CG_BLOCK else None


def _block_size(lw, loc) -> Reg:
    """The threads of the block: blockDim.x * blockDim.y * blockDim.z."""
    xy, d = lw.temp(), lw.temp()
    lw.emit("mul.lo.u32", (xy,), (Reg("%ntid.x"), Reg("%ntid.y")), loc)
    lw.emit("mul.lo.u32", (d,), (xy, Reg("%ntid.z")), loc, text="size")
    return d


def auto_group_type(lw, init, t: T) -> T:
    """The type of `auto block = this_thread_block();` (or `this_grid()`, or a copy of such a
    variable): the group's, as if written out, so that its `.sync()` is a barrier of the block and
    its `.thread_rank()` the thread index (an unknown `auto` read them as a tile's)."""
    if t.name != "__auto_t" or init is None or not _is_block_group(lw, init):
        return t
    if isinstance(init, A.ID):
        return lw.scope.find(init.name).type
    return t.with_(name="grid_group" if _name(init) == "this_grid" else "thread_block")


def _type_name(t):
    return t.name if isinstance(t.name, str) else None


def _is_id(e) -> bool:
    return isinstance(e, A.ID)


_CG_TILE_TYPES = ("thread_block_tile", "thread_group")  # declared types of a tile whose size is not known
_COLLECTIVES = frozenset(["shfl", "shfl_up", "shfl_down", "shfl_xor", "any", "all", "ballot", "sync",
                          "thread_rank"])


def _group(var):
    """(size, membermask register or None) of a variable holding a cooperative-groups group:
    a tile of `size` lanes (its mask follows from the lane), a coalesced/labeled group (size 32:
    its lanes are counted by rank; its mask is the variable's value), or a tile whose size is not
    known here (size None: a `thread_block_tile<N>` parameter, a size from an unread macro; its
    mask is the variable's value, as the group's creation computed it); None for anything else."""
    if var is None or var.kind != "reg":
        return None
    name = var.type.name
    if name == "coalesced_group":
        return 32, Reg(var.name)
    if name in _CG_TILE_TYPES:
        return None, Reg(var.name)
    if not isinstance(name, tuple):
        return None
    if name[0] == "tile":
        return (name[1], None) if name[1] is not None else (None, Reg(var.name))
    if name[0] == "coalesced":
        return 32, Reg(var.name)
    return None


def _generic_group(lw, var, method):
    """A parameter of a type warplint does not know (`template <typename CG> f(CG const& g)`)
    whose collective method is called, in a file that uses cooperative groups: a tile of the
    warp whose size is not known here (its mask is the value the caller passed)."""
    if var is None or var.kind != "reg" or not lw.rw.cooperative_groups or method not in _COLLECTIVES:
        return None
    name = var.type.name
    if not isinstance(name, str) or name in _CG_BLOCK or name in lw.rw.structs:
        return None
    return None, Reg(var.name)


def _rank_lane(lw, mask, mode, b, loc):
    """The lane of the coalesced group `mask` a shuffle of `mode` with operand `b` reads: the
    group's lane whose rank is b (idx), rank - b (up), rank + b (down) or rank ^ b (bfly)."""
    rank = b
    if mode != "idx":
        below = lw.temp()
        lw.emit("and.b32", (below,), (mask, Reg("%lanemask_lt")), loc)
        mine = lw.temp()
        lw.emit("popc.b32", (mine,), (below,), loc)
        rank = lw.temp()
        lw.emit({"up": "sub.s32", "down": "add.s32", "bfly": "xor.b32"}[mode], (rank,), (mine, b), loc)
    lane = lw.temp()
    lw.emit("fns.b32", (lane,), (mask, Imm(0), rank), loc)  # the rank-th lane of the mask
    return lane


def _group_mask(lw, size, mask, loc):
    return mask if mask is not None else _tile_mask(lw, size, loc)


def _group_size(lw, size, mask, loc):
    """The number of lanes of the group: its lanes' count when its size is not known here."""
    if size is not None:
        return Imm(size)
    d = lw.temp()
    lw.emit("popc.b32", (d,), (mask,), loc)
    return d


def _tile_mask_of(lw, size, loc):
    """Membermask of the calling lane's tile of `size` lanes, `size` a register (a power of 2 up
    to 32): the low `size` bits, shifted to the tile's first lane."""
    n = lw.temp()
    lw.emit("sub.s32", (n,), (Imm(32), size), loc)
    ones = lw.temp()
    lw.emit("shr.b32", (ones,), (Imm(0xFFFFFFFF), n), loc)
    b = lw.temp()
    lw.emit("and.b32", (b,), (Reg("%laneid"), n), loc)
    m = lw.temp()
    lw.emit("shl.b32", (m,), (ones, b), loc)
    return m


def _tile_mask(lw, size, loc):
    """Membermask of the calling lane's tile of `size` lanes."""
    if size == 32:
        return Imm(0xFFFFFFFF)
    b = lw.temp()
    lw.emit("and.b32", (b,), (Reg("%laneid"), Imm(32 - size)), loc)
    m = lw.temp()
    lw.emit("shl.b32", (m,), (Imm((1 << size) - 1), b), loc)
    return m


_TILE_SHFL = {"shfl": "idx", "shfl_up": "up", "shfl_down": "down", "shfl_xor": "bfly"}
_TILE_VOTE = {"any": "any", "all": "all", "ballot": "ballot"}


def tile_method(lw, e, method, size, mask, args, discard):
    """Methods of a cooperative-groups thread_block_tile<size> (or of a coalesced group, whose
    membermask is the register `mask`) as the warp primitives they are."""
    loc = call_loc(lw, e, method)
    text = method
    if mask is not None and method in ("thread_rank", "size", "num_threads") and not args:  # count the lanes
        below = mask
        if method == "thread_rank":  # the group's lanes below this one
            below = lw.temp()
            lw.emit("and.b32", (below,), (mask, Reg("%lanemask_lt")), loc)
        d = lw.temp()
        lw.emit("popc.b32", (d,), (below,), loc, text=text)
        return d, UINT
    if method in _TILE_SHFL and len(args) == 2:
        v, vt = lw.rvalue(args[0])
        b, _ = lw.rvalue(args[1])
        mode = _TILE_SHFL[method]
        m = _group_mask(lw, size, mask, loc)
        if mask is not None and size is not None:  # a coalesced group counts lanes by rank: the source is its lane of that rank
            b, mode = _rank_lane(lw, mask, mode, b, loc), "idx"
        c = _shfl_c(lw, _group_size(lw, size, mask, loc), 0 if mode == "up" else 0x1F, loc)
        d = lw.temp()
        lw.emit(f"shfl.sync.{mode}.b32", (d,), (v, b, c, m), loc, text=text)
        return d, vt
    if method in _TILE_VOTE and len(args) == 1:
        p = lw.cond(args[0])
        m = _group_mask(lw, size, mask, loc)
        mode = _TILE_VOTE[method]
        if mode == "ballot":
            d = lw.temp()
            lw.emit("vote.sync.ballot.b32", (d,), (p, m), loc, text=text)
            return d, UINT
        dp = lw.pred()
        lw.emit(f"vote.sync.{mode}.pred", (dp,), (p, m), loc, text=text)
        d = lw.temp()
        lw.emit("selp.s32", (d,), (Imm(1), Imm(0), dp), loc)
        return d, INT
    if method == "sync" and not args:
        m = _group_mask(lw, size, mask, loc)
        lw.emit("bar.warp.sync", (), (m,), loc, text=text)
        return Imm(0), INT
    if method == "thread_rank" and not args:
        d = lw.temp()
        lw.emit("and.b32", (d,), (Reg("%laneid"), Imm(size - 1)), loc, text=text)
        return d, UINT
    if method in ("size", "num_threads") and not args:
        return Imm(size), UINT
    return None


def _store_through(lw, ptr_expr, v, vt, loc):
    if isinstance(ptr_expr, A.UnaryOp) and ptr_expr.op == "&":
        info = lw.address(ptr_expr.expr)
        if info.kind == "reg":
            d = Reg(info.where)
            lw.emit("selp.s32", (d,), (Imm(1), Imm(0), v), loc)
            return
        s = lw.temp()
        lw.emit("selp.s32", (s,), (Imm(1), Imm(0), v), loc)
        lw.store(info, s, INT, loc)
        return
    p, pt = lw.rvalue(ptr_expr)
    s = lw.temp()
    lw.emit("selp.s32", (s,), (Imm(1), Imm(0), v), loc)
    lw.emit("st." + (pt.space + "." if pt.space else "") + "s32", (), (Addr(p, 0), s), loc)


def shfl(lw, e, name, args, loc):
    mode, sync = _SHFL[name]
    n = 4 if sync else 3
    if len(args) not in (n - 1, n):
        raise Unsupported(f"{name} takes {n - 1} or {n} arguments")
    if sync:
        m, _ = lw.rvalue(args[0])
        rest = args[1:]
    else:
        m = None
        rest = args
    v, vt = lw.rvalue(rest[0])
    b, _ = lw.rvalue(rest[1])
    clamp = 0 if mode == "up" else 0x1F
    if len(rest) > 2:
        w, _ = lw.rvalue(rest[2])
    else:
        w = Imm(32)
    c = _shfl_c(lw, w, clamp, loc)
    d = lw.temp()
    srcs = (v, b, c) + ((m,) if sync else ())
    lw.emit(f"shfl.{'sync.' if sync else ''}{mode}.b32", (d,), srcs, loc, text=name)
    return d, vt if not vt.is_ptr else vt


def _shfl_c(lw, width, clamp, loc):
    """The c operand of shfl for segments of `width` lanes (an immediate or a register)."""
    if isinstance(width, Imm) and isinstance(width.value, int):
        return Imm(((32 - width.value) << 8) | clamp)
    t1 = lw.temp()
    lw.emit("sub.s32", (t1,), (Imm(32), width), loc)
    t2 = lw.temp()
    lw.emit("shl.b32", (t2,), (t1, Imm(8)), loc)
    if clamp:
        t3 = lw.temp()
        lw.emit("or.b32", (t3,), (t2, Imm(clamp)), loc)
        t2 = t3
    return t2


def inline_asm(lw, e, args):
    loc = lw.loc(e)
    tmpl_parts = []
    first = None
    k = 0
    while k < len(args) and isinstance(args[k], A.Constant) and args[k].type == "string":
        if first is None:
            first = args[k]
        tmpl_parts.append(_unescape(args[k].value[1:-1]))
        k += 1
    outs, ins = [], []
    for a in args[k:]:
        if not isinstance(a, A.FuncCall):
            continue
        kind = _name(a)
        sub = _args(a)
        if len(sub) != 2:
            continue
        (outs if kind == "__asm_out" else ins).append((sub[0].value[1:-1] if isinstance(sub[0], A.Constant) else "r", sub[1]))
    lw.nasm += 1
    names = []
    allops = outs + ins
    for i, (cons, expr) in enumerate(allops):
        r = Reg(f"$asm{lw.nasm}_{i}")
        names.append(r)
    # inputs: bound before
    out_infos = []
    for i, (cons, expr) in enumerate(outs):
        info = lw.address(expr)
        out_infos.append(info)
        if "+" in cons:
            v, vt = lw.read_lvalue(info, loc)
            lw.emit(f"mov.{_ptx_of(cons, vt)}", (names[i],), (v,), loc)
    for j, (cons, expr) in enumerate(ins):
        i = len(outs) + j
        if cons.isdigit():  # tied to an output
            v, vt = lw.rvalue(expr)
            lw.emit(f"mov.{_ptx_of('r', vt)}", (names[int(cons)] if int(cons) < len(names) else names[i],), (v,), loc)
            continue
        v, vt = lw.rvalue(expr)
        if "n" in cons or "i" in cons:
            names[i] = v if isinstance(v, Imm) else names[i]
            if isinstance(v, Imm):
                continue
        lw.emit(f"mov.{_ptx_of(cons, vt)}", (names[i],), (v,), loc)
    template = "".join(tmpl_parts)
    counter = lw.nasm

    def sub(m):
        if m.group(0) == "%%":
            return "%"
        if m.group(0) == "%=":
            return str(counter)
        idx = int(m.group(1))
        if idx < len(names):
            op = names[idx]
            return str(op.value) if isinstance(op, Imm) else op.name
        return m.group(0)

    text = _ASM_OPERAND.sub(sub, template)
    body = None
    if text.strip():
        try:
            from ..ptx import parse_ptx_statements
        except ImportError:
            parse_ptx_statements = None
        if parse_ptx_statements is not None:
            st = lw.tok_at(first.coord) if first is not None else None
            line, col = (st.line, st.col + 1) if st is not None else (loc.line, loc.col)
            path = st.path if st is not None else loc.path
            try:
                body = parse_ptx_statements(text, path, line, col)
            except InputError as err:  # a syntax error: the asm stays opaque, the grammar says why
                lw.module.diagnostics.append(Diagnostic(err.loc, "note", f"inline asm not analysed: {err.message}"))
            if body is not None:
                defined = {i.name for i in body if isinstance(i, Label)}
                if any(isinstance(i, Instr) and i.op in ("bra", "brx") and any(
                        isinstance(x, Sym) and x.name not in defined for x in i.srcs) for i in body):
                    body = None  # jumps out of the asm block: keep it opaque
                elif any(isinstance(i, Instr) and i.op in ("ret", "exit") for i in body):
                    pass
    if body is None:
        srcs = tuple(names[len(outs):])
        if text.strip():
            lw.emit("asm", tuple(names[:len(outs)]), srcs, loc, text="asm")
    else:
        suffix = f"$asm{counter}"
        for item in body:
            if isinstance(item, Label):
                lw.body.append(Label(item.name + suffix, item.loc))
            elif isinstance(item, Instr):
                lw.body.append(_rename_asm(item, suffix, loc))
    for i, info in enumerate(out_infos):
        t = info.type
        lw.store(info, names[i], t, loc)
    return Imm(0), INT


def _rename_asm(ins, suffix, loc):
    """Registers declared inside the asm block and its labels get a per-asm suffix."""

    def reg(name):
        if name.startswith("$asm") or name.startswith("%") and not name[1:2].isalpha() or is_special(name):
            return name  # an operand of the asm statement, a special register
        return name + suffix

    def sym(name):
        return name + suffix if ins.op in ("bra", "brx") else name

    def ren(o):
        return map_operand(o, reg, sym)

    guard = (reg(ins.guard[0]), ins.guard[1]) if ins.guard else None
    return Instr(ins.opcode, tuple(ren(d) for d in ins.dests), tuple(ren(s) for s in ins.srcs),
                 ins.loc or loc, guard, ins.raw_loc, ins.text, ins.negated)


def _ptx_of(cons, t):
    c = cons.strip("=+&")
    return {"r": "u32", "l": "u64", "f": "f32", "d": "f64", "h": "u16", "c": "u16", "n": "u32"}.get(c[:1], t.ptx if t else "b32")


def _unescape(s: str) -> str:
    return s.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"').replace("\\\\", "\\")
