"""The pipeline: source -> front end -> IR -> CFG -> analyses -> checks -> findings."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import InputError
from .findings import Finding
from .ir import Diagnostic, Loc, Module
from .options import DEFAULT_TARGETS, Options
from .targets import Target

PTX_SUFFIXES = (".ptx",)
CUDA_SUFFIXES = (".cu", ".cuh")
MAX_BYTES = 64 * 1024 * 1024
PSEUDO_FILESYSTEMS = ("/proc", "/sys", "/dev")


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str = ""
    module: Module | None = None

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def resolve_targets(module: Module, options: Options) -> list[Target]:
    if options.targets:
        names = options.targets
    elif module.target:
        names = [module.target]
    else:
        names = DEFAULT_TARGETS
    return [Target.parse(n) for n in names]


def parse_text(text: str, path: str, options: Options) -> Module:
    if path.endswith(CUDA_SUFFIXES):
        if options.via_nvcc:
            from .via_nvcc import compile_to_ptx_module
            return compile_to_ptx_module(path, options)
        from .frontends.cuda import parse_cuda
        return parse_cuda(text, path, options)
    from .frontends.ptx import parse_ptx
    module = parse_ptx(text, path, map_locations=options.map_ptx_locations)
    if options.map_ptx_locations:
        _unmapped_missing_sources(module)
    return module


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


def _unmapped_missing_sources(module: Module) -> None:
    """A `.loc` naming a source file that is not a regular file in the linted tree (PTX built
    elsewhere, or pointing outside the tree) must not send reports, suppressions or `--fix`
    there: those instructions are reported at their PTX line."""
    from . import cache
    tree = linted_tree(module.path)
    usable: dict[str, bool] = {}
    for fn in module.functions:
        for item in fn.body:
            raw = getattr(item, "raw_loc", None)
            if raw is None or item.loc is None or item.loc.path == module.path:
                continue
            path = item.loc.path
            if path not in usable:
                cache.note_probe(path)  # the result cache keys on what stands there
                usable[path] = within(path, [tree]) and os.path.isfile(path)
            if not usable[path]:
                item.loc, item.raw_loc = raw, None


def lint_module(module: Module, options: Options) -> list[Finding]:
    from .checks import run_checks
    return run_checks(module, resolve_targets(module, options), options)


def lint_text(text: str, path: str, options: Options | None = None) -> FileResult:
    options = options or Options()
    result = FileResult(path, text=text)
    try:
        module = parse_text(text, path, options)
        result.module = module
        result.findings = lint_module(module, options)
        result.diagnostics.extend(module.diagnostics)
    except InputError as e:
        result.diagnostics.append(Diagnostic(e.loc, "error", e.message))
    except RecursionError:
        result.diagnostics.append(Diagnostic(Loc(path, 1, 1), "error", "input nested too deeply to analyse"))
    return result


def read_source(path: str) -> str:
    """Read a file as text; undecodable bytes and NULs become an InputError with a location."""
    from .inputs import InputFileError, read_regular
    try:
        data = read_regular(path, MAX_BYTES)  # a FIFO or device is refused, never read
    except InputFileError as e:
        raise InputError(Loc(path, 1, 1), str(e)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(Loc(path, line, col), "file is not valid UTF-8 text") from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise InputError(Loc(path, line, col), "file contains a NUL byte (binary file?)")
    return text


def lint_file(path: str, options: Options | None = None) -> FileResult:
    options = options or Options()
    try:
        text = read_source(path)
    except InputError as e:
        return FileResult(path, diagnostics=[Diagnostic(e.loc, "error", e.message)])
    if not options.use_cache or options.via_nvcc:  # nvcc reads what it likes: never cached
        return lint_text(text, path, options)
    from . import cache
    k = cache.key(text.encode("utf-8"), options)
    hit = cache.load(k, path)
    if hit is not None:
        return FileResult(path, hit[0], hit[1], text)
    cache.start_recording()  # the front ends note every other file they look at
    try:
        result = lint_text(text, path, options)
    finally:
        deps = cache.stop_recording()
    cache.store(k, path, result.findings, result.diagnostics, deps)
    return result
