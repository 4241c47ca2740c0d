"""Kernels of data-dependent ops whose result size is only known from the data (never in a static ``.tosa``).

NONZERO returns the coordinates of the non-zero elements, one column per
element in row-major order (as ``numpy.nonzero`` and ONNX NonZero), as INT32.
Its column count is the symbol the op's attributes name; the kernel binds
that symbol for the rest of the run, so later shape checks see the real size.
A result with no columns would have a 0 dim, which TOSA does not allow.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics.assumption import assumption_error
from ..ir.graph import describe_value

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def nonzero(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    coords = np.array(np.nonzero(np.asarray(args[0])), dtype=np.int64)
    count = coords.shape[1]
    if count == 0:
        raise ValueError("NONZERO found no non-zero elements; its result would have an empty dim, "
                         "which TOSA does not allow")
    known = ctx.bindings.get(op.attrs.count)
    if known is not None and known != count:   # the user assumed the count (--bind): a shape error, exit 4
        raise assumption_error(op.attrs.count, known, count, op.location, describe_value(op.operands[0]))
    ctx.bindings[op.attrs.count] = count
    return [coords.astype(np.int32)]
