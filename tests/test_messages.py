"""Findings' messages as data (warplint/messages.py): every kind renders from its fields, the
wording stays as it was, and checks pass message objects, never text."""
from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import pytest

from warplint import messages
from warplint.messages import (ActivemaskAsMembermask, BarrierDivergence, LaneNotInMembermask, Message,
                               ReadAfterWriteRace, ShflClampInvalid, UnusedSuppression)

SAMPLE = {"int": 3, "bool": True, "str": "x", "int | None": 5, "tuple[str, ...]": ("a", "b")}
KINDS = [c for _, c in inspect.getmembers(messages, inspect.isclass)
         if issubclass(c, Message) and c is not Message and not c.__name__.startswith("_")]


@pytest.mark.parametrize("kind", KINDS, ids=lambda c: c.__name__)
def test_every_kind_renders_from_its_fields(kind):
    hints = typing.get_type_hints(kind)
    args = {name: SAMPLE[str(t).replace("typing.", "") if not isinstance(t, type) else t.__name__]
            for name, t in hints.items() if name != "template"}
    text = str(kind(**args))
    assert text and "{" not in text


@pytest.mark.parametrize("message,text", [
    (LaneNotInMembermask(0xFF00, "__shfl_sync", "0x000000ff", True),
     "lanes 8-15 execute '__shfl_sync' but are not in its membermask 0x000000ff (undefined behaviour)"),
    (LaneNotInMembermask(0xFF00, "__shfl_sync", "0x000000ff", False),
     "lanes 8-15 may execute '__shfl_sync' but would be not in its membermask 0x000000ff (undefined behaviour)"),
    (BarrierDivergence("bar.sync", 0, False),
     "'bar.sync' may be reached by only some warps of the block (the condition depends on threadIdx); "
     "the threads that skip it do not exit, so the block deadlocks or the barrier is undefined"),
    (ActivemaskAsMembermask("__ballot_sync", None),
     "the membermask of '__ballot_sync' is the value of activemask, which may be any subset of the lanes "
     "on this path: the result depends on which lanes happen to be converged"),
    (ReadAfterWriteRace(0, 1, "shared", 57, True),
     "lane 0 reads shared memory that lane 1 wrote at line 57 with no __syncwarp() in between "
     "(data race on sm_70+)"),
    (ShflClampInvalid(0x1f00, 3, "down", 1, 0x1f, 0),
     "shfl c operand 0x1f00: clamp value 3 does not fit .down with a segment of width 1 "
     "(expected 0, i.e. c = 0x1f00)"),
    (UnusedSuppression(("*",), 4), "unused suppression: no every rule finding on line 4"),
    (UnusedSuppression(("WL001", "WL003"), 4), "unused suppression: no WL001, WL003 finding on line 4"),
])
def test_wording(message, text):
    assert str(message) == text


def test_checks_report_messages_not_text():
    checks = Path(messages.__file__).parent / "checks"
    for path in checks.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\.report\([^,()]+,\s*f?[\"']", source), f"{path.name} reports a string"
        assert ".text.startswith(" not in source, f"{path.name} decides on display text"
