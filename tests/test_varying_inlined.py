"""`any_arguments` builds its function from the inlined one (issue 17): its prologue before the
inlined body is what inlining the function with the prologue gives, on every device function of
the CUDA fixtures that has one."""
from __future__ import annotations

from pathlib import Path

from warplint.analysis.inline import (called_functions, function_table, inline_calls, varying_inlined,
                                      with_varying_arguments)
from warplint.analysis.reuse import _function_key
from warplint.options import Options
from warplint.pipeline import parse_variants

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_prologue_before_the_inlined_body_is_inlining_again():
    compared = 0
    for path in sorted(FIXTURES.rglob("*.cu")):
        try:
            variants = parse_variants(path.read_text(), str(path), Options())
        except Exception:
            continue
        for module, _ in variants:
            table = function_table(module)
            called = called_functions(module)
            for fn in module.functions:
                if not fn.body or fn.is_kernel:
                    continue
                inlined = inline_calls(fn, module, set(), table)
                varying = with_varying_arguments(fn, module, table, inlined)
                if varying is fn:
                    continue
                short = varying_inlined(fn, varying, inlined, module, table)
                long = inline_calls(varying, module, set(), table)
                assert _function_key(short) == _function_key(long), path  # (instructions compare by identity)
                compared += 1 + (id(fn) in called)
    assert compared > 50
