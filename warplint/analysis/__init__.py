"""Analyses over the warp IR: per-lane values, active lanes, memory accesses."""
from __future__ import annotations

from ..cfg import build_cfg
from ..ir import Diagnostic
from .divergence import FunctionAnalysis, analyze_function
from .inline import called_functions, function_table, inline_calls
from .lanes import Literals
from .values import Terms


def analyze_module(module, options) -> list[FunctionAnalysis]:
    """Analyse every kernel, and every device function no kernel in this module calls
    (those are analysed in their callers' context, inlined).  A called function that no caller
    could inline (calls nested past the inlining bound) is analysed on its own, with a note."""
    called = called_functions(module)
    table = function_table(module)
    inlined: set[str] = set()
    results = []
    for fn in module.functions:
        if not fn.body or (not fn.is_kernel and fn.name in called):
            continue
        cfg = build_cfg(inline_calls(fn, module, inlined, table))
        results.append(analyze_function(cfg, module, options, Terms(), Literals()))
    for fn in module.functions:
        if fn.body and not fn.is_kernel and fn.name in called and fn.name not in inlined:
            module.diagnostics.append(Diagnostic(fn.loc, "note", f"function '{fn.display_name or fn.name}' analysed "
                                                 "on its own: no caller could inline it (calls nested too deeply, "
                                                 "or too large)"))
            cfg = build_cfg(inline_calls(fn, module, inlined, table))
            results.append(analyze_function(cfg, module, options, Terms(), Literals()))
    return results
