"""Compile databases (`compile_commands.json`, from CMake `CMAKE_EXPORT_COMPILE_COMMANDS`, Bear,
Meson): the include paths, defines, language standard and GPU targets of each translation unit.

Both routes use them: the direct route takes `-I`/`-isystem`, `-D`/`-U` and the targets, the
compiler route (`--via-nvcc`) also the options below that change what the code means.  A CI job
lints strangers' pull requests, and a database is as much theirs as the code, so an entry never
chooses a program or a file to write: its `command`/`compiler` is never run (the compiler is
the `nvcc` on PATH, or `--nvcc`), and options that name programs, options files or outputs
(`-ccbin`, `-optf`, `-Xcompiler`, `-o`, `--keep-dir`, ...) or that we do not know are dropped,
with one note for the run.  Relative paths are resolved against the entry's `directory`.

A file without an entry of its own (a header) takes the flags of a translation unit in the
linted tree that includes it, directly or through other headers of the tree.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field

from .errors import UsageError

DB_NAME = "compile_commands.json"
MAX_DB_BYTES = 256 * 1024 * 1024
MAX_SCANNED_HEADERS = 200  # files read per translation unit when looking for a header's includer

# options with a value, as `-X v`, `-Xv` or `-X=v` (short) / `--x v`, `--x=v` (long): name -> kind
_VALUED = {
    "-I": "include", "--include-path": "include", "-isystem": "include", "--system-include": "include",
    "-include": "pre-include", "--pre-include": "pre-include",
    "-D": "define", "--define-macro": "define", "-U": "undefine", "--undefine-macro": "undefine",
    "-std": "std", "--std": "std",
    "-arch": "arch", "--gpu-architecture": "arch", "-code": "arch", "--gpu-code": "arch",
    "--cuda-gpu-arch": "arch", "-gencode": "gencode", "--generate-code": "gencode",
    "--default-stream": "keep", "-default-stream": "keep", "-maxrregcount": "keep", "--maxrregcount": "keep",
    "-x": "skip", "--x": "skip",
}
# options that take a value and are never taken (programs, options files, outputs, host/linker flags)
_REFUSED_VALUED = {"-o", "--output-file", "-MF", "--dependency-output", "-MT", "--dependency-target-name",
                   "-MQ", "-odir", "--output-directory", "--keep-dir", "-keep-dir", "-ccbin", "--compiler-bindir",
                   "-optf", "--options-file", "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options",
                   "-Xptxas", "--ptxas-options", "-Xnvlink", "--nvlink-options", "-Xcudafe", "-Xarchive",
                   "--archive-options", "-Xfatbin", "--fatbin-options", "-l", "--library", "-L",
                   "--library-path", "-Xclang", "--cuda-path", "-B", "-isysroot", "--sysroot",
                   "-MJ", "-imacros", "--dryrun", "-dlink", "--run-args"}
_ATTACHED = {"-isystem", "-include", "-imacros", "-isysroot"}  # longer options that take a value joined on
# flags passed on to nvcc as they are (a value, if any, is part of the token: `--fmad=false`)
_KEPT_FLAGS = re.compile(r"^(?:--?expt-relaxed-constexpr|--?expt-extended-lambda|--?extended-lambda"
                         r"|-rdc=(?:true|false)|--relocatable-device-code=(?:true|false)|-O[0-3s]?"
                         r"|--?use_fast_math|--(?:ftz|prec-div|prec-sqrt|fmad)=(?:true|false)"
                         r"|-(?:ftz|prec-div|prec-sqrt|fmad)=(?:true|false)|-w|--disable-warnings"
                         r"|--?diag-suppress=[\w,]+|-Wno-deprecated-gpu-targets|--?restrict"
                         r"|-(?:default-stream|maxrregcount)=\w+|--(?:default-stream|maxrregcount)=\w+)$")
# output/compile-mode flags of every build command: dropped without being worth a note
_BUILD_FLAGS = {"-c", "--compile", "-MD", "-MMD", "-M", "-MM", "-MP", "--generate-dependencies-with-compile",
                "--generate-nonsystem-dependencies-with-compile", "-lineinfo", "--generate-line-info"}
_LAUNCHERS = {"ccache", "sccache", "distcc", "icecc"}  # `ccache nvcc ...`: the compiler comes next
_STD = re.compile(r"^(?:c|gnu)\+\+\d[\dxyza]$")
_SM = re.compile(r"\b(?:sm|compute)_(\d{2,4}[a-z]?)\b")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


@dataclass
class Flags:
    """What one translation unit is compiled with."""
    include_paths: list[str] = field(default_factory=list)  # absolute
    defines: dict[str, str] = field(default_factory=dict)
    targets: list[str] = field(default_factory=list)  # sm_XX, in the order given
    nvcc_flags: list[str] = field(default_factory=list)  # for the compiler route only (-std, -U, ...)
    source: str = ""  # the translation unit whose entry these are (a header borrows one's)


@dataclass
class CompileDatabase:
    path: str
    entries: dict[str, Flags] = field(default_factory=dict)  # real path of the file -> its flags
    dropped: Counter = field(default_factory=Counter)  # option -> entries it was dropped from
    _includes: dict = field(default_factory=dict, repr=False)  # translation unit -> headers it reaches

    def notes(self) -> list[str]:
        if not self.dropped:
            return []
        listed = ", ".join(f"{o} ({n} {'entry' if n == 1 else 'entries'})" for o, n in sorted(self.dropped.items()))
        return [f"{self.path}: options not taken from the compile database (they name programs, options "
                f"files or outputs, or are not known to be safe): {listed}"]

    def flags_for(self, path: str) -> Flags | None:
        """The flags of `path`'s entry, else those of a translation unit that includes it."""
        real = os.path.realpath(path)
        found = self.entries.get(real)
        if found is not None:
            return found
        for tu in sorted(self.entries):
            if real in self._reached(tu):
                return self.entries[tu]
        return None

    def _reached(self, tu: str) -> set[str]:
        """The files of the linted tree that `tu` includes, directly or through other headers."""
        if tu not in self._includes:
            from .pipeline import linted_tree, within
            flags, tree = self.entries[tu], linted_tree(tu)
            seen, todo = set(), [tu]
            while todo and len(seen) < MAX_SCANNED_HEADERS:
                current = todo.pop()
                for name in _included_names(current):
                    for d in [os.path.dirname(current)] + flags.include_paths:
                        cand = os.path.realpath(os.path.join(d, name))
                        if cand not in seen and within(cand, [tree]) and os.path.isfile(cand):
                            seen.add(cand)
                            todo.append(cand)
                            break
            self._includes[tu] = seen
        return self._includes[tu]


def _included_names(path: str) -> list[str]:
    from .inputs import InputFileError, read_regular
    try:
        text = read_regular(path, 16 * 1024 * 1024).decode("utf-8", "replace")
    except (InputFileError, OSError):
        return []
    return _INCLUDE.findall(text)


def find(build_dir: str | None, file: str | None) -> str:
    """The database named by `-p BUILD_DIR` or `--compile-commands FILE`."""
    if file:
        return file
    return os.path.join(build_dir or ".", DB_NAME)


def load(path: str) -> CompileDatabase:
    from .inputs import InputFileError, read_regular
    try:
        data = json.loads(read_regular(path, MAX_DB_BYTES).decode("utf-8"))
    except (InputFileError, OSError) as e:
        raise UsageError(f"{path}: cannot read the compile database: {e}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise UsageError(f"{path}: not a valid compile database (JSON): {e}") from None
    if not isinstance(data, list):
        raise UsageError(f"{path}: a compile database is a JSON list of entries")
    db = CompileDatabase(path)
    for n, entry in enumerate(data):
        real, flags = _entry(entry, path, n, db.dropped)
        old = db.entries.get(real)
        if old is None:
            db.entries[real] = flags
        else:  # the same file built again (another configuration): its targets count too
            old.targets += [t for t in flags.targets if t not in old.targets]
    return db


def _entry(entry, path: str, n: int, dropped: Counter) -> tuple[str, Flags]:
    where = f"{path}: entry {n + 1}"
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
            or not isinstance(entry.get("directory"), str):
        raise UsageError(f"{where}: expected an object with 'directory' and 'file'")
    directory = os.path.join(os.path.dirname(os.path.abspath(path)), entry["directory"])
    args = entry.get("arguments")
    if args is None:
        if not isinstance(entry.get("command"), str):
            raise UsageError(f"{where}: expected 'arguments' (a list) or 'command' (a string)")
        try:
            args = shlex.split(entry["command"])
        except ValueError as e:
            raise UsageError(f"{where}: cannot split 'command': {e}") from None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise UsageError(f"{where}: 'arguments' must be a list of strings")
    real = os.path.realpath(os.path.join(directory, entry["file"]))
    while len(args) > 1 and os.path.basename(args[0]) in _LAUNCHERS:
        args = args[1:]
    flags = parse_arguments(args[1:], directory, real, dropped)  # args[0], the compiler, is never used
    flags.source = real
    return real, flags


def parse_arguments(args: list[str], directory: str, source: str, dropped: Counter) -> Flags:
    """The flags of one command line (without the compiler); what is not taken goes to `dropped`."""
    flags = Flags()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in _BUILD_FLAGS:
            continue
        if _KEPT_FLAGS.match(arg):
            flags.nvcc_flags.append(arg)
            continue
        name, value = _split_option(arg)
        if name is not None and value is None:  # the value is the next argument
            value = args[i] if i < len(args) else ""
            i += 1
        if name is not None:
            _take(flags, _VALUED.get(name) or "refused", name, value, directory, dropped)
        elif arg.startswith("-"):
            dropped[arg.split("=", 1)[0]] += 1
        elif os.path.realpath(os.path.join(directory, arg)) != source:
            dropped["(input file)"] += 1
    return flags


def _split_option(arg: str) -> tuple[str | None, str | None]:
    """(option name, value or None when it is the next argument) for an option with a value;
    (None, None) for anything else."""
    for name in sorted(set(_VALUED) | _REFUSED_VALUED, key=len, reverse=True):
        if arg == name:
            return name, None
        if arg.startswith(name + "="):
            return name, arg[len(name) + 1:]
        if (len(name) == 2 or name in _ATTACHED) and arg.startswith(name):
            return name, arg[len(name):]  # -Idir, -DX=1, -ofile, -isystemdir
    return None, None


def _take(flags: Flags, kind: str, name: str, value: str, directory: str, dropped: Counter) -> None:
    if kind == "include":
        flags.include_paths.append(os.path.normpath(os.path.join(directory, value)))
    elif kind == "pre-include":
        flags.nvcc_flags.append("--pre-include=" + os.path.normpath(os.path.join(directory, value)))
    elif kind == "define":
        macro, eq, text = value.partition("=")
        flags.defines[macro] = text if eq else "1"
    elif kind == "undefine":
        flags.nvcc_flags.append("-U" + value)
        flags.defines.pop(value, None)
    elif kind == "std" and _STD.match(value):
        flags.nvcc_flags.append("-std=" + value)
    elif kind in ("arch", "gencode"):
        code = value.partition("code=")[2] if kind == "gencode" and "code=" in value else value
        for sm in _SM.findall(code):
            if f"sm_{sm}" not in flags.targets:
                flags.targets.append(f"sm_{sm}")
    elif kind == "keep":
        flags.nvcc_flags.append(f"{name}={value}")
    elif kind != "skip":
        dropped[name] += 1


def options_for(path: str, options):
    """`options` with the flags of `path` from the compile database, when it has them: include
    paths and defines come first (the command line's and the configuration's win), the targets
    when none were given."""
    db = getattr(options, "compdb", None)
    flags = db.flags_for(path) if db is not None else None
    if flags is None:
        return options
    defines = {**flags.defines, **options.defines}
    return dataclasses.replace(
        options, include_paths=list(options.include_paths) + flags.include_paths, defines=defines,
        targets=options.targets or (list(flags.targets) or None), nvcc_flags=list(flags.nvcc_flags))
