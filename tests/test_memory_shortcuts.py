"""The hazard search's shortcuts (issue 17) find what the long way finds: a block where nothing
happens passes its one incoming state on (not a copy), what one search asks of a pair of
accesses (whether they are compared, whether they conflict) is answered once, and accesses on
sibling paths are paired only with those they may race with."""
from __future__ import annotations

from pathlib import Path

import pytest

from test_memory_pairs import RACE_FIXTURES, _hazards

from warplint.analysis import memory
from warplint.options import Options
from warplint.pipeline import lint_text


def _found(path: Path) -> list[tuple]:
    return _hazards(path, notes=True)


def _long_way(monkeypatch) -> None:
    monkeypatch.setattr(memory, "_passes_through", lambda ins_b, run: False)
    monkeypatch.setattr(memory, "_walked_with", lambda last, seen: False)

    def partners(self, acc):
        return frozenset(id(p.instr) for p in self.by_instr.values()
                         if memory._base(p) == memory._base(acc) and memory._may_race(p, acc)
                         and not memory._exclusive(p, acc, self.lits, self.in_loop))
    monkeypatch.setattr(memory._Pairs, "partners", partners)
    monkeypatch.setattr(memory._Pairs, "racing", lambda self, acc: frozenset(self.by_instr))  # every pair
    monkeypatch.setattr(memory._Pairs, "conflict",
                        lambda self, a, b: memory._ordered_conflict(a, b, self.lits, self.caller_pointers))


@pytest.mark.parametrize("path", RACE_FIXTURES, ids=lambda p: p.name)
def test_shortcuts_find_what_the_long_way_finds(path, monkeypatch):
    assert RACE_FIXTURES
    short = _found(path)
    _long_way(monkeypatch)
    assert short == _found(path)


def test_shortcuts_past_the_work_bound(monkeypatch):
    """A function past MAX_PENDING accesses, with branches and a loop: the same races and note."""
    body = "".join(f"  if (in[{k}] > 0) out[threadIdx.x + {32 * k}] = s[threadIdx.x ^ {k % 3 + 1}];\n"
                   f"  s[threadIdx.x] = in[{k}];\n" for k in range(memory.MAX_PENDING // 2 + 4))
    src = ("__global__ void k(float *out, const float *in, int n) {\n  __shared__ float s[64];\n"
           "  for (int i = 0; i < n; i++) {\n" + body + "  }\n}\n")
    path = Path("k.cu")
    result = lint_text(src, str(path), Options(targets=["sm_70"]))
    assert any(memory.PENDING_NOTE in d.message for d in result.diagnostics)

    def found():
        r = lint_text(src, str(path), Options(targets=["sm_70"]))
        return [(f.rule_id, f.loc.line, f.message, f.certainty) for f in r.findings], \
            [d.message for d in r.diagnostics]
    short = found()
    _long_way(monkeypatch)
    assert short == found()
    assert short[0]


@pytest.mark.parametrize("path", RACE_FIXTURES, ids=lambda p: p.name)
def test_partners_are_the_pairs_that_may_race_and_are_not_exclusive(path):
    """`_Pairs.partners` (from indexes by base, kind and space, and by required literal) against
    `_may_race` and `_exclusive` asked of every pair."""
    result = lint_text(path.read_text(), str(path), Options(targets=["sm_70"]))
    for fa in result.analyses:
        accesses = [a for a in fa.accesses if a.instr.op not in ("atom", "red")]
        in_loop = set().union(*fa.cfg.loops.values())
        pairs = memory._Pairs(fa, accesses, in_loop)
        for acc in accesses:
            expected = {id(p.instr) for p in accesses if memory._may_race(p, acc)
                        and not memory._exclusive(p, acc, fa.lits, in_loop)}
            assert pairs.partners(acc) == expected
            assert pairs.racing(acc) == {id(p.instr) for p in accesses if memory._may_race(p, acc)} == \
                {id(p.instr) for p in accesses if memory._may_race(acc, p)}  # (either order)


def _random_kernel(rng) -> str:
    """Nested branches (uniform and per-lane), loops, barriers and shared reads and writes."""
    lines = ["__global__ void k(float *out, const float *in, int n, int flags) {",
             "  __shared__ float s[128];", "  int t = threadIdx.x;"]
    index = ["t", "t ^ 1", "t + 1", "0", "t / 2", "31 - t", "t + 32"]

    def statement(depth: int) -> None:
        pad, r = "  " * (depth + 1), rng.random()
        if depth < 3 and r < 0.2:
            cond = rng.choice(["t < 16", "(flags & 4)", "!(flags & 4)", "t == 0", "in[t] > 0", "n > 2"])
            lines.append(f"{pad}if ({cond}) {{")
            for _ in range(rng.randint(1, 3)):
                statement(depth + 1)
            if rng.random() < 0.5:
                lines.append(f"{pad}}} else {{")
                for _ in range(rng.randint(1, 3)):
                    statement(depth + 1)
            lines.append(f"{pad}}}")
        elif depth < 3 and r < 0.35:
            i = f"i{len(lines)}"
            lines.append(f"{pad}for (int {i} = 0; {i} < {rng.choice(['n', '4', 'flags'])}; {i}++) {{")
            for _ in range(rng.randint(1, 3)):
                statement(depth + 1)
            lines.append(f"{pad}}}")
        elif r < 0.45:
            lines.append(pad + rng.choice(["__syncwarp();", "__syncthreads();"]))
        elif r < 0.75:
            lines.append(f"{pad}s[{rng.choice(index)}] = in[t] + {rng.randint(0, 9)};")
        else:
            lines.append(f"{pad}out[t] += s[{rng.choice(index)}];")
    for _ in range(rng.randint(3, 9)):
        statement(0)
    return "\n".join(lines) + "\n}\n"


@pytest.mark.parametrize("seed", range(30))
def test_shortcuts_on_random_kernels(seed, monkeypatch):
    """Loops, branches and barriers mixed at random: the same races (lanes, certainty, the
    barrier a path skips) with every block walked in every pass."""
    import random
    src = _random_kernel(random.Random(seed))

    def found():
        r = lint_text(src, f"random{seed}.cu", Options(targets=["sm_70"]))
        return [(h.first.instr.loc.line, h.second.instr.loc.line, h.kind, h.writer, h.reader, h.definite,
                 h.skipped_barrier.loc.line if h.skipped_barrier is not None else None)
                for fa in r.analyses for h in memory.find_hazards(fa)], \
            [(f.loc.line, f.message, f.certainty) for f in r.findings]
    short = found()
    _long_way(monkeypatch)
    assert short == found()
