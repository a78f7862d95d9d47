"""Where findings in inlined library code are reported.

nvcc's `-lineinfo` PTX tells, for every instruction inlined from a helper, the chain of call
sites out to the function it was inlined into (`.loc ... inlined_at`, parsed into `Instr.frames`,
innermost first).  A warp primitive inside `cub::WarpReduce::Sum` is the user's problem at the
line that calls `Sum`: each instruction is reported at the innermost frame whose file is usable
(a regular file of the linted tree), and a finding there lists the library frames inside it as
code-flow steps.  An instruction with no usable frame is reported at its PTX line (that is all
the input says), or, when asked to keep them, at its innermost frame.
"""
from __future__ import annotations

import os
import re

from .findings import Step
from .ir import Instr

_FILE_SCOPE = re.compile(r"\b_INTERNAL_\w+::")  # nvcc's namespace for a file's static functions
_INFO_STRING = re.compile(r"^(\$L__info_string\d+):[ \t]*\n((?:[ \t]*\.b8[ \t][^\n]*\n)+)", re.M)


def place_in_tree(module, usable, keep_outside: bool = False) -> None:
    """Move each instruction mapped through `.loc` to its innermost frame in a usable file."""
    chosen_in: dict[int, tuple] = {}  # id(frames) -> (frames, choice): the parser shares chains
    for fn in module.functions:
        for item in fn.body:
            raw = getattr(item, "raw_loc", None)
            if raw is None or item.loc is None:
                continue
            frames = item.frames
            if not frames:  # not inlined: its own place or none
                chosen = chosen_place(item.loc, frames, usable, keep_outside)
            else:
                hit = chosen_in.get(id(frames))
                if hit is None or hit[0] is not frames:
                    hit = chosen_in[id(frames)] = frames, chosen_place(item.loc, frames, usable, keep_outside)
                chosen = hit[1]
            if chosen is not None:
                item.loc = chosen
            else:
                item.loc, item.raw_loc = raw, None


def chosen_place(loc, frames: tuple, usable, keep_outside: bool = False):
    """Where an instruction that `.loc` maps to `loc` (inlined: `frames`, innermost first) is
    reported: its innermost frame in a usable file; else, `keep_outside`, its innermost frame,
    or None: its PTX line (the parser places instructions this way as it builds them)."""
    if not frames:
        return loc if usable(loc.path) or keep_outside else None
    chosen = next((loc for loc, _ in frames if usable(loc.path)), None)
    return frames[0][0] if chosen is None and keep_outside else chosen


def add_library_frames(findings: list, module, analyses=()) -> None:
    """A finding reported at a call site into inlined library code gets the library frames as
    code-flow steps ("inside cub::WarpReduce::Sum, called here") and a line saying so: those of
    the first warp primitive or barrier inlined there (the analyses'), else of any instruction."""
    inside = _library_frames_by_call_site(module, analyses, {(f.loc.path, f.loc.line, f.loc.col) for f in findings})
    if not inside:
        return
    names = function_names(module.text, {label for frames in inside.values() for _, label in frames})
    for f in findings:
        frames = inside.get((f.loc.path, f.loc.line, f.loc.col))
        if frames is None or any(s.loc == frames[0][0] for s in f.flow):  # none, or added already
            continue
        steps = []
        for n, (loc, label) in enumerate(reversed(frames)):  # outermost library frame first
            name = names.get(label) or "library code"
            last = n == len(frames) - 1
            steps.append(Step(loc, f"inside {name}" + ("" if last else ", called here")))
        f.flow = list(f.flow) + steps
        innermost, label = frames[0]
        f.details.append(f"the warp primitive is in {os.path.basename(innermost.path)}:{innermost.line} "
                         f"(inside {names.get(label) or 'library code'}), reached from this call")


def _library_frames_by_call_site(module, analyses, reported: set[tuple]) -> dict[tuple, tuple]:
    """(path, line, col) of a reported call site (one of `reported`) -> the frames inside it,
    innermost first."""
    out: dict[tuple, tuple] = {}
    primitives = [x.instr for fa in analyses for x in list(fa.warp_ops) + list(fa.barriers)]
    for item in primitives + [item for fn in module.functions for item in fn.body]:
        if isinstance(item, Instr) and item.frames and item.loc is not None and (
                item.loc.path, item.loc.line, item.loc.col) in reported:
            for n, (loc, _) in enumerate(item.frames):
                if n and loc == item.loc:
                    out.setdefault((loc.path, loc.line, loc.col), item.frames[:n])
                    break
    return out


def function_names(ptx: str, labels=None) -> dict[str, str]:
    """`$L__info_stringN` label -> readable function name, from the PTX `.debug_str` section
    (only those of `labels` when given)."""
    from .frontends.ptx.demangle import demangle
    out = {}
    for m in _INFO_STRING.finditer(ptx):
        if labels is not None and m[1] not in labels:
            continue
        try:
            data = bytes(int(x) for line in m[2].splitlines() for x in line.strip()[3:].split(",") if x.strip())
        except ValueError:
            continue
        name = data.split(b"\0", 1)[0].decode("utf-8", "replace")
        readable = (demangle(name) or name) if name.startswith("_Z") else name
        out[m[1]] = _FILE_SCOPE.sub("", readable)
    return out


def usable_in_tree(tree: str):
    """The test of `place_in_tree` for files of the tree `tree` (noted for the result cache,
    unless called with `note=False`)."""
    from . import cache
    from .pipeline import within
    seen: dict[str, bool] = {}
    noted: set[str] = set()

    def usable(path: str, note: bool = True) -> bool:
        """`note=False`: the answer only (the parser notes its probes once it is sure of them)."""
        if note and path not in noted:
            noted.add(path)
            cache.note_probe(path)  # the result cache keys on what stands there
        if path not in seen:
            seen[path] = within(path, [tree]) and os.path.isfile(path)
        return seen[path]
    return usable
