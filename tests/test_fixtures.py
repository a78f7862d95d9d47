"""Every rule fixture (top level of fixtures/ptx and fixtures/cuda) produces exactly the findings
its inline `// expect:` comments name -- see tests/fixture_harness.py for the format."""
from __future__ import annotations

import pytest

from fixture_harness import FIXTURES, check_file, fixture_files

# Fixtures whose expectation is right per the specification but which the checker does not meet
# yet: name -> reason.  strict, so the entry must be removed once the checker is fixed.
KNOWN_CHECKER_GAPS: dict[str, str] = {
}


def _cases():
    for path in fixture_files():
        rel = path.relative_to(FIXTURES).as_posix()
        marks = []
        if rel in KNOWN_CHECKER_GAPS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_CHECKER_GAPS[rel]))
        yield pytest.param(path, id=rel, marks=marks)


@pytest.mark.parametrize("path", _cases())
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
    for n in range(1, 11):
        rid = f"WL{n:03d}"
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
