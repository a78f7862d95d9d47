"""The PTX front end: PTX text -> warp IR (`warplint.ir.Module`).

`parse_ptx` reads a whole PTX module (nvcc output or hand-written); `parse_ptx_statements`
reads the statements of a function body (used for CUDA inline `asm` templates).  Both raise
`warplint.errors.InputError` -- and nothing else -- on input they cannot read.
"""
from __future__ import annotations

from ...ir import Instr, Label, Module


def parse_ptx(text: str, path: str, map_locations: bool = True, usable=None) -> Module:
    """Parse a PTX module.  With `map_locations`, instructions under a `.loc` directive get
    the source location from it (`Instr.loc`) and keep the PTX one in `Instr.raw_loc`; with
    `usable` too (`callsite.usable_in_tree`), that location is chosen among their frames as
    `callsite.place_in_tree` chooses it."""
    from .parser import parse_module
    return parse_module(text, path, map_locations, usable=usable)


def parse_ptx_statements(text: str, path: str, line: int = 1, col: int = 1) -> list[Instr | Label]:
    """Parse PTX statements as they appear inside a function body; line 1 column 1 of `text`
    is reported as (`line`, `col`)."""
    from .parser import parse_statements
    return parse_statements(text, path, line, col)


__all__ = ["parse_ptx", "parse_ptx_statements"]
