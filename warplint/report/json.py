"""Stable JSON: {version, tool, findings: [...], diagnostics: [...], summary}.

Schema version 1; fields are only ever added.  Paths are relative to the cwd when under it.
"""
from __future__ import annotations

import json as _json

from ..catalog import slug
from . import Report, display_path, printable_data

SCHEMA_VERSION = 1


def _step(s) -> dict:
    return {"path": display_path(s.loc.path), "line": s.loc.line, "column": s.loc.col, "message": s.message}


def finding_dict(f, report: Report | None = None) -> dict:
    d = {
        "rule_id": f.rule_id,
        "slug": slug(f.rule_id) or "",
        "severity": f.severity,
        "certainty": f.certainty,
        "message": f.message,
        "path": display_path(f.loc.path),
        "line": f.loc.line,
        "column": f.loc.col,
        "end_line": f.loc.end_line,
        "end_column": f.loc.end_col,
        "details": list(f.details),
        "targets": list(f.targets),
        "function": f.function,
        "flow": [_step(s) for s in f.flow],
        "related": [_step(s) for s in f.related],
        "fix": None if f.fix is None else {
            "description": f.fix.description,
            "edits": [{"path": display_path(e.path), "line": e.line, "column": e.col, "end_line": e.end_line,
                       "end_column": e.end_col, "text": e.text} for e in f.fix.edits]},
        "suppressed": f.suppressed,
    }
    if report is not None:
        if id(f) in report.fingerprints:
            d["fingerprint"] = report.fingerprints[id(f)]
        if id(f) in report.baseline:
            d["baseline_state"] = report.baseline[id(f)]
    return d


def render_json(report: Report) -> str:
    from .. import __version__
    from .text import summary
    data = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "warplint", "version": __version__},
        "findings": [finding_dict(f, report) for f in report.findings],
        "diagnostics": [{"path": display_path(d.loc.path), "line": d.loc.line, "column": d.loc.col,
                         "severity": d.severity, "message": d.message} for d in report.diagnostics],
        "files": [display_path(p) for p in report.files],
        "summary": summary(report),
        "coverage": report.coverage.as_dict() if report.coverage is not None else None,
    }
    if report.masks:  # --show-masks
        data["masks"] = {display_path(p): text for p, text in report.masks.items()}
    return _json.dumps(printable_data(data), indent=2) + "\n"
