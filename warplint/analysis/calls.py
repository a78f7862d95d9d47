"""What the analyses may assume about a call that stays opaque (no body in the module to inline).

An opaque callee may read `%laneid` (its result may differ per lane) and may hold a barrier or a
`__syncwarp()` (it separates the memory accesses around it).  The CUDA math library is known to do
neither: its functions are pure, their results vary only with their arguments.  Clock reads, sleeps
and printf may differ per lane but never wait for other threads.

A library collective whose results' spread the front end knows (CUB's block and warp collectives,
`frontends/cuda/cub.py`) is `call.S1.S2...`, one scope per destination: `lane` (each thread its
own), `warp` (one value per warp), `block` (one value for the whole block).  It stays opaque
otherwise: it may hold a barrier.  CUB's block collectives do: the threads of the block share their
temp storage and wait for each other at `__syncthreads()` inside them, so every thread of the block
must call one together, as a barrier (`block_collective`)."""
from __future__ import annotations

import re

from ..ir import Instr, Sym

_MATH = ("sqrt rsqrt cbrt rcbrt exp exp2 exp10 expm1 log log2 log10 log1p logb ilogb sin cos tan "
         "sinpi cospi sincos asin acos atan atan2 sinh cosh tanh asinh acosh atanh pow fabs abs "
         "labs llabs floor ceil round rint lrint llrint lround llround trunc fmod remainder fdim "
         "fma hypot rhypot norm3d rnorm3d erf erfc erfinv erfcinv lgamma tgamma copysign frexp "
         "ldexp scalbn modf nearbyint signbit isnan isinf isfinite saturate fdivide")
_PURE_NAMES = frozenset(n + s for n in _MATH.split() for s in ("", "f"))
# device intrinsics: __expf, __fdividef, __popc, __clz, __float2int_rn, __half2float ...
_INTRINSIC = re.compile(r"__(?:[a-z]+f|popc(?:ll)?|clz(?:ll)?|ffs(?:ll)?|brev(?:ll)?|[a-z0-9]+2[a-z0-9]+(?:_r[nzud])?|"
                        r"[fd](?:add|sub|mul|div|rcp|sqrt|fma)_r[nzud]|ldg|ldcg|ldca|ldcs|ldlu|ldcv)$")


# device runtime calls that read a clock, sleep or print: their results may differ per lane, but
# they never wait for other threads
_NO_WAIT = frozenset({"clock", "clock64", "__nanosleep", "printf", "vprintf"})  # PTX's printf: vprintf


def callee(ins: Instr) -> str | None:
    return ins.srcs[0].name if ins.op == "call" and ins.srcs and isinstance(ins.srcs[0], Sym) else None


SCOPES = ("lane", "warp", "block")


def is_collective(ins: Instr) -> bool:
    """A call whose modifiers give the scope of each result (`call.lane.block`)."""
    return (ins.op == "call" and bool(ins.mods) and len(ins.mods) == len(ins.dests)
            and all(m in SCOPES for m in ins.mods))


def block_collective(ins: Instr) -> str | None:
    """The name of the CUB block collective this call is (`cub::BlockReduce::Sum`, as the front
    end names them: frontends/cuda/cub.py), None for any other call."""
    name = callee(ins)
    return name if name is not None and name.startswith("cub::Block") else None


def is_pure(ins: Instr) -> bool:
    """A call of a library function known to compute from its arguments only (no lane identity,
    no synchronisation)."""
    name = callee(ins)
    if name is None:
        return False
    if name.startswith(("$", "__ctor")):  # the front end's brace initialiser, a constructor: a value
        return True                        # built from the arguments
    name = name.rsplit("::", 1)[-1]
    return name in _PURE_NAMES or bool(_INTRINSIC.match(name))


def may_wait(ins: Instr) -> bool:
    """May this opaque call hold a barrier or a `__syncwarp()` (wait for other threads)?"""
    name = callee(ins)
    return not (is_pure(ins) or name is not None and name.rsplit("::", 1)[-1] in _NO_WAIT)
