"""Check-then-set ("claim") idioms: `if (s_pick == NONE && mine == best) s_pick = me;`.

A read R of a location L whose value is used only in the test `L == K` or `L != K` (K the same
in every lane and not read from L) of a condition `test && h` (conjunctions only; h not read
from L) that decides a store W of L and nothing else, W's value not computed from R, adds no
outcome to the write-write race between the lanes that store, which WL007 accepts (several
lanes storing one location in one instruction is no finding).  Proof: the test is one function
of the value read, the same in every lane.  With L0 the value before, lockstep lets exactly the
lanes S where the test holds on L0 and h holds store, and any one of them may be last.
Interleaved, L holds L0 until the first store, so the first writer read L0 and the test holds
on L0; every writer passed its own h, so every writer is in S.  The lane of S that reads first
reads L0 (only lanes of S store, each after its read), so some lane stores exactly when S is
not empty.  The final value is what one lane of S stores, one that lockstep can give, and R's
value decides nothing else: R/W is no race finding.  Not a claim, and still reported: another
use of R's value; an ordering test, or a K that differs between lanes (`if (v > s_max) s_max =
v`, the compare-and-copy race); `||`; a store of a value computed from R; other effects the
test decides (a store, a register read after it, on either side); W in a loop that R is not in
(W runs again after other lanes' reads); a read carried over from an earlier iteration of a
loop (memory.py pairs only a read and a write of one iteration as a claim).
"""
from __future__ import annotations

from ..ir import Addr, Instr, Reg
from .liveness import registers
from .results import FunctionAnalysis, MemAccess

EQUALITY = frozenset({"eq", "ne", "equ", "neu"})  # setp comparisons and literal keys that test x == K
COPIES = frozenset({"mov", "cvt"})
PREDICATE_LOGIC = frozenset({"and", "or", "not", "xor", "mov"})
# computations with no effect but their destinations: allowed under the condition when only
# what runs there uses them (the address and value of W)
PURE = frozenset({"mov", "cvt", "cvta", "add", "sub", "mul", "mad", "shl", "shr", "and", "or",
                  "xor", "not", "neg", "abs", "min", "max", "div", "rem", "setp", "selp", "ld"})
MAX_CHAIN = 8  # copies and predicate logic followed from the read's value


class Claims:
    """Which read/write pairs of one function are claims (the register uses, built on first use)."""

    def __init__(self, fa: FunctionAnalysis):
        self.fa = fa
        self._uses: dict[str, list[tuple[Instr, bool]]] | None = None  # reg -> [(instr, as its guard)]
        self._block_of: dict[int, int] = {}

    def is_claim(self, read: MemAccess, write: MemAccess) -> bool:
        """Is `write` the store of a claim whose test reads its location with `read`?"""
        dests = read.instr.dests
        if not (read.load and not read.store and write.store and not write.load
                and read.addr == write.addr and read.size == write.size
                and len(dests) == 1 and isinstance(dests[0], Reg)
                and self._same_loops(read.block, write.block)):
            return False
        test = self._test_literal(read, write)
        return test is not None and self._only_tested(dests[0].name, write.instr, 0) \
            and self._guards_only(test, write)

    def _same_loops(self, read_block: int, write_block: int) -> bool:
        """Is every loop around the write also around the read (W runs once after each R)?"""
        return all(read_block in body for body in self.fa.cfg.loops.values() if write_block in body)

    def _test_literal(self, read: MemAccess, write: MemAccess) -> int | None:
        """The literal `L == K` (or its negation) that holds wherever `write` runs, with L the
        value `read` loads and K the same in every lane; None when there is none, or when
        another condition of the write's lanes reads L too."""
        lits = self.fa.lits
        found = [lit for lit in required_literals(write.active) if self._tests(lits.key_of(abs(lit)), read)]
        if len(found) != 1:
            return None
        test = found[0]
        others = {abs(x) for _, cube in write.active.cubes for x in cube} - {abs(test)}
        if any(self._reads_location(v, read) for x in others for v in _operands(lits.key_of(x))):
            return None
        return test

    def _tests(self, key, read: MemAccess) -> bool:
        """Is literal `key` the test `value of read == K` (or `!=`), K the same in every lane
        and not read from the location?"""
        ops = _operands(key)
        if len(ops) != 2 or key[1] not in EQUALITY:
            return False
        for value, other in (ops, ops[::-1]):
            if self._loaded_by(value, read):
                return getattr(other, "uniform", False) and not self._reads_location(other, read)
        return False

    def _loaded_by(self, value, read: MemAccess) -> bool:
        """Is `value` what `read` loads (a weak load of an address that is the same in every
        lane has one value for every load of that address, the others one per load)?"""
        key = self._load_key(value)
        return key is not None and key[2] == read.addr and (len(key) == 3 or key[3] == id(read.instr))

    def _reads_location(self, value, read: MemAccess) -> bool:
        key = self._load_key(value)
        return key is not None and key[2] == read.addr

    def _load_key(self, value) -> tuple | None:
        """The term key of a loaded value (`instructions._loaded`: ("ld", space or opcode,
        address[, id of the load])), else None."""
        term = getattr(value, "base", 0) or getattr(value, "term", 0)
        key = self.fa.terms.key_of(term) if term else None
        return key if isinstance(key, tuple) and len(key) in (3, 4) and key[0] == "ld" else None

    def _only_tested(self, reg: str, write: Instr, depth: int) -> bool:
        """Is the value in `reg` used only by `==`/`!=` tests (through copies) whose results
        only decide branches or guard `write`?"""
        if depth > MAX_CHAIN:
            return False
        for ins, as_guard in self._uses_of(reg):
            if as_guard or ins.op not in COPIES and ins.op != "setp":
                return False
            if ins.op == "setp" and not (EQUALITY.intersection(ins.mods) and self._only_decides(ins, write, 0)):
                return False
            if ins.op in COPIES and not all(self._only_tested(d.name, write, depth + 1) for d in _defs(ins)):
                return False
        return True

    def _only_decides(self, ins: Instr, write: Instr, depth: int) -> bool:
        """Are the predicates `ins` writes used only as guards of branches or of `write`, or in
        predicate logic whose results are (a test's result kept or counted is another use)?"""
        if depth > MAX_CHAIN:
            return False
        for d in _defs(ins):
            for use, as_guard in self._uses_of(d.name):
                if as_guard:
                    if use.op != "bra" and use is not write:
                        return False
                elif use.op not in PREDICATE_LOGIC or not self._only_decides(use, write, depth + 1):
                    return False
        return True

    def _guards_only(self, test: int, write: MemAccess) -> bool:
        """Does the test decide nothing but `write` and what computes its address, value and
        condition?  In the blocks whose lanes depend on it (either side): no other store, call,
        barrier or warp operation, and no register read past them."""
        fa = self.fa
        region = {b for b, mask in fa.masks.items()
                  if mask is not None and any(abs(test) in {abs(x) for x in cube} for _, cube in mask.cubes)}
        return all(ins is write.instr or ins.op == "bra" or ins.op in PURE and self._kept_inside(ins, region)
                   for b in region for ins in fa.cfg.blocks[b].instrs)

    def _kept_inside(self, ins: Instr, region: set[int]) -> bool:
        """Are the registers `ins` writes read only in `region`, or by a branch (whose blocks
        then depend on the test too: the right side of a short-circuit `&&`)?"""
        self._index()
        return all(self._block_of[id(use)] in region or as_guard and use.op == "bra"
                   for d in _defs(ins) for use, as_guard in self._uses_of(d.name))

    def _uses_of(self, reg: str) -> list[tuple[Instr, bool]]:
        return self._index().get(reg, [])

    def _index(self) -> dict[str, list[tuple[Instr, bool]]]:
        """Each register's uses, and each instruction's block (built on first use)."""
        if self._uses is None:
            self._uses = {}
            for blk in self.fa.cfg.blocks:
                for ins in blk.instrs:
                    self._block_of[id(ins)] = blk.id
                    _index_uses(ins, self._uses)
        return self._uses


def required_literals(active) -> set[int]:
    """The literals that hold wherever `active` holds (positive: in every cube)."""
    cubes = [lits for _, lits in active.cubes]
    return set(cubes[0]).intersection(*cubes[1:]) if cubes else set()


def _operands(key) -> tuple:
    """The two compared values of a comparison literal's key, () for any other literal."""
    return key[3:] if isinstance(key, tuple) and len(key) == 5 and key[0] == "cmp" else ()


def _index_uses(ins: Instr, uses: dict) -> None:
    names: set[str] = set()
    for op in ins.srcs:
        registers(op, names)
    for op in ins.dests:
        if isinstance(op, Addr):
            registers(op, names)
    for name in names:
        uses.setdefault(name, []).append((ins, False))
    if ins.guard is not None:
        uses.setdefault(ins.guard[0], []).append((ins, True))


def _defs(ins: Instr) -> list[Reg]:
    return [d for d in ins.dests if isinstance(d, Reg)]
