"""The pipeline in one place (issue 11): stages, layering, and what a run loads."""
import ast
import subprocess
import sys
from pathlib import Path

from conftest import BUGGY_PTX, DIVERGENT_PTX, cli_env

import warplint.analysis
from warplint import pipeline
from warplint.options import Options

PACKAGE = Path(pipeline.__file__).parent


def test_show_masks_analyses_each_file_once(project, run_cli, monkeypatch):
    project.write("div.ptx", DIVERGENT_PTX)
    calls = []
    real = warplint.analysis.analyze_module

    def counting(module, options, reuse=None):
        calls.append(module.path)
        return real(module, options, reuse)
    monkeypatch.setattr(warplint.analysis, "analyze_module", counting)
    status, out, _ = run_cli("--show-masks", "div.ptx")
    assert "active: 0x0000ffff (lanes 0-15)" in out and status == 1
    assert calls == ["div.ptx"]


def test_masks_come_from_the_analyses_before_the_checks_add_notes(tmp_path):
    src = tmp_path / "div.ptx"
    src.write_text(DIVERGENT_PTX)
    r = pipeline.lint_file(str(src), Options(show_masks=True))
    assert r.masks.startswith("kernel low_half_vote:") and r.findings
    assert pipeline.lint_file(str(src), Options()).masks is None


def test_cache_hit_loads_no_front_end_or_analysis(project, tmp_path):
    project.write("a.ptx", BUGGY_PTX)
    env = dict(cli_env(), WARPLINT_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import sys; from warplint.cli import main; rc = main(['a.ptx']); "
            "print(rc, sorted(m for m in ('networkx', 'pycparser', 'lark', 'warplint.analysis', "
            "'warplint.frontends.ptx', 'warplint.checks', 'warplint.messages', 'warplint.ir', "
            "'warplint.targets') if m in sys.modules))")
    subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)  # fills the cache
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "1 []", out.stdout + out.stderr

def _imports(path: Path) -> set[str]:
    """The warplint modules a file imports (absolute names)."""
    package = "warplint." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    if path.name == "__init__.py":
        package += ".__init__"
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[:-node.level]
            mod = ".".join(base + ([node.module] if node.module else []))
            out.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("warplint"):
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_reporters_read_neither_checks_nor_configuration_nor_pipeline():
    for path in (PACKAGE / "report").glob("*.py"):
        bad = [m for m in _imports(path) if m.startswith(("warplint.checks", "warplint.config", "warplint.pipeline"))]
        assert not bad, (path.name, bad)


def test_post_steps_use_no_reporter_internals():
    for name in ("suppress.py", "baseline.py", "fixer.py", "fingerprint.py", "sources.py"):
        used = [m for m in _imports(PACKAGE / name) if m.startswith("warplint.report")]
        assert all(m == "warplint.report.display_path" for m in used), (name, used)
