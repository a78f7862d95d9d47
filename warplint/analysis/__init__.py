"""Analyses over the warp IR: per-lane values, active lanes, memory accesses."""
from __future__ import annotations

from ..cfg import build_cfg
from .divergence import FunctionAnalysis, analyze_function
from .inline import called_functions, inline_calls
from .lanes import Literals
from .values import Terms


def analyze_module(module, options) -> list[FunctionAnalysis]:
    """Analyse every kernel, and every device function no kernel in this module calls
    (those are analysed in their callers' context, inlined)."""
    called = called_functions(module)
    results = []
    for fn in module.functions:
        if not fn.body or (not fn.is_kernel and fn.name in called):
            continue
        cfg = build_cfg(inline_calls(fn, module))
        results.append(analyze_function(cfg, module, options, Terms(), Literals()))
    return results
