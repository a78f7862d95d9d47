"""The CUDA-C front end: CUDA source (the C-like subset most kernels are written in) -> warp IR.

`parse_cuda(text, path, options)` preprocesses in process (local `#include "..."` followed,
`<system>` headers not expanded, `__CUDA_ARCH__` from the target), rewrites the common C++-isms
to C, parses each top-level item with pycparser and lowers `__global__`/`__device__` functions
to the same PTX-shaped IR the PTX front end produces.  A function it cannot read becomes a
`note` diagnostic; only a file unusable as a whole raises `InputError`.
"""
from __future__ import annotations

from ...errors import InputError
from ...ir import Loc, Module


RECURSION_LIMIT = 6000  # long else-if chains recurse in the parser; Python frames, not C stack


def parse_cuda(text: str, path: str, options, preprocessed=None) -> Module:
    import sys
    from .frontend import parse_cuda as _parse
    old = sys.getrecursionlimit()
    try:
        if old < RECURSION_LIMIT:
            sys.setrecursionlimit(RECURSION_LIMIT)
        return _parse(text, path, options, preprocessed)
    except InputError:
        raise
    except RecursionError:
        raise InputError(Loc(path, 1, 1), "input nested too deeply to analyse") from None
    except MemoryError:
        raise InputError(Loc(path, 1, 1), "input too large to analyse") from None
    finally:
        if sys.getrecursionlimit() != old:
            sys.setrecursionlimit(old)


__all__ = ["parse_cuda"]
