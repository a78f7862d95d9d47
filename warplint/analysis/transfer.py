"""Transfer functions: how each instruction changes per-lane register values."""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import compress
from math import gcd
from operator import add as _add, sub as _sub

from ..intops import ARITHMETIC, binary
from ..ir import Addr, Imm, Instr, Reg, Sym, Vec
from ..memo import remember
from ..specials import is_special, special_scope
from .lanes import FULL, LaneSet, Literals, lane_ranges
from .values import (LANES, ZEROS, Aff, Pred, Terms, Unk, const, difference_scope, exact, is_uniform,
                     join_offsets, pred_of, product_factors, scope_of, thread_index_steps, wider)

_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
        "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b,
        "hs": lambda a, b: a >= b, "equ": lambda a, b: a == b, "neu": lambda a, b: a != b,
        "ltu": lambda a, b: a < b, "leu": lambda a, b: a <= b, "gtu": lambda a, b: a > b,
        "geu": lambda a, b: a >= b}
_CMP_TEXT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "lo": "<",
             "ls": "<=", "hi": ">", "hs": ">="}
MAX_GROUPS = 16  # lanes in at most this many groups (of equal offsets or aligned blocks) compare group by group
_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "lo": "hi", "ls": "hs", "hi": "lo", "hs": "ls"}
_INT_ORDER = {"lt": 0, "ge": 0, "lo": 0, "hs": 0, "le": 1, "gt": 1, "ls": 1, "hi": 1, "eq": None, "ne": None}
_OPPOSITE = {"lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "eq": "ne", "ne": "eq",
             "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls"}
_UNORDERED = ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
_TYPES = {"b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "b32": 32, "u32": 32,
          "s32": 32, "b64": 64, "u64": 64, "s64": 64, "pred": 1, "f32": 0, "f64": 0, "f16": 0,
          "bf16": 0, "f16x2": 0, "b128": 128}


_BITS: dict[str, int] = {}  # opcode -> its bits (memo.remember)


def type_bits(instr: Instr) -> int:
    bits = _BITS.get(instr.opcode)
    if bits is None:
        bits = remember(_BITS, instr.opcode, next((_TYPES[m] for m in reversed(instr.mods) if m in _TYPES), 32))
    return bits


def _signed(v: int, bits: int) -> int:
    if bits <= 0 or bits > 64:
        return v
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class Evaluator:
    """Evaluates instructions over a register environment (dict name -> value)."""

    def __init__(self, terms: Terms, lits: Literals, kernel: bool, params: set[str],
                 block_dim=None, spaces: dict | None = None):
        self.spaces = spaces or {}
        self.terms = terms
        self.lits = lits
        self.kernel = kernel
        self.params = params
        self.aligned_tid = block_dim is None or block_dim[0] % 32 == 0
        self.one_d = block_dim is None or (block_dim[1] == 1 and block_dim[2] == 1)
        self.filled_through_pointers: set[str] = set()  # see `undefined`
        self.facts: dict[int, tuple[str, int]] = {}  # term -> ("is", c) or ("multiple of", c): see `assume`

    # -- reading operands -----------------------------------------------------------------
    def special(self, name: str):
        t = self.terms
        if name == "%laneid":
            return exact(LANES)
        if name == "WARP_SZ":
            return const(32)
        if name.startswith("%lanemask_"):
            kind = name[10:]
            f = {"lt": lambda l: (1 << l) - 1, "le": lambda l: (2 << l) - 1, "eq": lambda l: 1 << l,
                 "ge": lambda l: FULL & ~((1 << l) - 1), "gt": lambda l: FULL & ~((2 << l) - 1)}.get(kind)
            return exact(f(l) & FULL for l in LANES) if f else Unk(t.get(("sp", name), name))
        if name.startswith("%tid"):
            if name == "%tid.x" and self.aligned_tid:
                return Aff(t.get(("warpbase",), "warp's first thread"), LANES, 32, "warp")
            if name in ("%tid.y", "%tid.z") and self.one_d:
                return const(0)
            if name in ("%tid.y", "%tid.z") and self.aligned_tid:
                # rows of a multiple of 32 threads: each warp lies inside one row
                return Aff(t.get(("sp", name), name), ZEROS, 1, "warp")
            return Unk(t.get(("sp", name), name))
        scope = special_scope(name)
        if name == "%ntid.x" and self.aligned_tid:  # whole warps per row, as %tid.x assumes
            return Aff(t.get(("sp", name), name), ZEROS, 32, scope)
        if scope in ("block", "warp"):
            return Aff(t.get(("sp", name), name), ZEROS, 1, scope)
        return Unk(t.get(("sp", name), name))

    def read(self, env: dict, op):
        kind = type(op)
        if kind is Reg:
            v = env.get(op.name)
            if v is None:
                name = op.name
                if is_special(name):
                    v = self.special(name)
                elif name in self.params:
                    v = self.param_value(name)
                else:
                    v = self.undefined(name)
            return self._known(v) if self.facts and isinstance(v, Aff) and v.base in self.facts else v
        if kind is Imm:
            if isinstance(op.value, int):
                return const(op.value)
            return Aff(self.terms.get(("fimm", op.value), str(op.value)), ZEROS, 1, "block")
        if isinstance(op, Sym):
            if self.spaces.get(op.name) == "local":
                # a thread's own variable (local array, stack frame): the same name is a
                # different address in every lane
                return Unk(self.terms.get(("laddr", op.name), op.name))
            return Aff(self.terms.get(("addr", op.name), op.name), ZEROS, 16, "block")
        if isinstance(op, Addr):
            base = self.read(env, op.base) if op.base is not None else const(0)
            return self.arith("add", base, const(op.offset), 64) if op.offset else base
        if isinstance(op, Vec):
            vals = [self.read(env, x) for x in op.items]
            if all(is_uniform(v) for v in vals):
                return Aff(self.terms.get(("vec", tuple(vals)), "vector"), ZEROS, 1,
                           max((scope_of(v) for v in vals), key=lambda s: s != "block"))
            return Unk(self.terms.get(("vec", tuple(vals)), "vector"))
        return Unk(self.terms.get(("opnd", repr(op)), repr(op)))

    def undefined(self, name: str):
        """A register read before any write: a per-lane unknown.  A variable filled through
        pointers into it (`local_objects`) is read unwritten only where no store ran (a copy
        loop of no iteration): its value is indeterminate, and the analysis takes one the
        whole warp shares rather than report lanes apart on a value the program never uses."""
        if name in self.filled_through_pointers:
            return Aff(self.terms.get(("undef", name), name), ZEROS, 1, "warp")
        return Unk(self.terms.get(("undef", name), name))

    def param_value(self, name: str):
        """Kernel parameters are the same for the whole grid.  A device function analysed on
        its own (no kernel of this file calls it) gets the same assumption for its
        parameters; calls from kernels are analysed with the actual arguments, inlined."""
        key = "param" if self.kernel else "dparam"
        return Aff(self.terms.get((key, name), name), ZEROS, 1, "block")

    # -- assumptions --------------------------------------------------------------------
    def assume(self, p) -> None:
        """`static_assert(c)` in a function, `__builtin_assume(c)`: each comparison `c` needs
        (the literals of a lone full cube) that says what a value the same in every lane is,
        `x == k` (`CGSize == 1`) or `x % k == 0` (`kHidden % 256 == 0`), becomes a fact about
        x's unknown part, and every later read of a value built on it uses it."""
        lanes = pred_of(p)
        if lanes is None or len(lanes.cubes) != 1:
            return
        bits, cube = next(iter(lanes.cubes))
        if bits != FULL:
            return
        for lit in sorted(x for x in cube if x > 0):  # (in the order the literals were made)
            key = self.lits.key_of(lit)
            if isinstance(key, tuple) and key[:2] == ("cmp", "eq"):
                self._learn(key[3], key[4])

    def _learn(self, x, k) -> None:
        """`x == k`, with k a constant: x's unknown part is k minus x's offset; where x is `y % m`
        and k is 0, y's unknown part is a multiple of m (when y's offset is)."""
        k = k.const() if isinstance(k, Aff) else None
        if k is None or not isinstance(x, Aff) or x.exact or not x.uniform:
            return
        self.facts.setdefault(x.base, ("is", k - x.off[0]))
        y, m = self._remainder_of(x.base)
        if k == 0 and y is not None and m > 1 and y.off[0] % m == 0:
            self.facts.setdefault(y.base, ("multiple of", m))

    def _remainder_of(self, term: int):
        """(y, m) when `term` is the unknown result of `y % m` (m a constant), else (None, 0)."""
        key = self.terms.key_of(term)
        if isinstance(key, tuple) and len(key) == 2 and key[0] == "rem":
            y, m = key[1]
            m = m.const() if isinstance(m, Aff) else None
            if isinstance(y, Aff) and y.uniform and not y.exact and m is not None:
                return y, m
        return None, 0

    def _known(self, v: Aff) -> Aff:
        """`v` with what an assumption says about its unknown part."""
        what, k = self.facts[v.base]
        if what == "is":
            return exact(o + k for o in v.off)
        align = k * (v.align or 1) // gcd(k, v.align or 1)
        return Aff(v.base, v.off, align, v.scope)

    # -- arithmetic ---------------------------------------------------------------------
    def uniform(self, v) -> bool:
        """Same value on every lane?  A predicate is, when only warp-uniform conditions
        decide it."""
        kind = type(v)
        if kind is Unk:
            return False
        if kind is Aff:
            o = v.off
            return o.count(o[0]) == 32
        if isinstance(v, Pred):
            return v.lanes.warp_exact(self.lits) in (0, FULL)
        return is_uniform(v)

    def scope(self, v) -> str:
        if isinstance(v, Pred) and self.uniform(v):
            scope = "block"
            for x in v.lanes.lits:
                scope = wider(scope, self.lits[x].scope)
            return scope
        return scope_of(v)

    def opaque(self, key, vals, text="", lanewise: bool = True) -> object:
        """A result we cannot compute: uniform if every input is, else per-lane unknown.  A
        `lanewise` result (each lane's from its own inputs: not a shuffle) is the same in lanes
        l and l ^ s wherever every input is (`symmetry`)."""
        t = self.terms.get((key, tuple(vals)), text)
        uniform = self.uniform
        for v in vals:
            if not uniform(v):
                break
        else:
            scope = "block"
            for v in vals:
                scope = wider(scope, self.scope(v))
            return Aff(t, ZEROS, 1, scope)
        if lanewise:
            self._note_symmetry(self.terms.symmetric, t, vals)
        return Unk(t)

    def symmetry(self, v) -> int:
        """The lane xors under which `v` is the same (bit s: lanes l and l ^ s hold one value):
        FULL for a warp-uniform value, 1 (s = 0 only) when nothing is known.  A value built
        lane by lane from butterfly results keeps what they share (`m = max over groups of 4`,
        `m < limit`, `(m < limit) ? 1 : 0`)."""
        if type(v) is Unk:  # (never uniform)
            return self.terms.symmetric.get(v.term, 1)
        if self.uniform(v):
            return FULL
        if isinstance(v, Aff):
            return _offsets_symmetry(v.off)
        if isinstance(v, Pred):
            same = FULL
            for bits, lits in v.lanes.cubes:
                same &= _offsets_symmetry(tuple(bits >> lane & 1 for lane in LANES))
                for x in lits:
                    if self.lits[x].kind != "uniform":
                        same &= self.terms.symmetric_lits.get(abs(x), 1)
            return same
        return 1

    def _note_symmetry(self, table: dict, key: int, vals) -> None:
        same = FULL
        for v in vals:
            same &= self.symmetry(v)
            if same == 1:
                return
        table[key] = same

    def arith(self, op: str, a, b, bits: int):
        if type(a) is Aff and type(b) is Aff:
            r = self._aff(op, a, b, bits)
            if r is not None:
                return r
        if op in _COMMUTATIVE and isinstance(a, Unk) and isinstance(b, Unk):
            r = self.butterfly(op, a, b)
            if r is not None:
                return r
        return self.opaque(op, (a, b), op)

    def butterfly(self, op: str, a: Unk, b: Unk):
        """A butterfly step `v op p`, with p lane l ^ m's v (`Interpreter._butterfly_partner`)
        and op commutative: lanes l and l ^ m compute op of the same two values (IEEE addition
        too: x + y == y + x), and so do the pairs v was already the same in.  Once the xors
        cover every lane bit (16, 8, 4, 2, 1), the result is the same in the whole warp."""
        t = self.terms
        for v, p in ((a, b), (b, a)):
            read, m = t.partners.get(p.term, (0, 0))
            if read and read == v.term:
                same = _with_xor(t.symmetric.get(v.term, 1), m)
                r = t.get((op, "bfly", v.term, p.term), op)
                if same == FULL:
                    return Aff(r, ZEROS, 1, "warp")
                t.symmetric[r] = same
                return Unk(r)
        return None

    def _aff(self, op, a: Aff, b: Aff, bits):
        mask = (1 << bits) - 1 if 0 < bits <= 64 else None
        if a.base == 0 and b.base == 0:
            return _exact_arith(op, a.off, b.off, mask)
        if op in ("add", "sub"):
            if b.base == 0 or a.base == b.base and op == "sub":
                off = _lane_sums(op, a.off, b.off)
                if a.base == b.base and op == "sub":
                    return exact(off)
                return Aff(a.base, off, a.align, a.scope)
            if a.base == 0 and op == "add":
                return Aff(b.base, _lane_sums(op, a.off, b.off), b.align, b.scope)
            # two unknown bases: a new uniform base plus the per-lane offsets; a multiple of
            # the alignment both share (32 * A + 32 * B: warp roles split at whole warps)
            t = self.terms.get((op, a.base, b.base), op)
            self.terms.note_scope(a.base, a.scope, a.align)
            self.terms.note_scope(b.base, b.scope, b.align)
            off = _lane_sums(op, a.off, b.off)
            return Aff(t, off, _gcd(a.align, b.align), self._sum_scope(op, a, b))
        c = b.const()
        if c is None and op in ("mul", "shl") and a.const() is not None and op == "mul":
            a, b, c = b, a, a.const()
        if c is None and op == "mul" and a.uniform and b.uniform:  # blockIdx.x * blockDim.x
            t = self.terms.get(("mul", a, b), "mul")
            aligned = a.off[0] == 0 and b.off[0] == 0  # (A + 0) * (B + 0): a multiple of both aligns
            return Aff(t, ZEROS, (a.align or 1) * (b.align or 1) if aligned else 1, wider(a.scope, b.scope))
        if c is None:
            return None
        if op == "mul" or op == "shl":
            k = c if op == "mul" else (1 << c if 0 <= c < 64 else None)
            if k is None:
                return None
            if k == 1:
                return a
            if k == 0:
                return const(0)
            t = self.terms.get(("mul", a.base, k), "mul")
            return Aff(t, tuple([x * k for x in a.off]), (a.align or 1) * abs(k) or 1, a.scope)
        al = a.align
        if op == "and" and al and al & (al - 1) == 0 and 0 <= c < al:
            return exact(x & c for x in a.off)  # the low bits of B are zero
        if op == "and" and al and c and mask and (c | ((c & -c) - 1)) & mask == mask and al % (c & -c) == 0:
            # clearing low bits B already has clear: tid.x & ~31 is the warp's first thread
            return Aff(a.base, tuple(x & c for x in a.off), al, a.scope)
        if op == "and" and a.uniform and c and mask and (c | ((c & -c) - 1)) & mask == mask:
            # clearing the low bits of a uniform unknown rounds it down to a multiple of the
            # lowest bit kept: (n + 3) & ~3 is a multiple of 4
            t = self.terms.get(("and", a.base, a.off[0], c), "and")
            return Aff(t, ZEROS, c & -c, a.scope)
        if op == "rem" and c > 0 and al and al % c == 0 and min(a.off) >= 0:
            return exact(x % c for x in a.off)
        # lane offsets inside one step of B (a uniform value keeps its own terms: analysis/bounds.py)
        within = bool(al) and not a.uniform and min(a.off) >= 0 and max(a.off) < al
        modulus = c if op == "rem" else c + 1 if op == "and" and c > 0 and c & (c + 1) == 0 else 0
        if modulus > 0 and within and modulus % al == 0:
            # B + off with B a multiple of al, and the modulus one too: (B % c) + off, the same
            # offsets (threadIdx.x % 128, or & 127: the warp's place in its group of 4, plus the lane)
            return Aff(self.terms.get(("rem", a.base, modulus), "rem"), a.off, al, a.scope)
        if op == "shr" and c >= 10 and self._thread_index(a):
            return const(0)  # %tid.x < 1024: the sign test of (int)threadIdx.x % 32
        div = None
        if op == "div" and c > 0:
            div = c
        elif op == "shr" and 0 <= c < 64:
            div = 1 << c
        if div == 1:
            return a  # `x / CGSize` with CGSize == 1: x itself, the same unknown
        if div and a.align and a.align % div == 0 and min(a.off) >= 0:
            t = self.terms.get(("div", a.base, div), "div")
            return Aff(t, tuple(x // div for x in a.off), a.align // div, a.scope)
        if div and within and div % al == 0:
            # (B + off) / div = B / div: the offsets never carry past a multiple of al, nor so
            # past one of div (threadIdx.x / 128, the warp group: the same in the whole warp)
            return Aff(self.terms.get(("div", a.base, div), "div"), ZEROS, 1, a.scope)
        if op in ("xor", "or") and c >= 0 and a.align and a.align > max(max(a.off), c) and min(a.off) >= 0:
            f = (lambda x: x ^ c) if op == "xor" else (lambda x: x | c)
            return Aff(a.base, tuple(f(x) for x in a.off), a.align, a.scope)
        return None

    def _sum_scope(self, op: str, a: Aff, b: Aff) -> str:
        """The scope of the unknown part of `a op b`: the wider of the two, or the block where a
        difference cancels what varies between warps (`idx - threadIdx.x` with idx =
        threadIdx.x + blockIdx.x * blockDim.x, moved by block-uniform steps)."""
        scope = wider(a.scope, b.scope)
        if op == "sub" and scope != "block" and difference_scope(self.terms, a.base, b.base) == "block":
            return "block"
        return scope

    def _thread_index(self, a: Aff) -> bool:
        """Whether `a` is %tid.x plus small non-negative lane offsets: below 1024 (PTX limits
        %ntid.x to 1024), so shifting it right by 10 or more bits gives 0."""
        return a.base == self.terms.get(("warpbase",), "warp's first thread") and min(a.off) >= 0 \
            and max(a.off) < 32

    def truncate(self, v, bits: int):
        """An integer conversion to `bits` bits (cvt)."""
        if isinstance(v, Aff) and v.exact and 0 < bits < 64:
            return Aff(0, tuple(x & ((1 << bits) - 1) for x in v.off))
        return v

    def select(self, a, c, p, text: str, loc):
        """`p ? a : c` (selp)."""
        e = self.pred_lanes(p, text, loc).exact
        if e is not None and isinstance(a, Aff) and isinstance(c, Aff) and a.exact and c.exact:
            return Aff(0, tuple(x if e >> l & 1 else y for l, (x, y) in enumerate(zip(a.off, c.off))))
        if a == c:
            return a
        r = self._min_or_max(a, c, p)
        if r is not None:
            return r
        return self.opaque("selp", (a, c, p))

    def _min_or_max(self, a, c, p):
        """`a > c ? a : c` (or `<`, `>=`, `<=`): a choice between two values by their own
        comparison is their max or their min, the same whichever order they come in (NaNs
        aside, as for IEEE addition in `butterfly`); a butterfly step when c is a's partner."""
        lanes = pred_of(p)
        if lanes is None or len(lanes.cubes) != 1 or not isinstance(a, Unk) or not isinstance(c, Unk):
            return None
        bits, lits = next(iter(lanes.cubes))
        key = self.lits.key_of(abs(next(iter(lits)))) if bits == FULL and len(lits) == 1 else None
        if isinstance(key, tuple) and len(key) == 5 and key[:2] in (("cmp", "gt"), ("cmp", "ge")) \
                and {key[3], key[4]} == {a, c}:
            return self.butterfly("max", a, c)
        return None

    # -- predicates -----------------------------------------------------------------------
    def predicate_butterfly(self, op: str, p: LaneSet, q: LaneSet, text: str, loc) -> LaneSet | None:
        """`p and q` / `p or q` where q tests lane l ^ m's p (nvcc's bool butterfly: p as 1 or
        0 by selp, shuffled by bfly m, compared with 0): lanes l and l ^ m combine the same two
        conditions, so the result is the same under p's lane xors and m; a warp-uniform
        condition once they cover the warp.  None for any other pair."""
        for x, y in ((p, q), (q, p)):
            m = self._partner_test(x, y)
            if m is None:
                continue
            same = _with_xor(self.symmetry(Pred(x)), m)
            key = ("pred-bfly", op, x, y)
            if same == FULL:
                return LaneSet.lit(self.lits.get(key, "uniform", "warp", text, loc))
            lit = self.lits.get(key, "lane", "lane", text, loc)
            self.terms.symmetric_lits[lit] = same
            return LaneSet.lit(lit)
        return None

    def _partner_test(self, x: LaneSet, y: LaneSet) -> int | None:
        """m when `y` is `v != 0` with v lane l ^ m's `x ? 1 : 0` (or `v == 0` with x negated)."""
        lit = _single_literal(y)
        key = self.lits.key_of(abs(lit)) if lit else None
        if not (isinstance(key, tuple) and len(key) == 5 and key[:2] == ("cmp", "eq")
                and isinstance(key[3], Unk) and key[4] == const(0)):
            return None
        read, m = self.terms.partners.get(key[3].term, (0, 0))
        chosen = self.terms.key_of(read) if read else None
        tested = x if lit < 0 else _flipped(x)  # `v != 0` tests x itself, `v == 0` its negation
        if tested is not None and chosen == ("selp", (const(1), const(0), Pred(tested))):
            return m
        return None

    def compare(self, cmp: str, a, b, bits: int, signed: bool, text: str, loc, neg_text: str = ""):
        f = _CMP.get(cmp)
        if f is not None and isinstance(a, Aff) and isinstance(b, Aff):
            if a.exact and b.exact:
                return Pred(LaneSet.const(_lanes_where(f, a.off, b.off, bits if signed else 0)))
            if a.base == b.base:
                return Pred(LaneSet.const(_lanes_where(f, a.off, b.off)))
            r = self._compare_aligned(f, a, b, cmp, text, loc)
            if r is not None:
                return r
            if bits > 0 and self._rounded_block_loop(cmp, a, b):
                key, negate = _canonical(cmp, a, b, True, signed)
                lit = self.lits.get(key, "uniform", "block", neg_text if negate and neg_text else text, loc)
                return Pred(LaneSet.lit(-lit if negate else lit))
        r = self._compare_by_groups(cmp, a, b, bits, signed, text, loc, neg_text)
        if r is not None:
            return r
        key, negate = _canonical(cmp, a, b, bits > 0, signed)
        if negate and neg_text:
            text = neg_text  # the literal stands for the opposite comparison
        if self.uniform(a) and self.uniform(b):
            scope = wider(self.scope(a), self.scope(b))
            lit = self.lits.get(key, "uniform", scope, text, loc)
        elif _in_step(a, b):  # block-wide where what varies between warps cancels
            scope = difference_scope(self.terms, a.base, b.base) or wider(a.scope, b.scope)
            lit = self.lits.get(key, "uniform", scope, text, loc)
        else:
            lit = self.lits.get(key, "lane", "lane", text, loc)
            self._note_symmetry(self.terms.symmetric_lits, lit, (a, b))
        return Pred(LaneSet.lit(-lit if negate else lit))

    def _rounded_block_loop(self, cmp: str, a: Aff, b: Aff) -> bool:
        """`i < q * S` with i = threadIdx.x + k * S, S the block size or a product of block
        dimensions with blockDim.x in it (`for (i = threadIdx.x; i < div_up(n, S) * S; i += S)`,
        the loop rounded up so that every thread runs it as often, for its barriers): as
        threadIdx.x < S, it holds exactly when k < q, the same in every thread of the block."""
        x, y, oriented = (a, b, cmp) if a.off == LANES else (b, a, _SWAPPED.get(cmp, cmp))
        if _INT_ORDER.get(oriented) != 0 or x.off != LANES or y.off != ZEROS or y.scope != "block" \
                or not y.base or not self.aligned_tid:
            return False
        t = self.terms
        dims = {t.get(("sp", f"%ntid.{d}"), f"%ntid.{d}") for d in "xyz"}
        steps = thread_index_steps(t, x.base)
        if steps is None or any(not set(f) <= dims for f in steps):
            return False
        size = Counter({f: n for f, n in Counter(product_factors(t, y.base)).items() if f in dims})
        for f in steps:
            size &= f
        return t.get(("sp", "%ntid.x"), "%ntid.x") in size

    def _compare_by_groups(self, cmp, a, b, bits, signed, text, loc, neg_text):
        """x = B + off[l] against y = C + c, the same in every lane, where B and C are multiples
        of g (a power of two up to 32, the alignment both unknowns share; g = 1 when nothing is
        known).  B - C is a multiple of g, so lanes whose `off - c` lie in one aligned block of g
        values agree on `x < y`: the comparison is one warp-uniform condition per group of
        lanes.  `row = gtid / 8` (g = 1: the 8 lanes of a row share one offset); `idx < n4` with
        idx = threadIdx.x + k * blockDim.x and n4 = (n + 3) & ~3 (g = 4: aligned groups of 4
        lanes).  Each group is judged on a representative offset of its block."""
        if isinstance(a, Aff) and not a.uniform and self.uniform(b):
            x, y, swap = a, b, False
        elif isinstance(b, Aff) and not b.uniform and self.uniform(a):
            x, y, swap = b, a, True
        else:
            return None
        oriented = _SWAPPED.get(cmp, cmp) if swap else cmp
        g = _shared_alignment(x, y) if bits > 0 and oriented in _INT_ORDER else 1
        c = y.off[0] if isinstance(y, Aff) else 0
        known, groups = _lane_groups(x.off, c, g, oriented)
        if len(groups) > MAX_GROUPS:
            return None
        out = LaneSet.const(known)
        for rep, lanes in groups.items():
            xr = Aff(x.base, (rep,) * 32, x.align, x.scope) if x.base else const(rep)
            args = (y, xr) if swap else (xr, y)
            out = out.or_(self.compare(cmp, *args, bits, signed, text, loc, neg_text).lanes.and_bits(lanes))
        return Pred(out)

    def _compare_aligned(self, f, a: Aff, b: Aff, cmp, text, loc):
        """x = B + off (B a multiple of align >= 32) against a constant: which lanes hold
        depends only on which warp this is; enumerate the warps that can differ."""
        if b.exact and not a.exact:
            x, c = a, b.const()
        elif a.exact and not b.exact:
            x, c = b, a.const()
            f = {"lt": _CMP["gt"], "le": _CMP["ge"], "gt": _CMP["lt"], "ge": _CMP["le"],
                 "lo": _CMP["gt"], "ls": _CMP["ge"], "hi": _CMP["lt"], "hs": _CMP["le"]}.get(cmp, f)
        else:
            return None
        if c is None or not x.align or x.align < 32 or min(x.off) < 0 or x.scope != "warp":
            return None
        step = x.align
        kmax = max(0, c // step) + 2
        if kmax > 64:
            return None
        cases = {_bits(f(k * step + o, c) for o in x.off) for k in range(kmax + 1)}
        usual = _bits(f(kmax * step + o, c) for o in x.off)  # every warp from kmax on
        # Each warp is in exactly one case.  A lane holds as in the usual case unless its warp
        # is one of the other cases that disagree on this lane (`tid.x != 0`: lanes 1-31 always,
        # lane 0 except in warp 0), so no lane hangs on two independent warp conditions.
        lit_of = {b: self.lits.get(("warp-case", x.base, step, cmp, c, b), "uniform", "warp",
                                   _warp_case(text, b), loc)
                  for b in cases if b != usual}
        by_exceptions = {}
        for lane in range(32):
            bit = 1 << lane
            key = frozenset(b for b in lit_of if (b ^ usual) & bit)
            by_exceptions[key] = by_exceptions.get(key, 0) | bit
        result = LaneSet()
        for exceptions, lanes in by_exceptions.items():
            if usual & lanes:  # holds unless the warp is an exception
                part = LaneSet.const(lanes)
                for b in exceptions:
                    part = part.and_(LaneSet.lit(-lit_of[b], lanes))
            else:  # holds only where the warp is an exception that has these lanes
                part = LaneSet.union([LaneSet.lit(lit_of[b], lanes) for b in exceptions])
            result = result.or_(part)
        return Pred(result)

    def pred_lanes(self, v, text="", loc=None) -> LaneSet:
        """Lanes where `v` (used as a predicate/condition) is true."""
        p = pred_of(v)
        if p is not None:
            return p
        if self.uniform(v):
            lit = self.lits.get(("nz", v), "uniform", self.scope(v), text or "condition", loc)
        else:
            lit = self.lits.get(("nz", v), "lane", "lane", text or "condition", loc)
            self._note_symmetry(self.terms.symmetric_lits, lit, (v,))
        return LaneSet.lit(lit)


_COMMUTATIVE = ("add", "mul", "min", "max", "and", "or", "xor")


def _with_xor(same: int, m: int) -> int:
    """The lane xors a value is the same under (bit s: lanes l and l ^ s), with m added: every
    s and s ^ m."""
    out = same
    for s in range(32):
        if same >> s & 1:
            out |= 1 << (s ^ m)
    return out


def _single_literal(s: LaneSet) -> int:
    """The one literal of a set that is one condition on every lane (0 for any other set)."""
    if len(s.cubes) != 1:
        return 0
    bits, lits = next(iter(s.cubes))
    return next(iter(lits)) if bits == FULL and len(lits) == 1 else 0


def _flipped(s: LaneSet) -> LaneSet | None:
    """The negation of a one-condition set (None for any other set)."""
    lit = _single_literal(s)
    return LaneSet.lit(-lit) if lit else None


@lru_cache(maxsize=4096)
def _offsets_symmetry(off: tuple) -> int:
    """The lane xors s under which per-lane offsets are the same (off[l] == off[l ^ s])."""
    return sum(1 << s for s in range(32) if all(off[lane] == off[lane ^ s] for lane in LANES))


def _warp_case(text: str, bits: int) -> str:
    """A warp-case literal's wording: the warp is one where `text` holds in exactly these lanes."""
    if bits in (0, FULL):
        return f"{text} in {'no' if not bits else 'every'} lane of this warp"
    return f"{text} in {lane_ranges(bits)} of this warp only"


def comparison(ev: Evaluator, ins: Instr, a, c) -> Pred:
    """The lanes where setp's comparison of the values `a` and `c` holds."""
    srcs = ins.srcs
    cmp, signed = _comparison_kind(ins)
    if ins.from_cuda and ins.text:  # the condition as written in the source
        text, neg_text = ins.text, f"!({ins.text})"
    else:
        text = f"{srcs[0]} {_CMP_TEXT.get(cmp, cmp)} {srcs[1]}"
        opposite = _OPPOSITE.get(cmp)
        neg_text = f"{srcs[0]} {_CMP_TEXT[opposite]} {srcs[1]}" if opposite else ""
    return ev.compare(cmp, a, c, type_bits(ins), signed, text, ins.loc, neg_text)


_COMPARISON_BY_OPCODE: dict[str, tuple[str, bool]] = {}  # opcode -> (comparison, signed) (memo.remember)


def _comparison_kind(ins: Instr) -> tuple[str, bool]:
    """setp's comparison operator and whether its operands are signed, from its opcode."""
    kind = _COMPARISON_BY_OPCODE.get(ins.opcode)
    if kind is None:
        mods = ins.mods
        kind = remember(_COMPARISON_BY_OPCODE, ins.opcode,
                        (next((m for m in mods if m in _CMP_TEXT or m in _UNORDERED), "ne"),
                         any(m.startswith("s") and m[1:].isdigit() for m in mods)))
    return kind


def _in_step(a, b) -> bool:
    """Do `a` and `b` differ by the same amount in every lane (per-lane pointers that advance
    together: `p` and `p + n`)?  Then comparing them compares warp-uniform bases: the result
    is the same in every lane."""
    return isinstance(a, Aff) and isinstance(b, Aff) and join_offsets(a, b) is not None


def _canonical(cmp: str, a, b, integer: bool, signed: bool):
    """One key per condition, so that `x < 1` and `x > 0` (which nvcc emits side by side for
    one `if`) are recognised as negations of each other.  Returns (key, negated)."""
    kind = "s" if signed else ("u" if integer else "f")
    if cmp in ("lo", "ls", "hi", "hs"):
        cmp = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}[cmp]
    if integer:
        c = b.const() if isinstance(b, Aff) else None
        if c is not None and cmp in ("lt", "ge"):  # x < C  <=>  !(x > C-1)
            return ("cmp", "gt", kind, a, const(c - 1)), cmp == "lt"
        if cmp in ("eq", "ne"):
            return ("cmp", "eq", kind, a, b), cmp == "ne"
        if cmp == "le":
            return ("cmp", "gt", kind, a, b), True
        if cmp == "gt":
            return ("cmp", "gt", kind, a, b), False
        if cmp in ("lt", "ge"):
            return ("cmp", "gt", kind, b, a), cmp == "ge"
    if cmp == "lt":
        return ("cmp", "gt", kind, b, a), False
    if cmp == "le":
        return ("cmp", "ge", kind, b, a), False
    return ("cmp", cmp, kind, a, b), False


def _shared_alignment(x: Aff, y) -> int:
    """The largest number that the unknown parts of `x` and `y` are both multiples of (an exact
    value has no unknown part): lane offsets within one aligned block of it compare alike.  Not
    capped at the warp's 32: `i = lane * 4 + k * 128` against a multiple of 128 is one block."""
    g = 0
    for v in (x, y):
        if not isinstance(v, Aff):
            return 1
        if not v.exact:
            g = gcd(g, v.align if v.align > 0 else 1)
    return g or 1


def _lane_groups(offs, c: int, g: int, cmp: str):
    """Lanes whose `B + off cmp C + c` has one truth value (B - C a multiple of g): the lanes
    where it is known to hold, and {representative offset: lanes} for the others.  `<` and
    `>=` hold together on a block off - c in [g*k, g*k + g); `<=` and `>` on off - c - 1 in
    it; `==` cannot hold where off - c is not a multiple of g, and is per offset elsewhere."""
    adj = _INT_ORDER.get(cmp)
    known, groups = 0, {}
    for lane, o in enumerate(offs):
        if adj is not None:
            rep = g * ((o - c - adj) // g) + c + adj
        elif (o - c) % g:
            known |= (1 << lane) if cmp == "ne" else 0
            continue
        else:
            rep = o
        groups[rep] = groups.get(rep, 0) | (1 << lane)
    return known, groups


def _lanes_where(f, x: tuple, y: tuple, signed_bits: int = 0) -> int:
    """The lanes l where `f(x[l], y[l])` holds, the offsets read as signed numbers of
    `signed_bits` bits if not 0; one test when both are the same in every lane."""
    if x.count(x[0]) == 32 and y.count(y[0]) == 32:
        if signed_bits:
            return FULL if f(_signed(x[0], signed_bits), _signed(y[0], signed_bits)) else 0
        return FULL if f(x[0], y[0]) else 0
    if signed_bits:
        x, y = _signed_lanes(x, signed_bits), _signed_lanes(y, signed_bits)
    return sum(compress(_LANE_BITS, map(f, x, y)))  # (distinct bits: their sum is their union)


_LANE_BITS = tuple(1 << lane for lane in LANES)


def _signed_lanes(offs: tuple, bits: int) -> list:
    """`_signed` of every lane's offset, with no call per lane: ((v + h) & m) - h, for h the
    sign bit and m the mask of `bits`, is v's low `bits` bits read as a signed number."""
    if bits <= 0 or bits > 64:
        return list(offs)
    m, h = (1 << bits) - 1, 1 << (bits - 1)
    return [((v + h) & m) - h for v in offs]


def _bits(flags) -> int:
    out = 0
    for lane, x in enumerate(flags):
        if x:
            out |= 1 << lane
    return out


def _gcd(a, b):
    return gcd(a or 0, b or 0)


def _lane_arith(op: str, x: int, y: int) -> int | None:
    """One lane's `x op y`; division by zero (unspecified in PTX) is taken as 0."""
    return 0 if op in ("div", "rem") and y == 0 else binary(op, x, y)


def _exact_arith(op: str, x: tuple, y: tuple, mask: int | None) -> Aff | None:
    """`x op y` lane by lane on two exact values, wrapped to `mask`; None when some lane's is
    undefined.  Offsets the same in every lane (most values) are computed once; otherwise the
    operator runs over all lanes in C where no lane divides by zero or shifts by a negative
    count (the lanes `_lane_arith` treats apart)."""
    f = ARITHMETIC.get(op)
    if f is None:
        return None
    first, second = x[0], y[0]
    if x.count(first) == 32 and y.count(second) == 32:
        v = _lane_arith(op, first, second)
        return None if v is None else Aff(0, ((v & mask if mask else v),) * 32)
    if op in ("div", "rem") and 0 in y or op in ("shl", "shr") and min(y) < 0:
        vals = [_lane_arith(op, p, q) for p, q in zip(x, y)]
        if None in vals:
            return None
    else:
        vals = map(f, x, y)
    return Aff(0, tuple(map(mask.__and__, vals)) if mask else tuple(vals))


def _lane_sums(op: str, x: tuple, y: tuple) -> tuple:
    """Lane offsets of `x + y` (op "add") or `x - y` (op "sub")."""
    if y is ZEROS:
        return x
    first, second = x[0], y[0]
    if x.count(first) == 32 and y.count(second) == 32:  # (most values: computed once)
        return (first + second if op == "add" else first - second,) * 32
    return tuple(map(_add if op == "add" else _sub, x, y))
