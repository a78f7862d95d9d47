"""The language server on pygls: documents in, diagnostics, code actions and hovers out.

Analysis runs on one worker thread (`AnalysisWorker`), never on the message loop: an edit waits
`DEBOUNCE_S` for the next one, then the newest text is queued; a newer version replaces a queued
one, and the result of a version that is no longer the newest is dropped, never published.
"""
from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from .analysis import (Linted, describe_masks, fix_edits, lint_document, masks_at, same_file,
                       suppress_edit)
from .text import LineMap

DEBOUNCE_S = 0.1  # wait this long after an edit for the next one before analysing
SOURCE = "warplint"
FIX_ALL = "source.fixAll.warplint"
CONFIG_FILES = "**/{warplint.toml,pyproject.toml}"
_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
             "note": lsp.DiagnosticSeverity.Information}


@dataclass
class Published:
    """The analysed version of a document whose diagnostics the client shows."""
    version: int | None
    linted: Linted
    lines: LineMap


class AnalysisWorker:
    """One daemon thread analysing the newest queued version of each document, in turn."""

    def __init__(self, analyse, deliver):
        self._analyse, self._deliver = analyse, deliver
        self._pending: dict[str, tuple] = {}  # uri -> (version, path, text), oldest first
        self._cv = threading.Condition()
        threading.Thread(target=self._run, name="warplint-analysis", daemon=True).start()

    def submit(self, uri: str, version, path: str, text: str) -> None:
        with self._cv:
            self._pending.pop(uri, None)  # a queued older version is never analysed
            self._pending[uri] = (version, path, text)
            self._cv.notify()

    def forget(self, uri: str) -> None:
        with self._cv:
            self._pending.pop(uri, None)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._pending:
                    self._cv.wait()
                uri = next(iter(self._pending))
                version, path, text = self._pending.pop(uri)
            self._deliver(uri, version, self._analyse(path, text))


class WarplintServer(LanguageServer):
    def __init__(self, debounce: float = DEBOUNCE_S):
        super().__init__("warplint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full)
        self.debounce = debounce
        self.wanted: dict[str, int | None] = {}  # uri -> the version whose diagnostics we want
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.published: dict[str, Published] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.worker = AnalysisWorker(lint_document, self._deliver)

    # -- scheduling ------------------------------------------------------------------------------

    def request(self, uri: str, delay: float) -> None:
        """Analyse the document `delay` seconds from now (a newer request replaces this one)."""
        if to_fs_path(uri) is None or not uri.startswith("file:"):
            return  # untitled or virtual buffers: no path, no configuration to lint them with
        self.loop = asyncio.get_running_loop()
        self.wanted[uri] = self.workspace.get_text_document(uri).version
        old = self.timers.pop(uri, None)
        if old is not None:
            old.cancel()
        self.timers[uri] = self.loop.call_later(delay, self._submit, uri)

    def _submit(self, uri: str) -> None:
        self.timers.pop(uri, None)
        doc = self.workspace.get_text_document(uri)
        self.worker.submit(uri, doc.version, to_fs_path(uri), doc.source)

    def _deliver(self, uri: str, version, linted: Linted | None) -> None:
        """On the worker thread: hand the result to the message loop."""
        try:
            self.loop.call_soon_threadsafe(self.publish, uri, version, linted)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass

    def relint_open_documents(self) -> None:
        """A configuration file changed: lint every open document again."""
        for uri in list(self.wanted):
            self.request(uri, 0)

    def watch_configuration(self) -> None:
        """Ask the client to report changes of configuration files, where it can."""
        ws = self.client_capabilities.workspace
        watched = ws and ws.did_change_watched_files
        if watched and watched.dynamic_registration:
            self.client_register_capability(lsp.RegistrationParams(registrations=[lsp.Registration(
                id="warplint-configuration", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[
                    lsp.FileSystemWatcher(glob_pattern=CONFIG_FILES)]))]))

    def forget(self, uri: str) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.worker.forget(uri)
        self.wanted.pop(uri, None)
        self.published.pop(uri, None)

    # -- diagnostics -----------------------------------------------------------------------------

    def publish(self, uri: str, version, linted: Linted | None) -> None:
        if uri not in self.wanted or self.wanted[uri] != version:
            return  # a newer version is on its way (or the document was closed)
        diagnostics = []
        if linted is not None:
            published = self.published[uri] = Published(version, linted, LineMap(linted.text, self.encoding))
            diagnostics = self.diagnostics(published, uri)
        else:
            self.published.pop(uri, None)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or "utf-16")

    def diagnostics(self, p: Published, uri: str) -> list[lsp.Diagnostic]:
        out = [self.finding_diagnostic(p, uri, f) for f in p.linted.findings]
        for d in p.linted.diagnostics:
            out.append(lsp.Diagnostic(range=span(p.lines, d.loc), message=d.message, source=SOURCE,
                                      severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Information)))
        return out

    def finding_diagnostic(self, p: Published, uri: str, f) -> lsp.Diagnostic:
        related = [lsp.DiagnosticRelatedInformation(location=self.location(p, uri, step.loc), message=step.message)
                   for step in f.flow + f.related]
        return lsp.Diagnostic(
            range=span(p.lines, f.loc), message="\n".join([f.message, *f.details]), source=SOURCE,
            severity=_SEVERITY.get(f.severity, lsp.DiagnosticSeverity.Warning), code=f.rule_id,
            code_description=rule_link(f.rule_id), related_information=related or None)

    def location(self, p: Published, uri: str, loc) -> lsp.Location:
        if same_file(loc.path, p.linted.path):
            return lsp.Location(uri=uri, range=span(p.lines, loc))
        start = lsp.Position(line=max(loc.line - 1, 0), character=max(loc.col - 1, 0))  # another file
        return lsp.Location(uri=from_fs_path(loc.path) or uri, range=lsp.Range(start=start, end=start))

    # -- code actions and hover ------------------------------------------------------------------

    def current(self, uri: str) -> Published | None:
        """What was published for the document, if it is of its current text."""
        p = self.published.get(uri)
        if p is None or p.version != self.workspace.get_text_document(uri).version:
            return None
        return p

    def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        p = self.current(uri)
        if p is None:
            return []
        wanted = params.context.only
        actions = []
        if not wanted or any(lsp.CodeActionKind.QuickFix.value.startswith(k) for k in wanted):
            for f in p.linted.findings:
                if _touches(span(p.lines, f.loc), params.range):
                    actions += self.finding_actions(p, uri, f)
        if not wanted or any(FIX_ALL.startswith(k) for k in wanted):
            edits = fix_edits(p.linted, p.linted.findings)
            if edits:
                actions.append(lsp.CodeAction(title="warplint: fix all auto-fixable findings", kind=FIX_ALL,
                                              edit=self.workspace_edit(p, uri, edits)))
        return _unique(actions)

    def finding_actions(self, p: Published, uri: str, f) -> list[lsp.CodeAction]:
        diagnostic = [self.finding_diagnostic(p, uri, f)]
        actions = []
        edits = fix_edits(p.linted, [f]) if f.fix is not None else []
        if edits:
            actions.append(lsp.CodeAction(title=f"{f.fix.description} ({f.rule_id})", kind=lsp.CodeActionKind.QuickFix,
                                          diagnostics=diagnostic, is_preferred=True,
                                          edit=self.workspace_edit(p, uri, edits)))
        edit = suppress_edit(p.linted, f, p.lines.warplint_line(f.loc.line))
        if edit is not None:
            actions.append(lsp.CodeAction(title=f"Suppress {f.rule_id} on this line", kind=lsp.CodeActionKind.QuickFix,
                                          diagnostics=diagnostic, edit=self.workspace_edit(p, uri, [edit])))
        return actions

    def workspace_edit(self, p: Published, uri: str, edits) -> lsp.WorkspaceEdit:
        text_edits = [lsp.TextEdit(range=lsp.Range(start=_pos(p.lines, e.line, e.col),
                                                   end=_pos(p.lines, e.end_line, e.end_col)), new_text=e.text)
                      for e in edits]
        if not self.versioned_edits:
            return lsp.WorkspaceEdit(changes={uri: text_edits})
        document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=p.version)
        # the client refuses the edit if the document changed meanwhile
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=document, edits=text_edits)])

    @property
    def versioned_edits(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)

    def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        p = self.current(params.text_document.uri)
        if p is None:
            return None
        line, col = p.lines.from_lsp(params.position.line, params.position.character)
        entries = masks_at(p.linted, line, col)
        if not entries:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown,
                                                    value=describe_masks(entries, p.linted.path)),
                         range=span(p.lines, entries[0][1].loc))


def _pos(lines: LineMap, line: int, col: int) -> lsp.Position:
    ln, ch = lines.to_lsp(line, col)
    return lsp.Position(line=ln, character=ch)


def span(lines: LineMap, loc) -> lsp.Range:
    """The range of a warplint location; without an end, the word (or character) at its start."""
    if loc.end_line is not None and loc.end_col is not None:
        return lsp.Range(start=_pos(lines, loc.line, loc.col), end=_pos(lines, loc.end_line, loc.end_col))
    text = lines.warplint_line(loc.line)
    i = j = max(loc.col - 1, 0)
    while j < len(text) and (text[j].isalnum() or text[j] in "_.%$"):
        j += 1
    return lsp.Range(start=_pos(lines, loc.line, loc.col), end=_pos(lines, loc.line, max(j, i + 1) + 1))


def _touches(a: lsp.Range, b: lsp.Range) -> bool:
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _unique(actions: list[lsp.CodeAction]) -> list[lsp.CodeAction]:
    """One action per title and edit (a finding reported for two targets has one fix)."""
    seen, out = set(), []
    for a in actions:
        key = (a.title, repr(a.edit))
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


_REPO: list[str] = []


def rule_link(rule_id: str) -> lsp.CodeDescription | None:
    """The rule's document on the project's site (the link SARIF's helpUri gives)."""
    from ..catalog import catalog
    doc = catalog().get(rule_id)
    if doc is None:
        return None
    if not _REPO:
        from ..report.sarif import repo_url
        _REPO.append(repo_url())
    return lsp.CodeDescription(href=f"{_REPO[0]}/blob/main/rules/{doc.doc_name}")


def make_server(debounce: float = DEBOUNCE_S) -> WarplintServer:
    server = WarplintServer(debounce)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: WarplintServer, params: lsp.InitializedParams):
        ls.watch_configuration()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: WarplintServer, params: lsp.DidChangeWatchedFilesParams):
        ls.relint_open_documents()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: WarplintServer, params: lsp.DidOpenTextDocumentParams):
        ls.request(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: WarplintServer, params: lsp.DidChangeTextDocumentParams):
        ls.request(params.text_document.uri, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: WarplintServer, params: lsp.DidSaveTextDocumentParams):
        ls.request(params.text_document.uri, 0)  # headers it includes may have changed on disk

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: WarplintServer, params: lsp.DidCloseTextDocumentParams):
        ls.forget(params.text_document.uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls: WarplintServer, params: lsp.CodeActionParams):
        return ls.code_actions(params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: WarplintServer, params: lsp.HoverParams):
        return ls.hover(params)

    return server
