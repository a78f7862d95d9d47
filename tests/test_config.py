"""Configuration files: discovery, keys, errors, precedence of the command line."""
from __future__ import annotations

import json

import pytest
from conftest import BUGGY_PTX, DIVERGENT_PTX

from warplint.config import Config, discover, find_config, load_config
from warplint.errors import UsageError


def test_discovery_walks_up(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\ntargets = ['sm_80']\n")
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config(str(sub)) == tmp_path / "pyproject.toml"
    assert discover(str(sub / "x.ptx")).targets == ["sm_80"]


def test_pyproject_without_table_is_passed_over(tmp_path):
    (tmp_path / "warplint.toml").write_text("fail-on = 'error'\n")
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_config(str(sub)) == tmp_path / "warplint.toml"


def test_warplint_toml_wins_in_same_dir(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.warplint]\nfail-on = 'note'\n")
    (tmp_path / "warplint.toml").write_text("fail-on = 'error'\n")
    assert discover(str(tmp_path)).fail_on == "error"


def test_no_config(tmp_path):
    c = discover(str(tmp_path))
    assert isinstance(c, Config) and c.path is None


def test_all_keys(tmp_path):
    (tmp_path / "warplint.toml").write_text("""
targets = ["sm_70", "SM_80"]
select = ["WL0"]
ignore = "WL008, WL009"
per-path-ignores = { "tests/**" = ["WL007"] }
include = ["src/**"]
exclude = ["third_party/"]
defines = { FAST = 1, NAME = "x", ON = true }
include-paths = ["inc"]
block-dim = [128, 2]
report-possible = false
possible-severity = "note"
fail-on = "error"
jobs = 3
""")
    c = load_config(tmp_path / "warplint.toml")
    assert c.targets == ["sm_70", "sm_80"]
    assert c.select == ["WL0"] and c.ignore == ["WL008", "WL009"]
    assert c.per_path_ignores == {"tests/**": ["WL007"]}
    assert c.include == ["src/**"] and c.exclude == ["third_party/"]
    assert c.defines == {"FAST": "1", "NAME": "x", "ON": "1"}
    assert c.include_paths == [str(tmp_path / "inc")]
    assert c.block_dim == (128, 2, 1)
    assert c.report_possible is False and c.possible_severity == "note"
    assert c.fail_on == "error" and c.jobs == 3
    assert c.root == str(tmp_path)


@pytest.mark.parametrize("body, needle", [
    ("colour = true", "unknown configuration key 'colour'"),
    ("targets = ['gfx90a']", "not a target name"),
    ("fail-on = 'fatal'", "'fail-on' must be one of"),
    ("jobs = 0", "'jobs' must be a positive integer"),
    ("block-dim = [0]", "'block-dim'"),
    ("select = [1]", "'select' must be a list of strings"),
    ("report-possible = 'yes'", "'report-possible' must be true or false"),
    ("defines = ['A']", "'defines' must be a table"),
    ("targets = [", "invalid TOML"),
])
def test_errors_name_key_and_file(tmp_path, body, needle):
    f = tmp_path / "warplint.toml"
    f.write_text(body + "\n")
    with pytest.raises(UsageError) as e:
        load_config(f)
    assert needle in str(e.value) and str(f) in str(e.value)


def test_cli_unknown_key_exit_2(project, run_cli):
    project.write("pyproject.toml", "[tool.warplint]\nnot-a-key = 1\n")
    project.write("a.ptx", BUGGY_PTX)
    status, out, err = run_cli("a.ptx")
    assert status == 2
    assert "unknown configuration key 'not-a-key'" in err and "pyproject.toml" in err


def test_cli_config_applies_and_flags_override(project, run_cli):
    project.write("warplint.toml", "fail-on = 'error'\nignore = ['WL002']\n")
    project.write("bad.ptx", BUGGY_PTX.replace(".target sm_70", ".target sm_60"))  # WL001 warning
    project.write("div.ptx", DIVERGENT_PTX)  # WL002 error (ignored by config)
    assert run_cli("bad.ptx")[0] == 0  # warning < fail-on error
    assert run_cli("--fail-on", "warning", "bad.ptx")[0] == 1
    assert run_cli("div.ptx")[0] == 0
    project.write("other.toml", "targets = ['sm_80']\n")
    status, out, _ = run_cli("--config", "other.toml", "--format", "json", "div.ptx")
    assert status == 1  # other config: WL002 not ignored, but sm_80: WL004 instead
    assert {f["rule_id"] for f in json.loads(out)["findings"]} >= {"WL004"}
    assert run_cli("--config", "missing.toml", "div.ptx")[0] == 2


def test_cli_targets_from_config(project, run_cli):
    project.write("warplint.toml", "targets = ['sm_80']\n")
    project.write("div.ptx", DIVERGENT_PTX)
    status, out, _ = run_cli("--format", "json", "div.ptx")
    assert {t for f in json.loads(out)["findings"] for t in f["targets"]} == {"sm_80"}
    status, out, _ = run_cli("--format", "json", "--target", "sm_60", "div.ptx")
    assert {t for f in json.loads(out)["findings"] for t in f["targets"]} == {"sm_60"}


def test_cli_per_path_ignores(project, run_cli):
    project.write("warplint.toml", "[per-path-ignores]\n\"legacy/**\" = [\"deprecated-non-sync\"]\n")
    project.write("legacy/old.ptx", BUGGY_PTX)
    project.write("new/old.ptx", BUGGY_PTX)
    status, out, _ = run_cli("--jobs", "1", ".")
    assert status == 1
    assert "new/old.ptx:11:5" in out and "legacy/" not in out


def test_cli_include_exclude(project, run_cli):
    project.write("warplint.toml", "include = ['src/**']\nexclude = ['src/gen/']\n")
    project.write("src/a.ptx", BUGGY_PTX)
    project.write("src/gen/b.ptx", BUGGY_PTX)
    project.write("other/c.ptx", BUGGY_PTX)
    status, out, err = run_cli("--jobs", "1", ".")
    assert "src/a.ptx" in out and "gen" not in out and "other" not in out
    assert "in 1 file" in err
    # an explicit file named by exclude is still excluded (pre-commit passes file names)
    status, out, err = run_cli("src/gen/b.ptx")
    assert status == 0 and "in 0 files" in err


def test_cli_report_possible_from_config(project, run_cli):
    from conftest import DATA_PTX
    project.write("warplint.toml", "report-possible = false\n")
    project.write("p.ptx", DATA_PTX)
    assert run_cli("p.ptx")[0] == 0
    assert run_cli("--possible", "p.ptx")[0] == 1


def test_tomllib_missing_is_a_usage_error(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    (tmp_path / "warplint.toml").write_text("jobs = 1\n")
    with pytest.raises(UsageError, match="tomli"):
        load_config(tmp_path / "warplint.toml")
