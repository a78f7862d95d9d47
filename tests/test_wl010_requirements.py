"""WL010's message carries each unmet requirement as data (kind, what is needed, what there is,
which forms need it); the wording is rendered from those fields only."""
from __future__ import annotations

from pathlib import Path

from warplint.messages import Requirement, UnavailableOnTarget
from warplint.options import Options
from warplint.pipeline import lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ptx"


def wl010_facts(name: str):
    path = FIXTURES / name
    result = lint_text(path.read_text(), str(path), Options())
    return [f.facts for f in result.findings if f.rule_id == "WL010"]


def test_redux_f32_on_sm90_names_the_form_and_the_architecture():
    facts, = wl010_facts("wl010_redux_f32_sm90.ptx")
    assert isinstance(facts, UnavailableOnTarget)
    assert facts.unmet == (Requirement("sm", "sm_100a", "sm_90", ".f32/.abs/.NaN"),)


def test_requirements_render_from_their_fields():
    msg = UnavailableOnTarget("redux.sync.add.s32", (Requirement("sm", "sm_80", "sm_75"),
                                                     Requirement("ptx", "7.0", "6.5"),
                                                     Requirement("ptx", "8.6", None, ".f32/.abs/.NaN")))
    assert str(msg) == ("'redux.sync.add.s32' is not available here: requires sm_80 or newer (target is sm_75); "
                        "requires PTX ISA 7.0 (file declares 6.5); the .f32/.abs/.NaN forms require PTX ISA 8.6")
