"""Inline-expectation harness for the rule fixtures (`fixtures/ptx/*.ptx`, `fixtures/cuda/*.cu`)
and for the examples in the rule documents.

Annotations are ordinary `//` comments (valid in both PTX and CUDA-C):

``// expect: WL003``
    At the end of a line: a finding of WL003 must be reported on *this* line.  Several on one
    line: ``// expect: WL003, WL004``; the same id twice means two findings.
``// expect: WL004(possible)`` / ``WL004(definite)``
    Also check the finding's certainty; without it either certainty is accepted.
``// expect: WL003 "lanes 0-15 execute"``
    Also check the message: one finding at that (line, rule) must contain the quoted text
    (like clang's ``-verify``; the text may hold neither ``"``, ``;`` nor ``//``).
``// expect[sm_60]: WL002``
    Only for the run with target sm_60 (several: ``expect[sm_60,sm_61]``).  An expectation
    without ``[...]`` must hold for every target the file is run for.  Several clauses on one
    line are separated by ``;``: ``// expect[sm_60]: WL002; expect[sm_70]: WL004(possible)``.
``// targets: sm_60, sm_70``
    Anywhere in the file (conventionally a header line): run the file once per listed target
    with ``Options(targets=[t])``.  Without it:
      - ``.ptx``: one run with default options, i.e. the module's own ``.target``;
      - ``.cu``: one run per target of ``warplint.options.DEFAULT_TARGETS`` (sm_60 and sm_70),
        each separately, so a file without target-specific expectations is checked against
        both execution models.
``// block_dim: 32, 8``
    Lint with ``Options(block_dim=(32, 8, 1))`` (the launch shape the kernel assumes); without
    it the analysis assumes the default: a 1-D block whose x size is a multiple of 32.
``// clean: <why>``
    Documentation only: the file is expected to produce no findings (it has no ``expect``), and
    the comment says why a naive tool would flag it.
``// also: WL001``
    Rule documents only: findings of these rules are allowed in a bad example besides its own.

Matching, per target run: the multiset of (line, rule id) of the reported, unsuppressed findings
must equal the multiset of applicable expectations -- a missing or an extra finding fails.  Where
a certainty is given, one finding at that (line, rule) must have it.  A file whose parse yields
error diagnostics fails with the diagnostic text.

Lines: PTX files are linted with ``map_ptx_locations=False`` so findings are always reported on
the PTX line itself (fixtures should not carry ``.loc`` anyway); CUDA findings are on the source
line of the call / statement.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from warplint.catalog import catalog
from warplint.pipeline import lint_file
from warplint.options import DEFAULT_TARGETS, Options

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

_EXPECT_START = re.compile(r"//\s*expect\b")
_EXPECT = re.compile(r"expect(?:\[([^\]]*)\])?\s*:\s*([^;]*?)\s*(?=;|//|$)")
_ITEM = re.compile(r'^(WL\d{3})(?:\((possible|definite)\))?(?:\s*"([^"]*)")?$')
_ITEMS = re.compile(r'[^,\s"]+(?:\s*"[^"]*")?|"[^"]*"?')  # items, a quoted message kept with its rule
_TARGETS = re.compile(r"//\s*targets\s*:\s*(.*?)\s*$", re.M)
_ALSO = re.compile(r"//\s*also\s*:\s*(.*?)\s*$", re.M)
_BLOCK_DIM = re.compile(r"//\s*block_dim\s*:\s*(.*?)\s*$", re.M)


@dataclass(frozen=True)
class Expectation:
    line: int
    rule: str
    certainty: str | None = None  # "possible" | "definite" | None (either)
    targets: tuple[str, ...] = ()  # () = every target run
    text: str | None = None  # a part of the message that one finding must contain


@dataclass
class Spec:
    targets: list[str] | None  # None: the default for the language (see module docstring)
    expectations: list[Expectation] = field(default_factory=list)
    also: set[str] = field(default_factory=set)
    block_dim: tuple[int, int, int] | None = None


def _split(text: str) -> list[str]:
    return [t.strip() for t in re.split(r"[,\s]+", text) if t.strip()]


def parse_spec(text: str) -> Spec:
    m = _TARGETS.search(text)
    spec = Spec(_split(m[1]) if m else None)
    bm = _BLOCK_DIM.search(text)
    if bm:
        dims = [int(x) for x in _split(bm[1])]
        spec.block_dim = tuple(dims + [1] * (3 - len(dims)))  # type: ignore[assignment]
    for am in _ALSO.finditer(text):
        spec.also.update(_split(am[1]))
    for n, line in enumerate(text.splitlines(), 1):
        start = _EXPECT_START.search(line)
        if not start:
            continue
        clauses = list(_EXPECT.finditer(line, start.start()))
        if not clauses:
            raise ValueError(f"line {n}: cannot read expectation {line[start.start():]!r}")
        for em in clauses:
            tg = tuple(_split(em[1])) if em[1] else ()
            items = _ITEMS.findall(em[2])
            if not items:
                raise ValueError(f"line {n}: empty expectation")
            for item in items:
                im = _ITEM.match(item)
                if not im:
                    raise ValueError(f"line {n}: cannot read expectation {item!r}")
                spec.expectations.append(Expectation(n, im[1], im[2], tg, im[3]))
    return spec


def target_runs(path: str | Path, spec: Spec) -> list[str | None]:
    """The targets the file is linted for, one run each (None: the PTX module's own .target)."""
    if spec.targets:
        return list(spec.targets)
    if str(path).endswith(".cu"):
        return list(DEFAULT_TARGETS)
    return [None]


def options_for(path: str | Path, target: str | None, spec: Spec | None = None) -> Options:
    opts = Options(targets=[target] if target else None)
    if spec is not None and spec.block_dim:
        opts.block_dim = spec.block_dim
    if str(path).endswith(".ptx"):
        opts.map_ptx_locations = False
    return opts


@dataclass
class Run:
    target: str  # the target name of this run
    findings: list  # unsuppressed findings
    errors: list[str]  # error diagnostics (parse failures)


def lint_runs(path: str | Path, spec: Spec | None = None) -> list[Run]:
    path = str(path)
    if spec is None:
        spec = parse_spec(Path(path).read_text(encoding="utf-8"))
    runs = []
    for t in target_runs(path, spec):
        res = lint_file(path, options_for(path, t, spec))
        name = t
        if name is None:
            name = (res.module.target if res.module is not None and res.module.target else "default")
        errors = [f"{d.loc}: {d.message}" for d in res.diagnostics if d.severity == "error"]
        findings = [f for f in res.findings if not getattr(f, "suppressed", False)]
        runs.append(Run(name, findings, errors))
    return runs


def _fmt(f) -> str:
    return f"line {f.loc.line}: {f.rule_id}({f.certainty}) {f.message}"


def compare(spec: Spec, run: Run) -> list[str]:
    """Problems of one target run against the expectations ([] = pass)."""
    if run.errors:
        return [f"[{run.target}] input error: {e}" for e in run.errors]
    want = [e for e in spec.expectations if not e.targets or run.target in e.targets]
    got = run.findings
    problems = []
    wc = Counter((e.line, e.rule) for e in want)
    gc = Counter((f.loc.line, f.rule_id) for f in got)
    for key in sorted(set(wc) | set(gc)):
        if wc[key] > gc[key]:
            problems.append(f"[{run.target}] missing {wc[key] - gc[key]}x {key[1]} on line {key[0]}")
        elif gc[key] > wc[key]:
            extra = [_fmt(f) for f in got if (f.loc.line, f.rule_id) == key]
            problems.append(f"[{run.target}] unexpected {gc[key] - wc[key]}x {key[1]} on line {key[0]}: "
                            + " | ".join(extra))
    for key in wc:
        certs = Counter(e.certainty for e in want if (e.line, e.rule) == key and e.certainty)
        have = Counter(f.certainty for f in got if (f.loc.line, f.rule_id) == key)
        for cert, n in certs.items():
            if have[cert] < n and gc[key] >= wc[key]:
                problems.append(f"[{run.target}] {key[1]} on line {key[0]} should be {cert}, got "
                                + ", ".join(sorted(have.elements())))
    for e in want:
        if e.text is not None and not any(e.text in f.message for f in got if (f.loc.line, f.rule_id) == (e.line, e.rule)):
            problems.append(f"[{run.target}] no {e.rule} message on line {e.line} contains {e.text!r}")
    return problems


def check_file(path: str | Path) -> list[str]:
    """Lint a fixture for every target run and compare with its inline expectations."""
    spec = parse_spec(Path(path).read_text(encoding="utf-8"))
    unknown = ({e.rule for e in spec.expectations} | spec.also) - set(catalog())
    problems = [f"names {rid}, which is not in the rule registry (rules/)" for rid in sorted(unknown)]
    for run in lint_runs(path, spec):
        problems += compare(spec, run)
    return problems


def fixture_files() -> list[Path]:
    return sorted((FIXTURES / "ptx").glob("*.ptx")) + sorted((FIXTURES / "cuda").glob("*.cu"))
