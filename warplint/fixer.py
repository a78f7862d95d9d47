"""Apply `Finding.fix` edits: in memory, as a unified diff, or in place (atomically).

Edits use 1-based (line, col) positions with an exclusive end, counted in characters of the
text as read (a CRLF file keeps its `\\r`; nothing outside an edit changes by even one byte).
When fixes overlap, the first (in report order) wins and the others are skipped with a note.
"""
from __future__ import annotations

import bisect
import difflib
import hashlib
import os
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
    from .report.sources import split_lines
    name = display_path(p.path)
    new = p.new_text
    if new == p.original:
        return ""
    return "".join(difflib.unified_diff(split_lines(p.original, keepends=True), split_lines(new, keepends=True),
                                        f"a/{name}", f"b/{name}"))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (a separate function so tests can slow it down)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_atomic(path: str, data: bytes, *, expect: bytes | None = None) -> None:
    """Replace `path` with `data` via a temporary file in the same directory and os.replace, keeping
    the file mode.  With `expect`, refuse (FixError) when the file on disk no longer holds it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as e:
        raise FixError(f"{path!r}: cannot write: {getattr(e, 'strerror', None) or e}") from None
    if expect is not None:
        try:
            with open(path, "rb") as f:
                now = f.read()
        except OSError as e:
            raise FixError(f"{path}: cannot read file: {e.strerror or e}") from None
        if digest(now) != digest(expect):
            raise FixError(f"{path}: file changed on disk since it was read; not fixed (run again)")
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{os.path.basename(path)}.", suffix=".warplint-tmp")
    except OSError as e:
        raise FixError(f"{path}: cannot write: {e.strerror or e}") from None
    try:
        try:
            _write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise FixError(f"{path}: cannot write: {e.strerror or e}") from None
        raise


def write_plan(p: Plan) -> bool:
    """Write a plan's result in place; False when there was nothing to change."""
    new = p.new_text
    if new == p.original:
        return False
    write_atomic(p.path, new.encode("utf-8"), expect=p.original.encode("utf-8"))
    return True
