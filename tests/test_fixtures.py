"""Every rule fixture (top level of fixtures/ptx and fixtures/cuda) produces exactly the findings
its inline `// expect:` comments name -- see tests/fixture_harness.py for the format."""
from __future__ import annotations

import pytest

from fixture_harness import FIXTURES, check_file, fixture_files
from warplint.catalog import catalog
from warplint.checks import registered

# Fixtures whose expectation is right per the specification but which the checker does not meet
# yet: name -> reason.  strict, so the entry must be removed once the checker is fixed.
KNOWN_CHECKER_GAPS: dict[str, str] = {}


def _cases():
    for path in fixture_files():
        rel = path.relative_to(FIXTURES).as_posix()
        marks = []
        if rel in KNOWN_CHECKER_GAPS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_CHECKER_GAPS[rel]))
        yield pytest.param(path, id=rel, marks=marks)


@pytest.mark.parametrize("path", list(_cases()))
def test_fixture(path):
    problems = check_file(path)
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


def test_fixture_coverage():
    """Every rule has >= 4 triggering and >= 4 clean fixtures, in both languages."""
    from fixture_harness import parse_spec
    trig: dict[str, set[str]] = {}
    clean: dict[str, set[str]] = {}
    for path in fixture_files():
        text = path.read_text(encoding="utf-8")
        rule = path.name[:5].upper()
        spec = parse_spec(text)
        if spec.expectations:
            for e in spec.expectations:
                trig.setdefault(e.rule, set()).add(path.name)
        elif path.stem.endswith("_clean"):
            clean.setdefault(rule, set()).add(path.name)
    for rid in registered():
        assert len(trig.get(rid, ())) >= 4, f"{rid}: fewer than 4 triggering fixtures"
        assert len(clean.get(rid, ())) >= 4, f"{rid}: fewer than 4 clean fixtures"
        for group in (trig.get(rid, set()), clean.get(rid, set())):
            assert any(g.endswith(".ptx") for g in group) and any(g.endswith(".cu") for g in group), \
                f"{rid}: fixtures should cover both PTX and CUDA-C"


def test_clean_fixtures_have_no_expectations():
    from fixture_harness import parse_spec
    for path in fixture_files():
        if path.stem.endswith("_clean"):
            assert not parse_spec(path.read_text(encoding="utf-8")).expectations, path.name


# WL001's automatic fix passes the mask the analysis proves (0xffffffff for a converged
# warp, the exact constant mask where one is known) and offers no fix where it is unknown.
# Masks are listed in the order of the file's `expect: WL001` lines (None: no fix).
WL001_FIXES = {
    "cuda/wl001_legacy_warp_reduce.cu": ["0xffffffff", "0xffffffff", "0xffffffff"],
    "cuda/wl001_legacy_shfl_half_warp.cu": ["0x0000ffff", "0xffffffff"],
    "cuda/wl001_legacy_votes.cu": ["0xffffffff", "0xffffffff", "0xffffffff"],
    "cuda/wl001_legacy_data_branch.cu": [None],
    "ptx/wl001_half_warp_fix_mask.ptx": ["0x0000ffff"],
    "ptx/wl001_shfl_legacy_sm60.ptx": ["0xffffffff", "0xffffffff"],
}


@pytest.mark.parametrize("rel", sorted(WL001_FIXES))
def test_wl001_fix_mask(rel):
    from fixture_harness import lint_runs, parse_spec
    path = FIXTURES / rel
    lines = sorted({e.line for e in parse_spec(path.read_text(encoding="utf-8")).expectations
                    if e.rule == "WL001"})
    want = dict(zip(lines, WL001_FIXES[rel], strict=True))
    for run in lint_runs(path):
        got = {f.loc.line: f for f in run.findings if f.rule_id == "WL001"}
        assert set(got) == set(want), f"[{run.target}] WL001 lines {sorted(got)}"
        for line, mask in want.items():
            fix = got[line].fix
            if mask is None:
                assert fix is None, f"[{run.target}] line {line}: unexpected fix {fix}"
                continue
            assert fix is not None and fix.edits, f"[{run.target}] line {line}: no fix"
            new = " ".join(e.text for e in fix.edits)
            assert mask in new.lower(), f"[{run.target}] line {line}: fix {new!r} lacks {mask}"


ERROR_RULES = {rid for rid, doc in catalog().items() if doc.severity == "error"}


@pytest.mark.parametrize("path", [pytest.param(p, id=p.relative_to(FIXTURES).as_posix())
                                  for p in fixture_files()])
def test_severity_follows_certainty(path):
    """Possible findings of error rules are warnings; definite ones are errors; warning rules
    never report errors (WL001 excepted: error where the form is removed)."""
    from fixture_harness import lint_runs
    for run in lint_runs(path):
        for f in run.findings:
            where = f"[{run.target}] line {f.loc.line} {f.rule_id}({f.certainty})"
            if f.rule_id in ERROR_RULES:
                want = "error" if f.certainty == "definite" else "warning"
                assert f.severity == want, f"{where}: severity {f.severity}, expected {want}"
            elif f.rule_id != "WL001":
                assert f.severity == "warning", f"{where}: severity {f.severity}"


# WL001 is an error where the non-sync form is removed (sm_70+ from PTX ISA 6.4; any sm_70+
# target for CUDA source) and a warning elsewhere.
WL001_SEVERITY = {
    "ptx/wl001_vote_legacy_sm70_isa64.ptx": {"sm_70": "error"},
    "ptx/wl001_vote_uni_sm70_isa63.ptx": {"sm_70": "warning"},
    "ptx/wl001_shfl_legacy_sm60.ptx": {"sm_60": "warning"},
    "ptx/wl001_vote_isa64_sm61.ptx": {"sm_61": "warning"},
    "cuda/wl001_legacy_warp_reduce.cu": {"sm_60": "warning", "sm_70": "error"},
    "cuda/wl001_legacy_votes.cu": {"sm_60": "warning", "sm_70": "error"},
}


@pytest.mark.parametrize("rel", sorted(WL001_SEVERITY))
def test_wl001_severity(rel):
    from fixture_harness import lint_runs
    want = WL001_SEVERITY[rel]
    runs = lint_runs(FIXTURES / rel)
    assert sorted(r.target for r in runs) == sorted(want)
    for run in runs:
        sev = {f.severity for f in run.findings if f.rule_id == "WL001"}
        assert sev == {want[run.target]}, f"[{run.target}] WL001 severities {sev}"


WL006_CUDA_AND_ASM = """\
__device__ float down24(float v) { return __shfl_down_sync(0xffffffff, v, 1, 24); }

__global__ void k(float *o)
{
    float v = o[threadIdx.x];
    v = down24(v);
    int r;
    asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x81f, 0xffffffff;" : "=r"(r) : "r"(__float_as_int(v)));
    o[threadIdx.x] = v + r;
}
"""


def test_wl006_judges_what_was_written(tmp_path):
    """A CUDA call is judged by its width argument (also once inlined into its caller), inline
    PTX in the same file by its c operand: the instruction's origin decides, not its text."""
    from fixture_harness import lint_runs
    path = tmp_path / "widths.cu"
    path.write_text(WL006_CUDA_AND_ASM, encoding="utf-8")
    for run in lint_runs(path):
        got = {(f.loc.line, f.message) for f in run.findings if f.rule_id == "WL006"}
        assert got == {(1, "shuffle width 24 is not a power of two between 1 and 32, so the result of the "
                           "shuffle is undefined"),
                       (8, "shfl c operand 0x81f: segment mask 0x08 is not ~(W-1) & 0x1f for any "
                           "power-of-two sub-warp width W, so the lanes the shuffle reads are undefined")}, \
            f"[{run.target}] {got}"
        assert not any(f.details for f in run.findings if f.rule_id == "WL006"), run.target


def test_harness_flags_unknown_rule_ids(tmp_path):
    path = tmp_path / "typo.ptx"
    path.write_text((FIXTURES / "ptx" / sorted(p.name for p in (FIXTURES / "ptx").glob("*_clean.ptx"))[0])
                    .read_text(encoding="utf-8") + "// also: WL099\n", encoding="utf-8")
    assert check_file(path)[0] == "names WL099, which is not in the rule registry (rules/)"
