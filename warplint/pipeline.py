"""The pipeline in one place, as named stages; nothing here prints.

One file (`lint_file`, in a worker process when a run has several files):
    read_source -> parse -> analyse -> [format masks] -> check -> analysis notes   (+ result cache)
A run (`collect_files`, `lint_run`, then `apply_fixes` for --fix/--diff):
    lint_paths -> drop_per_path_ignores -> suppress -> fingerprint -> baseline -> Report
`cli.py` parses the arguments, calls these stages and prints what they return.
Imports stay lazy: the front ends, analyses and checks (networkx, pycparser, tree-sitter) load only
when a file is analysed, never for `--version`, `rules`, `--explain` or a cache hit.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import collector
from .coverage import Coverage, file_coverage
from .errors import InputError
from .findings import Finding, severity_rank
from .locations import Diagnostic, Loc
from .options import DEFAULT_TARGETS, Options

if TYPE_CHECKING:  # imported where used: a cache hit builds no IR and judges no target
    from .ir import Module
    from .targets import Target

MAX_BYTES = 64 * 1024 * 1024
PSEUDO_FILESYSTEMS = ("/proc", "/sys", "/dev")


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str = ""
    module: Module | None = None  # in the analysing process only (costly to pickle)
    masks: str | None = None  # `--show-masks` text, from the analyses the checks ran on
    analyses: list | None = None  # the FunctionAnalyses (in the analysing process only; the server's hover)
    coverage: "Coverage | None" = None  # warp code analysed / found (None: not measured, e.g. --via-nvcc)

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


# -- the input tree ------------------------------------------------------------------------------

def linted_tree(path: str) -> str:
    """The directory tree a linted file may draw on (local includes, PTX `.loc` sources): the
    repository holding it (nearest `.git` above it), else the file's own directory.  `-I`
    directories are added by the CUDA front end; nothing else is read or pointed at."""
    from .walk import repo_root
    return repo_root(os.path.dirname(os.path.abspath(path))) or os.path.dirname(os.path.abspath(path))


def within(path: str, roots) -> bool:
    """Does `path`, links resolved, lie in one of the directories `roots` and outside the pseudo
    file systems (whose "regular" files are not source)?"""
    real = os.path.realpath(path)

    def inside(root: str) -> bool:
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
    return not any(inside(p) for p in PSEUDO_FILESYSTEMS) and any(inside(os.path.realpath(r)) for r in roots)


# -- one file ------------------------------------------------------------------------------------

def read_source(path: str) -> tuple[str, list[Diagnostic]]:
    """Read a file as text, with notes: a file that is not UTF-8 is read as Latin-1 (nvcc takes
    such comments) with a note; NULs become an InputError with a location."""
    from .inputs import InputFileError, read_regular
    try:
        data = read_regular(path, MAX_BYTES)  # a FIFO or device is refused, never read
    except InputFileError as e:
        raise InputError(Loc(path, 1, 1), str(e)) from None
    return decode_source(data, path)


def decode_source(data: bytes, path: str) -> tuple[str, list[Diagnostic]]:
    """`data` as text (see `read_source`)."""
    notes = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        text = data.decode("latin-1")  # one character per byte: lines and columns stay right
        notes.append(Diagnostic(Loc(path, line, col), "note", "file is not valid UTF-8 text: read as Latin-1 "
                                "(its non-ASCII characters may show wrongly in messages)"))
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise InputError(Loc(path, line, col), "file contains a NUL byte (binary file?)")
    return text, notes


def parse_text(text: str, path: str, options: Options, preprocessed=None) -> Module:
    """Front end: source text -> warp IR module (`languages.language` picks the front end; a
    header with no device code is an empty module: no warp code).  `preprocessed`: a CUDA
    file's preprocessing for this target, done already (`_cuda_variants`)."""
    from .ir import Module
    from .languages import language
    lang = language(path, text, options.extensions)
    if lang is None:
        return Module(path, "cuda", text=text)
    if lang == "cuda":
        from .frontends.cuda import parse_cuda
        return parse_cuda(text, path, options, preprocessed)
    from .frontends.ptx import parse_ptx
    return parse_ptx(text, path, map_locations=options.map_ptx_locations,
                     usable=_usable_sources(path) if options.map_ptx_locations else None)


def _usable_sources(path: str):
    """A `.loc` naming a source file that is not a regular file in the linted tree (PTX built
    elsewhere, or pointing outside the tree) must not send reports, suppressions or `--fix`
    there: code inlined from outside goes to its call site in the tree, the rest is reported at
    its PTX line (callsite.py; the parser places each instruction so)."""
    from .callsite import usable_in_tree
    return usable_in_tree(linted_tree(path))


def resolve_targets(module: Module, options: Options) -> list[Target]:
    from .targets import Target
    if options.targets:
        names = options.targets
    elif module.target:
        names = [module.target]
    else:
        names = DEFAULT_TARGETS
    return [Target.parse(n) for n in names]


def analyse(module: Module, options: Options, reuse=None) -> list:
    """CFGs and analyses of every function the checks look at ([FunctionAnalysis]).  `reuse`:
    an `analysis.reuse.Analyses` shared by the modules of one file (its preprocessed texts)."""
    from .analysis import analyze_module
    return analyze_module(module, options, reuse)


def check(module: Module, analyses: list, targets: list[Target], options: Options) -> list[Finding]:
    """Run the selected checks once per analysed function and target; a finding that holds for
    several targets is one finding listing them, and one found again in another inlined copy
    of a device function becomes a detail of the first."""
    from .checks import Context, registered, selected
    merged: dict[tuple, Finding] = {}
    by_place: dict[tuple, Finding] = {}
    checks = [(rule_id, c) for rule_id, c in registered().items() if selected(rule_id, options)]

    def run_checks(fa, target: Target, rules=None) -> list[Finding]:
        out = []
        for rule_id, rule_check in checks:
            if rules is None or rule_id in rules:
                ctx = Context(module, fa, target, options, rule_id)
                rule_check(ctx)
                out.extend(ctx.findings)
        return out

    for target in targets:
        for fa in analyses:
            findings = run_checks(fa, target)
            if findings and fa.has_any_arguments:  # (analysed with per-lane arguments only now)
                rules = {f.rule_id for f in findings}  # (only their findings are matched)
                findings = _for_any_arguments(findings, run_checks(fa.any_arguments, target, rules))
            for f in findings:
                _merge(f, target, merged, by_place)
    return sorted(one_per_site(list(merged.values())), key=Finding.sort_key)


def _for_any_arguments(uniform: list[Finding], varying: list[Finding]) -> list[Finding]:
    """A device function analysed on its own has unknown arguments: keep the findings that hold
    both with arguments the same in every lane and with arguments that differ per lane, each
    as the weaker of the two (possible over definite).  Findings are matched by line: one
    statement's finding may name another of its instructions in the other analysis."""
    weaker = {}
    for f in varying:
        for key in ((f.rule_id, f.loc), (f.rule_id, f.loc.path, f.loc.line)):
            if key not in weaker or f.certainty == "possible":
                weaker[key] = f
    out = []
    for f in uniform:
        other = weaker.get((f.rule_id, f.loc)) or weaker.get((f.rule_id, f.loc.path, f.loc.line))
        if other is not None:
            out.append(other if other.certainty == "possible" and f.certainty == "definite" else f)
    return out


def _merge(f: Finding, target: Target, merged: dict, by_place: dict) -> None:
    place = (f.rule_id, f.loc.path, f.loc.line, f.loc.col)
    old = merged.get(place + (f.message,))
    if old is not None:  # the same finding for another target
        if target.name not in old.targets:
            old.targets = old.targets + (target.name,)
        return
    twin = by_place.get(place + (target.name,))
    if twin is not None:  # another inlined copy of one device function
        note = f"also, in another calling context: {f.message}"
        if note not in twin.details:
            twin.details.append(note)
        if severity_rank(f.severity) > severity_rank(twin.severity):
            twin.severity, twin.certainty = f.severity, f.certainty
        return
    merged[place + (f.message,)] = f
    by_place[place + (target.name,)] = f


def one_per_site(findings: list[Finding]) -> list[Finding]:
    """One finding per site and rule: where targets' findings differ (a legacy `__shfl` is
    deprecated for sm_60, removed for sm_70), the most severe stands for all, and its message
    names the targets (the message kind's `merged`, else the others' messages as details)."""
    sites: dict[tuple, list[Finding]] = {}
    for f in findings:
        sites.setdefault((f.rule_id, f.loc.path, f.loc.line, f.loc.col), []).append(f)
    out = []
    for group in sites.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        group.sort(key=lambda f: -severity_rank(f.severity))
        first = group[0]
        text = None
        if all(f.facts is not None for f in group):
            text = type(first.facts).merged([(f.facts, f.targets) for f in group])
        if text is None:
            first.details[:0] = [f"for {', '.join(f.targets)}: {f.message}" for f in group[1:]]
        else:
            first.message = text
        first.targets = tuple(t for f in group for t in f.targets)
        out.append(first)
    return out


def analysis_notes(module: Module, analyses: list) -> list[Diagnostic]:
    """The notes of the analyses and checks (a work bound they hit), one per function."""
    out = []
    for fa in analyses:
        fn = fa.function
        for note in fa.notes:
            out.append(Diagnostic(fn.loc or Loc(module.path, 1, 1), "note",
                                  f"function '{fn.display_name or fn.name}': {note}"))
    return out


def lint_text(text: str, path: str, options: Options | None = None) -> FileResult:
    """parse, analyse, [format masks], check, analysis notes: one file's result."""
    with collector.paused():
        return _lint_text(text, path, options)


def _lint_text(text: str, path: str, options: Options | None) -> FileResult:
    options = options or Options()
    if options.nvcc_auto:
        from .via_nvcc import lint_auto
        return lint_auto(text, path, options)
    result = FileResult(path, text=text)
    try:
        parsed = parse_variants(text, path, options)
        reuse = _analyses(len(parsed))  # a function the same in several texts or files: analysed once
        variants = [(m, analyse(m, options, reuse), targets) for m, targets in parsed]
        module, analyses, _ = variants[0]
        result.module, result.analyses = module, analyses
        masks = _variant_masks(variants) if options.show_masks else None  # before the checks' notes
        result.findings = _merge_variants([check(m, a, targets, options) for m, a, targets in variants])
        for m, a, _ in variants:
            if m.language == "ptx":  # code inlined from a library: its frames as steps (callsite.py)
                from .callsite import add_library_frames
                add_library_frames(result.findings, m, a)
        if options.via_nvcc:
            from .via_nvcc import drop_library_only
            result.findings = drop_library_only(result.findings, path, options, result.diagnostics)
        for m, a, _ in variants:
            result.diagnostics.extend(d for d in m.diagnostics + analysis_notes(m, a) if not _known(d, result))
        result.coverage, notes = file_coverage([(m, a) for m, a, _ in variants], result.diagnostics)
        result.diagnostics.extend(notes)
        if not result.failed:
            result.masks = masks
    except InputError as e:
        result.diagnostics.append(Diagnostic(e.loc, e.severity, e.message))
    except RecursionError:
        result.diagnostics.append(Diagnostic(Loc(path, 1, 1), "error", "input nested too deeply to analyse"))
    if result.failed:
        result.coverage = Coverage(failed_files=1)
    return result


def _analyses(texts: int):
    """The analyses a file of `texts` preprocessed texts may take from its other texts
    (analysis/reuse.py)."""
    from .analysis.reuse import Analyses
    return Analyses() if texts > 1 else None


def parse_variants(text: str, path: str, options: Options) -> list[tuple[Module, list[Target]]]:
    """Front end, per target: (module, the targets it is judged for).  CUDA-C is preprocessed
    as nvcc compiles it, once per distinct __CUDA_ARCH__ among the targets, so that code under
    `#if __CUDA_ARCH__ >= 700` does not exist for sm_60; architectures whose preprocessed text
    is the same share one module.  PTX has one module for all targets."""
    from .languages import language
    from .targets import Target
    if language(path, text, options.extensions) != "cuda":
        module = parse_text(text, path, options)
        return [(module, resolve_targets(module, options))]
    if options.via_nvcc:  # one compilation per target
        from .via_nvcc import compile_targets
        return [(module, [Target.parse(t)]) for t, module in compile_targets(path, options)]
    if options.targets:
        return _cuda_variants(text, path, options, [Target.parse(n) for n in options.targets])
    return _default_target_variants(text, path, options)


def _cuda_variants(text: str, path: str, options: Options, wanted: list[Target],
                   parsed: list[Module] = ()) -> list[tuple[Module, list[Target]]]:
    """The CUDA-C modules for the targets `wanted`: one per distinct preprocessed text.  `parsed`:
    modules of this file made for other targets, not yet analysed; one whose text is a wanted
    target's is that target's module (the text is all the front end reads of the target)."""
    from dataclasses import replace
    from .frontends.cuda.frontend import arch_of
    from .frontends.cuda.preprocess import arch_trace, cuda_defines
    by_arch: dict[int, list[Target]] = {}
    for t in wanted:
        by_arch.setdefault(arch_of(t.name), []).append(t)
    known = {m.arch_trace: m for m in parsed}  # trace of the text -> module
    variants: dict[object, tuple[Module, list[Target]]] = {}  # trace of the text -> (module, targets)
    for arch, targets in by_arch.items():
        trace, run = None, None
        if variants or known:  # the first text tells whether there is anything to compare
            first = next(iter(variants.values()))[0] if variants else next(iter(known.values()))
            traced = arch_trace(text, path, {**cuda_defines(arch), **(options.defines or {})},
                                list(options.include_paths or []), linted_tree(path)) if first.arch_trace else ((), None)
            trace, run = traced or (None, None)
        if trace is not None and trace in variants:
            variants[trace][1].extend(targets)
            continue
        if trace is not None and trace in known:
            variants[trace] = (known[trace], list(targets))
            continue
        module = parse_text(text, path, replace(options, targets=[t.name for t in targets]), run)
        variants[module.arch_trace if trace is None else trace] = (module, list(targets))
    return list(variants.values())


def _default_target_variants(text: str, path: str, options: Options) -> list[tuple[Module, list[Target]]]:
    """With no targets configured, the default targets the file can be built for: a text that
    uses an instruction its target lacks outside any `__CUDA_ARCH__` guard (an sm_80
    `__reduce_add_sync` in the sm_60 text) does not compile there (availability.py), so that
    target is no target of the file.  When no default target is left, the file is judged for
    the lowest architecture its code states.  A note says so; configured targets are always
    judged (WL010 there)."""
    from .availability import required_arch
    from .messages import instr_name
    from .targets import Target
    variants = _cuda_variants(text, path, options, [Target.parse(n) for n in DEFAULT_TARGETS])
    kept, demands = [], []
    for module, targets in variants:
        need = required_arch(module)
        buildable = [t for t in targets if need is None or t.sm >= need[0]]
        if buildable:
            kept.append((module, buildable))
        if len(buildable) < len(targets):
            demands.append((need, [t for t in targets if t not in buildable]))
    if not demands:
        return variants
    if not kept:
        kept = _cuda_variants(text, path, options, [Target(min(need[0] for need, _ in demands))],
                              [module for module, _ in variants])
    judged = ", ".join(t.name for _, targets in kept for t in targets)
    notes: dict[tuple, list[Target]] = {}  # one note per instruction, naming every target it rules out
    for (sm, ins), dropped in demands:
        notes.setdefault((sm, instr_name(ins), ins.loc), []).extend(dropped)
    for (sm, name, loc), dropped in notes.items():
        kept[0][0].diagnostics.append(Diagnostic(loc, "note", (
            f"'{name}' needs sm_{sm}: this code cannot be built for the default target{'s' if len(dropped) > 1 else ''} "
            f"{', '.join(t.name for t in dropped)}, so it is judged for {judged} "
            f"(name the targets with --target or `targets` in the configuration)")))
    return kept


def _merge_variants(per_variant: list[list[Finding]]) -> list[Finding]:
    """The findings of modules judged for disjoint targets: one finding, listing its targets,
    where several say the same at the same place."""
    if len(per_variant) == 1:
        return per_variant[0]
    merged: dict[tuple, Finding] = {}
    for findings in per_variant:
        for f in findings:
            key = (f.rule_id, f.loc.path, f.loc.line, f.loc.col, f.message)
            if key in merged:
                merged[key].targets = merged[key].targets + tuple(t for t in f.targets if t not in merged[key].targets)
            else:
                merged[key] = f
    return sorted(merged.values(), key=Finding.sort_key)


def _known(d: Diagnostic, result: FileResult) -> bool:
    return any(x.loc == d.loc and x.message == d.message for x in result.diagnostics)


def _variant_masks(variants) -> str:
    if len(variants) == 1:
        return _format_masks(variants[0][1])
    return "".join(f"for {', '.join(t.name for t in targets)}:\n" + _format_masks(a) for _, a, targets in variants)


def _format_masks(analyses: list) -> str:
    from .analysis.show import format_masks
    return format_masks(analyses)


def lint_file(path: str, options: Options | None = None) -> FileResult:
    """read_source, then lint_text or the result cache."""
    options = options or Options()
    if options.compdb is not None:
        from .compdb import options_for
        options = options_for(path, options)
    try:
        text, notes = read_source(path)
    except InputError as e:
        return FileResult(path, diagnostics=[Diagnostic(e.loc, "error", e.message)])
    result = _lint_source(text, path, options)
    result.diagnostics[:0] = notes
    return result


def _lint_source(text: str, path: str, options: Options) -> FileResult:
    """lint_text, or the result cache."""
    if not options.use_cache:  # (nvcc notes the files it read, from its -MD output)
        return lint_text(text, path, options)
    from . import cache
    k = cache.key(text.encode("utf-8"), options)
    hit = cache.load(k, path)
    if hit is not None:
        return FileResult(path, hit[0], hit[1], text, coverage=Coverage(*hit[2]) if hit[2] else None)
    cache.start_recording()  # the front ends note every other file they look at
    try:
        result = lint_text(text, path, options)
    finally:
        deps = cache.stop_recording()
    cov = result.coverage
    cache.store(k, path, result.findings, result.diagnostics, deps,
                [cov.analysed, cov.total, cov.failed_files] if cov else None)
    return result


# -- many files ----------------------------------------------------------------------------------

def lint_paths(files: list[str], options: Options, jobs: int, timeout: float | None = None) -> list[FileResult]:
    """The results in the order of `files`.  One file runs in this process; several run in
    worker processes (one file at a time each), where a file that kills its worker or runs
    past `timeout` seconds gets a diagnostic and the others are analysed as usual."""
    if len(files) <= 1:
        return [_lint_one(f, options) for f in files]
    from functools import partial

    from .workers import Lost, run_all
    _load_analyses(files)
    try:
        results = run_all(files, partial(_lint_one, options=options), max(1, min(jobs, len(files))), timeout)
    except OSError:  # cannot start worker processes here: run serially, without a time limit
        return [_lint_one(f, options) for f in files]
    return [_not_analysed(path, r.reason) if isinstance(r, Lost) else r for path, r in zip(files, results)]


def _lint_one(path: str, options: Options) -> FileResult:
    """Runs in a worker process: never raises, drops the module (not needed, costly to pickle);
    paused around the drop too, which then counts only what the file leaves (collector.py)."""
    with collector.paused():
        try:
            r = lint_file(path, options)
        except Exception as e:  # a bug in an analysis must not take the whole run down
            r = FileResult(path, diagnostics=[Diagnostic(Loc(path, 1, 1), "error",
                                                         f"internal error while analysing: {type(e).__name__}: {e}")])
        r.module = r.analyses = None
    return r


def _load_analyses(files: list[str]) -> None:
    """Import what the files need before the workers fork, so that each need not (networkx,
    which the first CFG imports, costs a worker 0.2-0.3 s of CPU; pycparser's parser 0.03 s)."""
    import importlib
    names = ["warplint.pipeline", "warplint.checks", "warplint.analysis", "networkx"]
    if any(f.endswith(".ptx") for f in files):
        names.append("warplint.frontends.ptx")
    if any(not f.endswith(".ptx") for f in files):
        names += ["warplint.frontends.cuda", "warplint.frontends.cuda.frontend", "pycparser.c_parser"]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # the worker reports it for the file that needs it
            pass


def _not_analysed(path: str, reason: str) -> FileResult:
    return FileResult(path, diagnostics=[Diagnostic(Loc(path, 1, 1), "error", f"not analysed: {reason}")])


# -- the run's findings --------------------------------------------------------------------------

def drop_per_path_ignores(findings: list[Finding], per_path_ignores: dict, root: str) -> list[Finding]:
    """Configuration `per-path-ignores`: glob (relative to the configuration's root) -> codes."""
    if not per_path_ignores:
        return findings
    from .catalog import code_matches
    from .walk import glob_match
    out = []
    for f in findings:
        rel = os.path.relpath(os.path.abspath(f.loc.path), root).replace(os.sep, "/")
        drop = not rel.startswith("..") and any(
            glob_match(g, rel) and any(code_matches(c, f.rule_id) for c in codes)
            for g, codes in per_path_ignores.items())
        if not drop:
            out.append(f)
    return out


def suppress(findings: list[Finding], sources, results: list[FileResult], options: Options,
             report_unused: bool) -> tuple[dict[int, str], list[Finding]]:
    """In-source suppressions: (id(finding) -> justification, WL900 findings to add)."""
    from .catalog import code_matches, known_rules, selected
    from .suppress import apply

    def enabled(code: str) -> bool:
        ids = [rid for rid in known_rules() if code_matches(code, rid)]
        return not ids or any(selected(rid, options) for rid in ids)

    justifications, unused = apply(findings, sources, files=[r.path for r in results if not r.failed],
                                   enabled=enabled, report_unused=report_unused)
    unused = [u for u in unused if not any(code_matches(p, u.rule_id) for p in options.ignore)]
    return justifications, unused


def collect_files(paths: list[str], cfg, *, gitignore: bool, follow_symlinks: bool):
    """The files to lint under `paths` (configuration include/exclude, .gitignore).  Returns
    (files, diagnostics for missing paths and walk notes, run-level notes)."""
    from .languages import DEFAULT_EXTENSIONS
    from .walk import collect
    files, missing, walk_notes = collect(paths, include=cfg.include, exclude=cfg.exclude, root=cfg.root,
                                         gitignore=gitignore, follow_symlinks=follow_symlinks,
                                         extensions=cfg.extensions or DEFAULT_EXTENSIONS)
    diagnostics = [Diagnostic(Loc(p, 1, 1), "error", msg) for p, msg in missing]
    diagnostics += [Diagnostic(Loc(p, 1, 1), "note", msg) for p, msg in walk_notes if p is not None]
    return files, diagnostics, [msg for p, msg in walk_notes if p is None]


@dataclass
class RunSettings:
    """What a run's post-steps need beyond the options of each file."""
    jobs: int = 1
    timeout: float | None = None
    fail_on: str = "warning"
    srcroot: str = ""
    per_path_ignores: dict = field(default_factory=dict)
    root: str = "."  # the configuration's root (per-path ignores are relative to it)
    report_unused: bool = False
    baseline_keys: set | None = None  # from `baseline.load`
    stdin_text: str | None = None  # `warplint -`: the text of the one file, read from stdin


def lint_run(files: list[str], options: Options, settings: RunSettings, diagnostics: list[Diagnostic],
             tool_notes: list[str]):
    """Lint `files` and build the run's Report (sorted, suppressed, fingerprinted, baselined).
    Returns (Report, Sources)."""
    from .report import Report, display_path
    from .fingerprint import fingerprints
    from .sources import Sources
    if settings.stdin_text is not None:  # `warplint -`: one file, its text read from stdin
        results = [lint_text(settings.stdin_text, files[0], options)]
    else:
        results = lint_paths(files, options, settings.jobs, settings.timeout)
    sources = Sources()
    findings: list[Finding] = []
    diagnostics = list(diagnostics)
    for r in results:
        sources.add(r.path, r.text)
        findings.extend(r.findings)
        diagnostics.extend(r.diagnostics)
    findings = drop_per_path_ignores(findings, settings.per_path_ignores, settings.root)
    justifications, unused = suppress(findings, sources, results, options, settings.report_unused)
    findings.extend(unused)
    findings.sort(key=lambda f: (display_path(f.loc.path), f.loc.line, f.loc.col, f.rule_id, f.message))
    fps = fingerprints(findings, sources)
    report = Report(findings=findings, diagnostics=sorted(diagnostics, key=lambda d: (
        display_path(d.loc.path), d.loc.line, d.loc.col)), files=[r.path for r in results],
        srcroot=settings.srcroot, fingerprints=fps, justifications=justifications, fail_on=settings.fail_on,
        tool_notes=list(tool_notes), masks={r.path: r.masks for r in results if r.masks is not None},
        coverage=run_coverage(results))
    if settings.baseline_keys is not None:
        from .baseline import apply as apply_baseline
        report.baseline = apply_baseline(findings, fps, settings.baseline_keys, report.srcroot)
    report.success = not any(d.severity == "error" for d in report.diagnostics)
    return report, sources


def run_coverage(results: list[FileResult]) -> Coverage:
    """The files' coverage added up (files not measured, e.g. compiled with nvcc, left out)."""
    total = Coverage()
    for r in results:
        if r.coverage is not None:
            total.add(r.coverage)
    return total


@dataclass
class FixOutcome:
    diffs: list[str] = field(default_factory=list)  # --diff: one unified diff per file
    errors: list[str] = field(default_factory=list)  # fixes that could not be written
    findings: int = 0  # findings fixed
    files: int = 0  # files written


def apply_fixes(report, sources, *, write: bool) -> FixOutcome:
    """The fixes of the visible findings: written in place (fixed findings leave the report),
    or as diffs.  Notes about skipped fixes go to the report's tool notes."""
    from .fixer import FixError, plan, unified_diff, write_plan
    candidates = [f for f in report.findings if not report.hidden(f) and f.fix is not None]
    linted = {os.path.abspath(p) for p in report.files}  # a fix never edits any other file
    plans, notes = plan(candidates, sources, linted)
    report.tool_notes.extend(notes)
    out = FixOutcome()
    fixed_ids: set[int] = set()
    for key in sorted(plans):
        p = plans[key]
        if not write:
            out.diffs.append(unified_diff(p))
            continue
        try:
            if write_plan(p):
                fixed_ids.update(id(f) for f in p.fixed)
        except FixError as e:
            out.errors.append(str(e))
    if write:
        out.findings = len(fixed_ids)
        out.files = sum(1 for p in plans.values() if any(id(f) in fixed_ids for f in p.fixed))
        report.findings = [f for f in report.findings if id(f) not in fixed_ids]
    return out
