"""Inline calls to device functions defined in the same module, so that lane identity
(`laneid()` helpers) and warp primitives inside helpers are analysed in their caller's
context.  Bounded by depth and size; calls beyond the bound stay opaque.  An inlined copy's
registers keep their struct fields (`binfo@1.len` is a field of `binfo@1`), a struct passed
by value brings the caller's fields (`p@1.n` starts as the caller's `q.n`), and a struct returned
brings the callee's (`$t.__0` is the inlined copy's `$ret@1.__0`).

A device function with no caller to inline it into is analysed alone, where its arguments are
unknown: `with_varying_arguments` gives it a caller that passes its thread index for every number
parameter, and a member function an object of the thread's own (the other extreme from the
analysis's default, arguments and objects the same in every lane).
Only findings that hold under both count (`pipeline.check`)."""
from __future__ import annotations

from ..ir import Addr, Function, Instr, Label, Reg, Sym, map_operand
from ..specials import is_special
from .calls import is_pure
from .liveness import registers

MAX_DEPTH = 4
MAX_SIZE = 40_000


def called_functions(module) -> set[int]:
    """The functions (by `id`) that some other function of the module calls."""
    table = function_table(module)
    out = set()
    for f in module.functions:
        for ins in f.body:
            callee = resolve(ins, table) if isinstance(ins, Instr) else None
            if callee is not None and callee is not f:
                out.add(id(callee))
    return out


def called_outside(module, table: dict[str, list[Function]]) -> set[int]:
    """The functions (by `id`) that only code outside the file's report analyses
    (`Function.outside`: frontends/cuda/scope.py), and those they call."""
    todo = [f for f in module.functions if f.outside]
    out = {id(f) for f in todo}
    while todo:
        for ins in todo.pop().body:
            callee = resolve(ins, table) if isinstance(ins, Instr) else None
            if callee is not None and id(callee) not in out:
                out.add(id(callee))
                todo.append(callee)
    return out


def function_table(module) -> dict[str, list[Function]]:
    """The functions with a body, by name: overloads share one (build it once per module)."""
    table: dict[str, list[Function]] = {}
    for f in module.functions:
        if f.body:
            table.setdefault(f.name, []).append(f)
    return table


def resolve(ins: Instr, table: dict[str, list[Function]]) -> Function | None:
    """The function a call runs: among the functions of its name, the one whose parameters take
    its arguments (overloads by arity; a single candidate may have default arguments).  None for
    a call of no function here, or one the arguments do not single out."""
    if ins.op != "call" or not ins.srcs or not isinstance(ins.srcs[0], Sym):
        return None
    candidates = table.get(ins.srcs[0].name, ())
    nargs = len(ins.srcs) - 1
    exact = [f for f in candidates if len(f.params) == nargs]
    if len(exact) == 1:
        return exact[0]
    if len(candidates) == 1 and nargs <= len(candidates[0].params):
        return candidates[0]
    return None


def inline_calls(fn: Function, module, inlined: set[int] | None = None,
                 table: dict[str, list[Function]] | None = None) -> Function:
    """`fn` with its calls inlined; the functions inlined are added to `inlined` (by `id`)."""
    if not any(isinstance(i, Instr) and i.op == "call" for i in fn.body):
        return fn
    if table is None:
        table = function_table(module)
    counter = [0]
    body = _expand(fn.body, table, module.language, counter, depth=0, stack=(fn.name,),
                   inlined=set() if inlined is None else inlined)
    return Function(fn.name, fn.is_kernel, fn.params, fn.ret_params, body, fn.loc, fn.display_name)


def with_varying_arguments(fn: Function, module, table: dict[str, list[Function]] | None = None,
                           inlined: Function | None = None) -> Function:
    """`fn` as called by a caller that passes its thread index for each number parameter (one
    that differs per lane, as `threadIdx.x`-derived offsets do).  Parameters used as the base of
    an address keep their default (the same in every lane: warp helpers share their buffers),
    also where only a function it calls uses them so (`sort(T *els) { merge(els); }`).
    PTX parameters are `.param` variables of unknown kind: PTX functions are left as they are.
    `inlined`: `inline_calls(fn, ...)`, when the caller has it."""
    if module.language == "ptx":
        return fn
    bases = address_params(inlined if inlined is not None else inline_calls(fn, module, set(), table))
    prologue = [Instr("mov.u32", (Reg(p),), (Reg("%tid.x"),), fn.loc) for p in fn.params
                if p not in bases and p != OBJECT]
    if OBJECT in fn.params:
        prologue += own_object(module, fn.loc)
    if not prologue:
        return fn
    return Function(fn.name, fn.is_kernel, fn.params, fn.ret_params, prologue + list(fn.body), fn.loc,
                    fn.display_name)


def varying_inlined(fn: Function, varying: Function, inlined: Function, module,
                    table: dict[str, list[Function]]) -> Function:
    """`inline_calls(varying, ...)` for `varying = with_varying_arguments(fn, ..., inlined)`: its
    prologue before `inlined`'s body, where the prologue calls nothing defined here and the
    body is far enough from `MAX_SIZE` that the prologue decides no call's inlining."""
    prologue = varying.body[:len(varying.body) - len(fn.body)]
    if any(isinstance(i, Instr) and resolve(i, table) is not None for i in prologue) \
            or len(inlined.body) + len(fn.body) + 2 * len(prologue) >= MAX_SIZE:
        return inline_calls(varying, module, set(), table)
    return Function(fn.name, fn.is_kernel, fn.params, fn.ret_params, prologue + list(inlined.body), fn.loc,
                    fn.display_name)


def own_object_space(fn: Function, module) -> None:
    """What `with_varying_arguments(fn, module, ...)` leaves in the module: the state space of the
    thread's own object (`own_object`) of a member function."""
    if module.language != "ptx" and OBJECT in fn.params:
        _own_object_is_local(module)


def _own_object_is_local(module) -> None:
    module.state_spaces["&" + _OWN] = "local"


OBJECT = "this"  # the object parameter of a member function (the C++ layer's `S__f(struct S *this, ...)`)
_OWN = "__own_object"
OWN_FIELDS = "__fields_of_own_object"  # the opaque call that gives the own object's fields


def own_object(module, loc) -> list[Instr]:
    """`this` pointing to an object of the thread's own (a local `S obj;` in every thread, as
    nccl's `Primitives`), whose fields differ per lane: the other extreme from one object that
    every lane shares.  Its fields live in the variable's register (see `local_objects`), an
    unknown of each thread's own (an opaque call with the lane among its inputs)."""
    _own_object_is_local(module)
    return [Instr("call", (Reg(_OWN),), (Sym(OWN_FIELDS), Reg("%laneid")), loc),
            Instr("mov.u64", (Reg(OBJECT),), (Sym("&" + _OWN),), loc)]


_UNSCALED = ("mov", "cvt", "cvta", "add", "sub")  # keep an address's base (`mul`/`shl` scale indices)


def address_params(fn: Function) -> set[str]:
    """The parameters that reach an address operand unscaled: pointers (`x` in `x[i]`)."""
    carries: dict[str, set[str]] = {p: {p} for p in fn.params}
    out: set[str] = set()
    for ins in fn.body:
        if not isinstance(ins, Instr):
            continue
        for o in ins.srcs + ins.dests:
            if isinstance(o, Addr) and isinstance(o.base, Reg):
                out |= carries.get(o.base.name, set())
        if ins.op in _UNSCALED and ins.dests and isinstance(ins.dests[0], Reg):
            found = set().union(*(carries.get(o.name, set()) for o in ins.srcs if isinstance(o, Reg)))
            if found:
                carries[ins.dests[0].name] = found
    return out


def _expand(body, table, language, counter, depth, stack, inlined):
    out = []
    for item in body:
        callee = resolve(item, table) if isinstance(item, Instr) else None
        if (callee is not None and callee.name not in stack
                and depth < MAX_DEPTH and len(out) + len(body) < MAX_SIZE):
            counter[0] += 1
            inlined.add(id(callee))
            inner = _instantiate(item, callee, language, counter[0])
            out.extend(_expand(inner, table, language, counter, depth + 1, stack + (callee.name,), inlined))
        else:
            out.append(_lane_dependent(item) if isinstance(item, Instr) and callee is None else item)
    return out


def _lane_dependent(ins: Instr) -> Instr:
    """A call without arguments that stays opaque (no body here): what it returns comes from the
    thread that calls it (`lane_id()`, `warp_id()`) or from memory, so it may differ per lane.
    Marked as the front end marks a group's `thread_rank()`: the lane number is one of its
    inputs.  A call with arguments computes from them (a macro or helper from a header not read):
    the same in every lane when they are."""
    if ins.op != "call" or not ins.dests or len(ins.srcs) != 1 or is_pure(ins):
        return ins
    return Instr(ins.opcode, ins.dests, ins.srcs + (Reg("%laneid"),), ins.loc, ins.guard, ins.raw_loc,
                 ins.text, ins.negated, ins.from_cuda, ins.frames)


def _renamed(name: str, suffix: str) -> str:
    """A register of an inlined copy: the suffix goes on the struct, so that `binfo.len` stays
    a field of `binfo` (`binfo@1.len` of `binfo@1`: a whole struct written writes its fields)."""
    base, dot, field = name.partition(".")
    return base + suffix + dot + field


def _fields_read(fn: Function) -> dict[str, set[str]]:
    """Parameter -> the registers of its fields that `fn` reads (`p.n`, `p.size.x`)."""
    params = set(fn.params)
    out: dict[str, set[str]] = {}
    for ins in fn.body:
        if not isinstance(ins, Instr):
            continue
        names: set[str] = set()
        for op in ins.srcs + ins.dests:
            registers(op, names)
        for r in names:
            base = r.partition(".")[0]
            if base != r and base in params and not is_special(r):
                out.setdefault(base, set()).add(r)
    return out


def _fields_written(fn: Function) -> dict[str, set[str]]:
    """Returned value -> the registers of its fields that `fn` writes (`$ret.__0`)."""
    rets = set(fn.ret_params)
    out: dict[str, set[str]] = {}
    for ins in fn.body:
        for d in ins.dests if isinstance(ins, Instr) else ():
            if isinstance(d, Reg) and d.name.partition(".")[0] in rets and "." in d.name:
                out.setdefault(d.name.partition(".")[0], set()).add(d.name)
    return out


def _instantiate(call: Instr, callee: Function, language: str, k: int) -> list:
    suffix = f"@{k}"
    syms: dict[str, str] = {}
    prologue, epilogue = [], []
    loc = call.loc
    fields = _fields_read(callee)
    written_fields = _fields_written(callee)
    for param, arg in zip(callee.params, call.srcs[1:]):
        if isinstance(arg, Sym):
            syms[param] = arg.name
            continue
        prologue.append(Instr("mov.b32", (Reg(param + suffix),), (arg,), loc))
        if isinstance(arg, Reg) and not is_special(arg.name):
            # a struct passed by value: each field the callee reads is the caller's field
            prologue.extend(Instr("mov.b32", (Reg(_renamed(f, suffix)),), (Reg(arg.name + f[len(param):]),), loc)
                            for f in sorted(fields.get(param, ())))
    for rp, dest in zip(callee.ret_params, call.dests):
        if isinstance(dest, Sym):
            syms[rp] = dest.name
        elif language == "ptx":
            syms[rp] = rp + suffix
            epilogue.append(Instr("ld.param.b32", (dest,), (Addr(Sym(rp + suffix), 0),), loc))
        else:
            epilogue.append(Instr("mov.b32", (dest,), (Reg(rp + suffix),), loc))
            if isinstance(dest, Reg):  # a struct returned brings its fields (`$ret.__0` of `return {a, b}`)
                epilogue.extend(Instr("mov.b32", (Reg(dest.name + f[len(rp):]),), (Reg(_renamed(f, suffix)),), loc)
                                for f in sorted(written_fields.get(rp, ())))
    labels = {i.name for i in callee.body if isinstance(i, Label)}
    end = f"$inline_end{suffix}"

    def reg(name):
        return name if is_special(name) else _renamed(name, suffix)

    def sym(name):
        return name + suffix if name in labels else syms.get(name, name)

    def mapop(o):
        return map_operand(o, reg, sym)

    out = list(prologue)
    for item in callee.body:
        if isinstance(item, Label):
            out.append(Label(item.name + suffix, item.loc))
            continue
        guard = (reg(item.guard[0]), item.guard[1]) if item.guard else None
        if item.op == "ret":
            out.append(Instr("bra", (), (Sym(end),), item.loc, guard, item.raw_loc, item.text))
            continue
        out.append(Instr(item.opcode, tuple(mapop(d) for d in item.dests),
                         tuple(mapop(s) for s in item.srcs), item.loc, guard, item.raw_loc,
                         item.text, item.negated, from_cuda=item.from_cuda))
    out.append(Label(end, loc))
    out.extend(epilogue)
    return out
