"""Coverage: how much of a file's warp code was analysed, and a note for every function with
warp primitives that was not (no silent losses, issue 13).

A CUDA-C function counts as analysed when every warp primitive and barrier it calls (as found
in the source, `frontends/cuda/warpcode.py`) is an instruction of the analyses the checks ran
on; a PTX file is analysed as a whole or fails with an error.  The run adds the files up into
one line: "warp code: 41 of 45 functions analysed; 4 not analysed (notes above)".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .locations import Diagnostic

_MACRO_LIKE = re.compile(r"[A-Z][A-Z0-9_]+")
_DEVICE_MARKS = ("__device__", "__global__")


@dataclass
class Coverage:
    analysed: int = 0  # functions with warp primitives fully analysed
    total: int = 0  # functions with warp primitives
    failed_files: int = 0  # files with an error (their warp code is not counted above)

    @property
    def not_analysed(self) -> int:
        return self.total - self.analysed

    def add(self, other: "Coverage") -> None:
        self.analysed += other.analysed
        self.total += other.total
        self.failed_files += other.failed_files

    def line(self) -> str:
        """The run's coverage line."""
        s = f"warp code: {self.analysed} of {self.total} {'function' if self.total == 1 else 'functions'} analysed"
        if not self.total:
            s = "warp code: no function with warp primitives found"
        if self.not_analysed:
            s += f"; {self.not_analysed} not analysed (notes above)"
        if self.failed_files:
            s += f"; {self.failed_files} {'file' if self.failed_files == 1 else 'files'} not analysed (errors above)"
        return s

    def as_dict(self) -> dict:
        return {"functions": self.total, "analysed": self.analysed, "not_analysed": self.not_analysed,
                "failed_files": self.failed_files, "text": self.line()}


def shown_lines(analyses) -> set[tuple[str, int]]:
    """(path, line) of every warp primitive and barrier in the analyses."""
    out = set()
    for fa in analyses:
        for item in list(fa.warp_ops) + list(fa.barriers):
            for loc in (item.instr.loc, item.instr.raw_loc):
                if loc is not None:
                    out.update((loc.path, ln) for ln in range(loc.line, (loc.end_line or loc.line) + 1))
    return out


def file_coverage(variants, diagnostics: list[Diagnostic]) -> tuple[Coverage, list[Diagnostic]]:
    """The coverage of one file, from its [(module, analyses)] (one per preprocessed text, see
    pipeline.parse_variants), and notes for the functions not analysed that no diagnostic names
    or lies in.  A function counts once, and as analysed when every primitive it calls is in
    the analyses of some text."""
    if variants[0][0].language == "ptx":
        n = sum(1 for fa in variants[0][1] if fa.warp_ops or fa.barriers)
        return Coverage(n, n), []
    shown = set().union(*(shown_lines(a) for _, a in variants))
    listed = {name for _, a in variants for fa in a for name in _names_of(fa.function)}
    code = set().union(*(_code_lines(a) for _, a in variants))
    functions = {}
    for module, _ in variants:
        for wf in module.warp_code:
            functions.setdefault(wf.loc, wf).primitives.extend(
                p for p in wf.primitives if p not in functions[wf.loc].primitives)
    cov = Coverage()
    notes = []
    for wf in functions.values():
        cov.total += 1
        runs = wf.name in listed or any((wf.loc.path, ln) in code for ln in range(wf.loc.line, wf.end_line + 1))
        missing = [p for p in wf.primitives if not (p.creates_group and runs) and
                   not any((wf.loc.path, ln) in shown for ln in range(p.line, p.end_line + 1))]
        if not missing:
            cov.analysed += 1
        elif not any(_names(d, wf) for d in diagnostics + notes):
            notes.append(Diagnostic(wf.loc, "note", _unexplained(wf, missing[0])))
    return cov, notes


def _code_lines(analyses) -> set[tuple[str, int]]:
    """(path, line) of every instruction analysed (inlined callees included)."""
    return {(item.loc.path, item.loc.line) for fa in analyses for item in fa.function.body
            if getattr(item, "loc", None) is not None}


def _names_of(fn) -> set[str]:
    """The names an analysed function goes by: its name, its source name, the last part of a
    qualified one (`ns::f`, or `ns__f` as the C++ layer flattens it)."""
    names = {fn.name, fn.display_name}
    for n in list(names):
        names.add(n.split("::")[-1].split("<")[0])
        names.add(n.split("__")[-1] if n and not n.startswith("__") else n)
    return names


def _names(d: Diagnostic, wf) -> bool:
    """Does the diagnostic lie in the function or name it?"""
    return (d.loc.path == wf.loc.path and wf.start_line <= d.loc.line <= wf.end_line) or f"'{wf.name}'" in d.message


def _unexplained(wf, first) -> str:
    if first.creates_group and any(t.text in _DEVICE_MARKS for t in wf.specifiers):
        return (f"function '{wf.name}' not analysed (code warplint does not read as written); lint it with "
                "--via-nvcc, or define the macros it relies on (configuration `macros`, -D)")
    what = ("inline PTX" if first.name == "asm" else
            f"cooperative-groups call '{first.name}()' (on a group warplint does not model here)"
            if first.name.startswith(".") else f"'{first.name}'")
    undefined = [t.text for t in wf.specifiers if t.kind == "id" and _MACRO_LIKE.fullmatch(t.text)]
    if undefined:
        m = undefined[0]
        return (f"function '{wf.name}' not analysed: '{m}' in its declaration is defined nowhere warplint read; "
                f"say what it is with configuration `macros = {{{m} = \"__global__\"}}` (or __device__, or \"\" "
                f"for nothing) or -D{m}=..., or lint with --via-nvcc")
    if not any(t.text in _DEVICE_MARKS for t in wf.specifiers):
        return (f"function '{wf.name}' not analysed: its {what} at line {first.line} is not in the analysis: the "
                "function is host code to warplint (declared neither __device__ nor __global__, nor through a "
                "macro it could read); if it runs on the GPU, define the macro that marks it (configuration "
                "`macros`, -D), or lint with --via-nvcc")
    return (f"function '{wf.name}' not analysed: its {what} at line {first.line} is not in the analysis "
            "(code warplint does not read as written); lint it with --via-nvcc, or define the macros it "
            "relies on (configuration `macros`, -D)")
