"""The one transitive walk over control dependences (used by `why` and the arrival checks)."""
from warplint.analysis import analyze_module
from warplint.frontends.ptx import parse_ptx
from warplint.options import Options

# lane < 16 (divergent) -> a never-taken guard (all lanes fall through to the vote) -> vote
NESTED_PTX = """\
.version 6.0
.target sm_60
.address_size 64

.visible .entry nested()
{
    .reg .pred %p<4>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %laneid;
    setp.ge.u32 %p1, %r1, 16;
    @%p1 bra DONE;
    setp.ne.u32 %p2, 0, 0;
    @%p2 bra DONE;
    vote.any.pred %p3, %p1;
DONE:
    ret;
}
"""


def _analysis():
    (fa,) = analyze_module(parse_ptx(NESTED_PTX, "t.ptx"), Options())
    return fa


def test_walk_goes_through_branches_whose_lanes_do_not_diverge():
    fa = _analysis()
    vote = next(op for op in fa.warp_ops if op.kind == "vote")
    assert list(fa.control_deps(vote.block)) == [(1, 2), (0, 1)]
    (step,) = fa.why(vote.block)
    assert step.loc.line == 11 and "lanes 0-15" in step.message
