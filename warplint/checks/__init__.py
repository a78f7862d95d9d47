"""Checks: one small function per rule, reading analysis results only.

A check is `def check(ctx: Context) -> None` registered with `@rule("WL003")`; it calls
`ctx.report(instr, message)` for each finding, with a message object from `warplint.messages`.
The pipeline (`pipeline.check`) analyses each function once, runs the checks once per target and
merges findings that hold for several targets.

A new rule takes: a module here with its check(s) (found by `registered()`, no list to edit), its
message classes in `warplint/messages.py`, its document `rules/WLxxx-<slug>.md` (the front matter
is the rule's registry entry: id, slug, name, default severity, targets, summary; see `catalog`),
fixtures under `fixtures/ptx` and `fixtures/cuda`, and its README row (`warplint rules --format
markdown`).  tests/test_rule_docs.py and tests/test_fixtures.py pick the rule up from the registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..catalog import default_severity, selected  # noqa: F401 (selected: re-exported)
from ..findings import Finding, Fix, Step
from ..ir import Instr
from ..messages import Message
from ..targets import Target

RULES: dict[str, Callable] = {}  # rule id -> check; the rule's metadata is in `catalog`


def registered() -> dict[str, Callable]:
    """Every check (rule id -> check): imports each module of this package, which registers its
    checks, so a new rule needs no list to be edited."""
    import importlib
    import pkgutil
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return RULES


def rule(rule_id: str):
    """Register a check for the rule documented as `rule_id` in rules/ (see `catalog`)."""
    def register(fn):
        RULES[rule_id] = fn
        return fn
    return register


@dataclass
class Context:
    module: object
    analysis: object  # FunctionAnalysis
    target: Target
    options: object
    rule_id: str = ""
    findings: list[Finding] = field(default_factory=list)

    @property
    def kernel(self) -> bool:
        return self.analysis.function.is_kernel

    def describe(self, lanes) -> str:
        from ..analysis.lanes import describe
        return describe(lanes, self.analysis.lits)

    def report(self, instr: Instr, message: Message, *, certainty: str = "definite",
               details: list[str] | None = None, flow: list[Step] | None = None,
               related: list[Step] | None = None, fix: Fix | None = None,
               severity: str | None = None, block: int | None = None) -> None:
        sev = severity or default_severity(self.rule_id)
        if certainty == "possible":
            if not getattr(self.options, "report_possible", True):
                return
            override = getattr(self.options, "possible_severity", None)
            sev = override or ("warning" if sev == "error" else sev)
        if flow is None and block is not None:
            flow = self.analysis.why(block)
        fn = self.analysis.function
        self.findings.append(Finding(
            self.rule_id, sev, str(message), instr.loc, certainty, list(details or []),
            list(flow or []), list(related or []), fix, (self.target.name,),
            fn.display_name or fn.name, facts=message))
