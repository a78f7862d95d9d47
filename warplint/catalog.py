"""The rule registry: the one source of each rule's id, slug, name, default severity, targets,
summary and document.  Checks, reporters, suppressions, the configuration, the CLI and the tests
read it; adding a rule = one check module (`@rule("WL011")`) + its document + fixtures.

One Markdown document per rule in `rules/` (shipped in the wheel as `warplint.rules`).  Each
document starts with a front-matter block:

    ---
    id: WL001
    slug: deprecated-non-sync
    name: Deprecated non-.sync warp primitive
    severity: warning
    targets: all
    summary: One line shown by `warplint rules` and as SARIF shortDescription.
    ---

followed by the Markdown body (what, why with the spec citation, bad/good examples in
fenced blocks tagged `cuda bad`, `cuda good`, `ptx bad`, `ptx good`, how to fix).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .severity import SEVERITIES

# compiled on first use (re's cache): a run that reads no rule document needs neither
_FRONT = r"(?s)\A---\n(.*?)\n---\n"
_EXAMPLE = r"(?sm)^```(ptx|cuda) (bad|good)\n(.*?)^```"


@dataclass(frozen=True)
class RuleDoc:
    id: str
    slug: str
    name: str
    severity: str
    targets: str
    summary: str
    body: str

    @property
    def examples(self) -> list[tuple[str, str, str]]:
        """(language, "bad"|"good", code) for each tagged fenced block."""
        return [(m[1], m[2], m[3]) for m in re.finditer(_EXAMPLE, self.body)]

    @property
    def doc_name(self) -> str:
        return f"{self.id}-{self.slug}.md"


def _parse(text: str) -> RuleDoc:
    m = re.match(_FRONT, text)
    if not m:
        raise ValueError("rule document has no front matter")
    meta = dict(line.split(":", 1) for line in m[1].splitlines() if ":" in line)
    meta = {k.strip(): v.strip() for k, v in meta.items()}
    if meta.get("severity") not in SEVERITIES:
        raise ValueError(f"rule document {meta.get('id')}: severity must be one of {', '.join(SEVERITIES)}")
    return RuleDoc(meta["id"], meta["slug"], meta["name"], meta["severity"],
                   meta.get("targets", "all"), meta["summary"], text[m.end():].strip() + "\n")


def _documents():
    from importlib import resources  # here: most runs read no rule document (1.6 ms to import)

    try:
        root = resources.files("warplint.rules")
        docs = [p for p in root.iterdir() if p.name.endswith(".md")]
        if docs:
            return docs
    except (ModuleNotFoundError, FileNotFoundError):
        pass
    return sorted((Path(__file__).resolve().parent.parent / "rules").glob("*.md"))


@lru_cache(maxsize=1)
def catalog() -> dict[str, RuleDoc]:
    rules = {}
    for p in _documents():
        if p.name.lower() == "readme.md":
            continue
        doc = _parse(p.read_text(encoding="utf-8"))
        rules[doc.id] = doc
    return dict(sorted(rules.items()))


def default_severity(rule_id: str) -> str:
    return catalog()[rule_id].severity


def slug(rule_id: str) -> str | None:
    doc = catalog().get(rule_id)
    return doc.slug if doc is not None else None


def known_rules() -> dict[str, str]:
    """rule id -> slug, for every rule."""
    return {doc.id: doc.slug for doc in catalog().values()}


def code_matches(code: str, rule_id: str) -> bool:
    """Does a code (in --select/--ignore, a suppression, the configuration) name this rule?
    A code is a rule id, an id prefix (`WL00`) or a slug."""
    code = code.strip()
    return rule_id.upper().startswith(code.upper()) or code == slug(rule_id)


def lookup(name: str) -> RuleDoc | None:
    """A rule by id (`WL001`, case-insensitive) or slug."""
    rules = catalog()
    key = name.strip()
    if key.upper() in rules:
        return rules[key.upper()]
    for doc in rules.values():
        if doc.slug == key:
            return doc
    return None


def selected(rule_id: str, options) -> bool:
    """Is the rule on under the options' `select` and `ignore` codes?"""
    select = getattr(options, "select", None)
    if select and not any(code_matches(p, rule_id) for p in select):
        return False
    return not any(code_matches(p, rule_id) for p in getattr(options, "ignore", []) or [])
