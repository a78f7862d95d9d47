"""The cyclic garbage collector around a file's lint, in one place.

The front ends and the analysis build many small objects that live as long as the file's result
and hold few garbage cycles: the collector's scans of them cost about 30% of a large file.  It is
paused while a file is linted (reference counting still frees what is dropped), and the objects
made meanwhile then join the oldest generation without a scan (freeze, unfreeze: the first young
collection would scan them all, 0.45 s on a large file).

What CPython's collector does not see then is that the oldest generation grew: it collects that
generation only when the objects its young collections promoted there reach a quarter of what it
held after its last full collection (gcmodule.c, `long_lived_pending`), and objects moved by
`gc.unfreeze` count for nothing.  The garbage cycles of every file (token lists, argparse and lark
objects, closures) were never collected: a long-running process (the language server, a `--jobs`
worker, bench/fuzz.py) grew by ~0.5 MiB per input.  So the pause counts what it moves there and
runs a full collection once that doubled the generation (every object is then scanned about
twice, as the two young generations would have; a quarter, CPython's ratio for objects that
survived them, counts the files' garbage too: 13 full collections instead of 5 in 400 fuzz
inputs), before the next file: a one-file run never waits for one.

The pause's count is of the objects made and not freed: a file of a batch (`pipeline._lint_one`)
drops its result's module and analyses inside the pause, so what it counts is what the file
leaves, and reference counting frees the rest at once where no reference cycle holds it (those
found in the front end, the CFG and the checks are broken or avoided: `tests/test_collector.py`
checks that a file leaves no garbage cycle).  Counted before the drop, a batch of 300-line
files had a full collection every ~4 files (~65 ms each, ~15 ms a file)."""
from __future__ import annotations

import gc
from contextlib import contextmanager

GROWTH = 1.0  # a full collection once the pauses grew the oldest generation by this part of it


class _OldGeneration:
    """What the pauses moved into the oldest generation since its last full collection."""
    size: int | None = None  # tracked objects after that collection (None: not counted yet)
    grown = 0  # objects moved there by the pauses since
    full_collections = -1  # CPython's count of full collections when `size` was taken
    files = 0  # pauses so far: the first file of a run does not count the generation


@contextmanager
def paused():
    """The cyclic collector paused while the block runs (a file is linted)."""
    if not gc.isenabled():  # paused already (a caller, or another file on another thread)
        yield
        return
    if _OldGeneration.files:  # a one-file run never counts (a walk of every object: ~9 ms)
        _collect_if_grown()
    _OldGeneration.files += 1
    gc.disable()
    try:
        yield
    finally:
        _OldGeneration.grown += gc.get_count()[0]  # objects made and not freed since the last collection
        gc.freeze()  # the file's objects join the oldest generation unscanned
        gc.unfreeze()
        gc.enable()


def _collect_if_grown() -> None:
    """A full collection when the pauses grew the oldest generation by GROWTH since its last one
    (anyone's: `gc.collect()`, CPython's own; the generation is counted again after one)."""
    if _OldGeneration.size is None or _full_collections() != _OldGeneration.full_collections:
        _count_old_generation()
    elif _OldGeneration.grown > _OldGeneration.size * GROWTH:
        gc.collect()
        _count_old_generation()


def _count_old_generation() -> None:
    gc.freeze()
    _OldGeneration.size = gc.get_freeze_count()  # every tracked object (one walk of the list)
    gc.unfreeze()
    _OldGeneration.grown = 0
    _OldGeneration.full_collections = _full_collections()


def _full_collections() -> int:
    return gc.get_stats()[-1]["collections"]
