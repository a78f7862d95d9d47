"""One analysis per function as analysed: a CUDA file is preprocessed once per target
architecture its text tests (pipeline.parse_variants), and the texts mostly define the same
functions, instruction for instruction (nccl's collective headers: 279 of 302).  A function whose
inlined body and module facts are those of one analysed for another text of the file takes that
analysis (a copy with its own notes: the checks add theirs per target) instead of a second one.
(Other files' functions are not kept: a header's functions that a file's code does not reach are
not analysed for it at all, and those it reaches inline the file's own code: frontends/cuda/scope.py.)

`key` holds everything the analysis reads: the function with its calls inlined (every field
of every instruction and label, numbers with their type: `Imm(1)` and `Imm(1.0)` are equal as
dataclasses, locations with their file), the module's state spaces and local fields as they are
when it is analysed, of the names it can read (`_module_facts`), the function as written
(`any_arguments` analyses it with a prologue that passes varying arguments: the two copies share
that analysis), and the options the analysis reads (`_options_read`).  `key_as_written` (asked
first; `key` where it finds nothing) stands for it without inlining: the function as written and every function it can
reach by a name its instructions hold, each function's part found once (inlining is a function
of those); equal keys as written mean equal keys (tests/test_analysis_reuse.py)."""
from __future__ import annotations

from dataclasses import replace

from ..ir import Addr, Imm, Instr, Reg, Sym, Vec
from .inline import _OWN, MAX_DEPTH, OWN_FIELDS


class Analyses:
    """The analyses that one file's texts may take, by key (`key`, `key_as_written`)."""

    def __init__(self):
        self._own: dict = {}  # key -> (analysis, its notes when made, the functions inlined)
        self._keys: dict[int, tuple] = {}  # id(function) -> (function, its `_function_key`)
        self._names: dict[int, tuple] = {}  # id(function) -> (function, the symbols it names)
        self._odd: dict[int, tuple] = {}  # id(function table) -> (table, `odd_names`)
        self._facts: dict[int, tuple] = {}  # id(module) -> (module, sizes of its facts, `_odd_facts`)
        self._reached: dict[int, tuple] = {}  # id(function) -> (function, table, `reachable`)

    def get(self, key):
        """A copy of the analysis kept for `key` with its own list of the analysis's notes, or None."""
        return self.take(key)[0]

    def take(self, key) -> tuple:
        """(`get(key)`, the functions inlined into it: [(name, index among the functions of that
        name)]); (None, None) where none is kept."""
        kept = self._own.get(key)
        if kept is None:
            return None, None
        fa, notes, inlined = kept
        return replace(fa, notes=list(notes)), inlined

    def put(self, key, fa, inlined: list[tuple[str, int]] = ()) -> None:
        """Keep `fa` for `key`."""
        self._own.setdefault(key, (fa, tuple(fa.notes), list(inlined)))

    def function_key(self, fn) -> "_Key":
        """`_function_key(fn)` (its hash found once), found once per function."""
        kept = self._keys.get(id(fn))
        if kept is None or kept[0] is not fn:
            kept = self._keys[id(fn)] = (fn, _Key(_function_key(fn)))
        return kept[1]

    def odd_names(self, table: dict) -> bool:
        """Does a function of `table` have a name with `@` (see `key_as_written`)?"""
        kept = self._odd.get(id(table))
        if kept is None or kept[0] is not table:
            kept = self._odd[id(table)] = (table, any("@" in name for name in table))
        return kept[1]

    def odd_facts(self, module) -> tuple:
        """`_odd_facts(module)`, found again only when the module's facts grew (an analysis adds
        the own object's space, nothing else)."""
        sizes = (len(module.state_spaces), len(module.local_fields))
        kept = self._facts.get(id(module))
        if kept is None or kept[0] is not module or kept[1] != sizes:
            kept = self._facts[id(module)] = (module, sizes, _odd_facts(module))
        return kept[2]

    def reachable(self, fn, table: dict) -> set[str]:
        """Every symbol that `fn`, or a function of `table` that it reaches by a name, names, down
        to the depth inlining reaches (it reads the bodies of callees MAX_DEPTH calls deep); found
        once per function."""
        kept = self._reached.get(id(fn))
        if kept is None or kept[0] is not fn or kept[1] is not table:
            kept = self._reached[id(fn)] = (fn, table, self.reached_from(self.names(fn), table))
        return kept[2]

    def reached_from(self, named, table: dict) -> set[str]:
        """`reachable` for a body that names the symbols `named`."""
        names, found = set(), set(named)
        for depth in range(MAX_DEPTH + 1):
            names |= found
            if depth == MAX_DEPTH:
                break
            found = set().union(*(self.names(f) for name in found for f in table.get(name, ()))) - names
        return names

    def reachable_table(self, fn, varying, table: dict) -> dict:
        """The functions of `table` that inlining `varying` (`fn` with a prologue: see
        `inline.with_varying_arguments`) can reach."""
        named: set[str] = set()
        for i in varying.body[:len(varying.body) - len(fn.body)]:
            for o in i.srcs + i.dests:
                _symbols(o, named)
        return {name: table[name] for name in self.reachable(fn, table) | self.reached_from(named, table)
                if name in table}

    def names(self, fn) -> frozenset:
        """Every symbol that an operand of `fn` names (the callees among them)."""
        kept = self._names.get(id(fn))
        if kept is None or kept[0] is not fn:
            found: set[str] = set()
            for i in fn.body:
                if isinstance(i, Instr):
                    for o in i.srcs + i.dests:
                        _symbols(o, found)
            kept = self._names[id(fn)] = (fn, frozenset(found))
        return kept[1]


def key_as_written(fn, module, table, options, reuse: Analyses) -> "_Key | None":
    """What analysing `fn` in `module` reads, from the functions as written: `fn` and every
    function of each name that it or they name, down to the depth that inlining reaches
    (inlining reads nothing more: its result is that of `key`'s inlined function), with the
    module's facts and the options.  None where a function's name could
    be one that inlining makes (`@`: an inlined copy's labels and registers)."""
    if reuse.odd_names(table):
        return None
    names = reuse.reachable(fn, table)
    callees = tuple((name, tuple(map(reuse.function_key, table[name]))) for name in sorted(names) if name in table)
    return _Key((module.language, reuse.function_key(fn), callees, _module_facts(module, names, reuse),
                 _options_read(options)))


class ModuleFacts:
    """What an analysis reads of its module (`_module_facts`), without its functions and text:
    a kept analysis's `any_arguments`, made when first asked for, holds this, not the module."""
    __slots__ = ("language", "state_spaces", "local_fields")

    def __init__(self, module):
        self.language, self.state_spaces, self.local_fields = module.language, module.state_spaces, module.local_fields


def _symbols(o, found: set) -> None:
    if isinstance(o, Sym):
        found.add(o.name)
    elif isinstance(o, Addr):
        _symbols(o.base, found)
    elif isinstance(o, Vec):
        for item in o.items:
            _symbols(item, found)


def key(fn, inlined, module, options=None, reuse: Analyses | None = None, names: set | None = None) -> "_Key":
    """What analysing `fn` in `module` reads: `inlined` (`fn` with its calls inlined), and `fn`
    itself (`any_arguments` analyses it with a prologue), with the module's facts of the symbols
    `names` and the options.  `names`: `Analyses.reachable(fn, ...)` (every symbol of `inlined`
    is among them, or has `@`: an inlined copy's); by default the symbols `fn` and `inlined` name."""
    if names is None:
        names = set()
        for f in (fn, inlined):
            for i in f.body:
                if isinstance(i, Instr):
                    for o in i.srcs + i.dests:
                        _symbols(o, names)
    return _Key((module.language, _function_key(inlined), None if inlined is fn else _function_key(fn),
                 _module_facts(module, names, reuse), _options_read(options)))


def _module_facts(module, names: set, reuse: Analyses | None) -> tuple:
    """The module's facts that analysing a function naming the symbols `names` reads: the state
    space of a symbol it names (transfer.py, local_objects.py), the fields of a variable whose
    address it takes (`&x`: `local_fields["x"]`, instructions.py), and those of a name with `@`
    (`_odd_facts`).  `any_arguments`' prologue names the thread's own object and the call giving
    its fields (inline.own_object): the object's space it sets itself before (`&__own_object`
    counts only where the code names it), its fields and the call's space count."""
    spaces, fields = module.state_spaces, module.local_fields
    variables = {n[1:] for n in names if n[:1] == "&"} | {_OWN}
    return (frozenset((n, spaces[n]) for n in names | {OWN_FIELDS} if n in spaces),
            frozenset((n, frozenset(fields[n].items())) for n in variables if n in fields),
            reuse.odd_facts(module) if reuse is not None else _odd_facts(module))


def _odd_facts(module) -> tuple:
    """The module's facts of the names with `@` (an inlined copy's label or symbol, which no
    function as written names)."""
    return (frozenset((n, s) for n, s in module.state_spaces.items() if "@" in n),
            frozenset((n, frozenset(f.items())) for n, f in module.local_fields.items() if "@" in n))


def _options_read(options) -> tuple:
    """The options that the analysis reads (solver.py; tests/test_analysis_reuse.py checks that
    no other is read)."""
    return getattr(options, "block_dim", None), getattr(options, "work_bound", 200_000)


class _Key:
    """A key's tuple with its hash found once (a function's key holds every instruction)."""
    __slots__ = ("parts", "hash")

    def __init__(self, parts: tuple):
        self.parts = parts
        self.hash = hash(parts)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other) -> bool:
        return isinstance(other, _Key) and self.hash == other.hash and self.parts == other.parts


def _function_key(fn) -> tuple:
    return (fn.name, fn.is_kernel, tuple(fn.params), tuple(fn.ret_params), fn.loc, fn.display_name,
            tuple(_instr_key(i) if isinstance(i, Instr) else ("label", i.name, i.loc) for i in fn.body))


def _instr_key(i: Instr) -> tuple:
    return (i.opcode, tuple(map(_operand_key, i.dests)), tuple(map(_operand_key, i.srcs)), i.loc, i.guard,
            i.raw_loc, i.text, i.negated, i.from_cuda, i.frames)


def _operand_key(o):
    """The operand, with its numbers' types (Reg and Sym hold a name: themselves)."""
    if type(o) in (Reg, Sym) or o is None:
        return o
    if isinstance(o, Imm):
        return ("imm", type(o.value), repr(o.value))
    if isinstance(o, Addr):
        return ("addr", _operand_key(o.base), type(o.offset), o.offset)
    if isinstance(o, Vec):
        return ("vec", tuple(map(_operand_key, o.items)))
    return ("other", type(o), repr(o))  # (none now; an object shown by its id is never found again)
