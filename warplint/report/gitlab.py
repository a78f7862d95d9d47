"""GitLab Code Quality JSON (a list of issues: description, check_name, fingerprint, severity,
location.path and location.lines.begin), for `artifacts: reports: codequality`."""
from __future__ import annotations

import hashlib
import json

from . import Report, display_path, printable_data

_SEVERITY = {"error": "critical", "warning": "major", "note": "info"}


def _fingerprint(f, report: Report) -> str:
    """Unique per finding and stable across runs: the line-independent fingerprint and the path."""
    key = "\0".join((f.rule_id, display_path(f.loc.path), report.fingerprints.get(id(f), f"{f.loc.line}:{f.loc.col}")))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def render_gitlab(report: Report) -> str:
    issues = [{
        "description": f"{f.message} [{f.rule_id}]",
        "check_name": f.rule_id,
        "fingerprint": _fingerprint(f, report),
        "severity": _SEVERITY.get(f.severity, "minor"),
        "location": {"path": display_path(f.loc.path),
                     "lines": {"begin": f.loc.line, "end": f.loc.end_line or f.loc.line}},
    } for f in report.visible]
    return json.dumps(printable_data(issues), indent=2) + "\n"
