"""Worker processes for `--jobs`: each worker gets one item at a time, so a worker that dies or
runs past the time limit costs only the item it was on; a fresh worker takes the rest.

Workers ignore SIGINT: Ctrl-C reaches the main process, which stops every worker (SIGKILL) and
exits; no worker prints a traceback, and a stuck worker cannot keep the run alive.
"""
from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait


@dataclass
class Lost:
    """An item whose worker died or ran out of time: `reason` says which, in words."""
    reason: str


def _context():
    # fork: workers start in milliseconds and inherit the loaded analyses
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _serve(conn, work) -> None:
    """A worker: (index, item) in, (index, work(item)) out, until None or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                return
            index, item = msg
            try:
                conn.send((index, work(item)))
            except (EOFError, OSError):
                raise
            except Exception as e:  # e.g. a result that cannot be pickled: a word, not a traceback
                conn.send((index, Lost(f"internal error in the worker process: {type(e).__name__}: {e}")))
    except (EOFError, OSError):  # the main process went away
        pass


class _Worker:
    def __init__(self, ctx, work):
        here, there = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(there, work), daemon=True)
        blocked = hasattr(signal, "pthread_sigmask")
        if blocked:  # no SIGINT between the fork and the worker ignoring it
            old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc.start()
        finally:
            if blocked:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        there.close()
        self.conn = here
        self.job: int | None = None
        self.started = 0.0

    def give(self, index: int, item) -> None:
        self.conn.send((index, item))
        self.job, self.started = index, time.monotonic()

    def stop(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()

    def death(self) -> str:
        self.proc.join(5)
        code = self.proc.exitcode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}"


def run_all(items: list, work, jobs: int, timeout: float | None) -> list:
    """[work(item) or Lost] in the order of `items`, on up to `jobs` worker processes; an item
    taking longer than `timeout` seconds (None: no limit) is stopped and Lost."""
    ctx = _context()
    results: list = [None] * len(items)
    pending = deque(range(len(items)))
    workers: list[_Worker] = []
    try:
        while pending or any(w.job is not None for w in workers):
            while pending and len(workers) < jobs:
                workers.append(_Worker(ctx, work))
            for w in workers:
                if w.job is None and pending:
                    i = pending.popleft()
                    w.give(i, items[i])
            busy = [w for w in workers if w.job is not None]
            wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], _time_left(busy, timeout))
            for w in busy:
                lost = _collect(w, results, timeout)
                if lost is not None:
                    results[w.job] = Lost(lost)
                    w.stop()
                    workers.remove(w)
    finally:
        for w in workers:
            w.stop()
    return results


def _time_left(busy: list[_Worker], timeout: float | None) -> float | None:
    if timeout is None or not busy:
        return None
    now = time.monotonic()
    return max(0.0, min(w.started + timeout - now for w in busy))


def _collect(w: _Worker, results: list, timeout: float | None) -> str | None:
    """Take a finished worker's result; the reason the item is lost, or None."""
    if w.conn.poll():
        try:
            index, value = w.conn.recv()
        except (EOFError, OSError):
            return f"the worker process died ({w.death()})"
        results[index] = value
        w.job = None
        return None
    if not w.proc.is_alive():
        return f"the worker process died ({w.death()})"
    if timeout is not None and time.monotonic() - w.started >= timeout:
        return f"analysis took longer than the time limit of {timeout:g} s (--timeout)"
    return None
