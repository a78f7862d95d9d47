"""Analyses over the warp IR: per-lane values, active lanes, memory accesses."""
from __future__ import annotations

from functools import cache

from ..cfg import build_cfg
from ..ir import Diagnostic
from .divergence import FunctionAnalysis, analyze_function
from .inline import (called_functions, called_outside, function_table, inline_calls, own_object_space,
                     varying_inlined, with_varying_arguments)
from .lanes import Literals
from .reuse import Analyses, ModuleFacts, key as inlined_key, key_as_written as written_key
from .values import Terms


def analyze_module(module, options, reuse: Analyses | None = None) -> list[FunctionAnalysis]:
    """Analyse every kernel, and every device function no kernel in this module calls
    (those are analysed in their callers' context, inlined; one that code outside the file's
    calls, and what it calls, are those callers' business: frontends/cuda/scope.py).  A called
    function that no caller could inline (calls nested past the inlining bound) is analysed on
    its own, with a note.
    A device function analysed on its own has unknown arguments: its analysis carries a second
    one, `any_arguments`, with number arguments that differ per lane (see `pipeline.check`).
    `reuse`: the analyses of the file's other preprocessed texts (reuse.py)."""
    called = called_functions(module)
    table = function_table(module)
    outside = called_outside(module, table)
    inlined: set[int] = set()
    results = []
    for fn in module.functions:
        if not fn.body or (not fn.is_kernel and (id(fn) in called or id(fn) in outside)):
            continue
        results.append(_analyse(fn, module, options, inlined, table, reuse))
    for fn in module.functions:
        if fn.body and not fn.is_kernel and id(fn) in called and id(fn) not in inlined and id(fn) not in outside:
            module.diagnostics.append(Diagnostic(fn.loc, "note", f"function '{fn.display_name or fn.name}' analysed "
                                                 "on its own: no caller could inline it (calls nested too deeply, "
                                                 "or too large)"))
            results.append(_analyse(fn, module, options, inlined, table, reuse))
    return results


def _analyse(fn, module, options, inlined: set[int], table, reuse: Analyses | None) -> FunctionAnalysis:
    written = written_key(fn, module, table, options, reuse) if reuse is not None else None
    kept, kept_inlined = reuse.take(written) if written is not None else (None, None)
    if kept is not None:  # (what inlining leaves, set here)
        inlined.update(id(table[name][k]) for name, k in kept_inlined)
    inlined_here: set[int] = set()
    inlined_fn = inline_calls(fn, module, inlined_here, table) if kept is None else None
    inlined |= inlined_here
    key = None
    if reuse is not None and kept is None:
        key = inlined_key(fn, inlined_fn, module, options, reuse, reuse.reachable(fn, table))
    if key is not None:  # (the functions it reaches differ, not those inlined into it)
        kept, _ = reuse.take(key)
    if kept is not None:  # (`any_arguments` comes with it; what `with_varying_arguments` leaves, set here)
        if not fn.is_kernel:
            own_object_space(fn, module)
        return kept
    fa = analyze_function(build_cfg(inlined_fn), module, options, Terms(), Literals())
    varying = fn if fn.is_kernel else with_varying_arguments(fn, module, table, inlined_fn)
    if varying is not fn:  # analysed when the checks ask for it (`FunctionAnalysis.any_arguments`)
        fa.analyse_any_arguments = _any_arguments(fn, varying, inlined_fn, module, options, table, reuse)
    if reuse is not None:
        names = [(name, k) for name, fs in table.items() for k, f in enumerate(fs) if id(f) in inlined_here]
        for k in (written, key):
            if k is not None:
                reuse.put(k, fa, names)
    return fa


def _any_arguments(fn, varying, inlined_fn, module, options, table, reuse: Analyses | None):
    """How to analyse `fn` with varying arguments (`with_varying_arguments`: `varying`), once.
    One that another text may take (`reuse`) holds of the module only what the analysis reads:
    its facts, and the functions that inlining `varying` can reach."""
    if reuse is not None:
        module, table = ModuleFacts(module), reuse.reachable_table(fn, varying, table)
    return cache(lambda: analyze_function(
        build_cfg(varying_inlined(fn, varying, inlined_fn, module, table)), module, options, Terms(), Literals()))
