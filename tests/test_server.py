"""`warplint server` (issue 18): a real LSP client (pygls') drives the server over stdio.

One server serves the module (starting one costs about a second); each test opens its own
documents in a temporary project (a git repository: configuration discovery stops there)."""
from __future__ import annotations

import importlib.util
import os

import pytest

from conftest import ROOT, cli_env

pytest.importorskip("pygls.lsp.client", reason="the server extra (pygls 2) is not installed")
from lsprotocol import types as lsp  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from lsp_session import Session  # noqa: E402

LEGACY_VOTE = """\
__global__ void votes(int *data)
{
    int v = data[threadIdx.x];
    v = __any(v > 0);
    data[threadIdx.x] = v;
}
"""

HALF_WARP_SHUFFLE = """\
__global__ void low_lanes(int *data)
{
    unsigned lane = threadIdx.x % 32;
    int v = data[threadIdx.x];
    if (lane < 16)
        v += __shfl_xor_sync(0xffffffff, v, 1);
    data[threadIdx.x] = v;
}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("lsp")
    (root / ".git").mkdir()
    return root


@pytest.fixture(scope="module")
def session(project, tmp_path_factory):
    env = cli_env()
    env["WARPLINT_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    s = Session(str(project), env=env)
    yield s
    s.stop()


def at(text: str, needle: str, end: str | None = None) -> lsp.Range:
    """The range from `needle` (to the end of `end` after it, else of `needle`), 0-based."""
    start = text.index(needle)
    stop = text.index(end, start) + len(end) if end else start + len(needle)

    def pos(offset: int) -> lsp.Position:
        line = text.count("\n", 0, offset)
        return lsp.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))
    return lsp.Range(start=pos(start), end=pos(stop))


def codes(diagnostics) -> list:
    return sorted(d.code for d in diagnostics if d.code)


def test_initialize_advertises_what_the_server_does(session):
    caps = session.init.capabilities
    assert session.init.server_info.name == "warplint"
    assert caps.hover_provider
    assert lsp.CodeActionKind.QuickFix in caps.code_action_provider.code_action_kinds
    assert caps.text_document_sync.change == lsp.TextDocumentSyncKind.Full
    assert caps.text_document_sync.save


def test_open_a_buggy_file_publishes_findings_at_their_ranges(session, project):
    uri = session.open(project / "votes.cu", LEGACY_VOTE)
    (d,) = session.diagnostics(uri)
    assert d.code == "WL001" and d.source == "warplint"
    assert d.range == at(LEGACY_VOTE, "__any(", ")")
    assert d.severity == lsp.DiagnosticSeverity.Error  # removed for sm_70+
    assert "__any_sync" in d.message
    assert d.code_description.href.endswith("/rules/WL001-deprecated-non-sync.md")


def test_ranges_count_utf16_code_units(session, project):
    text = LEGACY_VOTE.replace("    v = __any", "    /* \U0001F600 */ v = __any")  # an emoji: 2 UTF-16 units
    uri = session.open(project / "emoji.cu", text)
    (d,) = session.diagnostics(uri)
    line = text.split("\n")[d.range.start.line]
    assert d.range.start.character == line.index("__any") + 1
    assert d.range.end.character == line.index(");") + 2


def test_divergence_path_is_related_information(session, project):
    uri = session.open(project / "half.cu", HALF_WARP_SHUFFLE)
    diagnostics = session.diagnostics(uri)
    assert codes(diagnostics) == ["WL002", "WL004"]  # sm_60 and sm_70
    for d in diagnostics:
        assert d.range == at(HALF_WARP_SHUFFLE, "__shfl_xor_sync", ")")
        branch = d.related_information[0]
        assert branch.location.uri == uri and branch.location.range.start.line == 4  # `if (lane < 16)`
        assert "lanes 0-15" in branch.message


def test_quick_fix_makes_the_diagnostic_go_away(session, project):
    uri = session.open(project / "fixme.cu", LEGACY_VOTE)
    (d,) = session.diagnostics(uri)
    actions = session.code_actions(uri, d.range)
    fix = next(a for a in actions if a.is_preferred)
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.diagnostics[0].code == "WL001"
    version = session.apply(uri, fix.edit)
    assert "__any_sync(0xffffffff, v > 0)" in session.texts[uri]
    assert session.diagnostics(uri, version) == []


def test_suppress_on_this_line(session, project):
    uri = session.open(project / "quiet.cu", LEGACY_VOTE)
    (d,) = session.diagnostics(uri)
    action = next(a for a in session.code_actions(uri, d.range) if a.title.startswith("Suppress"))
    version = session.apply(uri, action.edit)
    assert "v = __any(v > 0);  // warplint: ignore[WL001]\n" in session.texts[uri]
    assert session.diagnostics(uri, version) == []


def test_suppress_adds_the_rule_to_an_existing_comment(session, project):
    text = HALF_WARP_SHUFFLE.replace("v, 1);", "v, 1);  // warplint: ignore[WL002]")
    uri = session.open(project / "quiet2.cu", text)
    (d,) = session.diagnostics(uri)
    assert d.code == "WL004"
    action = next(a for a in session.code_actions(uri, d.range) if a.title.startswith("Suppress"))
    version = session.apply(uri, action.edit)
    assert "// warplint: ignore[WL002, WL004]\n" in session.texts[uri]
    assert session.diagnostics(uri, version) == []


def test_fix_all(session, project):
    text = LEGACY_VOTE.replace("    data[", "    v += __all(v > 1);\n    data[")
    uri = session.open(project / "fixall.cu", text)
    assert codes(session.diagnostics(uri)) == ["WL001", "WL001"]
    (action,) = session.code_actions(uri, at(text, "__global__"), only=[lsp.CodeActionKind.SourceFixAll])
    version = session.apply(uri, action.edit)
    assert session.diagnostics(uri, version) == []


def test_hover_a_shuffle_shows_its_lanes_and_the_branch(session, project):
    uri = session.open(project / "hover.cu", HALF_WARP_SHUFFLE)
    session.diagnostics(uri)
    where = at(HALF_WARP_SHUFFLE, "__shfl_xor_sync").start
    hover = session.hover(uri, where.line, where.character + 3)
    text = hover.contents.value
    assert "`__shfl_xor_sync`" in text and "`low_lanes`" in text
    assert "active lanes: 0x0000ffff (lanes 0-15)" in text
    assert "membermask: 0xffffffff (all 32 lanes)" in text
    assert "diverged at line 5" in text
    assert hover.range == at(HALF_WARP_SHUFFLE, "__shfl_xor_sync", ")")
    assert session.hover(uri, 1, 0) is None  # not on a primitive


def test_hover_a_barrier(session, project):
    text = "__global__ void k(int *d)\n{\n    d[threadIdx.x] = 0;\n    __syncthreads();\n}\n"
    uri = session.open(project / "barrier.cu", text)
    session.diagnostics(uri)
    hover = session.hover(uri, 3, 6).contents.value
    assert "`__syncthreads`" in hover and "active lanes: 0xffffffff (all 32 lanes)" in hover
    assert "membermask" not in hover


def test_rapid_edits_publish_only_the_last_version(session, project):
    uri = session.open(project / "typing.cu", LEGACY_VOTE)
    typing = [LEGACY_VOTE.replace("    data[", "    v += __all(v > 1);\n" * (i + 1) + "    data[") for i in range(12)]
    last = session.change(uri, *typing, HALF_WARP_SHUFFLE)
    assert codes(session.diagnostics(uri)) == ["WL002", "WL004"]
    published = [p.version for p in session.published[uri]]
    assert published[-1] == last
    assert set(published) <= {1, last}  # the open may be published before the edits arrive


def test_save_lints_again_with_the_headers_on_disk(session, project):
    sub = project / "saved"
    sub.mkdir()
    (sub / "mask.cuh").write_text("#define MASK 0xffffffff\n")
    text = '#include "mask.cuh"\n' + HALF_WARP_SHUFFLE.replace("0xffffffff", "MASK")
    uri = session.open(sub / "k.cu", text)
    assert codes(session.diagnostics(uri)) == ["WL002", "WL004"]
    (sub / "mask.cuh").write_text("#define MASK 0x0000ffff\n")  # the header is fixed and saved
    session.save(uri)
    assert wait_for(lambda: len(session.published[uri]) == 2)
    assert not session.published[uri][-1].diagnostics


def test_close_clears_the_diagnostics(session, project):
    uri = session.open(project / "closed.cu", LEGACY_VOTE)
    session.diagnostics(uri)
    session.close(uri)
    assert wait_for(lambda: not session.published[uri][-1].diagnostics and session.published[uri][-1].version is None)


def test_configuration_of_the_project_applies(session, project):
    sub = project / "quiet_dir"
    sub.mkdir()
    (sub / "warplint.toml").write_text('ignore = ["WL001"]\ntargets = ["sm_70"]\n')
    uri = session.open(sub / "a.cu", LEGACY_VOTE + HALF_WARP_SHUFFLE)
    assert codes(session.diagnostics(uri)) == ["WL004"]  # WL001 ignored; sm_70 only: no WL002


def test_a_changed_configuration_applies_to_open_documents(session, project):
    sub = project / "reconfigured"
    sub.mkdir()
    uri = session.open(sub / "a.cu", LEGACY_VOTE)
    assert codes(session.diagnostics(uri)) == ["WL001"]
    (sub / "warplint.toml").write_text('ignore = ["WL001"]\n')
    session.call(session.client.workspace_did_change_watched_files, lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=from_fs_path(str(sub / "warplint.toml")), type=lsp.FileChangeType.Created)]))
    assert wait_for(lambda: len(session.published[uri]) == 2)
    assert not session.published[uri][-1].diagnostics


def test_configuration_error_is_a_diagnostic(session, project):
    sub = project / "bad_config"
    sub.mkdir()
    (sub / "warplint.toml").write_text('tragets = ["sm_70"]\n')
    uri = session.open(sub / "a.cu", LEGACY_VOTE)
    (d,) = session.diagnostics(uri)
    assert d.severity == lsp.DiagnosticSeverity.Error and "unknown configuration key 'tragets'" in d.message
    assert d.range.start == lsp.Position(line=0, character=0)


def test_a_nul_in_the_buffer_is_an_error_at_its_place(session, project):
    text = LEGACY_VOTE.replace("v > 0", "v >\0 0")
    uri = session.open(project / "nul.cu", text)
    (d,) = session.diagnostics(uri)
    assert d.severity == lsp.DiagnosticSeverity.Error and "NUL" in d.message
    assert d.range.start == at(text, "\0").start


def test_a_buffer_past_the_size_limit_is_not_analysed(monkeypatch, tmp_path):
    from warplint import pipeline
    from warplint.server.analysis import lint_document
    monkeypatch.setattr(pipeline, "MAX_BYTES", 100)
    (d,) = lint_document(str(tmp_path / "big.cu"), LEGACY_VOTE + " " * 100).diagnostics
    assert d.severity == "error" and "the limit is 100" in d.message


def test_excluded_and_foreign_files_get_no_diagnostics(session, project):
    sub = project / "vendor"
    sub.mkdir()
    (sub / "warplint.toml").write_text('exclude = ["skip/**"]\n')
    uri = session.open(sub / "skip" / "a.cu", LEGACY_VOTE)
    assert session.diagnostics(uri) == []
    uri = session.open(project / "notes.txt", LEGACY_VOTE, language="plaintext")
    assert session.diagnostics(uri) == []
    uri = session.open(project / "host.cpp", LEGACY_VOTE, language="cpp")  # Helix sends .cu and .cpp as cpp
    assert session.diagnostics(uri) == []


def test_headers_the_project_lints(session, project):
    sub = project / "with_h"
    sub.mkdir()
    (sub / "warplint.toml").write_text('extensions = [".cu", ".cuh", ".h"]\n')
    uri = session.open(sub / "warp.h", LEGACY_VOTE.replace("__global__", "__device__"), language="cpp")
    assert codes(session.diagnostics(uri)) == ["WL001"]
    uri = session.open(sub / "warp.hpp", LEGACY_VOTE, language="cpp")  # not in this project's extensions
    assert session.diagnostics(uri) == []


def test_ptx_findings_are_on_the_ptx_lines(session, project):
    from conftest import BUGGY_PTX
    uri = session.open(project / "k.ptx", BUGGY_PTX, language="ptx")
    (d,) = session.diagnostics(uri)
    assert d.code == "WL001" and d.range.start.line == BUGGY_PTX.split("\n").index("    vote.any.pred %p2, %p1;")


def complexity():
    """bench/complexity.py: generators of inputs that hit the analysis' work bounds."""
    spec = importlib.util.spec_from_file_location("complexity", os.path.join(ROOT, "bench", "complexity.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_work_bound_gives_partial_results_and_requests_are_answered_meanwhile(session, project):
    uri = session.open(project / "busy_hover.cu", HALF_WARP_SHUFFLE)
    session.diagnostics(uri)
    bounds = complexity()
    ((name, text),) = bounds.FAMILIES["ptx_branches"][0](100).items()
    slow = session.open(project / f"bounded_{name}", text, language="ptx")  # about a second of analysis
    where = at(HALF_WARP_SHUFFLE, "__shfl_xor_sync").start
    assert session.hover(uri, where.line, where.character) is not None
    assert slow not in session.published  # answered while the analysis runs (off the message loop)
    diagnostics = session.diagnostics(slow)
    notes = [d for d in diagnostics if d.severity == lsp.DiagnosticSeverity.Information]
    assert any(bounds.BOUND_NOTE.search(": note: " + d.message) for d in notes), notes
    assert any(d.code for d in diagnostics)  # and the findings found within the bound


def wait_for(predicate, timeout: float = 10) -> bool:
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False
