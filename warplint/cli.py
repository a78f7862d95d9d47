"""The `warplint` command.

    warplint [options] PATH...        lint files and directories (each with its nearest configuration)
    warplint [options] - --stdin-filename PATH    lint stdin as if it were PATH (editors)
    warplint rules [--format json]    the rule catalogue
    warplint --explain ID_OR_SLUG     a rule's document
    warplint server                   language server for editors (LSP on stdio; the `server` extra)

Exit status: 0 no findings at or above --fail-on, 1 findings, 2 usage error, a file that
could not be analysed, a fix that could not be written, or an internal error.
Imports are lazy: `--version` and one small file start fast.
"""
from __future__ import annotations

import os
import sys

from .severity import SEVERITIES

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
DEFAULT_TIMEOUT = 120.0  # seconds per file in a worker process


def _parser():
    import argparse

    from . import __version__
    p = argparse.ArgumentParser(
        prog="warplint",
        description="Static analyzer for warp-synchronous GPU code (PTX and CUDA-C).",
        epilog="Also: 'warplint rules' lists the rules; 'warplint --explain WL003' explains one. "
               "Exit status: 0 clean, 1 findings at or above --fail-on, 2 usage or tool error.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files and directories (.cu, .cuh, headers, .ptx)")
    p.add_argument("--version", action="version", version=f"warplint {__version__}")
    p.add_argument("--explain", metavar="RULE", help="print the document of a rule (id or slug) and exit")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=("text", "json", "sarif", "github", "gitlab", "junit"), default="text",
                     help="text (default), json, sarif (code scanning), github (workflow annotations), "
                          "gitlab (Code Quality), junit (JUnit XML)")
    out.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (atomically)")
    out.add_argument("--srcroot", metavar="DIR", help="directory SARIF URIs are relative to (default: cwd)")
    out.add_argument("--fail-on", choices=SEVERITIES, default=None,
                     help="lowest severity that makes the exit status 1 (default: warning)")
    out.add_argument("--show-masks", action="store_true",
                     help="print the possible active mask and membermask of every warp primitive")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="color the text report: auto (default: on a terminal, unless NO_COLOR is set), always, never")
    out.add_argument("--no-show-source", dest="show_source", action="store_false", default=None,
                     help="do not print the source line under each finding (config: show-source = false)")
    out.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of them")
    out.add_argument("--quiet", "-q", action="store_true", help="print the findings and errors only: no summary, no notes")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit 0 even when there are findings (2 still means a tool or input error)")
    rules = p.add_argument_group("rules")
    rules.add_argument("--target", action="append", default=[], metavar="sm_XX",
                       help="target architecture(s); repeatable or comma-separated (default: the PTX "
                            ".target, else configuration, else sm_60,sm_70)")
    rules.add_argument("--select", action="append", default=[], metavar="RULES",
                       help="only these rules (ids, slugs or id prefixes; comma-separated)")
    rules.add_argument("--ignore", action="append", default=[], metavar="RULES", help="skip these rules")
    poss = rules.add_mutually_exclusive_group()
    poss.add_argument("--no-possible", dest="possible", action="store_false", default=None,
                      help="do not report findings that hold only for some inputs")
    poss.add_argument("--possible", dest="possible", action="store_true", help=argparse.SUPPRESS)
    rules.add_argument("--possible-severity", choices=SEVERITIES, help="severity of 'possible' findings")
    rules.add_argument("--report-unused-suppressions", action="store_true",
                       help="report '// warplint: ignore' comments that suppress nothing (WL900)")
    rules.add_argument("--baseline", metavar="FILE.sarif",
                       help="findings already in this SARIF log do not fail the run")
    cu = p.add_argument_group("CUDA-C")
    cu.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    cu.add_argument("-I", dest="include_paths", action="append", default=[], metavar="DIR")
    cu.add_argument("--via-nvcc", action="store_true",
                    help="compile .cu files with nvcc (once per target) and lint the PTX; --via-nvcc=auto: "
                         "only files whose warp code the direct route could not analyse")
    cu.add_argument("--via-nvcc-auto", action="store_true", help=argparse.SUPPRESS)  # what --via-nvcc=auto becomes
    db = cu.add_mutually_exclusive_group()
    db.add_argument("-p", dest="build_dir", metavar="BUILD_DIR",
                    help="read BUILD_DIR/compile_commands.json: include paths, defines, -std and targets per file")
    db.add_argument("--compile-commands", metavar="FILE", help="the compile database to read (as -p)")
    cu.add_argument("--nvcc", metavar="PROGRAM", help="the nvcc to run (default: nvcc on PATH; never taken "
                                                      "from a compile database)")
    cu.add_argument("--nvcc-timeout", type=float, metavar="SECONDS",
                    help="time limit per compilation (default: 120; 0: none); past it the file is not analysed")
    cu.add_argument("--library-findings", choices=("drop", "keep"),
                    help="findings in compiled code with no line in the linted tree: drop with a note "
                         "(default) or report them in the library")
    cu.add_argument("--ptx-locations", choices=("source", "ptx"), default="source",
                    help="report PTX findings at the source line named by .loc (default) or at the PTX line")
    cu.add_argument("--block-dim", metavar="X[,Y[,Z]]", help="block dimensions (default: blockDim.x a multiple of 32)")
    fx = p.add_argument_group("fixes")
    fx.add_argument("--fix", action="store_true", help="apply automatic fixes in place")
    fx.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of the report")
    run = p.add_argument_group("run")
    run.add_argument("--config", metavar="FILE", help="configuration file (default: nearest warplint.toml "
                                                      "or pyproject.toml with [tool.warplint])")
    run.add_argument("--jobs", "-j", type=int, metavar="N", help="parallel processes (default and 0: all cores)")
    run.add_argument("--stdin-filename", metavar="PATH",
                     help="with PATH '-': lint the text read from stdin as if it were this file (for editors; "
                          "the file itself is not read)")
    run.add_argument("--timeout", type=float, metavar="SECONDS", default=DEFAULT_TIMEOUT,
                     help=f"time limit per file when several files are linted (default: {DEFAULT_TIMEOUT:g}; "
                          "0: none); a file past it gets an error, the others are analysed as usual")
    run.add_argument("--require-analysis", action="store_true",
                     help="exit 2 when a function with warp primitives was not analysed (config: "
                          "require-analysis = true); the coverage line says how many")
    run.add_argument("--no-gitignore", action="store_true", help="lint files that .gitignore excludes")
    run.add_argument("--follow-symlinks", action="store_true", help="follow symlinks that leave the tree")
    run.add_argument("--no-cache", action="store_true", help="do not reuse results of unchanged files")
    return p


def _split(values) -> list[str]:
    return [x for v in values for x in (s.strip() for s in v.split(",")) if x]


def _err(msg: str) -> None:
    try:
        sys.stdout.flush()  # keep the report and the messages in order on a terminal
    except Exception:
        pass
    sys.stderr.write(msg.rstrip("\n") + "\n")


def _validate_rules(patterns: list[str], where: str) -> None:
    from .errors import UsageError
    from .catalog import code_matches, known_rules
    for p in patterns:
        if not any(code_matches(p, rid) for rid in known_rules()):
            raise UsageError(f"{where}: unknown rule {p!r} (see 'warplint rules')")


def cmd_rules(argv: list[str]) -> int:
    import argparse
    import json
    p = argparse.ArgumentParser(prog="warplint rules", description="List the rules.")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    a = p.parse_args(argv)
    from .catalog import catalog
    docs = list(catalog().values())
    if a.format == "json":
        sys.stdout.write(json.dumps([{"id": d.id, "slug": d.slug, "name": d.name, "severity": d.severity,
                                      "targets": d.targets, "summary": d.summary} for d in docs], indent=2) + "\n")
    elif a.format == "markdown":
        sys.stdout.write(rules_markdown(docs))
    else:
        w1 = max([len(d.slug) for d in docs] + [4])
        lines = [f"{'ID':<6} {'SLUG':<{w1}} {'SEVERITY':<8} SUMMARY"]
        lines += [f"{d.id:<6} {d.slug:<{w1}} {d.severity:<8} {d.summary}" for d in docs]
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def rules_markdown(docs) -> str:
    rows = ["| Rule | Slug | Default severity | Summary |", "|---|---|---|---|"]
    rows += [f"| [{d.id}](rules/{d.doc_name}) | `{d.slug}` | {d.severity} | {d.summary.replace('|', chr(92) + '|')} |"
             for d in docs]
    return "\n".join(rows) + "\n"


def cmd_explain(name: str) -> int:
    from .catalog import lookup
    doc = lookup(name)
    if doc is None:
        _err(f"warplint: error: unknown rule {name!r} (see 'warplint rules')")
        return EXIT_ERROR
    sys.stdout.write(f"{doc.id} {doc.slug}: {doc.name}\n"
                     f"default severity: {doc.severity}; targets: {doc.targets}\n\n{doc.body}")
    return EXIT_OK


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (containers, taskset)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _build_options(args, cfg):
    from .config import validate_targets
    from .errors import UsageError
    from .options import Options
    o = Options()
    targets = _split(args.target)
    if targets:
        o.targets = validate_targets(targets, "--target")
    elif cfg.targets:
        o.targets = list(cfg.targets)
    select = _split(args.select) or cfg.select
    ignore = _split(args.ignore) + list(cfg.ignore)
    if select:
        _validate_rules(select, "--select" if args.select else f"{cfg.path}: 'select'")
    if ignore:
        _validate_rules(ignore, "--ignore / ignore")
    o.select = list(select) if select else None
    o.ignore = ignore
    if args.possible is not None:
        o.report_possible = args.possible
    elif cfg.report_possible is not None:
        o.report_possible = cfg.report_possible
    o.possible_severity = args.possible_severity or cfg.possible_severity
    o.defines = dict(cfg.defines)
    for d in args.defines:
        name, _, value = d.partition("=")
        if not name:
            raise UsageError(f"-D {d!r}: expected NAME or NAME=VALUE")
        o.defines[name] = value if _ else "1"
    o.include_paths = list(args.include_paths) + list(cfg.include_paths)
    _nvcc_options(o, args)
    o.map_ptx_locations = args.ptx_locations == "source"
    if args.block_dim:
        try:
            dims = [int(x) for x in args.block_dim.replace("x", ",").split(",") if x.strip()]
        except ValueError:
            dims = []
        if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
            raise UsageError(f"--block-dim {args.block_dim!r}: expected X[,Y[,Z]] with positive integers")
        o.block_dim = tuple(dims + [1] * (3 - len(dims)))
    elif cfg.block_dim:
        o.block_dim = cfg.block_dim
    if cfg.extensions:
        o.extensions = tuple(cfg.extensions)
    o.use_cache = not args.no_cache and not args.show_masks
    o.show_masks = args.show_masks
    return o


def _nvcc_options(o, args) -> None:
    """The compiler route and the compile database (issue 16)."""
    from .errors import UsageError
    o.nvcc_auto = args.via_nvcc_auto
    o.via_nvcc = args.via_nvcc and not o.nvcc_auto
    o.nvcc = args.nvcc or o.nvcc
    if args.nvcc_timeout is not None:
        if not args.nvcc_timeout >= 0:
            raise UsageError("--nvcc-timeout must be a number of seconds (0: no limit)")
        o.nvcc_timeout = args.nvcc_timeout
    o.library_findings = args.library_findings or o.library_findings
    if args.build_dir or args.compile_commands:
        from . import compdb
        o.compdb = compdb.load(compdb.find(args.build_dir, args.compile_commands))


def _compile_settings(options, settings, n_files: int) -> None:
    """Compilations share the jobs: one file's targets compile at once when the files do not
    fill them; a file's time limit covers one compilation per target on top of the analysis."""
    options.nvcc_jobs = max(1, settings.jobs // max(1, n_files))
    if settings.timeout is not None:
        db = options.compdb
        n_targets = max([len(options.targets or [])] + [len(f.targets) for f in (db.entries.values() if db else [])])
        limit = options.nvcc_timeout
        settings.timeout = settings.timeout + limit * max(1, n_targets) if limit else None


def _run(argv: list[str]) -> int:
    if "--via-nvcc=auto" in argv[:argv.index("--") if "--" in argv else len(argv)]:
        argv = ["--via-nvcc-auto" if a == "--via-nvcc=auto" else a for a in argv]
    if argv and argv[0] == "rules":
        return cmd_rules(argv[1:])
    if argv and argv[0] == "server":  # the language server (the `server` extra)
        from .server import main as server_main
        return server_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.explain:
        return cmd_explain(args.explain)
    from .errors import UsageError
    if not args.paths:
        raise UsageError("no paths given (try: warplint .)")
    if args.jobs is not None and args.jobs < 0:
        raise UsageError("--jobs must be a positive number (0: all cores)")
    if "-" in args.paths and (args.paths != ["-"] or not args.stdin_filename):
        raise UsageError("'-' (lint stdin) takes --stdin-filename PATH and no other paths")
    if args.stdin_filename and args.paths != ["-"]:
        raise UsageError("--stdin-filename goes with the path '-' (lint stdin)")
    if args.stdin_filename and (args.fix or args.diff):
        raise UsageError("--fix and --diff do not work on stdin")
    if not args.timeout >= 0:  # also NaN
        raise UsageError("--timeout must be a number of seconds (0: no limit)")
    if args.show_masks:
        try:
            from .analysis.show import format_masks  # noqa: F401
        except ImportError as e:
            _err(f"warplint: error: --show-masks is not available in this build ({e})")
            return EXIT_ERROR
    report, sources = _lint(args)
    return _finish(args, report, sources)


def _lint_group(args, cfg, files, diagnostics, tool_notes, stdin_text):
    """The files of one configuration: (Report, Sources)."""
    options = _build_options(args, cfg)
    from . import pipeline
    settings = pipeline.RunSettings(
        jobs=(args.jobs if args.jobs is not None else cfg.jobs) or _available_cpus(),  # 0: all cores
        timeout=args.timeout if 0 < args.timeout < float("inf") else None,
        fail_on=args.fail_on or cfg.fail_on or "warning",
        srcroot=os.path.abspath(args.srcroot) if args.srcroot else os.getcwd(),
        per_path_ignores=cfg.per_path_ignores, root=cfg.root, report_unused=args.report_unused_suppressions)
    if options.via_nvcc or options.nvcc_auto:
        _compile_settings(options, settings, len(files))
    if options.compdb is not None:
        tool_notes = tool_notes + options.compdb.notes()
    if args.baseline:
        from .baseline import load as load_baseline
        settings.baseline_keys = load_baseline(args.baseline)
    settings.stdin_text = stdin_text
    return pipeline.lint_run(files, options, settings, diagnostics, tool_notes)


def _files_by_config(args):
    """The files to lint, grouped by their configuration: the nearest warplint.toml or
    pyproject.toml with [tool.warplint] above each file (up to its repository root), or
    --config for all.  Returns ([(Config, files)], diagnostics, run notes)."""
    from . import config as config_mod
    from . import pipeline
    walk = {"gitignore": not args.no_gitignore, "follow_symlinks": args.follow_symlinks}
    if args.paths == ["-"]:
        cfg = config_mod.load_config(args.config) if args.config else config_mod.discover(args.stdin_filename)
        return [(cfg, [args.stdin_filename])], [], []
    if args.config:
        cfg = config_mod.load_config(args.config)
        files, diagnostics, notes = pipeline.collect_files(args.paths, cfg, **walk)
        return [(cfg, files)], diagnostics, notes
    groups: dict = {}  # configuration file -> (Config, files)
    seen: set[str] = set()
    diagnostics, notes = [], []
    for path in args.paths:
        files, d, n = pipeline.collect_files([path], config_mod.discover_cached(path), **walk)
        diagnostics += d
        notes += [x for x in n if x not in notes]
        for f in files:
            if os.path.abspath(f) not in seen:
                seen.add(os.path.abspath(f))
                cfg = config_mod.discover_cached(f)
                groups.setdefault(cfg.path, (cfg, []))[1].append(f)
    if not groups:
        cfg = config_mod.discover_cached(args.paths[0])
        groups[cfg.path] = (cfg, [])
    return list(groups.values()), diagnostics, notes


def _read_stdin(path: str):
    """The text on stdin, decoded as a file at `path` would be: (text, notes)."""
    from .errors import UsageError
    from .pipeline import MAX_BYTES, decode_source
    data = sys.stdin.buffer.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise UsageError(f"stdin: more than {MAX_BYTES} bytes")
    return decode_source(data, path)


def _lint(args):
    """Lint every group of files with its own configuration; one report for the run."""
    from .fingerprint import line_hashes
    from .report import merge_runs
    groups, diagnostics, tool_notes = _files_by_config(args)
    stdin_text = None
    if args.paths == ["-"]:
        stdin_text, notes = _read_stdin(args.stdin_filename)
        diagnostics = diagnostics + notes
    runs = [_lint_group(args, cfg, files, diagnostics if i == 0 else [], tool_notes if i == 0 else [], stdin_text)
            for i, (cfg, files) in enumerate(groups)]
    report, sources = merge_runs(runs)
    report.sources = sources
    report.line_hashes = line_hashes(report.findings, sources)
    show = args.show_source if args.show_source is not None else groups[0][0].show_source
    report.show_source = show is not False
    args.require_analysis = args.require_analysis or any(cfg.require_analysis for cfg, _ in groups)
    if args.quiet:
        report.diagnostics = [d for d in report.diagnostics if d.severity == "error"]
        report.tool_notes = []
    return report, sources


def _finish(args, report, sources) -> int:
    from . import pipeline
    if args.format not in ("json", "sarif"):  # those carry the masks inside the document
        _print_masks(report.masks, several=len(report.files) > 1)
        report.masks = {}
    status_extra = EXIT_OK
    if args.fix or args.diff:
        status_extra = _print_fixes(pipeline.apply_fixes(report, sources, write=not args.diff), write=not args.diff)
    _print_report(report, args)
    if not report.success or status_extra == EXIT_ERROR:
        return EXIT_ERROR
    if args.require_analysis and report.coverage is not None and report.coverage.not_analysed:
        _err(f"warplint: error: --require-analysis: {report.coverage.not_analysed} of {report.coverage.total} "
             "functions with warp primitives not analysed (notes above)")
        return EXIT_ERROR
    return EXIT_FINDINGS if report.failing and not args.exit_zero else EXIT_OK


def _print_masks(masks: dict[str, str], several: bool) -> None:
    from .report import display_path, printable
    for path, text in masks.items():
        sys.stdout.write((f"== {display_path(path)} ==\n" if several else "") + printable(text))


def _print_fixes(outcome, *, write: bool) -> int:
    for diff in outcome.diffs:
        sys.stdout.write(diff)
    for error in outcome.errors:
        _err(f"warplint: error: {error}")
    if write and outcome.findings:
        n, files = outcome.findings, outcome.files
        _err(f"fixed {n} {'finding' if n == 1 else 'findings'} in {files} {'file' if files == 1 else 'files'}")
    return EXIT_ERROR if outcome.errors else EXIT_OK


def _print_report(report, args) -> None:
    """Diagnostics and notes on stderr, the report on stdout or --output, the summary."""
    from .errors import UsageError
    from .report import render
    from .report.text import format_diagnostic, summary
    for d in report.diagnostics:
        _err(format_diagnostic(d))
    for n in report.tool_notes:
        _err(f"warplint: note: {n}")
    color = (args.format == "text" and not args.output and
             (args.color == "always" or (args.color == "auto" and os.environ.get("NO_COLOR") is None
                                         and sys.stdout.isatty())))
    if args.statistics:
        from .report.text import statistics
        text = statistics(report)
    else:
        text = render(report, args.format, color=color)
    if args.output:
        from .fixer import FixError, write_output
        try:
            write_output(args.output, text.encode("utf-8"))
        except FixError as e:
            raise UsageError(f"--output: {e}") from None
    elif not args.diff:
        sys.stdout.write(text)
    if (args.format == "text" or args.output) and not args.quiet:
        if report.coverage is not None:
            _err(report.coverage.line())
        _err(summary(report))


def program() -> None:
    """The `warplint` program (`python -m warplint`, the console script): `main`, then exit at
    once.  The interpreter's own exit frees every object of the run one by one (0.06-0.08 s of a
    300-line file's 0.4 s, 0.6-0.8 s of a large header's 4 s); nothing waits for it: reports,
    cache entries and fixes are written and closed before `main` returns, and worker processes
    stopped.  The standard streams are flushed first; one that cannot take its output (a closed
    pipe) makes the exit status an error, as Python's own exit does."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or EXIT_ERROR
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        for stream in (sys.stdout, sys.stderr):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
    except Exception:
        pass
    try:
        return _run(argv)
    except SystemExit as e:  # argparse: --help, --version, bad options
        code = e.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_ERROR)
    except KeyboardInterrupt:
        _err("warplint: interrupted")
        return EXIT_ERROR
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_ERROR
    except Exception as e:
        from .errors import UsageError  # imported here: `--version` does not need the IR
        if isinstance(e, UsageError):
            _err(f"warplint: error: {e}")
            return EXIT_ERROR
        _err(f"warplint: internal error: {type(e).__name__}: {e} "
             "(please report this at https://github.com/warplint/warplint/issues)")
        return EXIT_ERROR
