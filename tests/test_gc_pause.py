"""The cyclic collector is paused while a file is linted (collector.paused); the objects made
meanwhile join the oldest generation unscanned, so the first collection after the file does not
scan them all (issue 17), and cycles among them are still collected, by a full collection once
the pauses doubled that generation: a long-running process (language server, `--jobs`
worker, bench/fuzz.py) grew by ~0.5 MiB per input when only an explicit `gc.collect()` did."""
from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from warplint import collector
from warplint.analysis import transfer
from warplint.ir import Instr
from warplint.memo import MAX_WORDS
from warplint.pipeline import lint_text

ROOT = Path(__file__).resolve().parent.parent
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
    with collector.paused():
        assert not gc.isenabled()
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        alive = weakref.ref(a)
        del a, b
    assert alive() is not None  # no collection ran
    gc.collect()
    assert alive() is None


def _garbage_cycle(size: int) -> weakref.ref:
    """`size` objects in a ring, dropped: garbage only the cyclic collector frees."""
    ring = [_Node() for _ in range(size)]
    for a, b in zip(ring, ring[1:] + ring[:1]):
        a.other = b
    return weakref.ref(ring[0])


def test_cycles_made_during_files_are_collected_without_help():
    gc.collect()
    process = len(gc.get_objects())
    alive = []
    for _ in range(40):  # garbage of about four times what the process holds, file by file
        with collector.paused():
            alive.append(_garbage_cycle(process // 10))
    left = sum(r() is not None for r in alive)
    assert left <= len(alive) // 2  # before: all 40 (no full collection ever ran)


_LONG_RUN = """
import itertools, sys, tracemalloc
sys.path.insert(0, {bench!r})
from bench_memory import small_inputs
from warplint.frontends.cuda import frontend, lexer
from warplint.memo import TextMemo
from warplint.pipeline import lint_text
frontend.PARSED = TextMemo(max_chars=20_000)
lexer.TOKENIZED = TextMemo(max_chars=20_000)
inputs = small_inputs(700)
tracemalloc.start()
for text, path in itertools.islice(inputs, 100):  # warm: the bounded memories fill
    lint_text(text, path)
warm = tracemalloc.get_traced_memory()[0]
for text, path in inputs:
    lint_text(text, path)
print(tracemalloc.get_traced_memory()[0] - warm)
"""


@pytest.mark.slow
def test_memory_stays_bounded_over_many_inputs():
    """The issue's reproducer: many different inputs in one process, nobody calling gc.collect().
    The text memories are made small (they are bounded: 1 M / 2 M characters) so that what is
    left to grow is what no one holds.  In a process of its own: a full collection comes once the
    pauses doubled the oldest generation, so the heap earlier tests left would set the bound."""
    code = _LONG_RUN.format(bench=str(ROOT / "bench"))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    grown = int(run.stdout.split()[-1])
    assert grown < 30 << 20, f"{grown >> 20} MiB more after 600 more inputs"  # before: 58 MiB, now 13


def test_memories_keyed_by_the_inputs_words_are_bounded(monkeypatch):
    """An opcode is a word of the input: a long run of fuzzed PTX meets ever new ones."""
    monkeypatch.setattr(transfer, "_BITS", {})
    for i in range(MAX_WORDS + 100):
        transfer.type_bits(Instr(f"add.u{i}", [], []))
    assert len(transfer._BITS) <= MAX_WORDS
