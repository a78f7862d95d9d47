"""Apply `Finding.fix` edits: in memory, as a unified diff, or in place (atomically).

Edits use 1-based (line, col) positions with an exclusive end, counted in characters of the
text as read (a CRLF file keeps its `\\r`; nothing outside an edit changes by even one byte).
When fixes overlap, the first (in report order) wins and the others are skipped with a note.
"""
from __future__ import annotations

import bisect
import difflib
import errno
import hashlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field


class FixError(Exception):
    """A fix could not be written (file changed on disk, cannot write)."""


@dataclass
class Plan:
    path: str
    original: str
    edits: list = field(default_factory=list)  # accepted Edits
    fixed: list = field(default_factory=list)  # findings whose fix is applied
    starts: list = field(default_factory=list)  # line start offsets of `original`

    def __post_init__(self):
        self.starts = _line_starts(self.original)

    @property
    def new_text(self) -> str:
        return apply_edits(self.original, self.edits, self.starts)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return starts


def _offset(starts: list[int], text: str, line: int, col: int) -> int:
    if line < 1:
        raise ValueError(f"line {line} out of range")
    if line > len(starts):
        if line == len(starts) + 1 and col == 1:
            return len(text)
        raise ValueError(f"line {line} out of range")
    return min(starts[line - 1] + col - 1, starts[line] if line < len(starts) else len(text))


def span(text: str, edit, starts=None) -> tuple[int, int]:
    starts = starts or _line_starts(text)
    a = _offset(starts, text, edit.line, edit.col)
    b = _offset(starts, text, edit.end_line, edit.end_col)
    if b < a:
        raise ValueError("edit ends before it starts")
    return a, b


def apply_edits(text: str, edits, starts=None) -> str:
    """Apply non-overlapping edits (positions refer to `text`), in time linear in the text."""
    starts = starts or _line_starts(text)
    spans = sorted((*span(text, e, starts), i, e) for i, e in enumerate(edits))
    pieces, at = [], 0
    for a, b, _, e in spans:
        pieces += [text[at:a], e.text]
        at = max(at, b)
    pieces.append(text[at:])
    return "".join(pieces)


def _overlap(a: int, b: int, x: int, y: int) -> bool:
    if a == b and x == y:
        return a == x  # two insertions at one point: their order would be a guess
    if a == b:
        return x < a < y
    if x == y:
        return a < x < b
    return a < y and x < b


def _overlaps_taken(taken: list[tuple[int, int]], x: int, y: int) -> bool:
    """Whether (x, y) overlaps one of `taken`: sorted, pairwise non-overlapping spans (so their
    ends are sorted too, and only the neighbours of (x, y) need a look)."""
    i = bisect.bisect_left(taken, (x, y))
    j = i
    while j < len(taken) and taken[j][0] <= y:
        if _overlap(*taken[j], x, y):
            return True
        j += 1
    j = i - 1
    while j >= 0 and taken[j][1] >= x:
        if _overlap(*taken[j], x, y):
            return True
        j -= 1
    return False


def plan(findings, sources, allowed=None) -> tuple[dict[str, Plan], list[str]]:
    """Group the fixes of `findings` by file, dropping overlapping ones (first wins).  With
    `allowed` (absolute paths), a fix that edits any other file is dropped with a note.
    Returns (abs path -> Plan, notes about skipped fixes)."""
    from .report import display_path
    plans: dict[str, Plan] = {}
    notes: list[str] = []
    taken: dict[str, list[tuple[int, int]]] = {}  # sorted spans, per file
    done: dict[str, set[tuple[int, int, str]]] = {}  # (start, end, text) of the accepted edits
    for f in findings:
        if f.fix is None or not f.fix.edits:
            continue
        where = f"{display_path(f.loc.path)}:{f.loc.line}:{f.loc.col}"
        spans, problem = [], None
        for e in f.fix.edits:
            key = os.path.abspath(e.path)
            if allowed is not None and key not in allowed:
                problem = f"it edits {display_path(e.path)}, which is not a linted file"
                break
            if key not in plans:
                text = sources.text(e.path)
                if text is None:
                    problem = f"cannot read {display_path(e.path)}"
                    break
                plans[key] = Plan(e.path, text)
            try:
                a, b = span(plans[key].original, e, plans[key].starts)
            except ValueError as err:
                problem = f"edit out of range ({err})"
                break
            spans.append((key, a, b, e))
        if problem is None:
            if all((a, b, e.text) in done.get(k, ()) for k, a, b, e in spans):
                plans[spans[0][0]].fixed.append(f)  # the same edits are already in (duplicate finding)
                continue
            if any(_overlaps_taken(taken.get(k, []), a, b) for k, a, b, e in spans):
                problem = "it overlaps another fix (run --fix again)"
        if problem is not None:
            notes.append(f"{where}: fix for {f.rule_id} skipped: {problem}")
            continue
        for k, a, b, e in spans:
            bisect.insort(taken.setdefault(k, []), (a, b))
            done.setdefault(k, set()).add((a, b, e.text))
            plans[k].edits.append(e)
        plans[spans[0][0]].fixed.append(f)
    return plans, notes


def unified_diff(p: Plan) -> str:
    from .report import display_path
    from .sources import split_lines
    name = display_path(p.path)
    new = p.new_text
    if new == p.original:
        return ""
    return "".join(difflib.unified_diff(split_lines(p.original, keepends=True), split_lines(new, keepends=True),
                                        f"a/{name}", f"b/{name}"))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- writing files ------------------------------------------------------------------------------
#
# A file is replaced atomically: the new content goes to a temporary file next to it, named
# `.<name>.<pid>.<random>.warplint-tmp` (a later run removes those of dead processes), which
# then takes the file's place by a rename.  Only a regular file with one link is replaced (its
# mode and owner carried over; a file whose owner cannot be kept is refused); a symlink is
# followed to the file it names.  `--output` writes to a character device or a FIFO in place,
# as a shell redirection would; anything else is refused.

TMP_SUFFIX = ".warplint-tmp"


class _EditKept(FixError):
    """The temporary file holds someone's edit: it must not be removed."""


def _err(path: str, e: BaseException) -> FixError:
    return FixError(f"{path}: cannot write: {getattr(e, 'strerror', None) or e}")


def _resolve(path: str) -> tuple[str, os.stat_result | None]:
    """The file a write to `path` goes to (symlinks followed) and its stat (None: absent)."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        return target, os.stat(target)
    except FileNotFoundError:
        if os.path.islink(path):
            raise FixError(f"{path}: is a symlink to a missing file; not written") from None
        return target, None
    except (OSError, ValueError) as e:
        raise _err(path, e) from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_TEMP_NAME = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[a-z0-9_]+" + re.escape(TMP_SUFFIX))
_swept: set[str] = set()


def _remove_stale_temps(directory: str) -> None:
    """Once per directory: the temporary files left by warplint processes that no longer run."""
    if directory in _swept:
        return
    _swept.add(directory)
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        m = _TEMP_NAME.fullmatch(entry)
        if m and not _alive(int(m["pid"])):
            try:
                os.unlink(os.path.join(directory, entry))
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _same(st: os.stat_result, now: os.stat_result) -> bool:
    """The same file, not written since `st` (a rename changes only its ctime)."""
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns) == \
        (now.st_ino, now.st_dev, now.st_size, now.st_mtime_ns)


def _exchange(a: str, b: str) -> bool:
    """Swap the files at `a` and `b` atomically (Linux renameat2 RENAME_EXCHANGE); False when
    the system or file system cannot."""
    import ctypes
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err))


def _take_place(tmp: str, target: str, expect_digest: str | None, st: os.stat_result | None) -> None:
    """Move `tmp` to `target`.  With `expect_digest`, the file replaced must be the one that was
    checked, unchanged: it is checked again after an atomic exchange (and swapped back when an
    edit was saved meanwhile), or, where there is no exchange, just before the rename."""
    if expect_digest is None or st is None:
        os.replace(tmp, target)
        return
    if _exchange(tmp, target):
        try:
            now = os.lstat(tmp)
            with open(tmp, "rb") as f:
                unchanged = _same(st, now) and digest(f.read()) == expect_digest
        except OSError:
            unchanged = False
        if not unchanged:
            try:
                _exchange(tmp, target)  # put the edit back
            except OSError:
                kept = tmp[:-len(TMP_SUFFIX)] + ".saved-edit"  # a name later runs leave alone
                try:
                    os.rename(tmp, kept)
                except OSError:
                    kept = tmp
                raise _EditKept(f"{target}: changed on disk while being fixed; the version saved meanwhile "
                                f"is in {kept}") from None
            raise FixError(f"{target}: file changed on disk since it was read; not fixed (run again)")
        os.unlink(tmp)  # the old content
        return
    try:
        unchanged = _same(st, os.lstat(target))
    except OSError:
        unchanged = False
    if not unchanged:
        raise FixError(f"{target}: file changed on disk since it was read; not fixed (run again)")
    os.replace(tmp, target)


def _replace(path: str, target: str, data: bytes, st: os.stat_result | None, expect_digest=None) -> None:
    if st is not None and st.st_nlink > 1:
        raise FixError(f"{path}: has {st.st_nlink} hard links, which replacing it would separate; "
                       "not written")
    d, name = os.path.split(os.path.abspath(target))
    _remove_stale_temps(d)
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{name}.{os.getpid()}.", suffix=TMP_SUFFIX)
    except OSError as e:
        raise _err(path, e) from None
    try:
        try:
            _write(fd, data)
            os.fsync(fd)
            if st is None:
                os.fchmod(fd, 0o666 & ~_umask())
            else:
                if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                    try:
                        os.fchown(fd, st.st_uid, st.st_gid)
                    except PermissionError:
                        raise FixError(f"{path}: owned by another user, whose ownership replacing "
                                       "it would not keep; not written") from None
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
        finally:
            os.close(fd)
        _take_place(tmp, target, expect_digest, st)
    except BaseException as e:
        try:
            if not isinstance(e, _EditKept):
                os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _err(path, e) from None
        raise


def write_atomic(path: str, data: bytes, *, expect: bytes | None = None) -> None:
    """Replace the regular file at `path` (or create it) with `data`.  With `expect`, refuse
    (FixError) when the file on disk no longer holds it."""
    target, st = _resolve(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        from .inputs import kind_of
        raise FixError(f"{path}: is {kind_of(st.st_mode)}, not a regular file; not written")
    expect_digest = None
    if expect is not None:
        from .inputs import InputFileError, read_regular
        try:
            now = read_regular(target, len(expect))
        except InputFileError as e:
            raise FixError(f"{path}: file changed on disk since it was read; not fixed ({e})") from None
        if digest(now) != digest(expect):
            raise FixError(f"{path}: file changed on disk since it was read; not fixed (run again)")
        expect_digest = digest(expect)
    _replace(path, target, data, st, expect_digest)


def write_output(path: str, data: bytes) -> None:
    """`--output`: a regular file (or a new one) is replaced atomically; a character device
    (/dev/null, a terminal) or a FIFO with a reader is written in place; anything else is refused."""
    target, st = _resolve(path)
    if st is None or stat.S_ISREG(st.st_mode):
        _replace(path, target, data, st)
        return
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        from .inputs import kind_of
        raise FixError(f"{path}: is {kind_of(st.st_mode)}; not written")
    try:
        # non-blocking open: a FIFO nobody reads is an error, not a hang
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise FixError(f"{path}: is a FIFO that no process reads; not written") from None
        raise _err(path, e) from None
    try:
        if not (stat.S_ISCHR(os.fstat(fd).st_mode) or stat.S_ISFIFO(os.fstat(fd).st_mode)):
            raise FixError(f"{path}: changed while being opened; not written")
        os.set_blocking(fd, True)
        _write(fd, data)
    except OSError as e:
        raise _err(path, e) from None
    finally:
        os.close(fd)


def _write(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (a separate function so tests can slow it down)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_plan(p: Plan) -> bool:
    """Write a plan's result in place; False when there was nothing to change."""
    new = p.new_text
    if new == p.original:
        return False
    write_atomic(p.path, new.encode("utf-8"), expect=p.original.encode("utf-8"))
    return True
