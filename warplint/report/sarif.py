"""SARIF 2.1.0 built with sarif-om (its attrs classes) and serialised to JSON here.

What GitHub code scanning and IDE viewers read: rule metadata with help, relative URIs under
`%SRCROOT%`, stable partial fingerprints, the divergence path as a code flow, fixes, in-source
suppressions, baseline states and the files that could not be analysed as notifications.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from . import Report, printable_data
from ..fingerprint import FINGERPRINT_KEY, artifact_uri

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
DEFAULT_REPO = "https://github.com/warplint/warplint"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}  # GitHub's names
LINE_HASH_KEY = "primaryLocationLineHash"  # the one GitHub code scanning reads


def plain_text(markdown: str) -> str:
    """A rule document as plain text (SARIF `help.text`): no fences, heading marks or backticks."""
    import re
    out = []
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            continue
        line = re.sub(r"^#+\s*", "", line)
        line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)  # [text](link) -> text
        out.append(line.replace("`", "").replace("**", ""))
    return "\n".join(out).strip() + "\n"


def repo_url() -> str:
    try:
        from importlib.metadata import metadata
        for entry in metadata("warplint").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() in ("homepage", "repository", "source") and url.strip():
                return url.strip().rstrip("/")
    except ImportError:  # not installed (PackageNotFoundError): running from a checkout
        pass
    try:  # the checkout's pyproject.toml
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        with open(Path(__file__).resolve().parents[2] / "pyproject.toml", "rb") as f:
            urls = tomllib.load(f).get("project", {}).get("urls", {})
        for label in ("Homepage", "Repository", "Source"):
            if urls.get(label):
                return str(urls[label]).rstrip("/")
    except (ImportError, OSError, ValueError):  # no tomli (3.10), no pyproject.toml, bad TOML
        pass
    return DEFAULT_REPO


def _rules(report: Report):
    import sarif_om as so

    from ..catalog import catalog
    base = repo_url()
    docs = catalog()  # a broken rule document is a bug to report, not a SARIF without rules
    used = sorted({f.rule_id for f in report.findings})
    descriptors, index = [], {}
    for rule_id in sorted(set(docs) | set(used)):
        doc = docs.get(rule_id)
        if doc is not None:
            rd = so.ReportingDescriptor(
                id=doc.id, name=doc.slug,
                short_description=so.MultiformatMessageString(text=doc.summary),
                full_description=so.MultiformatMessageString(text=f"{doc.name}. {doc.summary}"),
                help=so.MultiformatMessageString(text=plain_text(doc.body), markdown=doc.body),
                help_uri=f"{base}/blob/main/rules/{doc.doc_name}",
                default_configuration=so.ReportingConfiguration(level=_LEVEL.get(doc.severity, "warning")),
                properties=so.PropertyBag(tags=["correctness", "gpu", "warp-synchronous"]))
            rd.properties.precision = "high"
            setattr(rd.properties, "problem.severity", _PROBLEM_SEVERITY.get(doc.severity, "warning"))
        else:
            slug = rule_id.lower()  # a rule without a document
            rd = so.ReportingDescriptor(id=rule_id, name=slug,
                                        short_description=so.MultiformatMessageString(text=slug.replace("-", " ")),
                                        properties=so.PropertyBag(tags=["correctness", "gpu"]))
        index[rule_id] = len(descriptors)
        descriptors.append(rd)
    return descriptors, index


def _region(loc, message: str | None = None):
    """A region with its end always spelled out (GitHub needs endLine/endColumn): a location
    without an end covers the one character at its start."""
    import sarif_om as so
    r = so.Region(start_line=loc.line, start_column=loc.col)
    r.end_line = loc.end_line or loc.line
    if loc.end_col:
        r.end_column = loc.end_col
    else:
        r.end_column = loc.col + 1 if r.end_line == loc.line else 1
    if message:
        r.message = so.Message(text=message)
    return r


def _artifact(path: str, srcroot: str):
    import sarif_om as so
    uri, base = artifact_uri(path, srcroot)
    return so.ArtifactLocation(uri=uri, uri_base_id=base)


def _location(loc, srcroot: str, message: str | None = None, ident: int | None = None):
    import sarif_om as so
    l = so.Location(physical_location=so.PhysicalLocation(artifact_location=_artifact(loc.path, srcroot),
                                                          region=_region(loc)))
    if message:
        l.message = so.Message(text=message)
    if ident is not None:
        l.id = ident
    return l


def _result(f, report: Report, rule_index: dict[str, int]):
    import sarif_om as so
    root = report.srcroot
    text = f.message
    r = so.Result(rule_id=f.rule_id, rule_index=rule_index[f.rule_id], level=_LEVEL.get(f.severity, "warning"),
                  message=so.Message(text=text + "".join(f"\n{d}" for d in f.details)),
                  locations=[_location(f.loc, root)])
    fp = report.fingerprints.get(id(f))
    if fp:
        r.partial_fingerprints = {FINGERPRINT_KEY: fp}
        line_hash = report.line_hashes.get(id(f))
        if line_hash:
            r.partial_fingerprints[LINE_HASH_KEY] = line_hash
    if f.flow:
        here = f.details[0] if f.details else f.message
        steps = [so.ThreadFlowLocation(location=_location(s.loc, root, s.message), nesting_level=0,
                                       execution_order=i) for i, s in enumerate(f.flow)]
        steps.append(so.ThreadFlowLocation(location=_location(f.loc, root, here), nesting_level=0,
                                           execution_order=len(f.flow)))
        r.code_flows = [so.CodeFlow(message=so.Message(text="how the lanes diverge"),
                                    thread_flows=[so.ThreadFlow(locations=steps)])]
    if f.related:
        r.related_locations = [_location(s.loc, root, s.message, i) for i, s in enumerate(f.related)]
    if f.fix is not None and f.fix.edits:
        by_path: dict[str, list] = {}
        for e in f.fix.edits:
            by_path.setdefault(e.path, []).append(e)
        changes = []
        for path, edits in by_path.items():
            reps = [so.Replacement(deleted_region=so.Region(start_line=e.line, start_column=e.col,
                                                            end_line=e.end_line, end_column=e.end_col),
                                   inserted_content=so.ArtifactContent(text=e.text)) for e in edits]
            changes.append(so.ArtifactChange(artifact_location=_artifact(path, root), replacements=reps))
        r.fixes = [so.Fix(description=so.Message(text=f.fix.description), artifact_changes=changes)]
    if f.suppressed:
        r.suppressions = [so.Suppression(kind="inSource", justification=report.justifications.get(id(f)) or None)]
    state = report.baseline.get(id(f))
    if state:
        r.baseline_state = state
    props = so.PropertyBag(tags=[f.certainty])
    props.certainty = f.certainty
    if f.targets:
        props.targets = list(f.targets)
    if f.function:
        props.function = f.function
    r.properties = props
    return r


def build_log(report: Report):
    import sarif_om as so

    from .. import __version__
    rules, rule_index = _rules(report)
    results = [_result(f, report, rule_index) for f in report.findings]
    notes = []
    for d in report.diagnostics:
        n = so.Notification(message=so.Message(text=d.message), level="error" if d.severity == "error" else "note",
                            locations=[_location(d.loc, report.srcroot)])
        n.descriptor = so.ReportingDescriptorReference(id="input-error" if d.severity == "error" else "analysis-note")
        notes.append(n)
    for t in report.tool_notes:
        notes.append(so.Notification(message=so.Message(text=t), level="note"))
    inv = so.Invocation(execution_successful=report.success)
    if notes:
        inv.tool_execution_notifications = notes
    root_uri = Path(os.path.abspath(report.srcroot)).as_uri()
    if not root_uri.endswith("/"):
        root_uri += "/"
    run = so.Run(
        tool=so.Tool(driver=so.ToolComponent(name="warplint", version=__version__, semantic_version=__version__,
                                             information_uri=repo_url(), rules=rules)),
        results=results, invocations=[inv],
        original_uri_base_ids={"%SRCROOT%": so.ArtifactLocation(uri=root_uri)},
        column_kind="unicodeCodePoints")
    run.properties = so.PropertyBag()
    if report.coverage is not None:  # the warp code analysed (issue 13)
        run.properties.coverage = report.coverage.as_dict()
    if report.masks:  # --show-masks: {artifact URI: text}
        run.properties.masks = {artifact_uri(p, report.srcroot)[0]: text for p, text in report.masks.items()}
    return so.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def _plain(obj):
    """The sarif-om object tree as JSON data: schema property names, values equal to their
    attrs default left out (what jschema_to_python.to_json does, without its deep copy of every
    subtree at every level, which made rendering quadratic in the depth of the log)."""
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if not hasattr(obj, "__attrs_attrs__"):
        return obj
    fields = {f.name: f for f in obj.__attrs_attrs__}
    out = {}
    for name, value in vars(obj).items():
        f = fields.get(name)
        if f is not None:
            default = f.default.factory() if hasattr(f.default, "factory") else f.default
            if value == default:
                continue
            name = f.metadata.get("schema_property_name", name)
        out[name] = _plain(value)
    return out


def render_sarif(report: Report) -> str:
    data = printable_data(_plain(build_log(report)))
    # values equal to the schema default are left out; spell out the levels anyway
    run = data["runs"][0]
    for rd in run["tool"]["driver"].get("rules", []):
        if "defaultConfiguration" in rd:
            rd["defaultConfiguration"].setdefault("level", "warning")
    for r in run.get("results", []):
        r.setdefault("level", "warning")
    return json.dumps(data, indent=2) + "\n"
