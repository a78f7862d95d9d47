"""What the analyses assume about opaque calls (warplint.analysis.calls)."""
import pytest

from warplint.analysis.calls import is_pure, may_wait
from warplint.ir import Instr, Sym


@pytest.mark.parametrize("name", ["sqrtf", "exp", "std::exp", "__expf", "__fdividef", "__popc",
                                  "__float2int_rn", "__ldg", "$initlist", "__ctor_half2"])
def test_math_library_calls_are_pure(name):
    assert is_pure(Instr("call", (), (Sym(name),)))


@pytest.mark.parametrize("name", ["ext_barrier", "lane_of", "MAKE_COMPLEX", "__syncthreads_or"])
def test_other_calls_may_vary_per_lane_and_synchronise(name):
    assert not is_pure(Instr("call", (), (Sym(name),)))


@pytest.mark.parametrize("name", ["clock64", "clock", "printf", "__nanosleep", "sqrtf"])
def test_clock_reads_printing_and_math_never_wait(name):
    assert not may_wait(Instr("call", (), (Sym(name),)))


@pytest.mark.parametrize("name", ["ext_barrier", "log_progress", "__syncthreads_or"])
def test_other_opaque_calls_may_wait(name):
    assert may_wait(Instr("call", (), (Sym(name),)))
