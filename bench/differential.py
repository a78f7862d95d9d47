"""Route differential on a corpus (issue 13): the same file linted directly and through nvcc.

    python bench/differential.py CORPUS_DIR [--target sm_80] [--limit 120] [--seed 13]
                                 [--repo NAME ...] [--jobs 1] [--nvcc-timeout 240]
                                 [--trees-from /work/.mirror] [--warplint-root DIR] [--out bench/out]

CORPUS_DIR holds one folder per repository (bench/fetch_corpus.py). Candidates are the `.cu`
files with a warp primitive (realworld.py's scan), and with `--trees-from` the headers too (nvcc
compiles a `.cu` next to the header that includes it: `x.cuh.wldiff.cu`); a seeded sample of `--limit` of them (taken
round-robin over the repositories, so each is represented; `--limit 0`: all) is linted twice in
fresh processes from the repository's folder, for the same target:

    python -m warplint --format json --show-masks --no-cache --no-gitignore -j 1 --target T FILE
    ... the same with --via-nvcc --nvcc-timeout S

nvcc compiles the file on its own: no -D and no dependency outside its repository, so a file
that needs another library's headers or its build's macros is not compilable alone; its first
error is classed (missing header, undefined identifier, architecture, time limit, #error, ...).
`.corpus/` holds only the files with device code; `--trees-from MIRRORS` lints instead a full
source tree of each repository at the corpus's commit (`git archive` of MIRRORS/<owner>+<name>/repo,
headers and sources only, into OUT/differential/trees/, with a `.git` marker so that the tree is
the linted tree), generates the headers the build makes from `.in` templates at the plainest
configuration (every `#cmakedefine` undefined, every `@VAR@` 0), and gives both routes an `-I`
for every directory of the tree that an `#include` of the file, or of a header it reaches,
needs (the repository's own include roots, found by the included path's suffix). For each compiled file, the findings (rule,
file, line; columns differ between routes) are compared, and each finding that only one route
reports is classed by what the other route did at that place:

- `not analysed directly`: the direct route has no --show-masks entry in the function (the
  front end noted it);
- `no code from nvcc`: nvcc emitted nothing for the function (a template nothing
  instantiates, a helper nothing calls) or for the line (compiled away);
- `both analysed`: both routes analysed the function and disagree (analysis differences:
  read these by hand).

Results are cached per file (its bytes, the repository's commit, the measured tree, the target,
the route) under OUT/differential/, so a second run with a larger --limit only lints the new
files. Printed: agreement per repository (files compiled, files whose findings agree, findings
in both / direct only / via only), the disagreement classes with counts (by rule and route),
and the files nvcc could not compile alone by reason. OUT/differential.json has every file.
"""
from __future__ import annotations

import argparse
import collections
import fnmatch
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from realworld import (describe_tree, file_has_primitives, list_files, mask_texts,  # noqa: E402
                       parse_masks_text, scan_functions)

NVCC_REASONS = [  # (class, pattern over the first error message), first match wins
    ("missing header", re.compile(r"cannot open source file|No such file or directory|could not open")),
    ("nvcc time limit", re.compile(r"did not finish within")),
    ("#error directive", re.compile(r"#error")),
    ("architecture", re.compile(r"requires \.target|not supported on|Unsupported gpu|Feature '")),
    ("undefined identifier or type", re.compile(r"is undefined|identifier .* undefined|not a template|"
                                                r"has no member|incomplete type|expected a type")),
    ("syntax (dialect, macros of the build)", re.compile(r"expected a|expected an|unrecognized token|"
                                                         r"declaration is incompatible|not allowed")),
]


# --- running the two routes ------------------------------------------------------------------------

def run_route(repo_dir: str, rel: str, target: str, via: bool, timeout: float, root: str,
              includes: list[str]) -> dict:
    cmd = [sys.executable, "-m", "warplint", "--format", "json", "--show-masks", "--no-cache",
           "--no-gitignore", "-j", "1", "--target", target, *(f"-I{d}" for d in includes), rel]
    if via:
        cmd[-1:-1] = ["--via-nvcc", "--nvcc-timeout", str(int(timeout))]
    t0 = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        p = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True, timeout=timeout + 120, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": time.perf_counter() - t0}
    try:
        report = json.loads(p.stdout[p.stdout.find("{"):]) if "{" in p.stdout else {}
    except json.JSONDecodeError:
        report = {}
    if not report:
        return {"status": "crash", "seconds": time.perf_counter() - t0, "stderr": p.stderr[-1500:]}
    diagnostics = report.get("diagnostics", [])
    errors = [d for d in diagnostics if d.get("severity") == "error"]
    shown, analysed, notes = [], set(), []
    for text in mask_texts(report.get("masks")):
        parse_masks_text(text, shown, analysed, notes)
    return {"status": "error" if errors else "ok", "seconds": time.perf_counter() - t0,
            "error": errors[0].get("message", "") if errors else "",
            "findings": sorted({(f["rule_id"], _path(f), _line(f))
                                for f in report.get("findings", [])}),
            "shown": sorted({(p, line) for p, line, _ in shown}),
            "notes": [[_path(d), _line(d)] for d in diagnostics if d.get("severity") == "note"]}


def _path(f: dict) -> str:
    return os.path.normpath(f.get("path", ""))


def _line(f: dict) -> int:
    return int(f.get("line", 0))


MISSING = re.compile(r"nvcc: (?:.*?: )?([^\s:]+): No such file or directory|cannot open source file \"([^\"]+)\"")
TOOLKIT_LIBRARIES = re.compile(r"^(?:cublas|cublasLt|cusparse|cusolver|curand|cufft|cudnn|nvrtc|nvjpeg|npp)\w*\.h$")


def nvcc_reason(message: str, tree: str | None = None) -> str:
    for name, pattern in NVCC_REASONS:
        if pattern.search(message):
            return name + (_missing_kind(message, tree) if name == "missing header" else "")
    return "other"


def _missing_kind(message: str, tree: str | None) -> str:
    """Whose header is missing: the build generates it (a `.in` template in the tree), a CUDA
    library this machine lacks, or another project (a dependency)."""
    m = MISSING.search(message)
    if m is None:
        return ""
    name = os.path.basename(m.group(1) or m.group(2))
    if TOOLKIT_LIBRARIES.match(name):
        return ": a CUDA library not installed here"
    if tree and any(n.startswith(name) and n.endswith(".in") for n in _HEADERS.get(tree, {})):
        return ": generated by the build (a .in template)"
    return ": another project's (a dependency)"


# --- one file, cached ------------------------------------------------------------------------------

def wrapper(tree: str, rel: str) -> str:
    """What nvcc compiles for `rel`: the file itself, or for a header a `.cu` next to it that
    includes it (nvcc takes no header as a translation unit)."""
    if rel.endswith(".cu"):
        return rel
    cu = rel + ".wldiff.cu"
    with open(os.path.join(tree, cu), "w") as f:
        f.write(f'#include "{os.path.basename(rel)}"\n')
    return cu


def file_key(repo_dir: str, rel: str, commit: str, a, includes: list[str]) -> str:
    h = hashlib.sha256()
    with open(os.path.join(repo_dir, rel), "rb") as f:
        h.update(f.read())
    h.update("\0".join([rel, commit, a.target, a.tree, TREE_VERSION if a.trees_from else "", *includes]).encode())
    return h.hexdigest()[:24]


def lint_both(repo_dir: str, rel: str, commit: str, a) -> dict:
    includes = include_dirs(repo_dir, rel) if a.trees_from else []
    key = file_key(repo_dir, rel, commit, a, includes)
    cache = os.path.join(a.out, "differential", key + ".json")
    if os.path.exists(cache):
        with open(cache) as f:
            return json.load(f)
    via = run_route(repo_dir, wrapper(repo_dir, rel), a.target, True, a.nvcc_timeout, a.warplint_root, includes)
    result = {"path": rel, "includes": includes, "via": via}
    if via["status"] == "ok":
        result["direct"] = run_route(repo_dir, rel, a.target, False, a.nvcc_timeout, a.warplint_root, includes)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache, "w") as f:
        json.dump(result, f)
    return result


# --- full source trees ----------------------------------------------------------------------------

SOURCE_GLOBS = ["*.cu", "*.cuh", "*.h", "*.hh", "*.hpp", "*.hxx", "*.inl", "*.inc", "*.ipp", "*.tcc", "*.def",
                "*.cpp", "*.cc", "*.c", "*.in"]  # `.in`: templates of headers the build generates
TREE_VERSION = " 4"  # what an extraction holds: sources, headers, extensionless files (`cuco/detail/__config`),
#                       headers generated from their `.in` templates (configure)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def full_tree(mirrors: str, repo: str, commit: str, out: str) -> str:
    """The repository's headers and sources at `commit`, extracted once from its bare mirror."""
    tree = os.path.abspath(os.path.join(out, "differential", "trees", repo))
    done = os.path.join(tree, ".git", "extracted")
    if os.path.exists(done) and open(done).read() == commit + TREE_VERSION:
        return tree
    os.makedirs(os.path.join(tree, ".git"), exist_ok=True)  # the tree is the linted tree
    git = ["git", "--git-dir", os.path.join(mirrors, repo, "repo")]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    blobs = []  # (object, path) of the headers and sources; a blob the mirror lacks is skipped
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        fields, name = meta.split(), path.decode("utf-8", "replace")
        if len(fields) == 3 and fields[1] == b"blob" and (any(fnmatch.fnmatch(name, g) for g in SOURCE_GLOBS)
                                                          or "." not in os.path.basename(name)):
            blobs.append((fields[2].decode(), name))
    cat = subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    cat.stdin.write("".join(f"{obj}\n" for obj, _ in blobs).encode())
    cat.stdin.close()
    for obj, name in blobs:
        header = cat.stdout.readline().split()
        if len(header) < 3:  # "<obj> missing"
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        dest = os.path.join(tree, name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
    cat.wait()
    configure(tree)
    with open(done, "w") as f:
        f.write(commit + TREE_VERSION)
    return tree


CMAKEDEFINE = re.compile(r"^(\s*)#\s*cmakedefine01\s+(\w+).*$|^(\s*)#\s*cmakedefine\s+(\w+).*$", re.M)
CONFIG_VAR = re.compile(r"@[A-Za-z_][\w:]*@|\$\{[A-Za-z_][\w:]*\}")
HEADER_EXT = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl")


def configure(tree: str) -> None:
    """The headers the build generates from a `.in` template (`magma_config.h.in`, `nccl.h.in`),
    at the plainest configuration: every `#cmakedefine` undefined (`#cmakedefine01`: 0) and every
    `@VAR@` / `${VAR}` 0.  A header that exists is left alone."""
    for dirpath, _, names in os.walk(tree):
        for n in names:
            out = os.path.join(dirpath, n[:-3])
            if not (n.endswith(".in") and out.endswith(HEADER_EXT)) or os.path.exists(out):
                continue
            with open(os.path.join(dirpath, n), encoding="utf-8", errors="replace") as f:
                text = f.read()
            text = CMAKEDEFINE.sub(lambda m: f"{m[1]}#define {m[2]} 0" if m[2] else f"{m[3]}/* #undef {m[4]} */", text)
            with open(out, "w", encoding="utf-8") as f:
                f.write(CONFIG_VAR.sub("0", text))


_HEADERS: dict[str, dict[str, list[str]]] = {}


def include_dirs(tree: str, rel: str, max_files: int = 400) -> list[str]:
    """The tree's directories that the `#include`s reachable from `rel` need as `-I`: for an
    include not found next to its includer or in a directory already chosen, the directory
    that holds it by path suffix (the shortest such path, so `include/` over a copy in tests)."""
    if tree not in _HEADERS:
        index: dict[str, list[str]] = collections.defaultdict(list)
        for dirpath, _, names in os.walk(tree):
            for n in names:
                index[n].append(os.path.relpath(os.path.join(dirpath, n), tree))
        _HEADERS[tree] = index
    index = _HEADERS[tree]
    dirs: list[str] = []
    seen, todo = set(), [rel]
    while todo and len(seen) < max_files:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        try:
            with open(os.path.join(tree, cur), encoding="utf-8", errors="replace") as f:
                names = INCLUDE.findall(f.read())
        except OSError:
            continue
        for name in names:
            found = _resolve(tree, cur, name, dirs, index)
            if found is not None:
                todo.append(found)
    return [os.path.join(tree, d) for d in dirs]


def _resolve(tree: str, includer: str, name: str, dirs: list[str], index) -> str | None:
    for base in [os.path.dirname(includer), *dirs]:
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(tree, cand)):
            return cand
    hits = sorted((p for p in index.get(os.path.basename(name), ()) if p.endswith(os.sep + name) or p == name),
                  key=len)
    if not hits:
        return None  # a system or third-party header
    root = hits[0][:len(hits[0]) - len(name)].rstrip(os.sep) or "."
    dirs.append(root)
    return hits[0]


# --- comparing -------------------------------------------------------------------------------------

_SCANS: dict[str, list] = {}


def enclosing_function(repo_dir: str, path: str, line: int):
    """(start, end) lines of the function definition around `path:line` (textual scan), or None."""
    if path not in _SCANS:
        try:
            with open(os.path.join(repo_dir, path), encoding="utf-8", errors="replace") as f:
                _SCANS[path] = scan_functions(f.read())
        except OSError:
            _SCANS[path] = []
    for fn in _SCANS[path]:
        if fn.start <= line <= fn.end:
            return fn.start, fn.end
    return None


def classify_finding(repo_dir: str, finding, only: str, result: dict) -> str:
    """Why one route reports `finding` (rule, path, line) and the other does not."""
    rule, path, line = finding
    other = result["direct" if only == "via" else "via"]
    span = enclosing_function(repo_dir, path, line) or (line, line)
    analysed = any(p == path and span[0] <= ln <= span[1] for p, ln in other["shown"])
    if analysed:
        return f"both analysed: {rule} only {only}"
    if only == "via":
        return f"not analysed directly: {rule} only via"
    return f"no code from nvcc: {rule} only direct"


def compare(repo_dir: str, result: dict) -> dict:
    direct = {tuple(f) for f in result["direct"].get("findings", [])}
    via = {tuple(f) for f in result["via"].get("findings", [])}
    classes = collections.Counter()
    detail = []
    for only, found in (("direct", direct - via), ("via", via - direct)):
        for f in sorted(found):
            c = classify_finding(repo_dir, f, only, result)
            classes[c] += 1
            detail.append([c, *f])
    fns, fns_agree = compiled_functions(repo_dir, result, direct, via)
    return {"both": len(direct & via), "direct_only": len(direct - via), "via_only": len(via - direct),
            "agree": direct == via, "classes": classes, "detail": detail, "fns": fns, "fns_agree": fns_agree}


def compiled_functions(repo_dir: str, result: dict, direct: set, via: set) -> tuple[int, int]:
    """Functions of the linted file with warp primitives that nvcc compiled (a --show-masks entry
    of the via route in them), and how many of those have the same findings in both routes."""
    path = os.path.normpath(result["path"])
    enclosing_function(repo_dir, path, 0)  # scan the file
    shown = {ln for p, ln in result["via"]["shown"] if p == path}
    n = agree = 0
    for fn in _SCANS.get(path, []):
        if not fn.primitives or not any(fn.start <= ln <= fn.end for ln in shown):
            continue
        n += 1
        inside = lambda found: {f for f in found if f[1] == path and fn.start <= f[2] <= fn.end}  # noqa: E731
        agree += inside(direct) == inside(via)
    return n, agree


# --- the run ---------------------------------------------------------------------------------------

def candidates(corpus: str, repos: list[str], headers: bool) -> dict[str, list[str]]:
    out = {}
    for repo in repos:
        repo_dir = os.path.join(corpus, repo)
        files = []
        for rel in list_files(repo_dir):
            if not (rel.endswith(".cu") or headers):
                continue
            with open(os.path.join(repo_dir, rel), encoding="utf-8", errors="replace") as f:
                if file_has_primitives(f.read()):
                    files.append(rel)
        out[repo] = files
    return out


def sample(by_repo: dict[str, list[str]], limit: int, seed: int) -> list[tuple[str, str]]:
    """`limit` files, round-robin over the repositories, each one's files in a seeded order."""
    rng = random.Random(seed)
    queues = {r: rng.sample(fs, len(fs)) for r, fs in sorted(by_repo.items())}
    picked = []
    while any(queues.values()) and (not limit or len(picked) < limit):
        for repo, q in queues.items():
            if q and (not limit or len(picked) < limit):
                picked.append((repo, q.pop(0)))
    return picked


def _commit(repo_dir: str) -> str:
    marker = os.path.join(repo_dir, ".commit")
    return open(marker).read().strip() if os.path.exists(marker) else ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus")
    p.add_argument("--target", default="sm_80", help="the one target of both routes (nvcc here: sm_75+)")
    p.add_argument("--limit", type=int, default=120, help="files to try (0: every candidate)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--repo", action="append", default=[], help="only this corpus folder (owner+name)")
    p.add_argument("--jobs", "-j", type=int, default=1)
    p.add_argument("--nvcc-timeout", type=float, default=240.0, help="seconds per nvcc compilation")
    p.add_argument("--trees-from", metavar="MIRRORS", help="lint full source trees extracted from "
                   "MIRRORS/<owner>+<name>/repo at the corpus's commit (see the docstring)")
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--warplint-root", default=ROOT, help="the warplint tree to measure (a `git archive`)")
    a = p.parse_args(argv)
    a.tree = describe_tree(a.warplint_root)
    repos = a.repo or sorted(d for d in os.listdir(a.corpus) if os.path.isdir(os.path.join(a.corpus, d)))
    by_repo = candidates(a.corpus, repos, bool(a.trees_from))
    picked = sample(by_repo, a.limit, a.seed)
    print(f"warplint {a.tree}, target {a.target}: {len(picked)} of {sum(map(len, by_repo.values()))} "
          f"files with warp primitives", flush=True)

    commits = {r: _commit(os.path.join(a.corpus, r)) for r in repos}
    trees = {r: full_tree(a.trees_from, r, commits[r], a.out) if a.trees_from else os.path.join(a.corpus, r)
             for r in {repo for repo, _ in picked}}

    def one(item):
        repo, rel = item
        r = lint_both(trees[repo], rel, commits[repo], a)
        print(f"  {repo}/{rel}: {r['via']['status']}" + (f" ({nvcc_reason(r['via'].get('error', ''))})"
                                                          if r['via']['status'] == 'error' else ""), flush=True)
        return repo, r

    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(one, picked))
    a.trees = trees
    report(results, a)
    return 0


def report(results, a) -> None:
    rows = collections.OrderedDict()
    classes = collections.Counter()
    failures = collections.Counter()
    failed_files = []
    files_out = []
    for repo, r in results:
        row = rows.setdefault(repo, collections.Counter())
        row["tried"] += 1
        via = r["via"]
        if via["status"] != "ok" or r.get("direct", {}).get("status") != "ok":
            why = nvcc_reason(via.get("error", ""), a.trees.get(repo)) if via["status"] == "error" else via["status"]
            if via["status"] == "ok":
                why = "direct route " + r["direct"]["status"]
            failures[why] += 1
            failed_files.append((repo, r["path"], why, via.get("error", "")[:110]))
            files_out.append({"repo": repo, **r, "compiled": False, "reason": why})
            continue
        c = compare(a.trees[repo], r)
        row["compiled"] += 1
        row["agree"] += c["agree"]
        for k in ("both", "direct_only", "via_only", "fns", "fns_agree"):
            row[k] += c[k]
        classes.update(c["classes"])
        files_out.append({"repo": repo, **r, "compiled": True, **{k: v for k, v in c.items() if k != "classes"}})
    print(f"\n{'repository':34} {'tried':>5} {'compiled':>8} {'agree':>5} {'fns':>4} {'agree':>5} "
          f"{'both':>5} {'direct':>6} {'via':>4}")
    total = collections.Counter()
    for repo, row in list(rows.items()) + [("total", None)]:
        if row is None:
            row = total
        else:
            total.update(row)
        print(f"{repo:34} {row['tried']:5} {row['compiled']:8} {row['agree']:5} {row['fns']:4} {row['fns_agree']:5} "
              f"{row['both']:5} {row['direct_only']:6} {row['via_only']:4}")
    print("(files: tried, compiled by nvcc alone, same findings; functions with warp primitives nvcc "
          "compiled, same findings; findings in both routes, direct only, via only)")
    union = total["both"] + total["direct_only"] + total["via_only"]
    if total["compiled"]:
        if total["fns"]:
            print(f"\nfunctions nvcc compiled: {total['fns_agree']} of {total['fns']} "
                  f"({100 * total['fns_agree'] / total['fns']:.1f}%) have the same findings in both routes")
        print(f"agreement: {total['agree']} of {total['compiled']} compiled files "
              f"({100 * total['agree'] / total['compiled']:.1f}%) give the same findings (rule, file, line); "
              f"findings: {total['both']} of {union} in both routes"
              + (f" ({100 * total['both'] / union:.1f}%)" if union else ""))
    print("\ndisagreement classes (findings):")
    for c, n in classes.most_common():
        print(f"  {n:4}  {c}")
    print("\nnot compilable alone (files):")
    for c, n in failures.most_common():
        print(f"  {n:4}  {c}")
    for repo, path, why, msg in failed_files:
        print(f"        {repo}/{path}: {why}: {msg}")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "differential.json"), "w") as f:
        json.dump({"warplint": a.tree, "target": a.target, "rows": rows, "total": total,
                   "classes": classes, "not_compiled": failures, "files": files_out}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
