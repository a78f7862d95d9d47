"""Targets (sm_XX) and what they imply: execution model, instruction availability."""
from __future__ import annotations

import re
from dataclasses import dataclass

# at most 4 digits: real ones have 2 or 3, and int() of thousands of digits is an error
_SM = re.compile(r"^(?:sm|compute)_([0-9]{1,4})([a-z]?)$")


@dataclass(frozen=True, order=True)
class Target:
    sm: int  # 70 for sm_70, 100 for sm_100a
    suffix: str = ""  # "a" (arch-specific) / "f" (family) / ""

    @classmethod
    def parse(cls, name: str) -> "Target":
        m = _SM.match(name.strip().lower())
        if not m:
            raise ValueError(f"not a target name: {name!r} (expected e.g. sm_70)")
        return cls(int(m[1]), m[2])

    @property
    def name(self) -> str:
        return f"sm_{self.sm}{self.suffix}"

    @property
    def independent_scheduling(self) -> bool:
        """Volta (sm_70) and newer: no lockstep, no implied reconvergence."""
        return self.sm >= 70

    def __str__(self) -> str:
        return self.name


def parse_ptx_target(directive_args: str) -> str | None:
    """First sm_XX name in a `.target` directive's arguments (`sm_80, texmode_independent`)."""
    for part in directive_args.replace(",", " ").split():
        if _SM.match(part):
            return part
    return None
