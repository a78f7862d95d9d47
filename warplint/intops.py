"""Integer operators on Python ints, in one place: `#if` expressions, the CUDA front end's
constant folding and the analysis' per-lane arithmetic all evaluate with these."""
from __future__ import annotations


def _div(a: int, b: int) -> int:
    """C's (and PTX's) division: the quotient truncated toward zero, exact for any size."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _shl(a: int, b: int) -> int:
    return a << b if b < 128 else 0


def _shr(a: int, b: int) -> int:
    return a >> b if b < 128 else 0


# arithmetic: a value of the operands' type (callers wrap it to their width)
ARITHMETIC = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": _div,
    "rem": lambda a, b: a - _div(a, b) * b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "shl": _shl,
    "shr": _shr,
    "min": min,
    "max": max,
}
# comparisons and logical operators: 1 or 0
_TRUTH = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "land": lambda a, b: bool(a) and bool(b),
    "lor": lambda a, b: bool(a) or bool(b),
}
# C's spelling of the binary operators
C_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem", "&": "and", "|": "or",
            "^": "xor", "<<": "shl", ">>": "shr", "==": "eq", "!=": "ne", "<": "lt", "<=": "le",
            ">": "gt", ">=": "ge", "&&": "land", "||": "lor"}


def binary(op: str, a: int, b: int) -> int | None:
    """`a op b` (op by name: "add", "shl", "lt", ...); None when undefined: division by zero,
    a negative shift count, an unknown operator."""
    if op in ("div", "rem") and b == 0 or op in ("shl", "shr") and b < 0:
        return None
    f = ARITHMETIC.get(op)
    if f is not None:
        return f(a, b)
    f = _TRUTH.get(op)
    return None if f is None else int(f(a, b))


def c_unary(op: str, v: int) -> int | None:
    """C's prefix `-`, `+`, `~`, `!` on `v`; None for another operator."""
    if op == "-":
        return -v
    if op == "+":
        return v
    if op == "~":
        return ~v
    if op == "!":
        return int(not v)
    return None
