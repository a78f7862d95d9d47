"""Configuration: `[tool.warplint]` in pyproject.toml or top-level keys in warplint.toml.

Each file has its own: the nearest one found by walking up from the file's directory (for the
walk of a directory argument: from that directory), stopping at the repository root (the
directory holding `.git`); a pyproject.toml without a `[tool.warplint]` table is passed over.  `warplint.toml` wins over pyproject.toml in
the same directory.  Relative paths in the file (include-paths) are relative to its directory;
globs (include, exclude, per-path-ignores) match paths relative to it.  Unknown keys and wrong
types are usage errors naming the key and the file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .findings import SEVERITIES

KEYS = ("targets", "select", "ignore", "per-path-ignores", "include", "exclude", "defines", "include-paths",
        "block-dim", "report-possible", "possible-severity", "fail-on", "jobs", "show-source", "extensions", "macros",
        "require-analysis")


@dataclass
class Config:
    path: str | None = None  # the file it came from (None: defaults)
    root: str = ""  # directory globs and relative paths are resolved against
    targets: list[str] | None = None  # always judged; None: the default targets the file builds for (pipeline)
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    per_path_ignores: dict[str, list[str]] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    include_paths: list[str] = field(default_factory=list)
    block_dim: tuple[int, int, int] | None = None
    report_possible: bool | None = None
    possible_severity: str | None = None
    fail_on: str | None = None
    jobs: int | None = None
    show_source: bool | None = None  # text reports: the source line under each finding
    extensions: list[str] | None = None  # CUDA-C file extensions (None: languages.DEFAULT_EXTENSIONS)
    require_analysis: bool | None = None  # exit 2 when warp code was not analysed


def _toml():
    try:
        import tomllib
        return tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli
            return tomli
        except ImportError:
            raise UsageError("reading configuration needs Python 3.11+ or the 'tomli' package "
                             "(pip install tomli)") from None


CONFIG_MAX_BYTES = 1024 * 1024


def _read_toml(path: Path) -> dict:
    from .inputs import InputFileError, read_regular
    toml = _toml()
    try:
        data = read_regular(str(path), CONFIG_MAX_BYTES)
    except InputFileError as e:
        raise UsageError(f"{path}: cannot read configuration: {e}") from None
    try:
        return toml.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: configuration is not valid UTF-8") from None
    except (toml.TOMLDecodeError, RecursionError) as e:
        raise UsageError(f"{path}: invalid TOML: {e if isinstance(e, toml.TOMLDecodeError) else 'nested too deeply'}") from None


def _table(path: Path) -> dict | None:
    """The warplint table of a config file, or None when a pyproject.toml has none."""
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "warplint" not in tool:
            return None
        table = tool["warplint"]
        if not isinstance(table, dict):
            raise UsageError(f"{path}: [tool.warplint] must be a table")
        return table
    return data


def find_config(start: str | None = None) -> Path | None:
    """The nearest warplint.toml, or pyproject.toml with [tool.warplint], at or above `start`,
    up to the repository root (the directory holding `.git`): a file above the repository is
    not the project's."""
    p = Path(os.path.abspath(start or os.getcwd()))
    if not p.is_dir():
        p = p.parent
    for d in (p, *p.parents):
        found = _config_in(d)
        if found is not None or os.path.lexists(d / ".git"):
            return found
    return None


def _config_in(d: Path) -> Path | None:
    """warplint.toml, else a pyproject.toml with [tool.warplint], in the directory `d`."""
    if (d / "warplint.toml").is_file():
        return d / "warplint.toml"
    pp = d / "pyproject.toml"
    if pp.is_file() and _table(pp) is not None:
        return pp
    return None


def _strs(v, key, where, *, comma=False) -> list[str]:
    if isinstance(v, str) and comma:
        v = [x for x in (s.strip() for s in v.split(",")) if x]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise UsageError(f"{where}: '{key}' must be a list of strings")
    return list(v)


def _severity(v, key, where) -> str:
    if v not in SEVERITIES:
        raise UsageError(f"{where}: '{key}' must be one of {', '.join(SEVERITIES)} (got {v!r})")
    return v


def parse_table(table: dict, path: str, root: str) -> Config:
    where = path
    unknown = [k for k in table if k not in KEYS]
    if unknown:
        raise UsageError(f"{where}: unknown configuration key '{unknown[0]}' "
                         f"(known: {', '.join(KEYS)})")
    c = Config(path=path, root=root)
    for key, v in table.items():
        if key == "targets":
            c.targets = validate_targets(_strs(v, key, where, comma=True), f"{where}: 'targets'")
        elif key in ("select", "ignore", "include", "exclude"):
            setattr(c, key, _strs(v, key, where, comma=key in ("select", "ignore")))
        elif key == "per-path-ignores":
            if not isinstance(v, dict):
                raise UsageError(f"{where}: 'per-path-ignores' must be a table of glob = [rules]")
            c.per_path_ignores = {str(g): _strs(r, f"per-path-ignores.{g}", where, comma=True) for g, r in v.items()}
        elif key in ("defines", "macros"):  # one table under two names: `macros` reads better for qualifiers
            if not isinstance(v, dict) or not all(isinstance(x, (str, int, float, bool)) for x in v.values()):
                raise UsageError(f"{where}: '{key}' must be a table of NAME = value")
            c.defines.update({str(k): (("1" if x else "0") if isinstance(x, bool) else str(x)) for k, x in v.items()})
        elif key == "extensions":
            c.extensions = _strs(v, key, where)
            if not all(e.startswith(".") and len(e) > 1 for e in c.extensions):
                raise UsageError(f"{where}: 'extensions' must be a list of file extensions like \".cu\"")
        elif key == "require-analysis":
            if not isinstance(v, bool):
                raise UsageError(f"{where}: 'require-analysis' must be true or false")
            c.require_analysis = v
        elif key == "include-paths":
            c.include_paths = [os.path.normpath(os.path.join(root, p)) for p in _strs(v, key, where)]
        elif key == "block-dim":
            if (not isinstance(v, list) or not 1 <= len(v) <= 3
                    or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)):
                raise UsageError(f"{where}: 'block-dim' must be a list of 1 to 3 positive integers [x, y, z]")
            c.block_dim = tuple(list(v) + [1] * (3 - len(v)))  # type: ignore[assignment]
        elif key == "report-possible":
            if not isinstance(v, bool):
                raise UsageError(f"{where}: 'report-possible' must be true or false")
            c.report_possible = v
        elif key == "possible-severity":
            c.possible_severity = _severity(v, key, where)
        elif key == "fail-on":
            c.fail_on = _severity(v, key, where)
        elif key == "show-source":
            if not isinstance(v, bool):
                raise UsageError(f"{where}: 'show-source' must be true or false")
            c.show_source = v
        elif key == "jobs":
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise UsageError(f"{where}: 'jobs' must be a positive integer")
            c.jobs = v
    return c


def validate_targets(names: list[str], where: str) -> list[str]:
    from .targets import Target
    out = []
    for n in names:
        try:
            t = Target.parse(n)
        except ValueError:
            raise UsageError(f"{where}: not a target name: {n!r} (expected e.g. sm_70)") from None
        if t.sm not in KNOWN_ARCHITECTURES:
            known = ", ".join(f"sm_{a}" for a in sorted(KNOWN_ARCHITECTURES) if a >= 30)
            raise UsageError(f"{where}: unknown architecture {n!r} (known: {known})")
        out.append(t.name)
    return out


# compute capabilities nvcc has known (sm_XX; `a`/`f` suffixes allowed on any)
KNOWN_ARCHITECTURES = frozenset({10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80,
                                 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121})


def load_config(path: str | os.PathLike) -> Config:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: configuration file not found")
    table = _table(p)
    if table is None:
        return Config(path=str(p), root=str(p.parent.resolve()))
    return parse_table(table, str(p), str(p.parent.resolve()))


def discover(start: str | None = None) -> Config:
    found = find_config(start)
    if found is None:
        return Config(root=os.getcwd())
    return load_config(found)


_DISCOVERED: dict[str, Config] = {}  # configuration file ("" for none) -> Config, per process


def discover_cached(start: str) -> Config:
    """`discover`, each configuration file read once per run."""
    found = find_config(start)
    key = str(found or "")
    if key not in _DISCOVERED:
        _DISCOVERED[key] = load_config(found) if found is not None else Config(root=os.getcwd())
    return _DISCOVERED[key]
