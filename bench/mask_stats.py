"""How precise is the divergence analysis on real code?

    python bench/mask_stats.py FILE.ptx [--target sm_80]

Prints, for every warp primitive and barrier in the file: how many get an exact active
mask, how many of those are the full warp, how many are symbolic (data-dependent) and how
many membermasks are known; then the findings by rule and certainty.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warplint.pipeline import analyse, check, resolve_targets  # noqa: E402
from warplint.frontends.ptx import parse_ptx  # noqa: E402
from warplint.options import Options  # noqa: E402


_ORDER = ["warp", "active", "with", "membermask", "barriers", "barrier"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--target", action="append")
    args = ap.parse_args()
    opts = Options(targets=args.target)
    counts = collections.Counter()
    findings = collections.Counter()
    examples = collections.defaultdict(list)
    t0 = time.perf_counter()
    for path in args.files:
        module = parse_ptx(Path(path).read_text(), path)
        analyses = analyse(module, opts)
        for fa in analyses:
            for op in fa.warp_ops:
                counts["warp primitives"] += 1
                e = op.active.warp_exact(fa.lits)
                if e is None:
                    counts["  active: symbolic (data-dependent subset)"] += 1
                elif e == 0xFFFFFFFF:
                    counts["  active: exact, full warp"] += 1
                else:
                    counts["  active: exact, partial warp"] += 1
                if op.member_value is not None:
                    counts["  with a membermask operand"] += 1
                    if op.member is not None:
                        counts["    membermask known (same on all lanes)"] += 1
                    elif op.member_groups:
                        counts["    membermask known per lane (sub-warp groups)"] += 1
                    else:
                        counts["    membermask unknown"] += 1
            for bar in fa.barriers:
                counts["barriers"] += 1
                e = bar.active.warp_exact(fa.lits)
                counts["  barrier: exact, full warp" if e == 0xFFFFFFFF else
                       "  barrier: exact, partial warp" if e is not None else "  barrier: symbolic"] += 1
        for f in check(module, analyses, resolve_targets(module, opts), opts):
            findings[(f.rule_id, f.certainty)] += 1
            if len(examples[f.rule_id]) < 3:
                examples[f.rule_id].append(f"{f.loc}: {f.message}")
    elapsed = time.perf_counter() - t0
    for k, v in sorted(counts.items(), key=lambda kv: _ORDER.index(kv[0].strip().split(":")[0].split(" ")[0])
                       if kv[0].strip().split(":")[0].split(" ")[0] in _ORDER else 99):
        print(f"{k:40s} {v}")
    print("findings:", dict(findings) or "none")
    for rule, ex in sorted(examples.items()):
        for line in ex:
            print(f"  {rule} {line}")
    print(f"time: {elapsed:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
