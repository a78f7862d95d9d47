"""Divergence-analysis fixtures: every warp primitive / barrier annotated with the lanes
that can execute it together and its membermask.

Annotation (on the primitive's line in a hand-written .ptx, or on the source line in the
.cu that an nvcc-generated .ptx in fixtures/ptx/masks/ maps to through `.loc`):

    // mask: active=0x0000ffff member=0xffffffff

`0x...` is an exact mask (no data dependence); `~0x...` a symbolic set whose possible lanes
are those bits; `?` an unknown membermask.  Every annotated line must have at least one
primitive, and every primitive on it must match.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from warplint.analysis import analyze_module
from warplint.frontends.ptx import parse_ptx
from warplint.options import Options

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "ptx" / "masks"
ANNOT = re.compile(r"//\s*mask:\s*(.*)$")
FIELD = re.compile(r"(active|member)=(\S+)")


def _annotations(path: Path) -> dict[int, dict[str, str]]:
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = ANNOT.search(line)
        if m:
            out[n] = dict(FIELD.findall(m[1]))
    return out


def _matches(want: str, s, lits) -> bool:
    if want == "?":
        return s is None
    if s is None:
        return False
    exact = s.warp_exact(lits)
    if want.startswith("~"):
        return exact is None and s.possible_bits == int(want[1:], 16)
    return exact == int(want, 16)


def _show(s, lits) -> str:
    if s is None:
        return "?"
    exact = s.warp_exact(lits)
    return f"{exact:#010x}" if exact is not None else f"~{s.possible_bits:#010x} {s!r}"


def _cases():
    for ptx in sorted(HERE.glob("*.ptx")):
        yield pytest.param(ptx, id=ptx.name)


@pytest.mark.parametrize("ptx", list(_cases()))
def test_masks(ptx: Path):
    module = parse_ptx(ptx.read_text(), str(ptx))
    src = HERE / "src" / (ptx.stem + ".cu")
    annotated_file = src if src.exists() else ptx
    wanted = _annotations(annotated_file)
    assert wanted, f"{annotated_file} has no mask annotations"
    seen: dict[int, int] = {}
    errors = []
    for fa in analyze_module(module, Options()):
        items = [(op.instr, op.active, op.member, op.member_value is not None) for op in fa.warp_ops]
        items += [(b.instr, b.active, None, False) for b in fa.barriers]
        for ins, active, member, has_member in items:
            loc = ins.loc
            if os.path.basename(loc.path) != annotated_file.name:
                continue
            want = wanted.get(loc.line)
            if want is None:
                continue
            seen[loc.line] = seen.get(loc.line, 0) + 1
            if "active" in want and not _matches(want["active"], active, fa.lits):
                errors.append(f"line {loc.line} {ins.opcode}: active {_show(active, fa.lits)}, "
                              f"want {want['active']}")
            if "member" in want and has_member and not _matches(want["member"], member, fa.lits):
                errors.append(f"line {loc.line} {ins.opcode}: member {_show(member, fa.lits)}, "
                              f"want {want['member']}")
    for line in wanted:
        if line not in seen:
            errors.append(f"line {line}: annotated, but no warp primitive or barrier maps to it")
    assert not errors, "\n".join(errors)


def test_enough_kernels():
    kernels = 0
    for ptx in HERE.glob("*.ptx"):
        kernels += len([f for f in parse_ptx(ptx.read_text(), str(ptx)).functions if f.is_kernel])
    assert kernels >= 40
