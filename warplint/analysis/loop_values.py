"""The values a register takes, iteration by iteration, in a loop whose trip constants decide
(`for (int o = 16; o > 0; o >>= 1)`).

The divergence analysis joins a loop counter's values at the loop header into one unknown
(`domain.Joins.join`); a check that needs the numbers (a shuffle's offset against its
membermask) asks here.  The loop is run on integers: the constants set on the straight line
of blocks just before it, then, iteration by iteration, the blocks every iteration passes (those
that dominate the back edges), until a branch out of the loop on known values is taken.  A
register written anywhere else in the loop (a branch of an `if`, a nested loop) is unknown, and
a branch out on unknown values (a `break` on data) may or may not be taken: the run goes on, so
the values found are every value the instruction may see.  None when a value is not known or
the loop runs past `MAX_ITERATIONS`."""
from __future__ import annotations

import weakref

from ..intops import ARITHMETIC, binary
from ..ir import Imm, Reg
from .transfer import type_bits

MAX_ITERATIONS = 64
MAX_STEPS = 20_000  # instructions run per question, all iterations together
_MOVES = ("mov", "cvt")
_COMPARISONS = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
                "lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}  # lo..hs: unsigned (by the type)


_ASKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # cfg -> {(instr, operand): values}


def values_at(cfg, block: int, instr, operand) -> list[int] | None:
    """The values `operand` of `instr` (in `block`) takes over the iterations of the innermost
    loop around it, in order, each once; None when not known (see the module's note).  Asked
    once per instruction: every rule and target asks again."""
    if not isinstance(operand, Reg):
        return None
    asked = _ASKED.setdefault(cfg, {})
    key = (id(instr), operand.name)
    if key not in asked:
        asked[key] = _values_at(cfg, block, instr, operand)
    return asked[key]


def _values_at(cfg, block: int, instr, operand: Reg) -> list[int] | None:
    loop = _innermost_loop(cfg, block)
    if loop is None or not _written_in(cfg, loop[1], operand.name):
        return None
    run = _LoopRun(cfg, *loop)
    return run.values(block, instr, operand) if run.enterable() else None


def _innermost_loop(cfg, block: int):
    around = [(h, body) for h, body in cfg.loops.items() if block in body]
    return min(around, key=lambda item: len(item[1])) if around else None


def _written_in(cfg, body, name: str) -> bool:
    return any(isinstance(d, Reg) and d.name == name
               for b in body for ins in cfg.blocks[b].instrs for d in ins.dests)


class _LoopRun:
    def __init__(self, cfg, header: int, body: set[int]):
        self.cfg, self.header, self.body = cfg, header, body
        self.entries = [p for p in cfg.preds(header) if p not in body]
        latches = [p for p in cfg.preds(header) if p in body]
        index = {b: i for i, b in enumerate(cfg.rpo())}
        self.spine = sorted((b for b in body if all(cfg.dominates(b, x) for x in latches)),
                            key=index.__getitem__)
        nested = set().union(*(inner for h, inner in cfg.loops.items() if h != header and h in body))
        self.varying = {d.name for b in body if b not in self.spine or b in nested
                        for ins in cfg.blocks[b].instrs for d in ins.dests if isinstance(d, Reg)}
        self.nested = nested
        self.steps = 0

    def enterable(self) -> bool:
        """One way in, through the header (a natural loop with a preheader)."""
        return len(self.entries) == 1 and all(
            p in self.body for b in self.body if b != self.header for p in self.cfg.preds(b))

    def values(self, block: int, instr, operand: Reg) -> list[int] | None:
        at = self._spine_block_before(block)
        if at is None:
            return None
        env = {k: v for k, v in self._constants_before().items() if k not in self.varying}
        seen: list[int] = []
        for _ in range(MAX_ITERATIONS):
            for b in self.spine:
                start, env = env, self._run(env, b)
                if self.steps > MAX_STEPS:
                    return None
                if b == block:  # the instruction is in this block, before its branch
                    v = self._value_at(start, b, instr, operand)
                elif b == at and not self._leaves(env, b):  # in a block this one branches to
                    v = self._value_at(env, block, instr, operand)
                else:
                    v = False
                if v is None:
                    return None
                if v is not False and v not in seen:
                    seen.append(v)
                if self._leaves(env, b):
                    return seen
        return None

    def _spine_block_before(self, block: int) -> int | None:
        """The last block every iteration passes on the way to `block` (itself when it is one)."""
        idom = self.cfg.idom
        while block not in self.spine:
            up = idom.get(block)
            if up is None or up == block or up not in self.body:
                return None
            block = up
        return block

    def _constants_before(self) -> dict:
        """The constants set on the straight line of blocks that leads into the loop."""
        chain, b = [], self.entries[0]
        while len(chain) < 64:
            chain.append(b)
            preds = self.cfg.preds(b)
            if len(preds) != 1 or preds[0] in chain or len(self.cfg.succs(preds[0])) != 1:
                break
            b = preds[0]
        env: dict = {}
        for b in reversed(chain):
            env = self._execute(env, self.cfg.blocks[b].instrs, set())
        return env

    def _run(self, env: dict, b: int) -> dict:
        instrs = self.cfg.blocks[b].instrs
        if b in self.nested:
            return {k: v for k, v in env.items() if k not in self.varying}
        return self._execute(env, instrs, self.varying)

    def _value_at(self, env: dict, b: int, instr, operand: Reg):
        """The operand's value when `instr` of block `b` runs, with `env` at the block's start;
        None: not known."""
        instrs = self.cfg.blocks[b].instrs
        before = instrs[:next((i for i, x in enumerate(instrs) if x is instr), 0)]
        env = self._execute(env, before, set())
        return env.get(operand.name)

    def _execute(self, env: dict, instrs, varying: set) -> dict:
        env = dict(env)
        for ins in instrs:
            self.steps += 1
            for d in ins.dests:
                if isinstance(d, Reg):
                    value = None if d.name in varying else _evaluate(ins, env)
                    if value is None:
                        env.pop(d.name, None)
                    else:
                        env[d.name] = value
        return env

    def _leaves(self, env: dict, b: int) -> bool:
        """Does the branch ending block `b` leave the loop on these values?  (Unknown: no.)"""
        term = self.cfg.blocks[b].terminator
        for s in self.cfg.succs(b):
            if s in self.body:
                continue
            edge = self.cfg.edges[b, s]
            guard = edge.get("guard")
            if guard is None:
                return edge["kind"] != "fall" or term is None or term.guard is None
            p = env.get(guard[0])
            if p is None:
                continue
            holds = bool(p) != guard[1]
            if holds == (edge["kind"] != "fall"):
                return True
        return False


def _evaluate(ins, env: dict) -> int | None:
    """The integer `ins` writes, its operands' values known; None otherwise."""
    if ins.guard is not None:
        p = env.get(ins.guard[0])
        if p is None or bool(p) == ins.guard[1]:
            return None  # not known whether it runs / it does not run (the old value stays)
    bits = type_bits(ins)
    if bits <= 1 and ins.op != "setp" or bits > 64:
        return None
    signed = any(m.startswith("s") and m[1:].isdigit() for m in ins.mods)
    args = [_operand(x, env, bits, signed) for x in ins.srcs]
    if any(a is None for a in args) or "wide" in ins.mods or "hi" in ins.mods:
        return None
    if ins.op in _MOVES and len(args) == 1:
        return _wrap(args[0], bits, signed)
    if ins.op == "setp" and len(args) == 2:
        cmp = next((_COMPARISONS[m] for m in ins.mods if m in _COMPARISONS), None)
        return binary(cmp, *args) if cmp else None
    if ins.op in ARITHMETIC and len(args) == 2:
        v = binary(ins.op, *args)
        return None if v is None else _wrap(v, bits, signed)
    return None


def _operand(x, env: dict, bits: int, signed: bool) -> int | None:
    v = env.get(x.name) if isinstance(x, Reg) else x.value if isinstance(x, Imm) else None
    return _wrap(v, bits, signed) if isinstance(v, int) and not isinstance(v, bool) else None


def _wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v
