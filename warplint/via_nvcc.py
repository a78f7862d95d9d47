"""`--via-nvcc`: compile a .cu to PTX with nvcc and analyse the PTX, findings mapped back to
the .cu lines through the `.loc` directives nvcc writes with `-lineinfo`.

The target is `options.targets[0]`, or sm_70 when no target is given (nvcc 13 and newer no
longer accept sm_70: without an explicit target we then fall back to sm_75, the oldest
architecture they support, which has the same independent-thread-scheduling model).
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


def _arch(target: str) -> str:
    t = target.strip()
    return t if t.startswith(("sm_", "compute_")) else f"sm_{t}"


def compile_to_ptx_module(path: str, options) -> Module:
    """Run nvcc --ptx -lineinfo on `path` for the first target (sm_70 when none is given) and
    parse the PTX with its source locations mapped to `path`."""
    nvcc = options.nvcc or "nvcc"
    exe = shutil.which(nvcc)
    if exe is None:
        raise InputError(Loc(path, 1, 1), f"--via-nvcc: '{nvcc}' not found on PATH")
    target = _arch(options.targets[0]) if options.targets else DEFAULT_TARGET
    tmpdir = tempfile.mkdtemp(prefix="warplint-nvcc-")
    try:
        out = os.path.join(tmpdir, "out.ptx")
        proc = _run(exe, target, out, path, options)
        if proc.returncode != 0 and not options.targets and "Unsupported gpu architecture" in proc.stderr:
            proc = _run(exe, FALLBACK_TARGET, out, path, options)
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


def _run(exe, target, out, path, options):
    cmd = [exe, "--ptx", "-lineinfo", "-arch=" + target, "-o", out, path]
    cmd += ["-I" + p for p in options.include_paths or []]
    cmd += [f"-D{k}={v}" if v is not None and v != "" else f"-D{k}" for k, v in (options.defines or {}).items()]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
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
