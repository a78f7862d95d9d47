"""Where things are: a source location and a diagnostic about the input.  Their own module
(re-exported by `ir`) so that a cache hit, which reads findings and diagnostics back, need not
build the IR's classes."""
from __future__ import annotations

from dataclasses import MISSING, dataclass, fields


def slot_init(cls):
    """Gives a frozen, slotted dataclass an `__init__` that sets each field through its slot's
    own descriptor: what the generated one does through `object.__setattr__` (the frozen
    path), at about half the cost.  Same fields, defaults, equality, hash, repr and pickling:
    only how a new object is filled in differs.  Built after the class (the slots exist then)."""
    params, body, scope = [], [], {}
    for f in fields(cls):
        assert f.init and f.default_factory is MISSING, f"{cls.__name__}.{f.name}: not supported"
        scope[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body)
    exec(source, scope)  # noqa: S102 (names from the class's own fields)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{f.name: f.type for f in fields(cls)}, "return": None}
    cls.__init__ = init
    return cls


@slot_init
@dataclass(frozen=True, slots=True)
class Loc:
    path: str
    line: int  # 1-based
    col: int = 1  # 1-based
    end_line: int | None = None  # optional span end (inclusive line, exclusive col)
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass(slots=True, eq=False)
class Diagnostic:
    """A problem with the input itself (not a rule finding): parse errors, skipped code."""
    loc: Loc
    severity: str  # "error" (file unusable, exit 2) or "note" (part skipped)
    message: str
