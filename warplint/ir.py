"""The warp IR shared by both front ends.

A module is a list of functions; a function body is a flat list of `Instr` and `Label`
items in program order (the CFG builder cuts it into basic blocks).  Instructions are
PTX-shaped three-address code: the CUDA-C front end lowers `__shfl_xor_sync(m, v, 16)`
to the same `shfl.sync.bfly.b32` a PTX file would contain, so one analysis serves both.

Conventions every front end follows:
- `opcode` is the full dotted opcode (`shfl.sync.bfly.b32`, `ld.volatile.shared.u32`).
- Registers and variables are `Reg`; special registers keep their PTX names
  (`%laneid`, `%tid.x`, `%ctaid.y`, `%ntid.x`, `%lanemask_lt`, `WARP_SZ`).  Names are
  unique per function (front ends rename scoped/shadowed names, e.g. `lo` -> `lo$3`).
- Immediates are `Imm` (ints are kept as Python ints, floats as floats).
- `Sym` names a label, function, global/shared variable or parameter.
- Memory operands are `Addr(base, offset)`; the state space is in the opcode
  (`ld.shared`, `st.global`, `ld.param`; none given means generic).
- A guard `@%p` / `@!%p` is `guard=('%p', False)` / `('%p', True)`.
- Calls: opcode `call` (with mods, e.g. `call.uni`), dests = return registers,
  srcs = (Sym(callee), *arguments); a library collective whose results' spread is known
  has one scope per destination as mods (`call.lane.block`: `analysis/calls.py`).
  Branches: `bra` with srcs = (Sym(label),); `brx.idx` with srcs = (index, Sym(label), ...).
- `loc` is where findings are reported: the `.cu` line from `.loc` when the PTX has it,
  otherwise the line in the input file.  `raw_loc` is the line in the input file
  when it differs from `loc` (PTX with `.loc`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .locations import Diagnostic, Loc, slot_init  # noqa: F401 (their home; re-exported)
from .memo import remember


@slot_init
@dataclass(frozen=True, slots=True)
class Reg:
    name: str

    def __str__(self) -> str:
        return self.name


@slot_init
@dataclass(frozen=True, slots=True)
class Imm:
    value: int | float

    def __str__(self) -> str:
        return hex(self.value) if isinstance(self.value, int) and self.value > 9 else str(self.value)


@slot_init
@dataclass(frozen=True, slots=True)
class Sym:
    name: str

    def __str__(self) -> str:
        return self.name


@slot_init
@dataclass(frozen=True, slots=True)
class Addr:
    base: Union[Reg, Sym, None]
    offset: int = 0

    def __str__(self) -> str:
        if self.base is None:
            return f"[{self.offset}]"
        return f"[{self.base}+{self.offset}]" if self.offset else f"[{self.base}]"


@slot_init
@dataclass(frozen=True, slots=True)
class Vec:
    items: tuple

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.items)) + "}"


Operand = Union[Reg, Imm, Sym, Addr, Vec]


def map_operand(o: Operand, reg, sym) -> Operand:
    """`o` with each register name passed through `reg` and each symbol name through `sym`
    (inside addresses and vectors too): the one operand renaming (inlining, inline asm)."""
    if isinstance(o, Reg):
        name = reg(o.name)
        return o if name == o.name else Reg(name)
    if isinstance(o, Sym):
        name = sym(o.name)
        return o if name == o.name else Sym(name)
    if isinstance(o, Addr):
        return Addr(map_operand(o.base, reg, sym) if o.base is not None else None, o.offset)
    if isinstance(o, Vec):
        return Vec(tuple(map_operand(x, reg, sym) for x in o.items))
    return o


_NO_NEGATED: frozenset = frozenset()
_OPCODE_PARTS: dict[str, tuple[str, tuple]] = {}  # opcode -> (op, mods): one split per opcode (memo.remember)


def opcode_parts(opcode: str) -> tuple[str, tuple]:
    """`shfl.sync.bfly.b32` -> ("shfl", ("sync", "bfly", "b32")), remembered."""
    parts = _OPCODE_PARTS.get(opcode)
    if parts is None:
        split = opcode.split(".")
        parts = remember(_OPCODE_PARTS, opcode, (split[0], tuple(split[1:])))
    return parts


@dataclass(slots=True, eq=False, init=False)
class Instr:
    opcode: str
    dests: tuple = ()
    srcs: tuple = ()
    loc: Loc = None  # type: ignore[assignment]
    guard: tuple[str, bool] | None = None
    raw_loc: Loc | None = None
    text: str = ""  # the construct as written (PTX instruction text, CUDA call name)
    negated: frozenset = _NO_NEGATED  # indices into srcs written as `!%p`
    from_cuda: bool = False  # lowered from CUDA-C (operands encode the call's arguments), not PTX
    frames: tuple = ()  # PTX `.loc ... inlined_at`: ((Loc, function_name label), ...) innermost first
    op: str = field(init=False, repr=False, compare=False)  # base opcode: `shfl` for `shfl.sync.bfly.b32`
    mods: tuple = field(init=False, repr=False, compare=False)  # ("sync", "bfly", "b32")

    # the dataclass's own `__init__` less its `__post_init__` call, `op` / `mods` from the memo
    def __init__(self, opcode: str, dests: tuple = (), srcs: tuple = (), loc: Loc = None,  # type: ignore[assignment]
                 guard: tuple[str, bool] | None = None, raw_loc: Loc | None = None, text: str = "",
                 negated: frozenset = _NO_NEGATED, from_cuda: bool = False, frames: tuple = ()) -> None:
        self.opcode = opcode
        self.dests = dests
        self.srcs = srcs
        self.loc = loc
        self.guard = guard
        self.raw_loc = raw_loc
        self.text = text
        self.negated = negated
        self.from_cuda = from_cuda
        self.frames = frames
        self.op, self.mods = _OPCODE_PARTS.get(opcode) or opcode_parts(opcode)

    def __repr__(self) -> str:
        g = f"@{'!' if self.guard[1] else ''}{self.guard[0]} " if self.guard else ""
        ops = ", ".join(map(str, self.dests + self.srcs))
        return f"<{g}{self.opcode} {ops} @{self.loc}>"


@dataclass(slots=True, eq=False)
class Label:
    name: str
    loc: Loc = None  # type: ignore[assignment]


@dataclass(slots=True, eq=False)
class Function:
    name: str
    is_kernel: bool
    params: list[str] = field(default_factory=list)
    ret_params: list[str] = field(default_factory=list)
    body: list[Union[Instr, Label]] = field(default_factory=list)
    loc: Loc = None  # type: ignore[assignment]
    display_name: str = ""  # demangled / source name when known
    outside: bool = False  # CUDA-C: analysed by code outside the file's report, if at all (frontends/cuda/scope.py)


@dataclass(slots=True, eq=False)
class Module:
    path: str
    language: str  # "ptx" or "cuda"
    functions: list[Function] = field(default_factory=list)
    ptx_version: tuple[int, int] | None = None
    target: str | None = None  # e.g. "sm_80", "sm_100a"
    state_spaces: dict[str, str] = field(default_factory=dict)  # global/shared var -> space
    local_fields: dict[str, dict[int, str]] = field(default_factory=dict)  # CUDA-C: `&x` of a struct x -> {offset: field}
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str = ""  # the input text (for fixes and suppressions)
    warp_code: list = field(default_factory=list)  # CUDA-C: the functions with warp primitives as written (coverage)
    arch_trace: tuple = ()  # CUDA-C: where its preprocessed text read __CUDA_ARCH__ (pipeline.parse_variants)
