"""Decay rules of data-dependent ops whose result *size* comes from tensor data.

NONZERO's column count is a symbol with an UpperBound extent (at most the
input's size). Binding the input symbols makes it static only when the input
itself became a constant (computed from shapes and folded during
specialization); the rule then computes the coordinates, binds the count
symbol and leaves a CONST. Otherwise the count is only known when the model
runs, and specialization fails with that reason, like EXTRACT_DIM's rule.
"""
from __future__ import annotations

import numpy as np

from ..ir.ops import Op
from ..lowering.limits import SIZE_FROM_DATA
from .decay import DataDependentDim, decays


@decays(Op.NONZERO)
def decay_nonzero(op, operands, b, env):
    src, count = operands[0], op.attrs.count
    if src.producer is None or src.producer.op is not Op.CONST:
        raise DataDependentDim(op, f"{op.location}: the count of non-zeros ('{count}') is only known "
                                   f"when the model runs, because its input ('{src.name}') depends on tensor data; "
                                   "the output size cannot be made static", SIZE_FROM_DATA)
    coords = np.array(np.nonzero(np.asarray(src.producer.attrs.values)), dtype=np.int32)
    if coords.shape[1] == 0:
        raise DataDependentDim(op, f"{op.location}: NonZero finds no non-zero elements after binding; its "
                                   "output would have an empty dim, which TOSA does not allow")
    env[count] = int(coords.shape[1])
    return [b.const(coords)]
