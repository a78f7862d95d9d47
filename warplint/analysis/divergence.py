"""Divergence analysis: per-lane register values and the possible active lanes of every block.

The parts, one module each:
- `domain`: how values meet (the lane-wise merge at reconvergence, the join with widening);
  the values and lane sets themselves are in `values` and `lanes`;
- `transfer` (operands, arithmetic, comparisons) and `instructions` (one table from opcode
  to semantics): what each instruction does to the registers, and what it records;
- `dependence`: which lanes run each block, from control dependence (temporal divergence
  named there);
- `solver`: the worklist to the fixpoint, with its work bound;
- `results`: what the checks read (`FunctionAnalysis`).
"""
from __future__ import annotations

from ..cfg import CFG
from .instructions import source_lane, source_lanes
from .lanes import FULL_SET, LaneSet, Literals
from .results import Barrier, FunctionAnalysis, MemAccess, WarpOp
from .solver import Solver
from .values import Terms

__all__ = ["Barrier", "FunctionAnalysis", "MemAccess", "WarpOp", "analyze_function", "source_lane",
           "source_lanes"]


def analyze_function(cfg: CFG, module, options, terms: Terms | None = None,
                     lits: Literals | None = None, entry_mask: LaneSet = FULL_SET) -> FunctionAnalysis:
    return Solver(cfg, module, options, terms or Terms(), lits or Literals(), entry_mask).solve()
