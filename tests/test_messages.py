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
                               MembermaskLanesNeverArrive, NonSyncPrimitive, PreVoltaMaskMismatch,
                               ReadAfterWriteRace, ShflClampInvalid, ShuffleSourceInvalid, UnusedSuppression,
                               WriteAfterReadRace, condition_words)

SAMPLE = {"int": 3, "bool": True, "str": "x", "int | None": 5, "tuple[str, ...]": ("a", "b"),
          "tuple[warplint.messages.Requirement, ...]": (messages.Requirement("sm", "sm_80", "sm_70"),)}
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
     "lanes 8-15 execute '__shfl_sync' but are not in its membermask 0x000000ff: the result is undefined"),
    (LaneNotInMembermask(0xFF00, "__shfl_sync", "0x000000ff", False),
     "lanes 8-15 may execute '__shfl_sync' but may not be in its membermask 0x000000ff: the result is undefined"),
    (LaneNotInMembermask(0xFFFFFFFF, "__all_sync", "the lanes where v > 0", False),
     "all 32 lanes may execute '__all_sync' but may not be in its membermask (the lanes where v > 0): "
     "the result is undefined"),
    (LaneNotInMembermask(0x100, "__shfl_sync", "0x000000ff", True),
     "lane 8 executes '__shfl_sync' but is not in its membermask 0x000000ff: the result is undefined"),
    (ShuffleSourceInvalid(1 << 7, 1 << 8, ("not in the membermask",), True),
     "lane 7 reads from lane 8, which is not in the membermask: the value read is undefined"),
    (ShuffleSourceInvalid(0xFF00, 0xFF0000, ("not in the membermask",), True),
     "lanes 8-15 read from lanes 16-23, which are not in the membermask: the values read are undefined"),
    (MembermaskLanesNeverArrive("0xffffffff", "__shfl_xor_sync", 0xFFFF0000, True),
     "lanes 16-31 are in the membermask 0xffffffff of '__shfl_xor_sync' but never reach a matching "
     "'__shfl_xor_sync' or exit: the warp hangs or the result is undefined"),
    (PreVoltaMaskMismatch("sm_60", "0xffffffff", "__shfl_sync", 0xFFFFFFF8, True),
     "on sm_60 (pre-Volta), lanes 3-31 are in the membermask 0xffffffff of '__shfl_sync' but not active "
     "here: every lane in the membermask must execute this instruction together, so the result is undefined"),
    (WriteAfterReadRace(0, 1, "shared", 10, True),
     "lane 1 overwrites shared memory that lane 0 read at line 10 with no __syncwarp() in between "
     "(data race on sm_70+)"),
    (BarrierDivergence("bar.sync", 0, False),
     "'bar.sync' may be reached by only some warps of the block (its condition can differ between warps); "
     "the threads that skip it do not exit, so the block deadlocks or the barrier is undefined"),
    (ActivemaskAsMembermask("__ballot_sync", None),
     "the membermask of '__ballot_sync' is the value of activemask, which may be any subset of the lanes "
     "on this path: the result depends on which lanes happen to be converged"),
    (ReadAfterWriteRace(0, 1, "shared", 57, True),
     "lane 0 reads shared memory that lane 1 wrote at line 57 with no __syncwarp() in between "
     "(data race on sm_70+)"),
    (ShflClampInvalid(0x1f00, 3, "down", 1, 0x1f, 0),
     "shfl c operand 0x1f00: clamp value 3 does not fit .down with a segment of width 1, so lanes read "
     "past their segment (expected 0, i.e. c = 0x1f00)"),
    (UnusedSuppression(("*",), 4), "unused suppression: there is no finding on line 4 to suppress"),
    (UnusedSuppression(("WL001", "WL003"), 4),
     "unused suppression: there is no WL001 or WL003 finding on line 4 to suppress"),
])
def test_wording(message, text):
    assert str(message) == text


def test_checks_report_messages_not_text():
    package = Path(messages.__file__).parent
    for path in package.glob("checks/*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\.report\([^,()]+,\s*f?[\"']", source), f"{path.name} reports a string"
    for path in [*package.glob("checks/*.py"), *package.glob("analysis/*.py")]:
        assert ".text.startswith(" not in path.read_text(encoding="utf-8"), f"{path.name} decides on display text"


@pytest.mark.parametrize("text,positive,line,words", [
    ("$t12 == 0", True, None, "a computed value == 0"),
    ("off@1 > 0", True, None, "off > 0"),
    ("!(tid >= n)", True, None, "not (tid >= n)"),
    ("!(tid >= n)", False, None, "tid >= n"),
    ("i < n", False, None, "not (i < n)"),
    ("%r3 > 0", True, 24, "%r3 > 0 at line 24"),
])
def test_conditions_in_user_terms(text, positive, line, words):
    assert condition_words(text, positive, line) == words


def test_targets_merge_into_one_message():
    removed = NonSyncPrimitive("__shfl", "__shfl_sync", True, True, "sm_70", 0xFFFFFFFF)
    deprecated = NonSyncPrimitive("__shfl", "__shfl_sync", True, False, "sm_60", 0xFFFFFFFF)
    assert NonSyncPrimitive.merged([(removed, ("sm_70",)), (deprecated, ("sm_60",))]) == (
        "'__shfl' without a membermask is removed for sm_70+, deprecated for sm_60; use '__shfl_sync' "
        "with membermask 0xffffffff")


def test_no_internal_names_in_fixture_findings():
    """No analysis-internal name ($t3, n@1) reaches a message, detail or flow step."""
    from fixture_harness import fixture_files
    from warplint.pipeline import lint_file
    internal = re.compile(r"\$t\d|\w@\d")
    for path in fixture_files():
        if path.suffix != ".cu":
            continue
        for f in lint_file(str(path)).findings:
            for text in [f.message, *f.details, *(s.message for s in f.flow)]:
                assert not internal.search(text), f"{path.name}:{f.loc.line}: {text}"


def test_cuda_conditions_are_quoted_as_written():
    from warplint.options import Options
    from warplint.pipeline import lint_text
    src = ("__global__ void k(int *d, int n)\n{\n    int i = threadIdx.x;\n    int v = d[i];\n"
           "    if (i + 1 < n && !(v == 3))\n        v = __shfl(v, 0);\n    d[i] = v;\n}\n")
    f, = lint_text(src, "k.cu", Options(targets=["sm_70"])).findings
    assert f.details[0] == "executed by the lanes where i + 1 < n and not (v == 3)"
