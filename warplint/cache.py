"""Content-hash cache of per-file results, so unchanged files are not analysed again.

Entries live in the user cache directory (`$WARPLINT_CACHE_DIR`, else
`$XDG_CACHE_HOME/warplint`, else `~/.cache/warplint`), one JSON file per key; the key hashes
the warplint code, the options that change results and the file's bytes, never its path.
Results are stored without the linted file's path (its locations say `null`) and are attached
to the path being linted when loaded, so a hit is the same whichever way the file is named.

A result may depend on other files: the headers the CUDA preprocessor looked for or read and
the `.loc` sources of a PTX file.  The front ends report each of them while they run
(`note_probe`, `note_read`); the entry records what each one was (its content digest, or
what stood at the path), and a later lookup is a hit only when every one of them is still
the same, from the same working directory for the same file (the paths they were looked for
at depend on both).

An entry is data, not trusted input: anything malformed is a miss.  Deleting the directory is
always safe.  Entries are written atomically.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

from . import __version__
from .findings import SEVERITIES, Edit, Finding, Fix, Step
from .locations import Diagnostic, Loc

_OPTION_FIELDS = ("targets", "select", "ignore", "report_possible", "possible_severity", "defines",
                  "include_paths", "via_nvcc", "block_dim", "work_bound", "map_ptx_locations", "extensions",
                  "nvcc", "nvcc_auto", "nvcc_flags", "library_findings")
FORMAT = 3  # of the entries; bump when it changes
MAX_ENTRY_BYTES = 64 * 1024 * 1024
MAX_DEP_BYTES = 64 * 1024 * 1024


def cache_dir() -> Path:
    env = os.environ.get("WARPLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warplint"


_CODE: str | None = None


def _code_fingerprint() -> str:
    """Size and mtime of every file of the installed package, so that a changed warplint
    (an upgrade, a development checkout) never reuses results of the old one."""
    global _CODE
    if _CODE is None:
        h = hashlib.sha256()
        for entry in sorted(_package_files(os.path.dirname(os.path.realpath(__file__)))):
            h.update(entry.encode())
        _CODE = h.hexdigest()
    return _CODE


def _package_files(root: str) -> list[str]:
    """'path:size:mtime' of the package's code and documents (os.scandir: a quarter of the
    time pathlib's rglob took, which every run with the cache paid)."""
    out, todo = [], [""]
    while todo:
        folder = todo.pop()
        with os.scandir(os.path.join(root, folder)) as entries:
            for e in entries:
                rel = os.path.join(folder, e.name)
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        todo.append(rel)
                elif e.name.endswith((".py", ".md", ".lark")):
                    st = e.stat()
                    out.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
    return out


def key(data: bytes, options) -> str:
    """The key of a file's results: its bytes and the options, not its path."""
    h = hashlib.sha256()
    h.update(_code_fingerprint().encode())
    opts = {f: getattr(options, f, None) for f in _OPTION_FIELDS}
    opts["include_paths"] = [os.path.abspath(p) for p in opts["include_paths"] or []]
    h.update(json.dumps([FORMAT, __version__, opts], sort_keys=True, default=str).encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


# -- the files a result depends on --------------------------------------------------------------

_deps: dict[str, str] | None = None  # path as looked for -> what was there; None: not recording


def start_recording() -> None:
    global _deps
    _deps = {}


def stop_recording() -> dict[str, str]:
    global _deps
    deps, _deps = _deps or {}, None
    return deps


def observe(path: str) -> str:
    """What stands at `path` as far as a front end that does not read it can tell: 'absent', or
    its kind, size and real path (whether it is a regular file in the tree, within the cap)."""
    try:
        st = os.stat(path)
        real = os.path.realpath(path)
    except (OSError, ValueError):
        return "absent" if not os.path.lexists(path) else "dangling"
    return f"{stat.S_IFMT(st.st_mode):o}:{st.st_size}:{real}"


def _content(path: str, data: bytes) -> str:
    return "sha256:" + hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")
                                      + b"\0" + data).hexdigest()


def note_probe(path: str) -> None:
    """A front end looks at `path` (an include candidate, a `.loc` source) without reading it."""
    if _deps is not None and path not in _deps:
        _deps[path] = observe(path)


def note_read(path: str, data: bytes) -> None:
    """A front end read `data` from `path`."""
    if _deps is not None:
        _deps[path] = _content(path, data)


def note_unrepeatable() -> None:
    """The result depends on something a later run cannot check (a compile's time limit)."""
    if _deps is not None:
        _deps["\0unrepeatable"] = "never the same"  # observe() says 'absent': never a hit


def _still(path: str, state: str) -> bool:
    if not state.startswith("sha256:"):
        return observe(path) == state
    from .inputs import InputFileError, read_regular
    try:
        return _content(path, read_regular(path, MAX_DEP_BYTES)) == state
    except (InputFileError, OSError, ValueError):
        return False


def _where(path: str) -> list:
    """Where a result that depends on other files holds: the working directory and the file."""
    return [os.getcwd(), os.path.abspath(path)]


# -- entries: results without the linted file's path ----------------------------------------

class _Bad(Exception):
    """A malformed cache entry."""


def _enc_loc(loc, path: str):
    if loc is None:
        return None
    return [None if loc.path == path else loc.path, loc.line, loc.col, loc.end_line, loc.end_col]


def _enc_finding(f: Finding, path: str) -> dict:
    def step(s):
        return [_enc_loc(s.loc, path), s.message]
    return {"rule_id": f.rule_id, "severity": f.severity, "message": f.message, "loc": _enc_loc(f.loc, path),
            "certainty": f.certainty, "details": list(f.details), "flow": [step(s) for s in f.flow],
            "related": [step(s) for s in f.related], "targets": list(f.targets), "function": f.function,
            "suppressed": f.suppressed,
            "fix": None if f.fix is None else [f.fix.description, [
                [None if e.path == path else e.path, e.line, e.col, e.end_line, e.end_col, e.text]
                for e in f.fix.edits]]}


def _of(x, t):
    if not isinstance(x, t) or isinstance(x, bool) and t is not bool:
        raise _Bad(f"expected {t}")
    return x


def _int(x, optional=False):
    if x is None and optional:
        return None
    if _of(x, int) < 1 or x > 1 << 40:
        raise _Bad("position out of range")
    return x


def _strs(x) -> list[str]:
    return [_of(s, str) for s in _of(x, list)]


class _Paths:
    """The paths an entry may name: the linted file (`null`) and the files it depends on."""

    def __init__(self, path: str, deps: dict):
        self.path = path
        self.known = {os.path.abspath(p) for p in deps}

    def __call__(self, p) -> str:
        if p is None:
            return self.path
        if os.path.abspath(_of(p, str)) not in self.known:
            raise _Bad("a location in a file the result does not depend on")
        return p


def _dec_loc(x, path: _Paths) -> Loc:
    p, line, col, end_line, end_col = _of(x, list)
    return Loc(path(p), _int(line), _int(col), _int(end_line, True), _int(end_col, True))


def _dec_finding(d, path: _Paths) -> Finding:
    _of(d, dict)

    def steps(xs):
        return [Step(_dec_loc(loc, path), _of(msg, str)) for loc, msg in _of(xs, list)]
    fix = d["fix"]
    if fix is not None:
        desc, edits = _of(fix, list)
        fix = Fix(_of(desc, str), [Edit(path(p), _int(a), _int(b), _int(c), _int(e), _of(t, str))
                                   for p, a, b, c, e, t in _of(edits, list)])
    severity = _of(d["severity"], str)
    if severity not in SEVERITIES:
        raise _Bad("unknown severity")
    return Finding(_of(d["rule_id"], str), severity, _of(d["message"], str), _dec_loc(d["loc"], path),
                   _of(d["certainty"], str), _strs(d["details"]), steps(d["flow"]), steps(d["related"]),
                   fix, tuple(_strs(d["targets"])), _of(d["function"], str), _of(d["suppressed"], bool))


def _dec_diagnostic(x, path: _Paths) -> Diagnostic:
    loc, severity, message = _of(x, list)
    if severity not in ("error", "note", "warning"):
        raise _Bad("unknown severity")
    return Diagnostic(_dec_loc(loc, path), severity, _of(message, str))


def _entry_path(k: str) -> Path:
    if len(k) != 64 or any(c not in "0123456789abcdef" for c in k):
        raise ValueError("not a cache key")
    return cache_dir() / f"{k}.json"


def load(k: str, path: str):
    """(findings, diagnostics, coverage) of `path` for a key, or None (no entry, a stale or malformed
    one); coverage is [analysed, total, failed_files] or None."""
    from .inputs import InputFileError, read_regular
    try:
        data = json.loads(read_regular(str(_entry_path(k)), MAX_ENTRY_BYTES))
        _of(data, dict)
        if data.get("format") != FORMAT:
            return None
        deps = _of(data["deps"], dict)
        if deps and data["where"] != _where(path):
            return None
        if not all(_still(_of(p, str), _of(s, str)) for p, s in deps.items()):
            return None
        paths = _Paths(path, deps)
        coverage = data.get("coverage")
        if coverage is not None and not (isinstance(coverage, list) and all(isinstance(x, int) for x in coverage)):
            raise _Bad
        return ([_dec_finding(x, paths) for x in _of(data["findings"], list)],
                [_dec_diagnostic(x, paths) for x in _of(data["diagnostics"], list)], coverage)
    except (InputFileError, _Bad, OSError, ValueError, KeyError, TypeError, RecursionError, MemoryError):
        return None  # a cache entry is data: whatever is wrong with it, it is a miss


TMP_SUFFIX = ".tmp"
_swept = False


def _remove_stale_temps(d: Path) -> None:
    """Once per process: the temporary files of runs that were killed while storing."""
    global _swept
    if _swept:
        return
    _swept = True
    from .fixer import _alive
    for entry in os.listdir(d):
        pid = entry[1:].split(".")[0]
        if entry.startswith(".") and entry.endswith(TMP_SUFFIX) and pid.isdigit() and not _alive(int(pid)):
            try:
                os.unlink(d / entry)
            except OSError:
                pass


def _other_paths(path: str, findings, diagnostics):
    for f in findings:
        locs = [f.loc] + [s.loc for s in f.flow + f.related] + (f.fix.edits if f.fix else [])
        yield from (x.path for x in locs if x is not None and x.path != path)
    yield from (x.loc.path for x in diagnostics if x.loc is not None and x.loc.path != path)


def store(k: str, path: str, findings, diagnostics, deps: dict[str, str], coverage: list | None = None) -> None:
    """Store the results of `path` (which depend on `deps`, from `stop_recording`)."""
    d = cache_dir()
    try:
        deps = dict(deps)
        known = {os.path.abspath(p) for p in deps}
        for p in _other_paths(path, findings, diagnostics):  # a location's file is a dependency too
            if os.path.abspath(p) not in known:
                deps[p] = observe(p)
                known.add(os.path.abspath(p))
        payload = json.dumps({
            "format": FORMAT, "deps": deps, "where": _where(path) if deps else None,
            "findings": [_enc_finding(f, path) for f in findings],
            "diagnostics": [[_enc_loc(x.loc, path), x.severity, x.message] for x in diagnostics],
            "coverage": coverage})
        d.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(d)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{os.getpid()}.", suffix=TMP_SUFFIX)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(payload)
            os.replace(tmp, _entry_path(k))
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, ValueError):
        pass  # a cache that cannot be written is only slower
