"""What a finding says, as data (like pyflakes' `messages.py`): one class per kind of finding
with named fields, and one rendering path, `str(message)`, which fills the class's `template`
with the fields and the words `words()` derives from them.  Checks build messages from what
they decided; only this module turns them into text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import ClassVar

# A message is built once per finding and only rendered: it is never compared, hashed or changed,
# so its class needs no generated __eq__/__hash__ or frozen __setattr__ (each generated method costs
# start-up time: these 19 classes took 8 ms of a cold run, 2.5 ms without them).
message_kind = dataclass(eq=False)


def _lanes(bits: int) -> str:
    from .analysis.lanes import lane_ranges  # imported here: suppressions need no analysis
    return lane_ranges(bits)


def _one(bits: int) -> bool:
    """Is `bits` a single lane (for the verb: 'lane 3 is', 'lanes 3-5 are')?"""
    return bits != 0 and bits & (bits - 1) == 0


def _verb(bits: int, singular: str, plural: str) -> str:
    return singular if _one(bits) else plural


def _mask_words(mask: str) -> str:
    """A membermask as a message names it: `0x0000ffff`, or a described lane set in parentheses."""
    return mask if mask.startswith("0x") else f"({mask})"


_INTERNAL_TEMP = re.compile(r"\$t\d+")
_RENAMED = re.compile(r"\b([A-Za-z_]\w*)@\d+\b")


def condition_words(text: str, positive: bool, line: int | None = None) -> str:
    """How a message states a branch condition: in source terms, never with the analysis'
    internal names (`$t3` becomes 'a computed value', an inlined `n@1` is `n`); a PTX condition
    on registers says the line it was computed on."""
    text = _RENAMED.sub(r"\1", _INTERNAL_TEMP.sub("a computed value", text))
    if line is not None and "%" in text:
        text += f" at line {line}"
    negated = text.startswith("!(") and text.endswith(")")  # a CUDA condition's other side
    if positive:
        return f"not {text[1:]}" if negated else text
    if negated:
        return text[2:-1]
    return f"not ({text})"


def instr_name(instr) -> str:
    """How a message names an instruction: the CUDA call as written (`__shfl_sync`), else the
    PTX opcode (also for CUDA constructs with no call of that name, e.g. a tile's `shfl`)."""
    from .analysis.calls import callee  # imported here: suppressions need no analysis
    name = callee(instr)  # a library collective: `cub::BlockReduce::Sum`
    if name is not None:
        return name
    return instr.text if instr.text.startswith("__") else instr.opcode


@message_kind
class Message:
    template: ClassVar[str]

    def words(self) -> dict:
        """Words derived from the fields (lane lists, definite/possible phrasing)."""
        return {}

    def __str__(self) -> str:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return self.template.format(**values, **self.words())

    @staticmethod
    def merged(variants: list[tuple["Message", tuple[str, ...]]]) -> str | None:
        """One message for a site where the targets' messages differ (`variants`: each
        message with its targets, most severe first), or None: say the first and list the rest."""
        return None


# -- WL001, WL010: forms and targets --------------------------------------------------------

@message_kind
class NonSyncPrimitive(Message):
    """WL001: a warp primitive without a membermask."""
    template = "'{name}' without a membermask is {why}; use '{replacement}' with {hint}"
    name: str
    replacement: str
    cuda: bool  # a CUDA call (else a PTX instruction)
    removed: bool  # removed for the target (else deprecated)
    target: str
    mask: int | None  # the membermask the analysis proves, if any

    def words(self) -> dict:
        return {"why": self._why(), "hint": f"membermask {self.mask:#010x}" if self.mask
                else "a membermask of the lanes that must take part"}

    def _why(self) -> str:
        if self.removed:
            return "removed for sm_70+" + ("" if self.cuda else " (PTX ISA 6.4)")
        return "deprecated since " + ("CUDA 9" if self.cuda else "PTX ISA 6.0")

    @staticmethod
    def merged(variants) -> str | None:
        """'... is removed for sm_70+, deprecated for sm_60; use ...'."""
        first = variants[0][0]
        whys = []
        for msg, targets in variants:
            why = msg._why()
            whys.append(why if msg.removed else f"deprecated for {', '.join(targets)}")
        return str(first).replace(first._why(), ", ".join(whys), 1)


@dataclass(frozen=True)
class Requirement:
    """WL010: one requirement that the target or the file's PTX ISA does not meet."""
    kind: str  # "sm": a newer architecture; "ptx": a newer PTX ISA
    needed: str  # "sm_80", "sm_100a", "7.0"
    have: str | None  # the target, or the ISA the file declares (None: not said)
    form: str = ""  # the forms of the instruction that need it (".f32/.abs/.NaN"); "": all of them

    def words(self) -> str:
        subject = f"the {self.form} forms require" if self.form else "requires"
        if self.kind == "sm":
            return f"{subject} {self.needed}{'' if self.form else ' or newer'} (target is {self.have})"
        declared = f" (file declares {self.have})" if self.have else ""
        return f"{subject} PTX ISA {self.needed}{declared}"


@message_kind
class UnavailableOnTarget(Message):
    """WL010: an instruction the target or the declared PTX ISA lacks."""
    template = "'{name}' is not available here: {reasons}"
    name: str
    unmet: tuple[Requirement, ...]

    def words(self) -> dict:
        return {"reasons": "; ".join(r.words() for r in self.unmet)}


# -- WL002, WL003, WL004, WL008: membermasks ------------------------------------------------

@message_kind
class PreVoltaMaskMismatch(Message):
    """WL002"""
    template = ("on {target} (pre-Volta), {lane_list} {are_in} the membermask {mask_words} of '{name}' but "
                "{not_active} here: every lane in the membermask must execute this instruction together, "
                "so the result is undefined")
    target: str
    mask: str
    name: str
    lanes: int
    definite: bool

    def words(self) -> dict:
        return {"lane_list": _lanes(self.lanes), "are_in": _verb(self.lanes, "is in", "are in"),
                "not_active": "not active" if self.definite else "may not be active",
                "mask_words": _mask_words(self.mask)}


@message_kind
class LaneNotInMembermask(Message):
    """WL003"""
    template = "{lane_list} {execute} '{name}' but {are_not} in its membermask {mask_words}: the result is undefined"
    lanes: int
    name: str
    mask: str
    definite: bool

    def words(self) -> dict:
        if self.definite:
            execute, are_not = _verb(self.lanes, "executes", "execute"), _verb(self.lanes, "is not", "are not")
        else:
            execute, are_not = "may execute", "may not be"
        return {"lane_list": _lanes(self.lanes), "execute": execute, "are_not": are_not,
                "mask_words": _mask_words(self.mask)}


@message_kind
class MembermaskLanesNeverArrive(Message):
    """WL004"""
    template = ("{lane_list} {are_in} the membermask {mask_words} of '{name}' but {never} a matching "
                "'{name}' or exit: the warp hangs or the result is undefined")
    mask: str
    name: str
    lanes: int
    definite: bool

    def words(self) -> dict:
        never = _verb(self.lanes, "never reaches", "never reach") if self.definite else "may never reach"
        return {"lane_list": _lanes(self.lanes), "are_in": _verb(self.lanes, "is in", "are in"), "never": never,
                "mask_words": _mask_words(self.mask)}


@message_kind
class ActivemaskAsMembermask(Message):
    """WL008: a membermask that is the value of activemask."""
    template = ("the membermask of '{name}' is the value of activemask{where}, which may be any subset "
                "of the lanes on this path: the result depends on which lanes happen to be converged")
    name: str
    line: int | None  # where activemask was read

    def words(self) -> dict:
        return {"where": f" at line {self.line}" if self.line is not None else ""}


@message_kind
class LegacyActiveMaskBallot(Message):
    """WL008: ballot(1) to read the active mask."""
    template = ("ballot of a constant true predicate is the legacy way to read the active mask; use "
                "__activemask() (activemask.b32) instead")


# -- WL005, WL006: shuffles -----------------------------------------------------------------

@message_kind
class ShuffleSourceInvalid(Message):
    """WL005"""
    template = "{reader_list} {read} from {source_list}, which {why}: the {value} read {is_} undefined"
    readers: int
    sources: int
    reasons: tuple[str, ...]  # "exited", "inactive", "not in the membermask"
    definite: bool

    def words(self) -> dict:
        one = _one(self.readers)
        return {"reader_list": _lanes(self.readers), "read": ("reads" if one else "read") if self.definite else "may read",
                "source_list": _lanes(self.sources), "why": " or ".join(self._reason(r) for r in sorted(self.reasons)),
                "value": "value" if one else "values", "is_": "is" if one else "are"}

    def _reason(self, reason: str) -> str:
        """'have exited', 'is inactive', 'may not be in the membermask'."""
        if reason == "exited":
            return "may have exited" if not self.definite else _verb(self.sources, "has exited", "have exited")
        if not self.definite:
            return "may not be in the membermask" if reason.startswith("not ") else f"may be {reason}"
        return f"{_verb(self.sources, 'is', 'are')} {reason}"


@message_kind
class ShuffleWidthInvalid(Message):
    """WL006: a CUDA width argument."""
    template = "shuffle width {width} is not a power of two between 1 and 32, so the result of the shuffle is undefined"
    width: int


@message_kind
class ShflSegmentMaskInvalid(Message):
    """WL006: a PTX c operand whose segment mask encodes no width."""
    template = ("shfl c operand {c:#x}: segment mask {segmask:#04x} is not ~(W-1) & 0x1f for any "
                "power-of-two sub-warp width W, so the lanes the shuffle reads are undefined")
    c: int
    segmask: int


@message_kind
class ShflClampInvalid(Message):
    """WL006: a PTX c operand whose clamp does not fit the mode."""
    template = ("shfl c operand {c:#x}: clamp value {clamp} does not fit .{mode} with a segment of width "
                "{width}, so lanes read past their segment (expected {expected}, i.e. c = {fixed:#x})")
    c: int
    clamp: int
    mode: str
    width: int
    segmask: int
    expected: int

    def words(self) -> dict:
        return {"fixed": (self.segmask << 8) | self.expected}


# -- WL007, WL009: memory and barriers ------------------------------------------------------

_SPACE = {"shared": "shared memory", "global": "global memory", "generic": "memory"}


@message_kind
class _Race(Message):
    reader: int  # an example pair of lanes
    writer: int
    space: str  # "shared", "global", "generic"
    line: int  # of the other access
    definite: bool

    def words(self) -> dict:
        return {"memory": _SPACE.get(self.space, "memory"),
                "race": "data race on sm_70+" if self.definite else "possible data race"}


@message_kind
class ReadAfterWriteRace(_Race):
    """WL007"""
    template = ("lane {reader} reads {memory} that lane {writer} wrote at line {line} with no "
                "__syncwarp() in between ({race})")


@message_kind
class WriteAfterReadRace(_Race):
    """WL007"""
    template = ("lane {writer} overwrites {memory} that lane {reader} read at line {line} with no "
                "__syncwarp() in between ({race})")


@message_kind
class BarrierDivergence(Message):
    """WL009"""
    template = "'{name}' {is_} reached by {who}; {why}"
    name: str
    missing_lanes: int  # lanes of a warp that can skip it; 0: whole warps can
    definite: bool
    collective: bool = False  # a block collective (CUB's): every thread must call it, exiting or not

    def words(self) -> dict:
        if self.missing_lanes:
            who = f"only part of a warp ({_lanes(self.missing_lanes)} can skip it)"
        else:
            who = "only some warps of the block (its condition can differ between warps)"
        why = ("every thread of the block must call this block collective: it waits at "
               "__syncthreads() inside and combines what every thread leaves in its shared temp "
               "storage, so the block deadlocks or the result is undefined" if self.collective else
               "the threads that skip it do not exit, so the block deadlocks or the barrier is undefined")
        return {"is_": "is" if self.definite else "may be", "who": who, "why": why}


# -- WL900 ----------------------------------------------------------------------------------

@message_kind
class UnusedSuppression(Message):
    """WL900"""
    template = "unused suppression: there is no {what} on line {line} to suppress"
    codes: tuple[str, ...]  # the unused codes; ("*",): the comment names no rule
    line: int  # the line the comment applies to

    def words(self) -> dict:
        if self.codes == ("*",):
            return {"what": "finding"}
        return {"what": " or ".join(self.codes) + " finding"}


@message_kind
class UnknownRuleInSuppression(Message):
    """WL900: a suppression naming a rule that does not exist (a typo would hide nothing)."""
    template = "suppression names {what} (see 'warplint rules'): {it} nothing"
    codes: tuple[str, ...]

    def words(self) -> dict:
        names = ", ".join(f"'{c}'" for c in self.codes)
        one = len(self.codes) == 1
        return {"what": f"unknown rule{'' if one else 's'} {names}", "it": "it suppresses" if one else "they suppress"}
