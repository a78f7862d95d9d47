"""A real LSP client (pygls') driving `warplint server` over stdio, for tests and the latency
bench: the client runs on an event loop in a background thread, tests call it synchronously."""
from __future__ import annotations

import asyncio
import os
import sys
import threading
import time

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path


class Session:
    def __init__(self, cwd: str, env: dict | None = None, capabilities: lsp.ClientCapabilities | None = None):
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.arrived: dict[str, list[float]] = {}  # perf_counter() of each publish, per uri
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.client: LanguageClient = self.run(self._start(cwd, env))
        caps = capabilities or lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
            workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True)))
        self.init = self.run(self.client.initialize_async(lsp.InitializeParams(
            capabilities=caps, root_uri=from_fs_path(cwd),
            workspace_folders=[lsp.WorkspaceFolder(uri=from_fs_path(cwd), name="w")])))
        self.client.initialized(lsp.InitializedParams())
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    async def _start(self, cwd: str, env: dict | None) -> LanguageClient:
        client = LanguageClient("warplint-tests", "0")

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: lsp.PublishDiagnosticsParams):
            self.arrived.setdefault(params.uri, []).append(time.perf_counter())
            self.published.setdefault(params.uri, []).append(params)

        await client.start_io(sys.executable, "-m", "warplint", "server", cwd=cwd, env=env)
        return client

    def run(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn, *args):
        """Run a plain client call (a notification) on the client's loop."""
        async def go():
            return fn(*args)
        return self.run(go())

    # -- documents -------------------------------------------------------------------------------

    def open(self, path: str, text: str, language: str = "cuda") -> str:
        uri = from_fs_path(os.path.abspath(path))
        self.versions[uri], self.texts[uri] = 1, text
        self.call(self.client.text_document_did_open, lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
        return uri

    def change(self, uri: str, *texts: str) -> int:
        """Send one didChange per text, back to back (as fast typing does); the last version."""
        async def send():
            for text in texts:
                self.versions[uri] += 1
                self.texts[uri] = text
                self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                    content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
        self.run(send())
        return self.versions[uri]

    def save(self, uri: str) -> None:
        self.call(self.client.text_document_did_save, lsp.DidSaveTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def close(self, uri: str) -> None:
        self.call(self.client.text_document_did_close, lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri)))

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = 30) -> list[lsp.Diagnostic]:
        """The diagnostics published for `version` (default: the document's newest) of `uri`."""
        version = self.versions[uri] if version is None else version
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in self.published.get(uri, []):
                if p.version == version:
                    return list(p.diagnostics)
            time.sleep(0.005)
        raise AssertionError(f"no diagnostics for {uri} version {version}: got versions "
                             f"{[p.version for p in self.published.get(uri, [])]}")

    def code_actions(self, uri: str, rng: lsp.Range, only=None) -> list[lsp.CodeAction]:
        return self.run(self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng,
            context=lsp.CodeActionContext(diagnostics=[], only=only)))) or []

    def hover(self, uri: str, line: int, character: int) -> lsp.Hover | None:
        return self.run(self.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=line, character=character))))

    def apply(self, uri: str, edit: lsp.WorkspaceEdit) -> int:
        """Apply a workspace edit to our copy of the document and send it (didChange)."""
        if edit.document_changes:
            (doc_edit,) = edit.document_changes
            assert doc_edit.text_document.uri == uri and doc_edit.text_document.version == self.versions[uri]
            edits = doc_edit.edits
        else:
            edits = edit.changes[uri]
        return self.change(uri, apply_text_edits(self.texts[uri], edits))

    def stop(self) -> None:
        async def go():
            await self.client.shutdown_async(None)
            self.client.exit(None)
            await asyncio.sleep(0.1)
            await self.client.stop()
        try:
            self.run(go(), timeout=20)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)


def apply_text_edits(text: str, edits) -> str:
    """TextEdits of one document (ASCII text, `\\n` lines), last first."""
    lines = text.split("\n")
    starts = [0]
    for ln in lines[:-1]:
        starts.append(starts[-1] + len(ln) + 1)

    def offset(p: lsp.Position) -> int:
        return starts[p.line] + p.character
    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text
