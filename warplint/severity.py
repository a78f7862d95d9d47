"""The severities, ascending: the one list that the CLI, the configuration, the rule documents
and the reporters read.  A module of its own so that `warplint --version` stays cheap."""
from __future__ import annotations

SEVERITIES = ("note", "warning", "error")


def severity_rank(sev: str) -> int:
    return SEVERITIES.index(sev)
