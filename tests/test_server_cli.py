"""`warplint server` from the command line, with or without pygls: a clear message when it is
missing, one-line logs, and the CLI's other commands never load it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import PYTHON, cli_env

LEGACY_VOTE = """\
__global__ void votes(int *data)
{
    int v = data[threadIdx.x];
    v = __any(v > 0);
    data[threadIdx.x] = v;
}
"""


def test_server_without_pygls_says_how_to_install_it(monkeypatch, capsys):
    from warplint.cli import main
    monkeypatch.setitem(sys.modules, "pygls", None)  # `import pygls` raises ImportError
    assert main(["server"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'pygls>=2,<3'" in err and "Traceback" not in err


def test_a_malformed_message_is_logged_in_one_line(tmp_path):
    pytest.importorskip("pygls.lsp.server", reason="the server extra (pygls 2) is not installed")
    r = subprocess.run([PYTHON, "-m", "warplint", "server"], input=b"Content-Length: 2\r\n\r\n{}",
                       capture_output=True, env=cli_env(), timeout=60, cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 0  # stdin closed: the server ends
    assert "warplint server: error:" in err and "Traceback" not in err


def test_other_commands_never_import_the_server(tmp_path):
    (tmp_path / "k.cu").write_text(LEGACY_VOTE)
    code = ("import sys; from warplint.cli import main; main(['--no-cache', sys.argv[1]]); main(['rules']); "
            "bad = [m for m in ('pygls', 'lsprotocol', 'warplint.server') if m in sys.modules]; "
            "sys.exit(f'imported: {bad}' if bad else 0)")
    r = subprocess.run([PYTHON, "-c", code, str(tmp_path / "k.cu")], capture_output=True, text=True,
                       env=cli_env(), timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
