"""CUB's block and warp collectives: what their results are across the threads.

CUB's headers are not read, so `BlockScan(temp).ExclusiveSum(x, out, total)` stays an opaque call
(which may hold a barrier: the block collectives do).  What the CUB documentation guarantees about
the outputs is this table (cub::BlockScan, cub::BlockReduce, cub::WarpScan, cub::WarpReduce class
references, CCCL docs):

- BlockScan `ExclusiveSum`, `InclusiveSum` (input, output[, block_aggregate]) and `ExclusiveScan`,
  `InclusiveScan` (input, output, [initial_value,] scan_op[, block_aggregate]): `output` is each
  thread's own prefix; `block_aggregate` "the block-wide aggregate", the same in every thread of
  the block.  In the last position a block prefix callback functor takes the aggregate's place:
  the last argument is read as the aggregate only where it is a variable of the output's type.
- BlockReduce `Sum`, `Reduce`: "the aggregate ... (only valid in thread 0)": the other threads'
  results differ, so the result is per thread.
- WarpReduce `Sum`, `Reduce`, `HeadSegmented*`, `TailSegmented*`: valid in lane 0 of each logical
  warp only: per lane.
- WarpScan `ExclusiveSum`, `InclusiveSum`, `ExclusiveScan`, `InclusiveScan`: per-lane outputs;
  its `warp_aggregate` is one value per logical warp, which may be narrower than the warp (its
  width is a template argument, erased here): per lane too.  `Scan` has two outputs.

Only objects of a type the file names through a `cub::` template (`using S = cub::BlockScan<T,
128>;`, `typedef cub::BlockScan<T, 128> S;`) are recognised; outputs that are arrays (several
items per thread) are not written (as for any opaque call)."""
from __future__ import annotations

from pycparser import c_ast as A

_SCANS = ("ExclusiveSum", "InclusiveSum", "ExclusiveScan", "InclusiveScan")
_REDUCTIONS = {"cub__BlockReduce": ("Sum", "Reduce"),
               "cub__WarpReduce": ("Sum", "Reduce", "HeadSegmentedSum", "TailSegmentedSum",
                                   "HeadSegmentedReduce", "TailSegmentedReduce")}
# the fewest arguments before an aggregate may follow: (input, output) / (input, output, scan_op)
_BEFORE_AGGREGATE = {"ExclusiveSum": 2, "InclusiveSum": 2, "ExclusiveScan": 3, "InclusiveScan": 3}


def is_cub_class(type_name) -> bool:
    return type_name in ("cub__BlockScan", "cub__WarpScan") or type_name in _REDUCTIONS


def result_scope(cls: str, method: str) -> str | None:
    """The scope of what a collective returns (`lane`), or None where it returns nothing known."""
    return "lane" if method in _REDUCTIONS.get(cls, ()) else None


def output_scopes(cls: str, method: str, nargs: int, same_type_as_output) -> list[tuple[int, str]]:
    """(argument index, scope) of each output argument of `cls(temp).method(args)`.
    `same_type_as_output(i)`: is argument i a variable of the output's type (an aggregate,
    not a prefix callback or scan operator)?"""
    if cls == "cub__WarpScan" and method == "Scan" and nargs >= 3:
        return [(1, "lane"), (2, "lane")]
    if method not in _SCANS or cls not in ("cub__BlockScan", "cub__WarpScan") or nargs < 2:
        return []
    outs = [(1, "lane")]
    last = nargs - 1
    if last >= _BEFORE_AGGREGATE[method] and same_type_as_output(last):
        outs.append((last, "block" if cls == "cub__BlockScan" else "lane"))
    return outs


def collective_call(lw, e, args, discard):
    """Lower `S(temp).m(args)` / `s.m(args)`, S a CUB collective of the table above, to one opaque
    call `call.<scopes>` whose destinations are its known outputs (each with its scope: see
    `analysis/calls.py`), stored back into the output arguments; None where the table says
    nothing of the call (it is lowered as any method call)."""
    from ...ir import Imm, Sym
    from .ctype import INT, OPAQUE, Kind
    from .intrinsics import call_loc
    cls, method = _object_class(lw, e.name.name), e.name.field.name
    if not is_cub_class(cls):
        return None
    outs = output_scopes(cls, method, len(args), lambda i: _same_type(lw, args[i], args[1]))
    ret = result_scope(cls, method)
    if not outs and ret is None:
        return None
    ret = None if discard else ret
    obj, _ = lw.rvalue(e.name.name)
    vals = [lw.rvalue(a)[0] for a in args]
    places = [(lw.address(args[i]), scope) for i, scope in outs]
    places = [(p, scope) for p, scope in places if p.type.kind != Kind.ARRAY]
    dests = [lw.temp() for _ in places] + ([lw.temp()] if ret else [])
    scopes = [scope for _, scope in places] + ([ret] if ret else [])
    loc = call_loc(lw, e, method)
    lw.emit(".".join(["call", *scopes]), tuple(dests), (Sym(f"cub::{cls[5:]}::{method}"), obj, *vals), loc,
            text=method)
    for (place, _), reg in zip(places, dests):
        lw.store(place, reg, place.type, loc)
    return (dests[-1], OPAQUE) if ret else (Imm(0), INT)


def _object_class(lw, obj) -> str | None:
    """The class an object expression is of: `S(temp)` (a cast, after the C++ layer), or a variable."""
    if isinstance(obj, A.Cast):
        t = lw.ctype(obj.to_type.type)
    elif isinstance(obj, A.ID) and lw.scope.find(obj.name) is not None:
        t = lw.scope.find(obj.name).type
    else:
        return None
    return t.name if isinstance(t.name, str) else None


def _same_type(lw, a, output) -> bool:
    """Is `a` a variable of the type of `output` (of its items, for an array of them), a type
    written out (not `auto`, which a prefix callback object may be too)?"""
    from .ctype import Kind
    if not (isinstance(a, A.ID) and isinstance(output, A.ID)):
        return False
    va, vo = lw.scope.find(a.name), lw.scope.find(output.name)
    if va is None or vo is None:
        return False
    ta, to = va.type, vo.type
    to = to.elem if to.kind == Kind.ARRAY and to.elem is not None else to
    return (not ta.is_ptr and ta.name != "__auto_t"
            and (ta.kind, ta.bits, ta.name) == (to.kind, to.bits, to.name))
