"""The rule documents in rules/: complete, and their examples behave as documented.

Each bad example, written to a temporary .cu/.ptx file and linted for the targets named by its
`// targets:` line (else the harness defaults), must trigger its own rule on at least one target
and no other rule unless listed on a `// also: WLxxx` line; each good example must be clean on
every target.
"""
from __future__ import annotations

import pytest

from fixture_harness import lint_runs, parse_spec
from warplint.catalog import catalog

RULE_IDS = [f"WL{n:03d}" for n in range(1, 11)]
SECTIONS = ["What it finds", "Why", "Targets", "Example", "How to fix", "Definite and possible",
            "Suppressing"]
SLUGS = {"WL001": "deprecated-non-sync", "WL002": "pre-volta-mask-mismatch",
         "WL003": "lane-not-in-membermask", "WL004": "membermask-lanes-never-arrive",
         "WL005": "shfl-source-invalid", "WL006": "shfl-width-invalid",
         "WL007": "missing-syncwarp", "WL008": "activemask-misuse",
         "WL009": "barrier-divergence", "WL010": "unavailable-on-target"}
SEVERITY = {"WL001": "warning", "WL002": "error", "WL003": "error", "WL004": "error",
            "WL005": "warning", "WL006": "error", "WL007": "warning", "WL008": "warning",
            "WL009": "error", "WL010": "error"}


def test_catalogue_complete():
    assert set(RULE_IDS) <= set(catalog())


@pytest.mark.parametrize("rid", RULE_IDS)
def test_document(rid):
    doc = catalog()[rid]
    assert doc.slug == SLUGS[rid]
    assert doc.severity == SEVERITY[rid]
    from warplint.checks import DEFAULT_SEVERITY
    assert DEFAULT_SEVERITY[rid] == doc.severity, "checker default severity differs from the document"
    assert doc.name and doc.summary and doc.targets
    headings = [line[3:].strip() for line in doc.body.splitlines() if line.startswith("## ")]
    for section in SECTIONS:
        assert section in headings, f"{doc.doc_name}: no '## {section}' section"
    assert "§" in doc.body.split("## Why", 1)[1].split("\n## ", 1)[0], \
        f"{doc.doc_name}: the Why section cites no spec section"
    assert f"warplint: ignore[{rid}]" in doc.body
    kinds = {kind for _, kind, _ in doc.examples}
    assert {"bad", "good"} <= kinds, f"{doc.doc_name}: needs a bad and a good example"


def _examples():
    for rid in RULE_IDS:
        doc = catalog().get(rid)
        if doc is None:
            continue
        counts = {}
        for lang, kind, code in doc.examples:
            counts[(lang, kind)] = counts.get((lang, kind), 0) + 1
            n = counts[(lang, kind)]
            yield pytest.param(rid, lang, kind, code, id=f"{rid}-{lang}-{kind}{n if n > 1 else ''}")


@pytest.mark.parametrize("rid,lang,kind,code", _examples())
def test_example(rid, lang, kind, code, tmp_path):
    path = tmp_path / f"{rid.lower()}_{kind}.{'cu' if lang == 'cuda' else 'ptx'}"
    path.write_text(code, encoding="utf-8")
    spec = parse_spec(code)
    runs = lint_runs(path, spec)
    for run in runs:
        assert not run.errors, f"[{run.target}] example does not parse: {run.errors}"
    shown = {r.target: [f"line {f.loc.line}: {f.rule_id}({f.certainty}) {f.message}" for f in r.findings]
             for r in runs}
    if kind == "good":
        assert all(not r.findings for r in runs), f"good example is not clean: {shown}"
        return
    assert any(f.rule_id == rid for r in runs for f in r.findings), \
        f"bad example does not trigger {rid}: {shown}"
    others = {f.rule_id for r in runs for f in r.findings} - {rid} - spec.also
    assert not others, f"bad example also triggers {sorted(others)} (declare with // also:): {shown}"
