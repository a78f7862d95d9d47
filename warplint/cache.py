"""Content-hash cache of per-file results, so unchanged files are not analysed again.

Entries live in the user cache directory (`$WARPLINT_CACHE_DIR`, else
`$XDG_CACHE_HOME/warplint`, else `~/.cache/warplint`), one JSON file per key; the key
hashes the warplint version, the options that change results, the path and the file's
bytes.  Deleting the directory is always safe.  Entries are written atomically.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import __version__
from .findings import Edit, Finding, Fix, Step
from .ir import Diagnostic, Loc

_OPTION_FIELDS = ("targets", "select", "ignore", "report_possible", "possible_severity", "defines",
                  "include_paths", "via_nvcc", "block_dim", "work_bound", "map_ptx_locations")


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
        root = Path(__file__).resolve().parent
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".md", ".lark"):
                st = p.stat()
                h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
        _CODE = h.hexdigest()
    return _CODE


def key(path: str, data: bytes, options) -> str:
    h = hashlib.sha256()
    h.update(_code_fingerprint().encode())
    opts = {f: getattr(options, f, None) for f in _OPTION_FIELDS}
    h.update(json.dumps([__version__, os.path.abspath(path), opts], sort_keys=True, default=str).encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


def _loc(d):
    return Loc(**d) if d else None


def _finding(d) -> Finding:
    fix = d.get("fix")
    return Finding(d["rule_id"], d["severity"], d["message"], _loc(d["loc"]), d["certainty"], d["details"],
                   [Step(_loc(s["loc"]), s["message"]) for s in d["flow"]],
                   [Step(_loc(s["loc"]), s["message"]) for s in d["related"]],
                   Fix(fix["description"], [Edit(**e) for e in fix["edits"]]) if fix else None,
                   tuple(d["targets"]), d["function"], d["suppressed"])


def load(k: str):
    """(findings, diagnostics) for a key, or None."""
    try:
        with open(cache_dir() / f"{k}.json", encoding="utf-8") as f:
            data = json.load(f)
        return ([_finding(x) for x in data["findings"]],
                [Diagnostic(_loc(x["loc"]), x["severity"], x["message"]) for x in data["diagnostics"]])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(k: str, findings, diagnostics) -> None:
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"findings": [dataclasses.asdict(f) for f in findings],
                              "diagnostics": [dataclasses.asdict(x) for x in diagnostics]})
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(payload)
        os.replace(tmp, d / f"{k}.json")
    except OSError:
        pass  # a cache that cannot be written is only slower
