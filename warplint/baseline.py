"""`--baseline FILE.sarif`: findings already in a previous SARIF log do not fail the run.

A finding matches a baseline result when rule id, artifact URI (relative to %SRCROOT%) and the
`warplint/v1` partial fingerprint are equal; fingerprints carry no line numbers, so edits
elsewhere in the file keep old findings matched.
"""
from __future__ import annotations

import json

from .errors import UsageError
from .fingerprint import FINGERPRINT_KEY, artifact_uri


BASELINE_MAX_BYTES = 256 * 1024 * 1024


def load(path: str) -> set[tuple[str, str, str]]:
    from .inputs import InputFileError, read_regular
    try:  # a regular file only: /dev/zero or a FIFO would never end
        raw = read_regular(path, BASELINE_MAX_BYTES)
    except InputFileError as e:
        raise UsageError(f"{path}: cannot read baseline: {e}") from None
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise UsageError(f"{path}: baseline is not valid JSON: {e}") from None
    except RecursionError:
        raise UsageError(f"{path}: baseline is not a SARIF log (JSON nested too deeply)") from None
    if not isinstance(data, dict) or data.get("version") != "2.1.0" or not isinstance(data.get("runs"), list):
        raise UsageError(f"{path}: not a SARIF log (expected a SARIF 2.1.0 document with 'runs', "
                         "as written by 'warplint --format sarif')")
    keys = set()
    try:
        for run in data.get("runs", []):
            for r in run.get("results", []) or []:
                fp = (r.get("partialFingerprints") or {}).get(FINGERPRINT_KEY)
                locs = r.get("locations") or []
                if not fp or not locs:
                    continue
                uri = locs[0]["physicalLocation"]["artifactLocation"]["uri"]
                keys.add((r.get("ruleId", ""), uri, fp))
    except (AttributeError, KeyError, TypeError):
        raise UsageError(f"{path}: not a SARIF log written by warplint") from None
    return keys


def apply(findings, fingerprints: dict[int, str], keys, srcroot: str) -> dict[int, str]:
    """id(finding) -> "unchanged" (in the baseline) or "new"."""
    out = {}
    for f in findings:
        uri, _ = artifact_uri(f.loc.path, srcroot)
        out[id(f)] = "unchanged" if (f.rule_id, uri, fingerprints.get(id(f), "")) in keys else "new"
    return out
