"""C types as the CUDA lowering sees them, and the error for what it does not support."""
from __future__ import annotations


class Unsupported(Exception):
    def __init__(self, msg, coord=None):
        super().__init__(msg)
        self.msg = msg
        self.coord = coord


# -- types ------------------------------------------------------------------------------
class T:
    __slots__ = ("kind", "bits", "elem", "space", "vol", "dims", "name")

    def __init__(self, kind, bits=32, elem=None, space=None, vol=False, dims=(), name=None):
        self.kind = kind  # s u f b(opaque/struct value) p(pointer) a(array)
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
        return self.kind in ("p", "a")

    @property
    def size(self) -> int:
        if self.kind == "a":
            n = 1
            for d in self.dims:
                n *= d or 1
            return n * self.elem.size
        if self.kind == "p":
            return 8
        return max(1, self.bits // 8)

    @property
    def ptx(self) -> str:
        if self.kind in ("p", "a"):
            return "u64"
        if self.kind == "f":
            return f"f{max(self.bits, 16)}"
        if self.kind in ("s", "u"):
            return f"{self.kind}{max(self.bits, 8)}"
        b = self.bits
        return f"b{b}" if b in (8, 16, 32, 64, 128) else "b32"

    @property
    def arith(self) -> str:
        """Type suffix of arithmetic after integer promotion."""
        if self.kind in ("p", "a"):
            return "s64"
        if self.kind == "f":
            return f"f{max(self.bits, 32)}"
        if self.kind in ("s", "u"):
            return f"{self.kind}{max(self.bits, 32)}"
        return "s32" if self.bits <= 32 else "b64"


INT = T("s", 32)
UINT = T("u", 32)
LL = T("s", 64)
ULL = T("u", 64)
FLOAT = T("f", 32)
DOUBLE = T("f", 64)
BOOL = T("u", 8)
OPAQUE = T("b", 32)
PRED = T("pred", 1)
