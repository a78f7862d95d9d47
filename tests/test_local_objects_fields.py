"""The fields of each variable pointed into are found in one pass over the registers (issue 17:
it was a scan of every register per pointer), the same ones as the scan."""
from __future__ import annotations

import random

from warplint.analysis.local_objects import _fields_by_variable


def test_the_same_fields_as_scanning_every_register():
    rng = random.Random(17)
    parts = ["x", "y", "x@1", "s", "f", "g", "__0", "len", "x.f"]
    regs = {".".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(400)}
    fields = _fields_by_variable(regs)
    for x in {r.partition(".")[0] for r in regs} | {"x.f", "x.f.g", "s.len", "nothing"}:
        assert sorted(fields.get(x, ())) == sorted(r for r in regs if r.startswith(x + "."))
