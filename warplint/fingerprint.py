"""A finding's identity across runs (SARIF, `--baseline`): the file's artifact URI and a stable
partial fingerprint that survives edits elsewhere in the file (no line numbers).

fingerprint = sha256(rule id, function, flagged line with whitespace collapsed and `//`
comments removed)[:16] + ":" + occurrence index of that hash in the file (in line order).
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import quote

FINGERPRINT_KEY = "warplint/v1"
_WS = re.compile(r"\s+")


def normalise(line: str) -> str:
    i = line.find("//")
    if i >= 0:
        line = line[:i]
    return _WS.sub(" ", line).strip()


def fingerprints(findings, sources) -> dict[int, str]:
    """id(finding) -> fingerprint for each finding (findings sorted by location first)."""
    out: dict[int, str] = {}
    seen: dict[tuple[str, str], int] = {}
    for f in sorted(findings, key=lambda f: (f.loc.path, f.loc.line, f.loc.col, f.rule_id)):
        text = normalise(sources.line(f.loc.path, f.loc.line))
        h = hashlib.sha256("\0".join((f.rule_id, f.function, text)).encode("utf-8")).hexdigest()[:16]
        k = (os.path.abspath(f.loc.path), h)
        n = seen.get(k, 0)
        seen[k] = n + 1
        out[id(f)] = f"{h}:{n}"
    return out


def line_hashes(findings, sources) -> dict[int, str]:
    """id(finding) -> GitHub's `primaryLocationLineHash`: a hash of the flagged line's text
    (whitespace removed) and the occurrence of that text in the file, so a finding keeps its
    alert when lines are added above it."""
    out: dict[int, str] = {}
    seen: dict[tuple[str, str], int] = {}
    for f in sorted(findings, key=lambda f: (f.loc.path, f.loc.line, f.loc.col, f.rule_id)):
        text = _WS.sub("", sources.line(f.loc.path, f.loc.line))
        h = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        k = (os.path.abspath(f.loc.path), h + f.rule_id)
        n = seen.get(k, 0)
        seen[k] = n + 1
        out[id(f)] = f"{h}:{n + 1}"
    return out


def artifact_uri(path: str, srcroot: str) -> tuple[str, str | None]:
    """(uri, uriBaseId): relative to %SRCROOT% when the file lies under it, else an absolute file URI."""
    ap = os.path.abspath(path)
    root = os.path.abspath(srcroot)
    try:
        rel = os.path.relpath(ap, root)
    except ValueError:
        rel = os.pardir
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return Path(ap).as_uri(), None
    return quote(os.fsencode(rel.replace(os.sep, "/"))), "%SRCROOT%"  # the name's bytes, %-encoded
