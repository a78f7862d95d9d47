"""What the language server asks of warplint, in warplint's terms (no LSP types here): lint one
buffer from memory with its project's configuration, the edits of quick fixes and of
"suppress on this line", and the masks a hover shows."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..findings import Edit, Finding
from ..ir import Diagnostic, Loc


@dataclass
class Linted:
    """One analysed version of a document: what is published for it and what code actions and
    hovers read."""
    path: str
    text: str
    findings: list[Finding] = field(default_factory=list)  # in this document, not suppressed
    diagnostics: list[Diagnostic] = field(default_factory=list)  # errors and notes (work bounds)
    masks: list = field(default_factory=list)  # (function name, show.MaskEntry) in this document


def same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def options_for(cfg):
    """The CLI's options for a project configuration (no command-line flags), as the editor
    needs them: no result cache, PTX findings on the PTX lines of the buffer being edited,
    the buffer itself analysed (never nvcc on the file)."""
    from ..cli import _build_options, _parser
    options = _build_options(_parser().parse_args([]), cfg)
    options.use_cache = False
    options.map_ptx_locations = False
    options.via_nvcc = False  # nvcc would compile the file on disk, not the buffer
    return options


def excluded(path: str, cfg, options) -> bool:
    """Does the project leave this file out?  Its configuration's extensions (what the CLI's
    directory walk picks up) and `exclude` (as for a file named on the command line) decide."""
    from ..languages import is_lintable
    from ..walk import any_match
    rel = os.path.relpath(os.path.abspath(path), cfg.root).replace(os.sep, "/")
    return not is_lintable(os.path.basename(path), options.extensions) or (
        not rel.startswith("..") and any_match(cfg.exclude, rel))


def lint_document(path: str, text: str) -> Linted | None:
    """Lint a buffer from memory (`pipeline.lint_text`, as `--stdin-filename` does) with the
    configuration found for its path; per-path ignores and in-source suppressions applied.
    None: the project does not lint this file.  Never raises: a problem is a diagnostic."""
    from ..config import discover
    from ..errors import InputError, UsageError
    try:
        cfg = discover(path)
        options = options_for(cfg)
        if excluded(path, cfg, options):
            return None
        text, notes = _buffer_text(path, text)
        linted = _lint(path, text, cfg, options)
        linted.diagnostics[:0] = notes
        return linted
    except UsageError as e:
        return Linted(path, text, diagnostics=[Diagnostic(Loc(path, 1, 1), "error", f"configuration: {e}")])
    except InputError as e:
        return Linted(path, text, diagnostics=[Diagnostic(e.loc, "error", e.message)])
    except Exception as e:  # a bug in an analysis must not take the server down
        return Linted(path, text, diagnostics=[Diagnostic(
            Loc(path, 1, 1), "error", f"internal error while analysing: {type(e).__name__}: {e}")])


def _buffer_text(path: str, text: str) -> tuple[str, list[Diagnostic]]:
    """The buffer's text as `warplint -` reads stdin (`pipeline.decode_source`), with the size
    limit of files: a NUL or too many bytes raise InputError, text that is not UTF-8 is a note."""
    from .. import pipeline
    from ..errors import InputError
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > pipeline.MAX_BYTES:
        raise InputError(Loc(path, 1, 1), f"buffer is {len(data)} bytes; the limit is {pipeline.MAX_BYTES}")
    return pipeline.decode_source(data, path)


def _lint(path: str, text: str, cfg, options) -> Linted:
    from .. import pipeline
    from ..sources import Sources
    result = pipeline.lint_text(text, path, options)
    findings = pipeline.drop_per_path_ignores(result.findings, cfg.per_path_ignores, cfg.root)
    sources = Sources()
    sources.add(path, text)  # suppression comments are read from the buffer, not the disk
    pipeline.suppress(findings, sources, [result], options, report_unused=False)
    return Linted(path, text,
                  findings=[f for f in findings if not f.suppressed and same_file(f.loc.path, path)],
                  diagnostics=[_here(d, path) for d in result.diagnostics
                               if same_file(d.loc.path, path) or d.severity == "error"],
                  masks=_masks(result.analyses or [], path))


def _here(d: Diagnostic, path: str) -> Diagnostic:
    """A diagnostic of another file (an included header) is shown at the top of this one."""
    if same_file(d.loc.path, path):
        return d
    return Diagnostic(Loc(path, 1, 1), d.severity, f"{d.loc}: {d.message}")


def _masks(analyses: list, path: str) -> list:
    from ..analysis.show import mask_entries
    out = []
    for fa in analyses:
        name = fa.function.display_name or fa.function.name
        out.extend((name, e) for e in mask_entries(fa) if same_file(e.loc.path, path))
    return out


# -- code actions --------------------------------------------------------------------------------

def fix_edits(linted: Linted, findings: list[Finding]) -> list[Edit]:
    """The edits of these findings' fixes in this document (overlapping ones dropped, first
    wins: `fixer.plan`, as `--fix` does); a fix that edits another file is left out."""
    from ..fixer import plan
    from ..sources import Sources
    sources = Sources()
    sources.add(linted.path, linted.text)
    key = os.path.abspath(linted.path)
    plans, _ = plan(findings, sources, {key})
    return plans[key].edits if key in plans else []


def suppress_edit(linted: Linted, finding: Finding, line_text: str) -> Edit | None:
    """The edit that adds `// warplint: ignore[RULE]` to the finding's line (or the rule to the
    suppression comment already there); None on a line continued with `\\` (a `//` comment
    would swallow the next line)."""
    from ..suppress import parse
    line, rule = finding.loc.line, finding.rule_id
    body = line_text.rstrip("\r")
    if body.rstrip().endswith("\\"):
        return None
    for s in parse(line_text, linted.path):
        if s.target == s.line and s.codes:  # `ignore[A, B]` on this line: add the rule to the list
            return Edit(linted.path, line, s.end_col - 1, line, s.end_col - 1, f", {rule}")
    code_end = len(body.rstrip()) + 1
    return Edit(linted.path, line, code_end, line, len(body) + 1, f"  // warplint: ignore[{rule}]")


# -- hover ---------------------------------------------------------------------------------------

def masks_at(linted: Linted, line: int, col: int) -> list:
    """The (function, MaskEntry) of the primitives whose span holds (line, col)."""
    def holds(loc: Loc) -> bool:
        end_line = loc.end_line or loc.line
        end_col = loc.end_col if loc.end_col is not None else loc.col + 1
        return (loc.line, loc.col) <= (line, col) and ((line, col) < (end_line, end_col) or
                                                        (line, col) == (loc.line, loc.col))
    return [(fn, e) for fn, e in linted.masks if holds(e.loc)]


def describe_masks(entries: list, path: str) -> str:
    """Markdown for a hover: the lanes and membermask of each entry (one per calling context)."""
    parts = []
    for fn, e in entries:
        lines = [f"**`{e.name}`** in `{fn}`", "", f"- active lanes: {e.active}"]
        if e.member is not None:
            lines.append(f"- membermask: {e.member}")
        for step in e.diverged:
            where = f"line {step.loc.line}" if same_file(step.loc.path, path) else str(step.loc)
            lines.append(f"- diverged at {where}: {step.message}")
        parts.append("\n".join(lines))
    return "\n\n---\n\n".join(parts)
