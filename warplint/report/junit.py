"""JUnit XML for CI dashboards: one test suite per run, one test case per file analysed (passing
when it has no visible finding) and one failing test case per finding, named by rule and place;
a file that could not be analysed is an error case."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from . import Report, display_path


def render_junit(report: Report) -> str:
    findings = report.visible
    errors = [d for d in report.diagnostics if d.severity == "error"]
    with_findings = {display_path(f.loc.path) for f in findings}
    suite = ET.Element("testsuite", name="warplint")
    for path in sorted({display_path(p) for p in report.files} - with_findings):
        ET.SubElement(suite, "testcase", classname=path, name="warplint")
    for f in findings:
        path = display_path(f.loc.path)
        case = ET.SubElement(suite, "testcase", classname=path, name=f"{f.rule_id} at {path}:{f.loc.line}:{f.loc.col}",
                             file=path, line=str(f.loc.line))
        failure = ET.SubElement(case, "failure", message=f.message, type=f.rule_id)
        failure.text = "\n".join([f"{path}:{f.loc.line}:{f.loc.col}: {f.severity}: {f.message}", *f.details])
    for d in errors:
        path = display_path(d.loc.path)
        case = ET.SubElement(suite, "testcase", classname=path, name="analysis")
        ET.SubElement(case, "error", message=d.message, type="not-analysed").text = \
            f"{path}:{d.loc.line}:{d.loc.col}: {d.message}"
    cases = len(suite)
    suite.set("tests", str(cases))
    suite.set("failures", str(len(findings)))
    suite.set("errors", str(len(errors)))
    root = ET.Element("testsuites", name="warplint", tests=str(cases), failures=str(len(findings)),
                      errors=str(len(errors)))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
