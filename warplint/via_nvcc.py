"""The compiler route (`--via-nvcc`): compile a .cu to PTX with nvcc, once per target, and
analyse the PTX, findings mapped back to the source through the `.loc` directives nvcc writes
with `-lineinfo`.  Code inlined from library headers (CUB, cooperative groups) is reported at
the call in the linted tree (callsite.py); a finding with no frame in the tree is dropped with a
note unless `--library-findings=keep`.  `--via-nvcc=auto` lints directly and compiles only the
files whose warp code the direct route could not analyse.

The targets are `options.targets` (from the command line, the configuration or the compile
database), one compilation each, `options.nvcc_jobs` at a time; with none given, sm_70 (nvcc 13
and newer no longer accept it: we then fall back to sm_75, the oldest they support, which has
the same independent-thread-scheduling model).  nvcc writes the files it read (`-MD`): they are
noted for the result cache, so an unchanged file with unchanged headers is not compiled again.

nvcc runs its sub-commands through a shell, each argument in double quotes, so nothing the
linted tree chooses (file names, `defines`/`include-paths` from its configuration, compile
database flags) may reach it unchecked: every path is absolute (never read as an option),
arguments with characters a shell expands inside double quotes are refused, nvcc runs in its
temporary directory, programs are looked up only in the absolute directories of PATH, and the
compiler is `--nvcc` or the `nvcc` on PATH, never one named by a compile database.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

from .errors import InputError
from .ir import Diagnostic, Loc, Module

DEFAULT_TARGET = "sm_70"
FALLBACK_TARGET = "sm_75"
MAX_DEP_BYTES = 64 * 1024 * 1024
_NVCC_ERR = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?:error|catastrophic error)\s*:?\s*(?P<msg>.*)$")
_GCC_ERR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$")
_SHELL_ACTIVE = re.compile(r'[$`"\\\n\r\0]')  # what a shell still expands inside "..."
_DEP_WORD = re.compile(r"(?:\\.|[^\s\\])+")
# warp-level library templates whose code (toolkit headers) the direct route does not read
_LIBRARY_WARP_CODE = re.compile(r"\b(?:Warp|Block)(?:Reduce|Scan|Exchange|MergeSort|RadixSort|Load|Store)\b")


class CompileTimeout(InputError):
    """nvcc ran past the time limit: the file is not analysed (a note, not an error)."""
    severity = "note"

    def __init__(self, loc: Loc, message: str):
        super().__init__(loc, message)
        from . import cache
        cache.note_unrepeatable()  # another run may finish in time


def _arch(target: str) -> str:
    t = target.strip()
    return t if t.startswith(("sm_", "compute_")) else f"sm_{t}"


def find_nvcc(options) -> str | None:
    return shutil.which(options.nvcc or "nvcc", path=_safe_path())


# -- one file, every target ------------------------------------------------------------------

def lint_auto(text: str, path: str, options):
    """`--via-nvcc=auto`: the direct route, and the compiler route instead where the direct one
    could not analyse some of the file's warp code (its coverage, or a CUB warp/block template)
    and nvcc is here."""
    from . import pipeline
    direct = pipeline.lint_text(text, path, dataclasses.replace(options, nvcc_auto=False, via_nvcc=False))
    cov = direct.coverage
    library = _LIBRARY_WARP_CODE.search(text)
    if not direct.failed and (cov is None or not cov.not_analysed) and not library:
        return direct
    here = Loc(path, 1, 1)
    if find_nvcc(options) is None:
        direct.diagnostics.append(Diagnostic(here, "note", f"--via-nvcc=auto: '{options.nvcc}' not found on "
                                                           "PATH: linted directly only"))
        return direct
    compiled = pipeline.lint_text(text, path, dataclasses.replace(options, nvcc_auto=False, via_nvcc=True))
    if compiled.failed or any(d.message.startswith("not analysed: nvcc") for d in compiled.diagnostics):
        why = next(d for d in compiled.diagnostics if d.severity == "error" or d.message.startswith("not analysed"))
        direct.diagnostics.append(Diagnostic(here, "note", f"--via-nvcc=auto: not compiled ({why.loc}: "
                                                           f"{why.message}): linted directly only"))
        return direct
    why = ("the file" if direct.failed else f"{cov.not_analysed} of {cov.total} functions with warp code"
           if cov is not None and cov.not_analysed else f"the warp code inside '{library[0]}'")
    compiled.diagnostics.append(Diagnostic(here, "note", f"--via-nvcc=auto: compiled with nvcc: the direct route "
                                                         f"could not analyse {why}"))
    return compiled


def compile_targets(path: str, options) -> list[tuple[str, Module]]:
    """(target, PTX module) for each target, compiled `options.nvcc_jobs` at a time."""
    targets = [_arch(t) for t in options.targets] if options.targets else [None]
    if len(targets) == 1:
        return [compile_one(path, options, targets[0])]
    with ThreadPoolExecutor(max_workers=max(1, min(len(targets), options.nvcc_jobs))) as pool:
        return list(pool.map(lambda t: compile_one(path, options, t), targets))


def compile_to_ptx_module(path: str, options) -> Module:
    """The PTX of `path` for the first target (sm_70 when none is given), its instructions
    placed in the linted tree."""
    return compile_one(path, options, _arch(options.targets[0]) if options.targets else None)[1]


def compile_one(path: str, options, target: str | None) -> tuple[str, Module]:
    """Run nvcc --ptx -lineinfo for `target` (None: the default) and parse the PTX."""
    from . import cache
    exe = find_nvcc(options)
    if exe is None:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: '{options.nvcc}' not found on PATH")
    cache.note_probe(exe)  # another nvcc is another result
    tmpdir = tempfile.mkdtemp(prefix="warplint-nvcc-")
    try:
        out = os.path.join(tmpdir, "out.ptx")
        used = target or DEFAULT_TARGET
        proc = _run(exe, used, tmpdir, path, options)
        if proc.returncode != 0 and target is None and "Unsupported gpu architecture" in proc.stderr:
            used = FALLBACK_TARGET
            proc = _run(exe, used, tmpdir, path, options)
        if proc.returncode != 0 or not os.path.exists(out):
            raise _compile_error(path, proc.stderr + proc.stdout)
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
        _note_dependencies(os.path.join(tmpdir, "out.d"))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    from . import callsite
    from .frontends.ptx import parse_ptx
    from .pipeline import linted_tree
    module = parse_ptx(text, path + ".ptx", map_locations=getattr(options, "map_ptx_locations", True))
    callsite.place_in_tree(module, callsite.usable_in_tree(linted_tree(path)),
                           keep_outside=options.library_findings == "keep")
    _normalise_paths(module, path)
    return used, module


def _safe_path() -> str:
    """PATH without its relative entries (`.`, empty): no program is found in the linted tree."""
    return os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d))


def _checked(arg: str, what: str, path: str) -> str:
    m = _SHELL_ACTIVE.search(arg)
    if m:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: {what} {arg!r} contains {m[0]!r}, which nvcc's "
                                          "shell would expand; not compiled")
    return arg


def _run(exe, target, tmpdir, path, options):
    args = [("target", "-arch=" + target), ("output", "--output-file=" + os.path.join(tmpdir, "out.ptx")),
            ("output", "--dependency-output=" + os.path.join(tmpdir, "out.d")), ("file", os.path.abspath(path))]
    args += [("include path", "-I" + os.path.abspath(p)) for p in options.include_paths or []]
    args += [("define", f"-D{k}={v}" if v is not None and v != "" else f"-D{k}")
             for k, v in (options.defines or {}).items()]
    args += [("compile database option", a) for a in options.nvcc_flags or []]
    cmd = [exe, "--ptx", "-lineinfo", "--generate-dependencies-with-compile"]
    cmd += [_checked(a, what, path) for what, a in args]
    env = dict(os.environ, PATH=_safe_path())
    limit = options.nvcc_timeout if options.nvcc_timeout and options.nvcc_timeout > 0 else None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=limit, cwd=tmpdir, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CompileTimeout(Loc(path, 1, 1), f"not analysed: nvcc did not finish within {limit:g}s for {target} "
                                              "(--nvcc-timeout)") from None
    except OSError as e:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: cannot run nvcc: {e.strerror or e}") from None


def _note_dependencies(depfile: str) -> None:
    """Every file nvcc read (its `-MD` output) is a dependency of the result (cache.py)."""
    from . import cache
    from .inputs import InputFileError, read_regular
    try:
        with open(depfile, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        cache.note_unrepeatable()
        return
    words = _DEP_WORD.findall(text.partition(": ")[2])
    for word in words:
        dep = re.sub(r"\\(.)", r"\1", word).replace("$$", "$")
        try:
            cache.note_read(dep, read_regular(dep, MAX_DEP_BYTES))
        except (InputFileError, OSError):
            cache.note_probe(dep)


def _compile_error(path: str, output: str) -> InputError:
    same = os.path.abspath(path)
    for line in output.splitlines():
        m = _NVCC_ERR.match(line.strip()) or _GCC_ERR.match(line.strip())
        if m:
            f = m.group("file")
            shown = path if os.path.abspath(f) == same else f
            col = int(m.groupdict().get("col") or 1)
            return InputError(Loc(shown, int(m.group("line")), col), "nvcc: " + m.group("msg").strip())
    first = next((ln.strip() for ln in output.splitlines() if ln.strip()), "nvcc failed")
    return InputError(Loc(path, 1, 1), "nvcc: " + first)


def drop_library_only(findings: list, path: str, options, diagnostics: list) -> list:
    """Findings in compiled code with no frame in the linted tree (left at a line of the PTX,
    which is no file) are dropped with a note, unless `--library-findings=keep`."""
    if options.library_findings == "keep":
        return findings
    ptx = path + ".ptx"
    kept = [f for f in findings if f.loc.path != ptx]
    if len(kept) < len(findings):
        diagnostics.append(Diagnostic(Loc(path, 1, 1), "note", f"{len(findings) - len(kept)} finding(s) in compiled "
                                      "code with no source line in the linted tree (library code only) not "
                                      "reported (--library-findings=keep reports them)"))
    return kept


def _normalise_paths(module: Module, path: str) -> None:
    """nvcc writes absolute paths in .file; show them as the path the user gave."""
    same = os.path.realpath(path)
    cache: dict[str, str] = {}

    def fix(loc):
        if loc is None:
            return loc
        p = cache.get(loc.path)
        if p is None:
            try:
                p = path if os.path.realpath(loc.path) == same else loc.path
            except (OSError, ValueError):
                p = loc.path
            cache[loc.path] = p
        if p == loc.path:
            return loc
        return Loc(p, loc.line, loc.col, loc.end_line, loc.end_col)

    for fn in module.functions:
        fn.loc = fix(fn.loc)
        for item in fn.body:
            item.loc = fix(item.loc)
            if getattr(item, "frames", ()):
                item.frames = tuple((fix(loc), name) for loc, name in item.frames)
    for d in module.diagnostics:
        d.loc = fix(d.loc)
