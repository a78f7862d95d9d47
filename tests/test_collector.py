"""The cyclic collector around a file (warplint/collector.py): what a file of a batch leaves is
freed by reference counting, so the pause's count is what stays and full collections are rare."""
from __future__ import annotations

import gc
import os
from collections import Counter

from conftest import ROOT

from warplint import pipeline
from warplint.options import Options

FIXTURES = os.path.join(ROOT, "fixtures")


def _fixtures() -> list[str]:
    out = []
    for folder, _, names in os.walk(FIXTURES):
        out.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith((".cu", ".cuh", ".ptx")))
    return sorted(out)


def _ours(o) -> bool:
    """Is `o` made by warplint's code, or a parser/graph object it made (a cycle through one is
    a file's; other libraries' first-use garbage, such as networkx compiling a decorator, is
    not)?"""
    code = getattr(o, "__code__", None)
    if code is not None:
        return "warplint" in code.co_filename
    return type(o).__module__.split(".")[0] in ("warplint", "pycparser") or type(o).__module__ == "networkx.classes.digraph"


def test_a_file_of_a_batch_leaves_no_reference_cycle():
    """Every fixture linted as a file of a batch: what it leaves in reference cycles (found by
    collecting only the objects made since the last file: the rest is frozen)."""
    options = Options()
    left = {}
    gc.collect()
    gc.freeze()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for path in _fixtures():
            pipeline._lint_one(path, options)
            gc.collect()
            found = Counter(type(o).__qualname__ for o in gc.garbage if _ours(o))
            gc.garbage.clear()
            gc.freeze()  # what the file left (memories) is not looked at again
            if found:
                left[os.path.relpath(path, ROOT)] = found.most_common(4)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.unfreeze()
        gc.enable()
    assert not left, f"{len(left)} files left reference cycles: {dict(list(left.items())[:5])}"


def test_a_batch_needs_no_full_collection_for_its_garbage():
    """With the drop inside the pause, 60 files of a few KB count little: far fewer full
    collections than files."""
    options = Options()
    paths = [p for p in _fixtures() if p.endswith(".cu")][:60]
    before = gc.get_stats()[-1]["collections"]
    for path in paths:
        pipeline._lint_one(path, options)
    assert gc.get_stats()[-1]["collections"] - before <= 2
