"""Work bounds (issue 10, item 5): inputs that once took minutes or gigabytes finish quickly,
keep the findings a small input of the same shape has, and say so in a note when a bound was
hit.  The generators are the families of bench/complexity.py (which runs them at growing sizes)."""
from __future__ import annotations

import importlib.util
import os
import re
import time

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("complexity", os.path.join(ROOT, "bench", "complexity.py"))
complexity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(complexity)

CPU_LIMIT_S = 5.0  # CPU seconds of this process (the machine may be shared)


def lint(run_cli, tmp_path, files: dict) -> tuple[int, int, str, float]:
    """(exit status, findings, report and notes, CPU seconds) of the CLI on the files."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    t0 = time.process_time()
    status, out, err = run_cli("--no-cache", "--jobs", "1", tmp_path / next(iter(files)))
    cpu = time.process_time() - t0
    m = re.search(r"^(\d+) findings? \(", err, re.M)
    assert m, err[-2000:]
    return status, int(m.group(1)), out + err, cpu


# family, a small size (exact), a size that used to take seconds to minutes (before -> now),
# and whether the large size hits a bound
CASES = [
    ("nested_loops", 2, 13, True),  # depth 13: > 60 s, 2 findings silently lost -> 0.4 s
    ("gotos", 5, 30, True),  # > 60 s -> 0.5 s
    ("breaks", 10, 100, True),  # > 60 s (n^3 sibling races) -> 0.5 s
    ("switch", 100, 1500, True),  # 3,000 cases: > 30 s, 463 MiB -> 1.4 s, 63 MiB
    ("ptx_branches", 10, 100, True),  # 30 branches: > 60 s -> 0.4 s
    ("ptx_back_edges", 10, 150, True),  # 100 back edges: 13 s -> 0.5 s
    ("live_registers", 100, 1000, False),  # 3,000 registers: 2.6 GiB -> 62 MiB
    ("macros", 5, 13, True),  # 15 levels: 24 s, 325 MiB, the findings lost -> 1.1 s
    ("includes", 5, 15, True),  # 2^15 includes: 14 s -> 0.4 s
]


@pytest.mark.parametrize("family,small,large,bounded", CASES, ids=[c[0] for c in CASES])
def test_family_is_bounded_and_keeps_findings(run_cli, tmp_path, family, small, large, bounded):
    make = complexity.FAMILIES[family][0]
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    _, expected, _, _ = lint(run_cli, tmp_path / "small", make(small))
    status, found, err, cpu = lint(run_cli, tmp_path / "large", make(large))
    assert status == 1, err[-2000:]
    assert found == expected, err[-4000:]
    assert cpu < CPU_LIMIT_S
    if bounded:
        assert complexity.BOUND_NOTE.search(err), err[-2000:]


def test_votes_in_a_loop_with_many_back_edges(run_cli, tmp_path):
    """A vote before each of n back edges: one finding per vote (30 votes used to give 12:
    the truth tables gave up silently) and no n^3 arrival walks (300: 29 s -> 1 s)."""
    status, found, err, cpu = lint(run_cli, tmp_path, complexity.loop_votes(100))
    assert (status, found) == (1, 101)
    assert cpu < CPU_LIMIT_S
    assert complexity.BOUND_NOTE.search(err)


def test_many_kernels_in_one_ptx_file_is_linear(run_cli, tmp_path):
    """n kernels: the function table is built once per module, not once per function."""
    status, found, err, cpu = lint(run_cli, tmp_path, complexity.ptx_kernels(1000))
    assert (status, found) == (1, 1000)
    assert cpu < CPU_LIMIT_S


def test_too_many_conditions_still_reports_with_a_note(run_cli, tmp_path):
    """A shuffle under more conditions than the truth tables take is still compared (roughly),
    not dropped: the full-mask shuffle in 13 nested lane-strided loops is reported."""
    _, _, err, _ = lint(run_cli, tmp_path, complexity.nested_loops(13))
    assert re.search(r"all 32 lanes are in the membermask 0xffffffff of '__shfl_xor_sync' but may not be active", err)
    assert "too many conditions" in err


def test_widened_sets_are_sound():
    """A set widened past the caps holds every lane the exact one may hold, none for sure."""
    from warplint.analysis.lanes import FULL_SET, LaneSet, Literals, compare, definite_bits

    lits = Literals()
    ids = [lits.get(i, "lane", "lane", f"c{i}") for i in range(200)]
    u = LaneSet.union([LaneSet.lit(ids[i], 0xFFFF << (i % 17)) for i in range(1, 60)])
    big = u
    for i in range(60, 80):
        big = big.and_(LaneSet.lit(ids[i]).or_(LaneSet.lit(ids[i + 100])))
    assert big.possible_bits == u.possible_bits
    assert definite_bits(big, lits) == 0
    cmp = compare(big, FULL_SET, lits)
    assert cmp.only_member_possible == 0xFFFFFFFF and cmp.only_member_definite == 0
    assert cmp.only_active_possible == 0
