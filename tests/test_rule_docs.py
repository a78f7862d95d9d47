"""The rule documents in rules/: complete, and their examples behave as documented.

Each bad example, written to a temporary .cu/.ptx file and linted for the targets named by its
`// targets:` line (else the harness defaults), must trigger its own rule on at least one target
and no other rule unless listed on a `// also: WLxxx` line; each good example must be clean on
every target.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixture_harness import lint_runs, parse_spec
from warplint.catalog import catalog
from warplint.checks import registered
from warplint.severity import SEVERITIES
from warplint.suppress import UNUSED_RULE

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"

SECTIONS = ["What it finds", "Why", "Targets", "Example", "How to fix", "Definite and possible",
            "Suppressing"]
RULE_IDS = sorted(registered())  # the rules with a check; WL900 comes from the suppressions


def test_every_check_has_a_document_and_every_document_a_check():
    assert set(RULE_IDS) == set(catalog()) - {UNUSED_RULE}


@pytest.mark.parametrize("rid", sorted(catalog()))
def test_document_name_matches_front_matter(rid):
    doc = catalog()[rid]
    assert re.fullmatch(r"WL\d{3}", doc.id) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc.slug)
    assert (RULES_DIR / doc.doc_name).is_file(), f"{rid}: no rules/{doc.doc_name} (id or slug differs)"
    assert doc.severity in SEVERITIES and doc.name and doc.summary and doc.targets


def test_slugs_are_unique():
    slugs = [doc.slug for doc in catalog().values()]
    assert len(slugs) == len(set(slugs))


@pytest.mark.parametrize("rid", RULE_IDS)
def test_document(rid):
    doc = catalog()[rid]
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
        doc = catalog()[rid]
        counts = {}
        for lang, kind, code in doc.examples:
            counts[(lang, kind)] = counts.get((lang, kind), 0) + 1
            n = counts[(lang, kind)]
            yield pytest.param(rid, lang, kind, code, id=f"{rid}-{lang}-{kind}{n if n > 1 else ''}")


@pytest.mark.parametrize("rid,lang,kind,code", list(_examples()))
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


@pytest.mark.parametrize("argv,absent", [
    (["--version"], ["warplint.catalog", "warplint.checks", "networkx"]),
    (["rules"], ["warplint.checks", "networkx"]),
    (["--explain", "WL003"], ["warplint.checks", "networkx"]),
])
def test_registry_import_stays_cheap(argv, absent):
    """`--version` does not read the registry; `rules` and `--explain` read only the registry."""
    import subprocess
    import sys
    code = ("import contextlib, io, sys; from warplint.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(sys.argv[1:])\n"
            "    except SystemExit: pass\n"
            f"print(sorted(m for m in {absent!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
