"""Which files to lint: recurse into directories for .cu/.cuh/.ptx, honour include/exclude globs
and .gitignore files (the common subset of the gitignore syntax, no git needed), never follow a
symlink out of the tree unless asked.

Globs use gitignore-style matching: `*` and `?` stay inside one path component, `**` spans
components, a pattern without `/` matches the name at any depth, a leading `/` anchors it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

SUFFIXES = (".cu", ".cuh", ".ptx")
SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "__pycache__",
             ".mypy_cache", ".pytest_cache"}


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern:
    """Regex for a gitignore-style glob matched against a relative posix path."""
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    pat = pattern.strip("/")
    i, out = 0, []
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pat.startswith("/**", i) and i + 3 == len(pat):
            out.append("(?:/.*)?")
            i += 3
            continue
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pat.find("]", i + 2 if pat[i + 1:i + 2] in ("!", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pat[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < len(pat):
            i += 1
            out.append(re.escape(pat[i]))
        else:
            out.append(re.escape(c))
        i += 1
    prefix = "" if anchored else "(?:.*/)?"
    # a pattern naming a directory also matches everything below it
    return re.compile("^" + prefix + "".join(out) + "(?:/.*)?$")


def glob_match(pattern: str, relpath: str) -> bool:
    return bool(_glob_regex(pattern).match(relpath))


def any_match(patterns, relpath: str) -> bool:
    return any(glob_match(p, relpath) for p in patterns)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern
    negate: bool
    dir_only: bool
    base: str  # directory (absolute) the .gitignore lives in


def _parse_gitignore(path: str) -> list[_Rule]:
    base = os.path.dirname(path)
    rules = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        line = line.rstrip()
        if line.endswith("\\"):  # escaped trailing space
            line += " "
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        anchored = line.startswith("/") or "/" in line.rstrip("/")
        pat = line.strip("/")
        if not pat:
            continue
        rx = _glob_regex(("/" if anchored else "") + pat)
        # for gitignore the match must be exact (children are handled by pruning directories)
        rx = re.compile(rx.pattern[:-len("(?:/.*)?$")] + "$")
        rules.append(_Rule(rx, negate, dir_only, base))
    return rules


def repo_root(path: str) -> str | None:
    """The nearest directory at or above `path` that holds a `.git`."""
    d = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class GitIgnore:
    """The .gitignore files from the repository root down to a directory; outside a repository,
    from `floor` (the directory being walked) down."""

    def __init__(self, floor: str | None = None):
        self._cache: dict[str, list[_Rule]] = {}
        self.floor = os.path.abspath(floor) if floor else None

    def rules_for(self, directory: str) -> list[_Rule]:
        directory = os.path.abspath(directory)
        if directory in self._cache:
            return self._cache[directory]
        parent = os.path.dirname(directory)
        inherited: list[_Rule] = []
        if parent != directory and not os.path.exists(os.path.join(directory, ".git")) \
                and directory != self.floor:
            inherited = self.rules_for(parent)
        own = _parse_gitignore(os.path.join(directory, ".gitignore"))
        if os.path.isdir(os.path.join(directory, ".git")):
            own = _parse_gitignore(os.path.join(directory, ".git", "info", "exclude")) + own
        rules = inherited + own
        self._cache[directory] = rules
        return rules

    def ignored(self, path: str, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        result = False
        for r in self.rules_for(os.path.dirname(path)):
            if r.dir_only and not is_dir:
                continue
            rel = os.path.relpath(path, r.base).replace(os.sep, "/")
            if rel.startswith(".."):
                continue
            if r.regex.match(rel):
                result = not r.negate
        return result


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def collect(paths, *, include=(), exclude=(), root: str | None = None, gitignore: bool = True,
            follow_symlinks: bool = False):
    """(files, errors): the files to lint in a deterministic order, and (path, message) for
    arguments that do not exist.  Explicit file arguments are always linted unless `exclude`
    names them; directories are searched for SUFFIXES."""
    root = os.path.abspath(root or os.getcwd())
    files: list[str] = []
    seen: set[str] = set()
    errors: list[tuple[str, str]] = []

    def rel(p: str) -> str | None:
        r = os.path.relpath(os.path.abspath(p), root)
        return None if r.startswith("..") else r.replace(os.sep, "/")

    def excluded(p: str) -> bool:
        r = rel(p)
        return r is not None and any_match(exclude, r)

    def add(p: str) -> None:
        real = os.path.realpath(p)
        if real not in seen:
            seen.add(real)
            files.append(p)

    for arg in paths:
        if not os.path.lexists(arg):
            errors.append((arg, "no such file or directory"))
            continue
        if not os.path.isdir(arg):
            if not os.path.exists(arg):
                errors.append((arg, "broken symbolic link"))
            elif not excluded(arg):
                add(arg)
            continue
        tree = os.path.realpath(arg)
        visited = {tree}
        gi = GitIgnore(floor=None if repo_root(arg) else arg) if gitignore else None
        for dirpath, dirnames, filenames in os.walk(arg, followlinks=True):
            keep = []
            for d in sorted(dirnames):
                full = os.path.join(dirpath, d)
                if d in SKIP_DIRS:
                    continue
                if os.path.islink(full):
                    real = os.path.realpath(full)
                    if (not follow_symlinks and not _inside(real, tree)) or real in visited:
                        continue
                    visited.add(real)
                else:
                    visited.add(os.path.realpath(full))
                if excluded(full) or (gi is not None and gi.ignored(full, True)):
                    continue
                keep.append(d)
            dirnames[:] = keep
            for name in sorted(filenames):
                if not name.endswith(SUFFIXES):
                    continue
                full = os.path.join(dirpath, name)
                if os.path.islink(full):
                    real = os.path.realpath(full)
                    if not os.path.exists(real):
                        continue
                    if not follow_symlinks and not _inside(real, tree):
                        continue
                if excluded(full) or (gi is not None and gi.ignored(full, False)):
                    continue
                r = rel(full)
                if include and not (r is not None and any_match(include, r)):
                    continue
                add(os.path.normpath(full))
    return files, errors
