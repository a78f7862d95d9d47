"""Issue 10 (items 7, 11, 12, 13): the CLI never hangs on, crashes on or silently skips hostile
input trees, and worker processes can neither hang nor spoil a run."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time

import pytest
from conftest import BUGGY_PTX, DIVERGENT_PTX, PYTHON, cli_env

from warplint.inputs import InputFileError, read_regular

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")


def run_sub(*argv, cwd, timeout=60, env=None):
    """warplint in a subprocess (a hang fails the test instead of hanging it)."""
    r = subprocess.run([PYTHON, "-m", "warplint", *map(str, argv)], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout, env=env or cli_env())
    return r.returncode, r.stdout, r.stderr


# ---- item 7: FIFOs and other non-regular files ---------------------------------------------

@needs_fifo
def test_walked_fifo_is_skipped_with_a_note(project):
    project.write("t/a.ptx", BUGGY_PTX)
    os.mkfifo(project.root / "t" / "m.cu")
    status, out, err = run_sub("--jobs", "1", "t", cwd=project.root, timeout=30)
    assert status == 1, err
    assert "t/m.cu:1:1: note: skipped: not a regular file (a FIFO)" in err
    assert "t/a.ptx:11:5:" in out


@needs_fifo
def test_named_fifo_is_an_error(project):
    os.mkfifo(project.root / "m.cu")
    status, out, err = run_sub("m.cu", cwd=project.root, timeout=30)
    assert status == 2
    assert "m.cu:1:1: error: not a regular file (a FIFO)" in err


@needs_fifo
def test_read_never_blocks_even_when_the_file_is_swapped(tmp_path, monkeypatch):
    fifo = tmp_path / "m.cu"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match="a FIFO"):
        read_regular(str(fifo), 100)
    # the stat said "regular", then a FIFO was put there: the fstat after the open catches it
    import warplint.inputs
    monkeypatch.setattr(warplint.inputs, "not_regular", lambda *a, **k: None)
    start = time.monotonic()
    with pytest.raises(InputFileError, match="a FIFO"):
        read_regular(str(fifo), 100)
    assert time.monotonic() - start < 5


def test_device_is_refused_before_it_is_opened():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(InputFileError, match="character device"):
        read_regular("/dev/zero", 100)


def test_size_limit(tmp_path):
    (tmp_path / "big.ptx").write_bytes(b"x" * 101)
    with pytest.raises(InputFileError, match="limit is 100"):
        read_regular(str(tmp_path / "big.ptx"), 100)
    assert read_regular(str(tmp_path / "big.ptx"), 101) == b"x" * 101


@needs_fifo
def test_fifo_as_gitignore_or_config_does_not_hang(project):
    (project.root / ".git").mkdir()
    os.mkfifo(project.root / ".gitignore")
    os.mkfifo(project.root / "warplint.toml")
    project.write("a.ptx", BUGGY_PTX)
    status, out, err = run_sub("--jobs", "1", ".", cwd=project.root, timeout=30)
    assert status == 1 and "a.ptx:11:5:" in out
    status, out, err = run_sub("--config", "warplint.toml", ".", cwd=project.root, timeout=30)
    assert status == 2 and "warplint.toml: cannot read configuration: not a regular file (a FIFO)" in err


# ---- item 13: --baseline on hostile files --------------------------------------------------

@pytest.mark.parametrize("make, needle", [
    (lambda p: "/dev/zero", "not a regular file (a character device)"),
    (lambda p: (os.mkfifo(p / "b.sarif"), str(p / "b.sarif"))[1], "not a regular file (a FIFO)"),
    (lambda p: ((p / "b.sarif").write_text("[" * 200_000 + "]" * 200_000), str(p / "b.sarif"))[1],
     "nested too deeply"),
    (lambda p: ((p / "b.sarif").write_bytes(b"\xff\xfe"), str(p / "b.sarif"))[1], "not valid JSON"),
])
def test_hostile_baseline_is_a_clear_error(project, make, needle):
    if needle.endswith("(a FIFO)") and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs")
    if "/dev/zero" in needle or needle.endswith("device)") and not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    project.write("a.ptx", BUGGY_PTX)
    status, out, err = run_sub("--baseline", make(project.root), "a.ptx", cwd=project.root, timeout=30)
    assert status == 2
    assert "warplint: error:" in err and needle in err
    assert "internal error" not in err and "Traceback" not in err


# ---- item 11: crashes ----------------------------------------------------------------------

def test_huge_target_number_is_not_a_crash(project, run_cli):
    from warplint.targets import Target, parse_ptx_target
    project.write("a.ptx", BUGGY_PTX.replace(".target sm_70", ".target sm_" + "9" * 4301))
    status, out, err = run_cli("--no-cache", "a.ptx")
    assert "internal error" not in out + err and status == 1
    assert parse_ptx_target("sm_" + "9" * 4301) is None
    with pytest.raises(ValueError):
        Target.parse("sm_" + "9" * 4301)
    status, out, err = run_cli("--target", "sm_" + "9" * 4301, "a.ptx")
    assert status == 2 and "not a target name" in err


@pytest.fixture
def non_utf8_name(project):
    try:
        os.mkdir(b"u")
        with open(b"u/\xff\xfe.ptx", "w") as f:
            f.write(BUGGY_PTX)
    except (OSError, UnicodeError):
        pytest.skip("the file system wants UTF-8 names")
    return "u/\\xff\\xfe.ptx"


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
@pytest.mark.parametrize("to_file", [False, True])
def test_non_utf8_file_name(non_utf8_name, run_cli, fmt, to_file):
    argv = ["--format", fmt, "u"] + (["-o", "report.out"] if to_file else [])
    status, out, err = run_cli(*argv)
    assert status == 1 and "internal error" not in err
    text = open("report.out", encoding="utf-8").read() if to_file else out
    text.encode("utf-8")
    if fmt == "sarif":
        assert '"uri": "u/%FF%FE.ptx"' in text  # the name's bytes
    else:
        assert non_utf8_name.replace("\\", "\\\\" if fmt == "json" else "\\") in text


def test_non_utf8_file_name_sarif_is_valid(non_utf8_name, run_cli, sarif_validator):
    from conftest import assert_valid_sarif
    status, out, err = run_cli("--format", "sarif", "u")
    assert_valid_sarif(sarif_validator, json.loads(out))


# ---- item 12: worker processes -------------------------------------------------------------

# runs warplint with a worker that hangs on (or dies at) one named file; writes its pid to MARK
HOOKED = """
import os, sys, time
import warplint.pipeline
real = warplint.pipeline.lint_file
mode, name, mark = sys.argv[1:4]

def hooked(path, options=None):
    if os.path.basename(path) == name:
        with open(mark + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(mark + ".tmp", mark)
        if mode == "die":
            os._exit(9)
        while True:
            time.sleep(1)
    return real(path, options)

warplint.pipeline.lint_file = hooked
from warplint.cli import main
sys.exit(main(sys.argv[4:]))
"""


def start_hooked(project, mode, name, *argv):
    for n in ("a.ptx", "b.ptx", "c.ptx", "d.ptx"):
        project.write(n, BUGGY_PTX)
    mark = project.root / "worker.pid"
    # Ctrl-C as a terminal delivers it: the child takes SIGINT as Python does by default, even
    # when this test runs where SIGINT is ignored (a background job of a non-interactive shell
    # starts with it ignored, and an ignored signal stays ignored across exec).
    proc = subprocess.Popen([PYTHON, "-c", HOOKED, mode, name, str(mark), "--no-cache", *argv],
                            cwd=project.root, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, mark


def wait_for(mark, proc, seconds=30):
    deadline = time.monotonic() + seconds
    while not mark.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the hook never ran"
        time.sleep(0.05)
    return int(mark.read_text())


def gone(pid: int) -> bool:
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return False


def test_hanging_file_hits_the_time_limit_and_the_others_are_analysed(project):
    start = time.monotonic()
    proc, mark = start_hooked(project, "hang", "b.ptx", "--jobs", "2", "--timeout", "2",
                              "a.ptx", "b.ptx", "c.ptx", "d.ptx")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "b.ptx:1:1: error: not analysed: analysis took longer than the time limit of 2 s (--timeout)" in err
    assert all(f"{n}:11:5: error:" in out for n in ("a.ptx", "c.ptx", "d.ptx"))
    assert time.monotonic() - start < 30
    assert gone(int(mark.read_text()))


def test_dead_worker_with_jobs_1_costs_only_its_file(project):
    proc, mark = start_hooked(project, "die", "a.ptx", "--jobs", "1", "a.ptx", "b.ptx", "c.ptx")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "a.ptx:1:1: error: not analysed: the worker process died (exit status 9)" in err
    assert "b.ptx:11:5: error:" in out and "c.ptx:11:5: error:" in out


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX signals")
@pytest.mark.parametrize("whom", ["process group", "main process"])
def test_ctrl_c_stops_everything_quietly(project, whom):
    """Ctrl-C (SIGINT to the whole group) with one worker idle and one stuck, or SIGINT to the
    main process alone: exit 2 at once, no traceback, no worker left behind."""
    proc, mark = start_hooked(project, "hang", "a.ptx", "--jobs", "2", "--timeout", "0", "a.ptx", "b.ptx")
    pid = wait_for(mark, proc)
    time.sleep(1.0)  # b.ptx is done: its worker waits idle
    if whom == "process group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 2
    assert "warplint: interrupted" in err
    assert "Traceback" not in err
    assert gone(pid)


def test_no_worker_processes_runs_serially(project, run_cli, monkeypatch):
    import warplint.workers

    def no_processes(*a, **k):
        raise OSError(11, "Resource temporarily unavailable")
    monkeypatch.setattr(warplint.workers, "_Worker", no_processes)
    project.write("a.ptx", BUGGY_PTX)
    project.write("b.ptx", BUGGY_PTX)
    status, out, err = run_cli("--jobs", "2", "a.ptx", "b.ptx")
    assert status == 1 and "a.ptx:11:5:" in out and "b.ptx:11:5:" in out


# ---- item 13: masks in the document, unreadable directories, configuration scope ------------

@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_show_masks_go_into_the_document(project, run_cli, fmt):
    project.write("div.ptx", DIVERGENT_PTX)
    project.write("b.ptx", BUGGY_PTX)
    status, out, err = run_cli("--show-masks", "--format", fmt, "div.ptx", "b.ptx")
    doc = json.loads(out)  # nothing before or after the document
    masks = doc["masks"] if fmt == "json" else doc["runs"][0]["properties"]["masks"]
    assert set(masks) == {"div.ptx", "b.ptx"}
    assert "active: 0x0000ffff (lanes 0-15)" in masks["div.ptx"]


def test_show_masks_sarif_is_valid(project, run_cli, sarif_validator):
    from conftest import assert_valid_sarif
    project.write("div.ptx", DIVERGENT_PTX)
    status, out, err = run_cli("--show-masks", "--format", "sarif", "div.ptx")
    assert_valid_sarif(sarif_validator, json.loads(out))


def test_unreadable_directory_is_noted(project, run_cli, monkeypatch):
    project.write("t/a.ptx", BUGGY_PTX)
    project.write("t/secret/b.ptx", BUGGY_PTX)
    secret = project.root / "t" / "secret"
    if not hasattr(os, "geteuid") or os.geteuid() == 0:  # root reads anything: simulate it
        real = os.scandir

        def scandir(path="."):
            if os.path.abspath(path) == str(secret):
                raise PermissionError(13, "Permission denied", path)
            return real(path)
        monkeypatch.setattr(os, "scandir", scandir)
    else:
        secret.chmod(0)
    try:
        status, out, err = run_cli("--jobs", "1", "t")
    finally:
        secret.chmod(stat.S_IRWXU)
    assert status == 1 and "t/a.ptx:11:5:" in out
    assert "t/secret:1:1: note: directory not read: Permission denied; its files are not linted" in err


def test_configuration_above_the_repository_root_is_not_used(project, run_cli):
    project.write("warplint.toml", 'exclude = ["**"]\n')
    project.write("repo/.git/HEAD", "ref: refs/heads/main\n")
    project.write("repo/a.ptx", BUGGY_PTX)
    status, out, err = run_cli("repo")
    assert status == 1 and "repo/a.ptx:11:5:" in out


def test_everything_excluded_is_said(project, run_cli):
    project.write(".git/HEAD", "ref: refs/heads/main\n")
    project.write("warplint.toml", 'exclude = ["**"]\n')
    project.write("a.ptx", BUGGY_PTX)
    status, out, err = run_cli(".")
    assert status == 0
    assert "warplint: note: nothing linted: no file to lint under the named paths" in err
    status, out, err = run_cli("--format", "sarif", "a.ptx")
    notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("nothing linted" in n["message"]["text"] for n in notes)


def test_unreadable_named_directory_is_an_error(project, run_cli, monkeypatch):
    project.write("t/a.ptx", BUGGY_PTX)
    real = os.scandir
    top = str(project.root / "t")

    def scandir(path="."):
        if os.path.abspath(path) == top:
            raise PermissionError(13, "Permission denied", path)
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    status, out, err = run_cli("t")
    assert status == 2 and "t:1:1: error: directory not read: Permission denied" in err


def _work(x):
    import threading
    if x == 2:
        return threading.Lock()  # cannot be sent back
    if x == 3:
        os._exit(5)
    if x == 4:
        time.sleep(60)
    return x * 10


def test_worker_pool_keeps_order_and_loses_only_the_bad_items():
    from warplint.workers import Lost, run_all
    start = time.monotonic()
    results = run_all([1, 2, 3, 4, 5, 6], _work, 2, 2.0)
    assert time.monotonic() - start < 30
    assert results[0] == 10 and results[4:] == [50, 60]
    assert isinstance(results[1], Lost) and "cannot pickle" in results[1].reason
    assert results[2] == Lost("the worker process died (exit status 5)")
    assert isinstance(results[3], Lost) and "time limit of 2 s" in results[3].reason
