"""Real-world sweep: coverage and precision of warplint on a corpus of public CUDA code.

    python bench/realworld.py CORPUS_DIR [--jobs 2] [--timeout 60] [--triage bench/triage.tsv]
                              [--out bench/out] [--repo NAME ...] [--sample-triage N --seed S]

CORPUS_DIR holds one folder per repository (bench/fetch_corpus.py writes them to .corpus/).
Every .cu/.cuh/header file with a warp primitive is linted on its own, in a fresh process
(`python -m warplint --show-masks --format json --no-cache --no-gitignore -j 1 FILE`, run from
the repository folder, default options, a time limit per file), and the results are matched
against this script's own scan of the source:

- **function with warp primitives** (see `scan_functions`): a function definition (a `{` body at
  namespace or class scope whose header ends in a parameter list, optionally followed by
  qualifiers, a trailing return type or a constructor's initialiser list) whose body, comments
  and preprocessor lines removed, calls a warp vote, shuffle, match, reduce, `__activemask`,
  `__syncwarp`, a `__syncthreads*` barrier, a cooperative-groups tile/collective (method calls such
  as `.shfl_down(` / `.sync()` only in files that mention cooperative groups), or holds inline
  PTX (`asm(...)`) with shfl/vote/bar/barrier/redux/match/activemask. Calls through macros
  defined elsewhere are not seen (textual scan).
- **fully analysed**: every primitive call of the function appears (same file and line) in the
  `--show-masks` output; for inline PTX, any line of the asm statement; a group creation
  (`tiled_partition`, `coalesced_threads`, ...) is no instruction and counts when --show-masks
  lists the function itself (by name). Calls that warplint's own
  preprocessor removes under both default targets (sm_60, sm_70; `#if CUDA_VERSION < 9000`, HIP
  branches) need not appear, and functions with no other calls are not counted at all;
- **noted**: not fully analysed, but a note/diagnostic of the run lies within the function's lines
  or names it ('name');
- **file error**: not fully analysed and the whole file failed with an error diagnostic (e.g. a
  header read as PTX) -- loud, but names no function;
- **silent loss**: none of the above.

Findings are deduplicated per (file, line, rule) over targets (definite if any target's is), and
matched against the triage file (tab-separated: repo, path, line, rule, verdict TP/FP/unclear,
fp_class, reason). Results go to OUT/realworld.json; the table goes to stdout.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FILE_EXT = (".cu", ".cuh", ".h", ".hpp", ".hxx", ".inl", ".inc")

# --- what counts as a warp primitive -------------------------------------------------------------

PRIMITIVE = re.compile(
    r"\b(?:__shfl(?:_up|_down|_xor)?(?:_sync)?|__(?:ballot|all|any|uni)(?:_sync)?"
    r"|__match_(?:any|all)_sync|__reduce_(?:add|min|max|and|or|xor)_sync|__activemask|__syncwarp"
    r"|__syncthreads(?:_count|_and|_or)?|__barrier_sync"
    r"|coalesced_threads|tiled_partition|labeled_partition|binary_partition"
    r"|(?:cg|cooperative_groups)::(?:reduce|inclusive_scan|exclusive_scan|sync))\s*[(<]")
CG_METHOD = re.compile(r"\.\s*(?:shfl(?:_up|_down|_xor)?|ballot|any|all|match_any|match_all|sync)\s*\(")
CG_FILE = re.compile(r"cooperative_groups|\bcg::|thread_block_tile|thread_group|coalesced_group")
ASM = re.compile(r"\b(?:asm|__asm__)\s*(?:volatile|__volatile__)?\s*\(")
PTX_PRIMITIVE = re.compile(r"\b(?:shfl\.|vote\.|bar\.|barrier\.|redux\.sync|match\.(?:any|all)|activemask)")

KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype", "alignas",
            "__launch_bounds__", "__attribute__", "__align__", "__declspec", "static_assert", "noexcept",
            "defined", "__builtin_expect", "do", "else", "throw", "new", "delete"}
TRAILER = re.compile(r"\s*(?:(?:const|volatile|noexcept|override|final|mutable|&&|&|throw\s*\(\s*\))\s*)*"
                     r"(?:->[^;{}]*|:(?!:)[^;{}]*)?\s*$", re.S)


@dataclass
class Primitive:
    line: int
    end_line: int
    text: str
    active: bool = True  # survives warplint's preprocessing for some default target


@dataclass
class Function:
    name: str
    line: int        # line of the name
    start: int       # first line of the header
    end: int         # line of the closing brace
    primitives: list = field(default_factory=list)
    status: str = ""           # full / noted / file-error / silent
    shown: int = 0             # primitives found in --show-masks
    notes: list = field(default_factory=list)
    construct: str = ""        # what blocks analysis (noted / file-error / silent), see blocking_construct


def blank_comments_and_directives(text: str) -> str:
    """Comments and preprocessor lines replaced by spaces (newlines kept); strings kept."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            j = i
            while j < n:  # the directive with its continuation lines
                k = text.find("\n", j)
                k = n if k < 0 else k
                if _directive_continues(text, j, k):
                    j = k + 1
                    continue
                j = k
                break
            _blank(out, i, j)
            i = j
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            _blank(out, i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            _blank(out, i, j)
            i = j
        elif c == '"' or c == "'":
            j = _skip_literal(text, i)
            i = j
        else:
            i += 1
    return "".join(out)


def _directive_continues(text, j, k) -> bool:
    body = text[j:k]
    # a block comment or line continuation carries the directive on
    return body.rstrip("\r").endswith("\\")


def _skip_literal(text, i) -> int:
    q = text[i]
    j = i + 1
    while j < len(text) and text[j] != q and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _blank(out, a, b):
    for k in range(a, b):
        if out[k] != "\n":
            out[k] = " "


def strip_strings(text: str) -> str:
    """String and character literals blanked (for brace matching)."""
    out = list(text)
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):  # 1'000 digit separators
            j = _skip_literal(text, i)
            _blank(out, i + 1, min(j - 1, len(text)))
            i = j
        else:
            i += 1
    return "".join(out)


def find_primitives(code: str, clean: str, base: int, cg_file: bool, line_of) -> list[Primitive]:
    """Primitive calls in code[base:...] (code: comments gone; clean: strings gone too)."""
    found = []
    for m in PRIMITIVE.finditer(clean):
        found.append(Primitive(line_of(base + m.start()), line_of(base + m.start()), m.group(0).rstrip("(< \t")))
    if cg_file:
        for m in CG_METHOD.finditer(clean):
            found.append(Primitive(line_of(base + m.start()), line_of(base + m.start()),
                                   re.sub(r"\s", "", m.group(0)).rstrip("(")))
    for m in ASM.finditer(clean):
        close = _match(clean, m.end() - 1, "(", ")")
        body = code[m.end():close]
        if PTX_PRIMITIVE.search(body):
            found.append(Primitive(line_of(base + m.start()), line_of(base + close), "asm"))
    return sorted(found, key=lambda p: p.line)


def _match(s: str, i: int, o: str, c: str) -> int:
    depth = 0
    for k in range(i, len(s)):
        if s[k] == o:
            depth += 1
        elif s[k] == c:
            depth -= 1
            if depth == 0:
                return k
    return len(s) - 1


def function_name(header: str) -> tuple[str, int] | None:
    """(name, offset of the name in header) when header ends in a function declarator."""
    for m in re.finditer(r"(operator\s*(?:\(\s*\)|\[\s*\]|[^\s(]+)|~?[A-Za-z_]\w*)\s*\(", header):
        name = re.sub(r"\s", "", m.group(1))
        if name in KEYWORDS:
            continue
        close = _match(header, m.end() - 1, "(", ")")
        if close >= len(header) - 1 and header[close:close + 1] != ")":
            return None
        if TRAILER.fullmatch(header[close + 1:]):
            return name, m.start()
    return None


def scan_functions(text: str) -> list[Function]:
    """Function definitions at namespace/class scope, with the primitives their bodies call."""
    code = blank_comments_and_directives(text)
    clean = strip_strings(code)
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(off: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    cg_file = bool(CG_FILE.search(clean))
    functions = []
    seg_start = 0
    i, n = 0, len(clean)
    while i < n:
        c = clean[i]
        if c in ";}":
            seg_start = i + 1
        elif c == "{":
            header = clean[seg_start:i]
            named = function_name(header) if "(" in header and "=" not in _outside_parens(header) else None
            if named is None:  # namespace, class, extern "C", initialiser: look inside
                seg_start = i + 1
            else:
                end = _match(clean, i, "{", "}")
                name, off = named
                lead = len(header) - len(header.lstrip())
                fn = Function(name, line_of(seg_start + off), line_of(seg_start + lead), line_of(end))
                fn.primitives = find_primitives(code[i:end + 1], clean[i:end + 1], i, cg_file, line_of)
                functions.append(fn)
                i = end
                seg_start = end + 1
        i += 1
    return functions


def active_lines(text: str, path: str) -> set[int] | None:
    """Lines of `path` that survive warplint's own preprocessor under the default targets
    (sm_60, sm_70; the defines its CUDA front end sets), or None when that cannot be computed.
    Primitives on other lines (`#if CUDA_VERSION < 9000`, HIP branches) are not required."""
    try:
        from warplint.pipeline import linted_tree
        from warplint.frontends.cuda.preprocess import preprocess
    except ImportError:
        return None
    try:
        from warplint.frontends.cuda.preprocess import cuda_defines
    except ImportError:  # older trees: the same macros written out
        def cuda_defines(arch):
            return {"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": str(arch), "CUDART_VERSION": "13000",
                    "CUDA_VERSION": "13000", "__CUDACC_VER_MAJOR__": "13", "__CUDACC_VER_MINOR__": "0",
                    "__CUDACC_VER_BUILD__": "0", "__cplusplus": "201703L", "__CUDA_ARCH_LIST__": str(arch)}
    lines: set[int] = set()
    for arch in (600, 700):
        defines = cuda_defines(arch)
        try:
            toks, _ = preprocess(text, path, defines, [], linted_tree(path))
        except Exception:  # noqa: BLE001 -- any failure: count every line
            return None
        lines.update(t.line for t in toks if t.path == path)
    return lines


def _outside_parens(s: str) -> str:
    out, depth = [], 0
    for ch in s:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace("==", "").replace("<=", "").replace(">=", "").replace("!=", "")


def file_has_primitives(text: str) -> bool:
    return bool(PRIMITIVE.search(text) or (ASM.search(text) and PTX_PRIMITIVE.search(text)))


# --- running warplint ------------------------------------------------------------------------------

MASK_ENTRY = re.compile(r"^  (\S.*?):(\d+):(\d+): (\S+)$")
MASK_FUNCTION = re.compile(r"^(?:kernel|function) (.+):$")
# creating a group is no instruction: satisfied when the function itself was analysed
TILE_CREATION = {"tiled_partition", "coalesced_threads", "labeled_partition", "binary_partition"}


def child_env(root: str, pycache: str) -> dict:
    """The environment of each warplint run: the measured tree first on the path, and bytecode
    kept under `pycache` as an installed package has it (PYTHONDONTWRITEBYTECODE=1, which some
    images set, would make every run compile warplint's modules again: ~0.1-0.2 s a file)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = root + os.pathsep + os.environ.get("PYTHONPATH", "")
    env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def warm_bytecode(env: dict) -> None:
    """Compile what a run imports once, before the timed runs (a tiny file of our own)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "warm.cu")
        with open(path, "w") as f:
            f.write("__global__ void k(int *p) { p[threadIdx.x] = __shfl_sync(0xffffffff, 1, 0); }\n")
        subprocess.run([sys.executable, "-m", "warplint", "--no-cache", "--format", "json", path],
                       capture_output=True, env=env, timeout=300)


def run_warplint(repo_dir: str, rel: str, timeout: float, env: dict) -> dict:
    cmd = [sys.executable, "-m", "warplint", "--show-masks", "--format", "json", "--no-cache",
           "--no-gitignore", "-j", "1", rel]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": time.perf_counter() - t0, "shown": [], "analysed": [],
                "findings": [], "diagnostics": [], "mask_notes": [], "coverage": None}
    seconds = time.perf_counter() - t0
    out = p.stdout
    k = out.find('{\n  "version"')
    masks, doc = (out[:k], out[k:]) if k >= 0 else (out, "")
    try:
        report = json.loads(doc) if doc else {}
    except json.JSONDecodeError:
        report = {}
    status = "ok"
    if not report:
        status = "crash"
    diagnostics = report.get("diagnostics", [])
    if any("internal error" in d.get("message", "") for d in diagnostics):
        status = "crash"
    elif any(d.get("severity") == "error" for d in diagnostics):
        status = "error"
    shown, analysed, mask_notes = [], set(), []
    for text in [masks] + mask_texts(report.get("masks")):
        parse_masks_text(text, shown, analysed, mask_notes)
    return {"status": status, "seconds": seconds, "returncode": p.returncode, "shown": shown,
            "analysed": sorted(analysed), "findings": report.get("findings", []), "diagnostics": diagnostics,
            "mask_notes": mask_notes, "stderr_tail": p.stderr[-2000:] if status == "crash" else "",
            "coverage": report.get("coverage")}  # warplint's own count (issue 13), None in older builds


def mask_texts(masks) -> list[str]:
    """--show-masks in the JSON document ("masks": {path: text}); text before it in older builds."""
    if isinstance(masks, dict):
        return [v for v in masks.values() if isinstance(v, str)]
    if isinstance(masks, str):
        return [masks]
    return []


def parse_masks_text(text: str, shown: list, analysed: set, notes: list) -> None:
    for line in text.splitlines():
        m = MASK_ENTRY.match(line)
        h = MASK_FUNCTION.match(line)
        if h:
            analysed.add(re.sub(r"<.*", "", h.group(1)).split("::")[-1])
        elif m:
            shown.append([os.path.normpath(m.group(1)), int(m.group(2)), m.group(4)])
        elif line.startswith("  note: "):
            notes.append(line[8:])


# --- classification --------------------------------------------------------------------------------

def classify(functions: list[Function], rel: str, result: dict, lines: list[str] | None = None) -> None:
    shown = {(p, line) for p, line, _ in result["shown"]}
    diags = [d for d in result["diagnostics"] if os.path.normpath(d.get("path", "")) == rel]
    file_failed = result["status"] in ("error", "crash", "timeout")
    for fn in functions:
        own = result.get("coverage") or {}
        runs = fn.name in result["analysed"] or any((rel, ln) in shown for ln in range(fn.line, fn.end + 1)) \
            or bool(own.get("functions") and not own.get("not_analysed"))  # inlined: warplint's own count says so
        seen = [any((rel, ln) in shown for ln in range(p.line, p.end_line + 1))
                or (p.text.split("::")[-1] in TILE_CREATION and runs)
                for p in fn.primitives]
        fn.shown = sum(seen)
        if all(s for s, p in zip(seen, fn.primitives) if p.active):
            fn.status = "full"
            continue
        fn.notes = [d["message"] for d in diags if d.get("severity") != "error" and (
            fn.start <= d.get("line", 0) <= fn.end or f"'{fn.name}'" in d.get("message", ""))]
        if fn.notes:
            fn.status = "noted"
        elif file_failed:
            fn.status = "file-error"
            fn.notes = [f"{d.get('line')}: {d['message']}" for d in diags if d.get("severity") == "error"][:1] \
                or [result["status"]]
        else:
            fn.status = "silent"
        fn.construct = blocking_construct(fn, lines or [], result["analysed"])


KNOWN_QUALIFIERS = {"__global__", "__device__", "__host__", "__forceinline__", "__noinline__", "inline", "static",
                    "extern", "template", "typename", "class", "const", "constexpr", "void", "int", "unsigned",
                    "float", "double", "bool", "auto", "__inline__", "__launch_bounds__", "struct"}


def blocking_construct(fn: Function, lines: list[str], analysed: list[str]) -> str:
    """The construct that keeps a not-fully-analysed function out of --show-masks, named after the
    classes of issue 13: from its note (and the source line the note names), else guessed for
    silent losses from the function's header and the primitives that are missing."""
    if fn.status == "full":
        return ""
    note = fn.notes[0] if fn.notes else ""
    if fn.status == "file-error":
        return "header/other extension read as PTX (file error)" if "'#'" in note or "directive" in note \
            else "file error: " + normalise_note(note)[:60]
    if fn.status == "noted":
        return construct_from_note(note, lines)
    header = " ".join(lines[fn.start - 1:fn.line]) if lines else ""
    pre = header.split(fn.name + "(")[0] if fn.name + "(" in header else header
    words = re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"<[^<>]*>", " ", pre))
    if any(w.isupper() and len(w) > 2 and w not in KNOWN_QUALIFIERS for w in words) and fn.name not in analysed:
        return "function qualifier macro from an unread header (silently dropped)"
    if fn.name not in analysed:
        return "function neither analysed nor noted (template/helper with no caller in the file?)"
    missing = {p.text for p in fn.primitives if p.active}
    if any(t.startswith(".") for t in missing):
        return "cooperative-groups member call (.shfl/.sync/...) not lowered"
    if "asm" in missing:
        return "inline PTX not shown"
    return "primitive call not shown: " + ", ".join(sorted(missing))[:60]


def construct_from_note(note: str, lines: list[str]) -> str:
    if "is defined nowhere warplint read" in note:
        return "qualifier macro from an unread header, guessed (noted)"
    if "is not in the analysis" in note:
        return "primitive not in the analysis (coverage note: host code, unread construct)"
    if "member functions" in note:
        return "class/struct member function (incl. operator(), constructors)"
    if "inlining depth" in note:
        return "helper past the inlining depth"
    m = re.search(r"cannot parse (?:'([^']*)' at )?line (\d+)", note)
    if not m:
        return "note: " + normalise_note(note)[:70]
    tok, line = m.group(1) or "", int(m.group(2))
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    checks = [
        (tok in ("and", "or", "not"), "alternative operator tokens (and/or/not)"),
        (re.search(r"\bstatic_assert\b", src), "static_assert"),
        (re.search(r"\busing\b", src), "using alias / using-declaration"),
        (re.search(r"\btypedef\b", src), "typedef of a template or qualified type"),
        (re.search(r"template\s*<\s*>", src), "explicit specialisation template<>"),
        (re.search(r"\[[&=]?[\w, &]*\]\s*\(", src), "lambda"),
        (re.search(r"\bfor\s*\([^;]*[^:]:[^:]", src), "range-for"),
        (re.search(r"\bauto\s*&?\s*\[", src), "structured binding"),
        (re.search(r"__int128", src), "__int128"),
        (tok == "." or re.search(r"\.\s*(shfl|sync|ballot|any|all|thread_rank|meta_group_rank)\w*\s*\(", src),
         "member call on an object (cooperative-groups group, struct method)"),
        (re.search(r"\w+\s*<[^;()]*>\s*::\s*\w+\s*\(", src), "static member of a class template (X<T>::f())"),
        (re.search(r"\w+::\w+\s*<", src), "qualified template-id (ns::X<...>)"),
        (re.search(r"\w\s*\{[^}]*\}|=\s*\{", src) or tok == "{", "brace initialisation"),
        (re.search(r"\w\s*&\s*\w+\s*[=;(]", src) or tok == "&", "reference local or parameter (T&)"),
        (re.search(r"\b(cg|cooperative_groups)::", src), "cooperative-groups API (cg::...)"),
        (tok == "[", "[ in declaration (lambda, attribute, array reference)"),
        (tok == "(", "direct initialisation / functional cast T(x)"),
        (bool(re.fullmatch(r"[A-Za-z_]\w*", tok)) and re.search(r"\b" + re.escape(tok) + r"\s*\(", src),
         "functional cast or call of an unknown type/template T(x)"),
        (bool(re.fullmatch(r"[A-Za-z_]\w*", tok)), "unknown type name (template parameter or type from an unread header)"),
    ]
    for hit, name in checks:
        if hit:
            return name
    return f"syntax not parsed ('{tok}')"


def finding_key(f: dict) -> tuple[str, int, str]:
    return os.path.normpath(f["path"]), int(f["line"]), f["rule_id"]


def dedupe_findings(findings: list[dict]) -> dict:
    """(path, line, rule) -> {certainty, message, function, targets}; definite wins over possible."""
    out = {}
    for f in findings:
        if f.get("suppressed"):
            continue
        k = finding_key(f)
        cur = out.get(k)
        if cur is None:
            out[k] = {"certainty": f.get("certainty", "definite"), "message": f.get("message", ""),
                      "function": f.get("function"), "targets": list(f.get("targets") or [])}
        else:
            if f.get("certainty") == "definite":
                cur["certainty"] = "definite"
            cur["targets"] = sorted(set(cur["targets"]) | set(f.get("targets") or []))
    return out


def load_triage(path: str) -> dict:
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, newline="") as f:
        for row in csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t"):
            rows[(row["repo"], os.path.normpath(row["path"]), int(row["line"]), row["rule"])] = row
    return rows


# --- the sweep -------------------------------------------------------------------------------------

def list_files(repo_dir: str) -> list[str]:
    files = []
    for dirpath, dirnames, filenames in os.walk(repo_dir):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(FILE_EXT):
                files.append(os.path.relpath(os.path.join(dirpath, name), repo_dir))
    return files


def sweep_file(repo_dir: str, rel: str, timeout: float, env: dict) -> dict | None:
    with open(os.path.join(repo_dir, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    if not file_has_primitives(text):  # raw text: primitives used only through macros count too
        return None
    functions = [fn for fn in scan_functions(text) if fn.primitives]
    live = active_lines(text, os.path.join(repo_dir, rel))
    if live is not None:
        for fn in functions:
            for p in fn.primitives:
                p.active = any(ln in live for ln in range(p.line, p.end_line + 1))
        functions = [fn for fn in functions if any(p.active for p in fn.primitives)]
    result = run_warplint(repo_dir, rel, timeout, env)
    classify(functions, os.path.normpath(rel), result, text.split("\n"))
    return {"path": rel, "functions": [asdict(fn) for fn in functions], **result}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def summarise(repo: str, files: list[dict], triage: dict) -> dict:
    fns = [fn for f in files for fn in f["functions"]]
    status = collections.Counter(fn["status"] for fn in fns)
    findings = {}
    for f in files:
        findings.update(dedupe_findings(f["findings"]))
    by_rule = collections.Counter((k[2], v["certainty"]) for k, v in findings.items())
    verdicts = collections.Counter()
    untriaged = []
    for k in findings:
        row = triage.get((repo, *k))
        if row is None:
            untriaged.append(k)
        else:
            verdicts[(row["verdict"], k[2])] += 1
    current = {(repo, *k) for k in findings}
    gone = [k for k in triage if k[0] == repo and k not in current]
    times = [f["seconds"] for f in files]
    own = [f.get("coverage") or {} for f in files]
    return {
        "own_functions": sum(c.get("functions", 0) for c in own), "own_analysed": sum(c.get("analysed", 0) for c in own),
        "repo": repo, "files": len(files), "functions": len(fns), "full": status["full"],
        "noted": status["noted"], "file_error": status["file-error"], "silent": status["silent"],
        "findings": len(findings), "by_rule": {f"{r}/{c}": n for (r, c), n in sorted(by_rule.items())},
        "verdicts": {f"{v}/{r}": n for (v, r), n in sorted(verdicts.items())},
        "tp": sum(n for (v, _), n in verdicts.items() if v == "TP"),
        "fp": sum(n for (v, _), n in verdicts.items() if v == "FP"),
        "unclear": sum(n for (v, _), n in verdicts.items() if v == "unclear"),
        "untriaged": [list(k) for k in untriaged], "gone": [list(k) for k in gone],
        "crashes": [f["path"] for f in files if f["status"] in ("crash", "timeout")],
        "p50": percentile(times, 0.5), "p95": percentile(times, 0.95), "max": max(times, default=0.0),
    }


def blockers(files_by_repo: dict) -> collections.Counter:
    """(construct, status) -> number of functions with warp primitives it keeps out of the analysis."""
    c = collections.Counter()
    for files in files_by_repo.values():
        for f in files:
            for fn in f["functions"]:
                if fn["status"] != "full":
                    c[(fn.get("construct") or "?", fn["status"])] += 1
    return c


def normalise_note(msg: str) -> str:
    msg = re.sub(r"^\d+: ", "", msg)
    msg = re.sub(r"function '[^']*'", "function F", msg)
    msg = re.sub(r"at line \d+", "at line N", msg)
    return msg


def print_table(rows: list[dict], out=sys.stdout) -> None:
    head = (f"{'repository':30} {'files':>5} {'fns':>5} {'full':>5} {'cov%':>5} {'noted':>5} {'ferr':>5} "
            f"{'silent':>6} {'find':>5} {'TP':>4} {'FP':>4} {'unc':>4} {'prec':>5} {'new':>4} {'gone':>4} "
            f"{'p50s':>5} {'p95s':>5} {'maxs':>5}")
    print(head, file=out)
    for r in rows:
        cov = 100.0 * r["full"] / r["functions"] if r["functions"] else 100.0
        prec = f"{r['tp'] / (r['tp'] + r['fp']):.2f}" if r["tp"] + r["fp"] else "-"
        print(f"{r['repo'][:30]:30} {r['files']:5} {r['functions']:5} {r['full']:5} {cov:5.1f} {r['noted']:5} "
              f"{r['file_error']:5} {r['silent']:6} {r['findings']:5} {r['tp']:4} {r['fp']:4} {r['unclear']:4} "
              f"{prec:>5} {len(r['untriaged']):4} {len(r['gone']):4} {r['p50']:5.2f} {r['p95']:5.2f} "
              f"{r['max']:5.2f}", file=out)


def total_row(rows: list[dict], all_times: list[float]) -> dict:
    t = {"repo": "TOTAL"}
    for k in ("files", "functions", "full", "noted", "file_error", "silent", "findings", "tp", "fp", "unclear",
              "own_functions", "own_analysed"):
        t[k] = sum(r[k] for r in rows)
    t["untriaged"] = [u for r in rows for u in r["untriaged"]]
    t["gone"] = [g for r in rows for g in r["gone"]]
    t["p50"], t["p95"], t["max"] = percentile(all_times, 0.5), percentile(all_times, 0.95), max(all_times, default=0)
    return t


def sweep(corpus: str, repos: list[str], jobs: int, timeout: float, root: str) -> dict[str, list[dict]]:
    work = [(r, rel) for r in repos for rel in list_files(os.path.join(corpus, r))]
    files_by_repo: dict[str, list[dict]] = {r: [] for r in repos}
    with tempfile.TemporaryDirectory() as pycache, ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        env = child_env(root, pycache)
        warm_bytecode(env)
        results = list(ex.map(lambda j: sweep_file(os.path.join(corpus, j[0]), j[1], timeout, env), work))
        for (repo, _), res in zip(work, results):
            if res is not None:
                files_by_repo[repo].append(res)
    return files_by_repo


def print_triage(rows: list[dict], triage: dict, gone: set) -> None:
    """Verdicts per rule, and FP classes per rule, over the triaged findings still reported."""
    live = {k: row for k, row in triage.items() if k not in gone}
    by_rule = collections.defaultdict(collections.Counter)
    classes = collections.defaultdict(collections.Counter)
    for row in live.values():
        by_rule[row["rule"]][row["verdict"]] += 1
        if row["verdict"] == "FP":
            classes[row.get("fp_class") or "-"][row["rule"]] += 1
    print("\ntriaged findings by rule:   rule     TP   FP  unc  precision")
    for rule, c in sorted(by_rule.items()):
        prec = f"{c['TP'] / (c['TP'] + c['FP']):.2f}" if c["TP"] + c["FP"] else "-"
        print(f"                            {rule:6} {c['TP']:4} {c['FP']:4} {c['unclear']:4}  {prec}")
    if classes:
        print("false positives by issue-12 class (rules):")
        for cls, c in sorted(classes.items()):
            print(f"  {cls:6} {sum(c.values()):4}  " + ", ".join(f"{r} {n}" for r, n in sorted(c.items())))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus")
    p.add_argument("--jobs", "-j", type=int, default=2)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per file")
    p.add_argument("--triage", default=os.path.join(HERE, "triage.tsv"))
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--repo", action="append", default=[], help="only this corpus folder (owner+name)")
    p.add_argument("--sample-triage", type=int, default=0, metavar="N",
                   help="also write OUT/to_triage.tsv: N untriaged findings per repository at random")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--reuse", metavar="JSON", help="re-match a saved OUT/realworld.json against the triage "
                   "file instead of running warplint again")
    p.add_argument("--warplint-root", default=ROOT,
                   help="source tree of the warplint to measure (e.g. `git archive HEAD` unpacked; default: this one)")
    a = p.parse_args(argv)
    root = os.path.abspath(a.warplint_root)
    sys.path.insert(0, root)  # active_lines uses that tree's preprocessor

    repos = sorted(d for d in os.listdir(a.corpus) if os.path.isdir(os.path.join(a.corpus, d))
                   and (not a.repo or d in a.repo))
    triage = load_triage(a.triage)
    t0 = time.perf_counter()
    if a.reuse:
        with open(a.reuse) as f:
            saved = json.load(f)
        files_by_repo = {r: saved["files"].get(r, []) for r in repos}
        measured = saved.get("warplint", "unknown")
    else:
        files_by_repo = sweep(a.corpus, repos, a.jobs, a.timeout, root)
        measured = describe_tree(root)
    wall = time.perf_counter() - t0

    rows = [summarise(r.replace("+", "/", 1), files_by_repo[r], triage) for r in repos]
    all_times = [f["seconds"] for fs in files_by_repo.values() for f in fs]
    total = total_row(rows, all_times)
    print(f"warplint {measured} on {a.corpus}")
    print_table(rows + [total])
    cov = 100.0 * total["full"] / total["functions"] if total["functions"] else 100.0
    print(f"\ncoverage: {total['full']} of {total['functions']} functions with warp primitives fully analysed "
          f"({cov:.1f}%); {total['silent']} silent losses; wall {wall:.0f} s with {a.jobs} jobs")
    print(f"warplint's own coverage lines, added up: {total.get('own_analysed', 0)} of {total.get('own_functions', 0)} "
          "functions with warp primitives analysed (its count, on the preprocessed text of every target)")
    by_rule = collections.Counter()
    verdicts = collections.Counter()
    for r in rows:
        by_rule.update(r["by_rule"])
        verdicts.update(r["verdicts"])
    print("findings by rule/certainty: " + ", ".join(f"{k} {n}" for k, n in sorted(by_rule.items())))
    print("triage by verdict/rule:     " + ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items())))
    if total["tp"] + total["fp"]:
        print(f"precision: {total['tp'] / (total['tp'] + total['fp']):.3f} "
              f"(TP {total['tp']}, FP {total['fp']}, unclear {total['unclear']}; "
              f"{len(total['untriaged'])} untriaged, {len(total['gone'])} triaged findings gone)")
    print_triage(rows, triage, {tuple(g) for r in rows for g in r["gone"]})
    print("\nnot fully analysed, by blocking construct (functions with warp primitives; noted/file-error/silent):")
    table = collections.defaultdict(collections.Counter)
    for (construct, status), n in blockers(files_by_repo).items():
        table[construct][status] += n
    for construct, c in sorted(table.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"  {sum(c.values()):4}  ({c['noted']:3} / {c['file-error']:3} / {c['silent']:3})  {construct}")
    crashes = [(r["repo"], c) for r in rows for c in r["crashes"]]
    if crashes:
        print("\ncrashes / timeouts: " + ", ".join(f"{r}:{c}" for r, c in crashes))
    silent = [(r, f["path"], fn["name"], fn["line"]) for r, fs in files_by_repo.items() for f in fs
              for fn in f["functions"] if fn["status"] == "silent"]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "realworld.json"), "w") as f:
        json.dump({"warplint": measured, "rows": rows, "total": total, "files": files_by_repo,
                   "silent": silent}, f, indent=1)
    if a.sample_triage:
        write_sample(rows, a.sample_triage, a.seed, os.path.join(a.out, "to_triage.tsv"), files_by_repo)
    return 1 if total["silent"] else 0


def describe_tree(root: str) -> str:
    """The commit of the measured tree (a .commit file from `git archive`, or git), '+dirty' if edited."""
    marker = os.path.join(root, ".commit")
    if os.path.exists(marker):
        return open(marker).read().strip()
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "warplint"],
                               capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def write_sample(rows, n, seed, path, files_by_repo) -> None:
    """N untriaged findings per repository at random (seeded), for hand triage."""
    rng = random.Random(seed)
    msgs = {}
    for repo, fs in files_by_repo.items():
        for f in fs:
            for k, v in dedupe_findings(f["findings"]).items():
                msgs[(repo.replace("+", "/", 1), *k)] = v
    with open(path, "w") as out:
        out.write("repo\tpath\tline\trule\tcertainty\tfunction\tmessage\n")
        for r in rows:
            pick = sorted(r["untriaged"])
            pick = sorted(rng.sample(pick, min(n, len(pick))))
            for k in pick:
                v = msgs[(r["repo"], *k)]
                out.write(f"{r['repo']}\t{k[0]}\t{k[1]}\t{k[2]}\t{v['certainty']}\t{v['function']}\t"
                          f"{v['message']}\n")


if __name__ == "__main__":
    sys.exit(main())
