"""The cyclic collector is paused while a file is linted (pipeline._cyclic_gc_paused); the
objects made meanwhile join the oldest generation unscanned, so the first collection after the
file does not scan them all (issue 17), and cycles among them are still collected."""
from __future__ import annotations

import gc
import weakref

from warplint import pipeline
from warplint.pipeline import lint_text

KERNEL = """__global__ void k(float *out) {
  float v = out[threadIdx.x];
  if (threadIdx.x < 16) v += __shfl_down_sync(0xffffffff, v, 1);
  out[threadIdx.x] = v;
}
"""


class _Node:
    pass


def test_no_collection_scans_what_a_file_made():
    gc.collect()
    collections = []
    def started(phase, info):
        if phase == "start":
            collections.append(info["generation"])
    gc.callbacks.append(started)
    try:
        result = lint_text(KERNEL, "k.cu")
    finally:
        gc.callbacks.remove(started)
    assert gc.isenabled()
    assert collections == []  # before: a young collection of every object made, at the end
    assert any(o is result.module for o in gc.get_objects(generation=2))


def test_cycles_made_during_a_file_are_still_collected():
    gc.collect()
    with pipeline._cyclic_gc_paused():
        assert not gc.isenabled()
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
    assert alive() is not None  # no collection ran
    gc.collect()
    assert alive() is None
