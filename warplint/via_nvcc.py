"""`--via-nvcc`: compile a .cu to PTX with nvcc and analyse the PTX, findings mapped back to
the .cu lines through the `.loc` directives nvcc writes with `-lineinfo`.

The target is `options.targets[0]`, or sm_70 when no target is given (nvcc 13 and newer no
longer accept sm_70: without an explicit target we then fall back to sm_75, the oldest
architecture they support, which has the same independent-thread-scheduling model).

nvcc runs its sub-commands through a shell, each argument in double quotes, so nothing the
linted tree chooses (file names, `defines`/`include-paths` from its configuration) may reach it
unchecked: every path is absolute (never read as an option), arguments with characters a shell
expands inside double quotes are refused, nvcc runs in its temporary directory, and programs
are looked up only in the absolute directories of PATH.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from .errors import InputError
from .ir import Loc, Module

TIMEOUT_S = 120
DEFAULT_TARGET = "sm_70"
FALLBACK_TARGET = "sm_75"
_NVCC_ERR = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?:error|catastrophic error)\s*:?\s*(?P<msg>.*)$")
_GCC_ERR = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$")
_SHELL_ACTIVE = re.compile(r'[$`"\\\n\r\0]')  # what a shell still expands inside "..."


def _arch(target: str) -> str:
    t = target.strip()
    return t if t.startswith(("sm_", "compute_")) else f"sm_{t}"


def compile_to_ptx_module(path: str, options) -> Module:
    """Run nvcc --ptx -lineinfo on `path` for the first target (sm_70 when none is given) and
    parse the PTX with its source locations mapped to `path`."""
    nvcc = options.nvcc or "nvcc"
    exe = shutil.which(nvcc, path=_safe_path())
    if exe is None:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: '{nvcc}' not found on PATH")
    target = _arch(options.targets[0]) if options.targets else DEFAULT_TARGET
    tmpdir = tempfile.mkdtemp(prefix="warplint-nvcc-")
    try:
        out = os.path.join(tmpdir, "out.ptx")
        proc = _run(exe, target, out, path, options, tmpdir)
        if proc.returncode != 0 and not options.targets and "Unsupported gpu architecture" in proc.stderr:
            proc = _run(exe, FALLBACK_TARGET, out, path, options, tmpdir)
        if proc.returncode != 0 or not os.path.exists(out):
            raise _compile_error(path, proc.stderr + proc.stdout)
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    from .frontends.ptx import parse_ptx
    module = parse_ptx(text, path + ".ptx", map_locations=getattr(options, "map_ptx_locations", True))
    _normalise_paths(module, path)
    return module


def _safe_path() -> str:
    """PATH without its relative entries (`.`, empty): no program is found in the linted tree."""
    return os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d))


def _checked(arg: str, what: str, path: str) -> str:
    m = _SHELL_ACTIVE.search(arg)
    if m:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: {what} {arg!r} contains {m[0]!r}, which nvcc's "
                                          "shell would expand; not compiled")
    return arg


def _run(exe, target, out, path, options, cwd):
    args = [("target", "-arch=" + target), ("output", "--output-file=" + out), ("file", os.path.abspath(path))]
    args += [("include path", "-I" + os.path.abspath(p)) for p in options.include_paths or []]
    args += [("define", f"-D{k}={v}" if v is not None and v != "" else f"-D{k}")
             for k, v in (options.defines or {}).items()]
    cmd = [exe, "--ptx", "-lineinfo"] + [_checked(a, what, path) for what, a in args]
    env = dict(os.environ, PATH=_safe_path())
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: nvcc did not finish within {TIMEOUT_S}s") from None
    except OSError as e:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: cannot run nvcc: {e.strerror or e}") from None


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
    for d in module.diagnostics:
        d.loc = fix(d.loc)
