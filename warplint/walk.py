"""Which files to lint: recurse into directories for .ptx and the CUDA extensions (.cu, .cuh and
headers by default: `languages.py`), honour include/exclude globs
and .gitignore files (git's own matching rules, no git needed), never follow a symlink out of the
tree unless asked, and read only regular files.

Patterns match exactly as git's wildmatch does (bytes, `*` and `?` stay inside one path
component, `**` spans components, `[...]` classes including `[:alpha:]`); a pattern without `/`
matches the name at any depth, one with a `/` is anchored at its base directory.  The matcher is
memoised, so no pattern takes more than (pattern length x path length) steps.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from .inputs import InputFileError, not_regular, read_regular
from .languages import DEFAULT_EXTENSIONS, is_lintable

SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__",
             ".mypy_cache", ".pytest_cache"}
GITIGNORE_MAX_BYTES = 100 * 1024 * 1024  # git ignores larger .gitignore files too

# ---- git's wildmatch ------------------------------------------------------------------------

_MATCH, _NOMATCH, _ABORT_ALL, _ABORT_TO_STARSTAR = 0, 1, 2, 3
_STAR, _QUESTION, _BRACKET, _CLOSE, _BACKSLASH, _SLASH = b"*?[]\\/"
_BANG, _CARET, _DASH, _COLON = b"!^-:"
_GLOB_SPECIAL = frozenset(b"*?[\\")


def _ascii_class(chars: bytes):
    table = frozenset(chars)
    return table.__contains__


_DIGITS = b"0123456789"
_UPPER, _LOWER = bytes(range(65, 91)), bytes(range(97, 123))
_SPACE = b" \t\n\r"  # git's sane_ctype
_PUNCT = bytes(c for c in range(0x21, 0x7F) if c not in _DIGITS + _UPPER + _LOWER)
_CLASSES = {
    b"alnum": _ascii_class(_DIGITS + _UPPER + _LOWER), b"alpha": _ascii_class(_UPPER + _LOWER),
    b"blank": _ascii_class(b" \t"), b"cntrl": _ascii_class(bytes(range(0x20)) + b"\x7f"),
    b"digit": _ascii_class(_DIGITS), b"graph": _ascii_class(bytes(range(0x21, 0x7F))),
    b"lower": _ascii_class(_LOWER), b"print": _ascii_class(bytes(range(0x20, 0x7F))),
    b"punct": _ascii_class(_PUNCT), b"space": _ascii_class(_SPACE), b"upper": _ascii_class(_UPPER),
    b"xdigit": _ascii_class(_DIGITS + b"abcdefABCDEF"),
}


def wildmatch(pattern: bytes, text: bytes, pathname: bool = True) -> bool:
    """git's wildmatch(pattern, text, WM_PATHNAME if pathname else 0) == WM_MATCH."""
    try:
        return _Wild(pattern, text, pathname).match(0, 0) == _MATCH
    except RecursionError:  # thousands of stars: no sane pattern
        return False


class _Wild:
    """One wildmatch call; `match(pi, ti)` is git's dowild() on pattern[pi:], text[ti:]."""

    def __init__(self, pattern: bytes, text: bytes, pathname: bool):
        self.p, self.t, self.pathname = pattern, text, pathname
        self.memo: dict[tuple[int, int], int] = {}

    def at(self, i: int) -> int:
        return self.p[i] if i < len(self.p) else 0

    def match(self, pi: int, ti: int) -> int:
        key = (pi, ti)
        if key not in self.memo:
            self.memo[key] = self._match(pi, ti)
        return self.memo[key]

    def _match(self, pi: int, ti: int) -> int:
        p, t = self.p, self.t
        while pi < len(p):
            pc = p[pi]
            tc = t[ti] if ti < len(t) else 0
            if not tc and pc != _STAR:
                return _ABORT_ALL
            if pc == _BACKSLASH:  # the next character literally
                pi += 1
                if tc != self.at(pi):
                    return _NOMATCH
            elif pc == _QUESTION:
                if self.pathname and tc == _SLASH:
                    return _NOMATCH
            elif pc == _STAR:
                return self._star(pi, ti)
            elif pc == _BRACKET:
                pi, matched = self._bracket(pi, tc)
                if pi < 0:
                    return _ABORT_ALL
                if not matched or (self.pathname and tc == _SLASH):
                    return _NOMATCH
            elif tc != pc:
                return _NOMATCH
            pi += 1
            ti += 1
        return _NOMATCH if ti < len(t) else _MATCH

    def _star(self, pi: int, ti: int) -> int:
        p, t = self.p, self.t
        pi += 1
        if self.at(pi) == _STAR:
            prev = pi - 2
            while self.at(pi) == _STAR:
                pi += 1
            if not self.pathname:
                match_slash = True
            elif (prev < 0 or p[prev] == _SLASH) and (
                    pi == len(p) or p[pi] == _SLASH or (p[pi] == _BACKSLASH and self.at(pi + 1) == _SLASH)):
                # `**/` may match nothing: `foo/**/bar` matches foo/bar
                if self.at(pi) == _SLASH and self.match(pi + 1, ti) == _MATCH:
                    return _MATCH
                match_slash = True
            else:
                match_slash = False
        else:
            match_slash = not self.pathname
        if pi == len(p):  # trailing `**` matches everything, trailing `*` stays in the component
            return _NOMATCH if not match_slash and _SLASH in t[ti:] else _MATCH
        if not match_slash and p[pi] == _SLASH:  # `*/`: the rest of this component
            slash = t.find(b"/", ti)
            return _NOMATCH if slash < 0 else self.match(pi + 1, slash + 1)
        while ti < len(t):
            if p[pi] not in _GLOB_SPECIAL:  # skip to the next occurrence of the literal
                while ti < len(t) and (match_slash or t[ti] != _SLASH) and t[ti] != p[pi]:
                    ti += 1
                if ti == len(t) or t[ti] != p[pi]:
                    return _NOMATCH
            tc = t[ti]
            matched = self.match(pi, ti)
            if matched != _NOMATCH:
                if not match_slash or matched != _ABORT_TO_STARSTAR:
                    return matched
            elif not match_slash and tc == _SLASH:
                return _ABORT_TO_STARSTAR
            ti += 1
        return _ABORT_ALL

    def _bracket(self, pi: int, tc: int) -> tuple[int, bool]:
        """(index of the closing `]`, whether `tc` is in the class); index -1: malformed."""
        pi += 1
        pc = self.at(pi)
        if pc == _CARET:
            pc = _BANG
        negated = pc == _BANG
        if negated:
            pi += 1
            pc = self.at(pi)
        prev, matched = 0, False
        while True:
            if not pc:
                return -1, False
            if pc == _BACKSLASH:
                pi += 1
                pc = self.at(pi)
                if not pc:
                    return -1, False
                matched |= tc == pc
            elif pc == _DASH and prev and self.at(pi + 1) and self.at(pi + 1) != _CLOSE:
                pi += 1
                pc = self.at(pi)
                if pc == _BACKSLASH:
                    pi += 1
                    pc = self.at(pi)
                    if not pc:
                        return -1, False
                matched |= prev <= tc <= pc  # an empty range like z-a matches nothing
                pc = 0
            elif pc == _BRACKET and self.at(pi + 1) == _COLON:
                start = pi + 2
                end = start
                while self.at(end) and self.at(end) != _CLOSE:
                    end += 1
                if not self.at(end):
                    return -1, False
                if end - start - 1 < 0 or self.p[end - 1] != _COLON:  # no `:]`: a plain `[`
                    matched |= tc == _BRACKET
                    pc = _BRACKET
                else:
                    test = _CLASSES.get(self.p[start:end - 1])
                    if test is None:
                        return -1, False
                    matched |= test(tc)
                    pi, pc = end, 0
            else:
                matched |= tc == pc
            prev = pc
            pi += 1
            pc = self.at(pi)
            if pc == _CLOSE:
                return pi, matched != negated


# ---- gitignore patterns ---------------------------------------------------------------------

def _fs(s: str) -> bytes:
    return os.fsencode(s)


@dataclass(frozen=True)
class Pattern:
    """One gitignore line, parsed as git's parse_path_pattern() does."""
    glob: bytes  # without `!`, the trailing `/` and a leading `/`
    negate: bool = False
    dir_only: bool = False  # trailing `/`
    basename: bool = False  # no `/` at all: matches the name at any depth
    base: str = ""  # directory (absolute) the pattern is relative to

    @classmethod
    def parse(cls, line: bytes, base: str = "", *, negatable: bool = True) -> "Pattern | None":
        negate = negatable and line.startswith(b"!")
        if negate:
            line = line[1:]
        dir_only = line.endswith(b"/")
        if dir_only:
            line = line[:-1]
        basename = b"/" not in line
        if line.startswith(b"/"):
            line = line[1:]
        if not line:
            return None
        return cls(line, negate, dir_only, basename, base)

    def matches(self, rel: bytes, is_dir: bool) -> bool:
        """Whether the path `rel` (relative to `base`, `/`-separated) matches."""
        if self.dir_only and not is_dir:
            return False
        if self.basename:
            return wildmatch(self.glob, rel.rpartition(b"/")[2], pathname=False)
        # git compares the literal prefix first and wildmatches the rest on its own (so a `**`
        # right after the prefix counts as leading)
        prefix = _literal_prefix(self.glob)
        if rel[:prefix] != self.glob[:prefix]:
            return False
        if prefix == len(self.glob):
            return rel == self.glob
        return wildmatch(self.glob[prefix:], rel[prefix:], pathname=True)


def _literal_prefix(glob: bytes) -> int:
    for i, c in enumerate(glob):
        if c in _GLOB_SPECIAL:
            return i
    return len(glob)


@lru_cache(maxsize=512)
def _config_pattern(pattern: str) -> Pattern | None:
    return Pattern.parse(_fs(pattern), negatable=False)


def glob_match(pattern: str, relpath: str, is_dir: bool = False) -> bool:
    """A configuration glob (include, exclude, per-path-ignores) against a path relative to the
    configuration's directory: gitignore syntax, and a pattern naming a directory also matches
    everything below it."""
    pat = _config_pattern(pattern)
    if pat is None:
        return False
    rel = _fs(relpath)
    end = rel.find(b"/")
    while end >= 0:
        if pat.matches(rel[:end], True):
            return True
        end = rel.find(b"/", end + 1)
    return pat.matches(rel, is_dir)


def any_match(patterns, relpath: str, is_dir: bool = False) -> bool:
    return any(glob_match(p, relpath, is_dir) for p in patterns)


def _trim_trailing_spaces(line: bytes) -> bytes:
    """Trailing spaces go unless escaped with a backslash (git's trim_trailing_spaces)."""
    last_space = None
    i = 0
    while i < len(line):
        c = line[i]
        if c == 0x20:
            if last_space is None:
                last_space = i
        elif c == _BACKSLASH:
            i += 1
            if i == len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def _parse_gitignore(path: str) -> list[Pattern]:
    """The patterns of one ignore file; a symlink, a non-regular or an unreadable file adds none
    (as in git)."""
    try:
        data = read_regular(path, GITIGNORE_MAX_BYTES, follow_symlinks=False)
    except InputFileError:
        return []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    base = os.path.dirname(path)
    rules = []
    for line in data.split(b"\n"):
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or line.startswith(b"#"):
            continue
        rule = Pattern.parse(_trim_trailing_spaces(line), base)
        if rule is not None:
            rules.append(rule)
    return rules


def repo_root(path: str) -> str | None:
    """The nearest directory at or above `path` that holds a `.git`."""
    d = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class GitIgnore:
    """The .gitignore files from the repository root down to a directory; outside a repository,
    from `floor` (the directory being walked) down."""

    def __init__(self, floor: str | None = None):
        self._cache: dict[str, list[Pattern]] = {}
        self.floor = os.path.abspath(floor) if floor else None

    def rules_for(self, directory: str) -> list[Pattern]:
        directory = os.path.abspath(directory)
        if directory in self._cache:
            return self._cache[directory]
        parent = os.path.dirname(directory)
        inherited: list[Pattern] = []
        if parent != directory and not os.path.lexists(os.path.join(directory, ".git")) \
                and directory != self.floor:
            inherited = self.rules_for(parent)
        own = _parse_gitignore(os.path.join(directory, ".gitignore"))
        if os.path.isdir(os.path.join(directory, ".git")):
            own = _parse_gitignore(os.path.join(directory, ".git", "info", "exclude")) + own
        rules = inherited + own
        self._cache[directory] = rules
        return rules

    def ignored(self, path: str, is_dir: bool) -> bool:
        """The last matching pattern decides (deeper files come later)."""
        path = os.path.abspath(path)
        for r in reversed(self.rules_for(os.path.dirname(path))):
            rel = os.path.relpath(path, r.base)
            if rel.startswith(".."):
                continue
            if r.matches(_fs(rel.replace(os.sep, "/")), is_dir):
                return not r.negate
        return False


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Collected(NamedTuple):
    files: list[str]  # the files to lint, in a deterministic order
    errors: list[tuple[str, str]]  # (path, message): named paths that cannot be linted
    notes: list[tuple[str | None, str]]  # (path, or None for the run; message): what was skipped


def collect(paths, *, include=(), exclude=(), root: str | None = None, gitignore: bool = True,
            follow_symlinks: bool = False, extensions=DEFAULT_EXTENSIONS) -> Collected:
    """The files to lint.  Explicit file arguments are linted unless `exclude` names them (but
    must be regular files); directories are searched for .ptx files and `extensions`, skipping
    what is ignored, non-regular files and unreadable directories with a note."""
    walk = _Walk(os.path.abspath(root or os.getcwd()), include, exclude, gitignore, follow_symlinks)
    walk.extensions = tuple(extensions)
    for arg in paths:
        walk.argument(arg)
    if paths and not walk.files and not walk.errors and walk.excluded:
        walk.notes.append((None, f"nothing linted: no file to lint under the named paths, and "
                                 f"{walk.excluded} {'path' if walk.excluded == 1 else 'paths'} there "
                                 "excluded by the configuration's exclude/include or .gitignore"))
    return Collected(walk.files, walk.errors, walk.notes)


class _Walk:
    def __init__(self, root, include, exclude, gitignore, follow_symlinks):
        self.root, self.include, self.exclude = root, include, exclude
        self.gitignore, self.follow_symlinks = gitignore, follow_symlinks
        self.files: list[str] = []
        self.errors: list[tuple[str, str]] = []
        self.notes: list[tuple[str | None, str]] = []
        self.excluded = 0  # files and directories left out by exclude/include/.gitignore
        self._seen: set[str] = set()
        self.extensions = DEFAULT_EXTENSIONS

    def rel(self, p: str) -> str | None:
        r = os.path.relpath(os.path.abspath(p), self.root)
        return None if r.startswith("..") else r.replace(os.sep, "/")

    def excluded_by_config(self, p: str, is_dir: bool) -> bool:
        r = self.rel(p)
        return r is not None and any_match(self.exclude, r, is_dir)

    def add(self, p: str) -> None:
        real = os.path.realpath(p)
        if real not in self._seen:
            self._seen.add(real)
            self.files.append(p)

    def argument(self, arg: str) -> None:
        if not os.path.lexists(arg):
            self.errors.append((arg, "no such file or directory"))
        elif not os.path.exists(arg):
            self.errors.append((arg, "broken symbolic link"))
        elif os.path.isdir(arg):
            self.directory(arg)
        elif self.excluded_by_config(arg, False):
            self.excluded += 1
        else:
            kind = not_regular(arg)  # a stat error surfaces when the file is read, with its location
            if kind is None:
                self.add(arg)
            else:
                self.errors.append((arg, f"not a regular file ({kind}); only regular files are read"))

    def directory(self, arg: str) -> None:
        tree = os.path.realpath(arg)
        visited = {tree}
        gi = GitIgnore(floor=None if repo_root(arg) else arg) if self.gitignore else None

        def unreadable(e: OSError) -> None:
            where = e.filename or arg
            msg = f"directory not read: {e.strerror or e}"
            if os.path.abspath(where) == os.path.abspath(arg):
                self.errors.append((arg, msg))
            else:
                self.notes.append((where, msg + "; its files are not linted"))

        for dirpath, dirnames, filenames in os.walk(arg, onerror=unreadable, followlinks=True):
            dirnames[:] = [d for d in sorted(dirnames) if self.enter(dirpath, d, tree, visited, gi)]
            for name in sorted(filenames):
                if is_lintable(name, self.extensions):
                    self.file(os.path.join(dirpath, name), tree, gi)

    def enter(self, dirpath: str, d: str, tree: str, visited: set[str], gi) -> bool:
        full = os.path.join(dirpath, d)
        if d in SKIP_DIRS:
            return False
        real = os.path.realpath(full)
        if os.path.islink(full) and ((not self.follow_symlinks and not _inside(real, tree)) or real in visited):
            return False
        visited.add(real)
        if self.excluded_by_config(full, True) or (gi is not None and gi.ignored(full, True)):
            self.excluded += 1
            return False
        return True

    def file(self, full: str, tree: str, gi) -> None:
        if os.path.islink(full):
            real = os.path.realpath(full)
            if not os.path.exists(real) or (not self.follow_symlinks and not _inside(real, tree)):
                return
        r = self.rel(full)
        if self.excluded_by_config(full, False) or (gi is not None and gi.ignored(full, False)) \
                or (self.include and not (r is not None and any_match(self.include, r))):
            self.excluded += 1
            return
        kind = not_regular(full)
        if kind is None:
            self.add(os.path.normpath(full))
        else:
            self.notes.append((full, f"skipped: not a regular file ({kind})"))
