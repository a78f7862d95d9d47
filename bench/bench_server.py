"""Latency of `warplint server` (issue 18): time from sending `textDocument/didChange` to
receiving the `textDocument/publishDiagnostics` of that version, for a 300-line .cu file,
over 20 edits (one at a time), through a real LSP client (pygls') over stdio.  The figure
includes the server's debounce (`warplint.server.lsp.DEBOUNCE_S`); the analysis alone (the
same buffer linted in this process) is measured too.

    python bench/bench_server.py [--edits 20] [--out /path/to/report.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

KERNEL = """\
__global__ void reduce_{i}(const float *in, float *out, int n)
{{
    unsigned lane = threadIdx.x % 32;
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2)
        v += {shfl}(0xffffffff, v, offset);
    if (lane < 16) {{
        unsigned bits = __ballot_sync({mask}, v > 0.0f);
        v += __popc(bits);
    }}
    if (lane == 0)
        out[blockIdx.x] = v;
    __syncwarp();
}}
"""


def source(kernels: int = 20, flipped: int | None = None) -> str:
    """A .cu file of `kernels` 15-line kernels (300 lines for 20); every fifth uses a legacy
    shuffle (WL001); kernel `flipped` gets a full-warp ballot under `lane < 16` (WL002/WL004)."""
    body = "\n".join(KERNEL.format(i=i, shfl="__shfl_down" if i % 5 == 4 else "__shfl_down_sync",
                                   mask="0xffffffff" if i == flipped else "0x0000ffff") for i in range(kernels))
    text = "// warp reductions (bench/bench_server.py)\n" + body
    return text.replace("__shfl_down(0xffffffff, v, offset)", "__shfl_down(v, offset)")


def measure(edits: int) -> dict:
    from lsp_session import Session

    from warplint.server.analysis import lint_document
    from warplint.server.lsp import DEBOUNCE_S
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, ".git"))
        path = os.path.join(tmp, "reduce.cu")
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        session = Session(tmp, env=env)
        try:
            uri = session.open(path, source())
            session.diagnostics(uri, timeout=120)
            latencies, counts = [], []
            for k in range(edits):
                text = source(flipped=k % 20 if k % 2 == 0 else None)
                sent = time.perf_counter()
                version = session.change(uri, text)
                counts.append(len(session.diagnostics(uri, version, timeout=120)))
                arrived = session.arrived[uri][[p.version for p in session.published[uri]].index(version)]
                latencies.append(arrived - sent)
        finally:
            session.stop()
        analysis = []
        for k in range(edits):
            t0 = time.perf_counter()
            lint_document(path, source(flipped=k % 20 if k % 2 == 0 else None))
            analysis.append(time.perf_counter() - t0)
    return {"lines": source().count("\n"), "latencies": latencies, "analysis": analysis,
            "debounce": DEBOUNCE_S, "diagnostics": counts}


def report(r: dict) -> str:
    ms = lambda s: f"{s * 1000:.0f} ms"  # noqa: E731
    lat, ana = r["latencies"], r["analysis"]
    return f"""# `warplint server`: latency didChange -> publishDiagnostics

Measured by `python bench/bench_server.py` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}),
on a {r['lines']}-line .cu file (20 kernels: shuffles, ballots, barriers; {min(r['diagnostics'])}-{max(r['diagnostics'])}
diagnostics per version), {len(lat)} edits sent one at a time (each waits for its diagnostics), through
pygls' LanguageClient over stdio; {os.cpu_count()} CPUs, shared with other work (load average
{os.getloadavg()[0]:.1f}).

| | median | min | max |
|---|---|---|---|
| didChange -> publishDiagnostics | **{ms(statistics.median(lat))}** | {ms(min(lat))} | {ms(max(lat))} |
| of which debounce (fixed wait for the next keystroke) | {ms(r['debounce'])} | | |
| the analysis alone (`lint_document`, in process) | {ms(statistics.median(ana))} | {ms(min(ana))} | {ms(max(ana))} |

Every latency: {', '.join(f'{x * 1000:.0f}' for x in lat)} ms.
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--edits", type=int, default=20)
    p.add_argument("--out", help="write the Markdown report here (default: print it)")
    a = p.parse_args()
    text = report(measure(a.edits))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
