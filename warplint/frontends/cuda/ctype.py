"""C types as the CUDA lowering sees them, and the error for what it does not support."""
from __future__ import annotations

from enum import Enum


class Unsupported(Exception):
    def __init__(self, msg, coord=None):
        super().__init__(msg)
        self.msg = msg
        self.coord = coord


# -- types ------------------------------------------------------------------------------
class Kind(str, Enum):
    """What a C type is to the lowering (the value is its PTX type letter where it has one)."""
    SIGNED = "s"
    UNSIGNED = "u"
    FLOAT = "f"
    BITS = "b"  # an opaque value, a struct value, void
    POINTER = "p"
    ARRAY = "a"
    PRED = "pred"


class T:
    __slots__ = ("kind", "bits", "elem", "space", "vol", "dims", "name")

    def __init__(self, kind, bits=32, elem=None, space=None, vol=False, dims=(), name=None):
        self.kind = Kind(kind)
        self.bits = bits
        self.elem = elem
        self.space = space
        self.vol = vol
        self.dims = dims
        self.name = name

    def with_(self, **kw):
        t = T(self.kind, self.bits, self.elem, self.space, self.vol, self.dims, self.name)
        for k, v in kw.items():
            setattr(t, k, v)
        return t

    @property
    def is_ptr(self):
        return self.kind in (Kind.POINTER, Kind.ARRAY)

    @property
    def size(self) -> int:
        if self.kind == Kind.ARRAY:
            n = 1
            for d in self.dims:
                n *= d or 1
            return n * self.elem.size
        if self.kind == Kind.POINTER:
            return 8
        return max(1, self.bits // 8)

    @property
    def ptx(self) -> str:
        if self.kind in (Kind.POINTER, Kind.ARRAY):
            return "u64"
        if self.kind == Kind.FLOAT:
            return f"f{max(self.bits, 16)}"
        if self.kind in (Kind.SIGNED, Kind.UNSIGNED):
            return f"{self.kind.value}{max(self.bits, 8)}"
        b = self.bits
        return f"b{b}" if b in (8, 16, 32, 64, 128) else "b32"

    @property
    def arith(self) -> str:
        """Type suffix of arithmetic after integer promotion."""
        if self.kind in (Kind.POINTER, Kind.ARRAY):
            return "s64"
        if self.kind == Kind.FLOAT:
            return f"f{max(self.bits, 32)}"
        if self.kind in (Kind.SIGNED, Kind.UNSIGNED):
            return f"{self.kind.value}{max(self.bits, 32)}"
        return "s32" if self.bits <= 32 else "b64"


INT = T(Kind.SIGNED, 32)
UINT = T(Kind.UNSIGNED, 32)
LL = T(Kind.SIGNED, 64)
ULL = T(Kind.UNSIGNED, 64)
FLOAT = T(Kind.FLOAT, 32)
DOUBLE = T(Kind.FLOAT, 64)
BOOL = T(Kind.UNSIGNED, 8)
OPAQUE = T(Kind.BITS, 32)
PRED = T(Kind.PRED, 1)
