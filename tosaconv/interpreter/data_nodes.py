"""The kernel of the TOSA chapter "Data Nodes": CONST.

CONST returns its attribute array itself, never a copy, so a big model's
weights exist once; kernels never write into their operands. Only when the
stored array's dtype differs from the IR type (an int64 array typed INT32,
say) is it converted, after checking that the values fit. Unsigned data of the
same width (uint8 typed INT8) keeps its bit pattern, which is how TOSA stores
unsigned values (RESCALE's ``input_unsigned`` reads them back).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .numeric import check_range, out_dtype

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def const(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    values = op.attrs.values
    dtype = out_dtype(op)
    if values.dtype == dtype.numpy:
        return [values]
    if values.dtype.kind == "u" and values.dtype.itemsize == dtype.numpy.itemsize:
        return [values.view(dtype.numpy)]
    if dtype.is_int and values.dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        check_range(values, int(info.min), int(info.max), f"CONST values of type {dtype.value}")
    return [values.astype(dtype.numpy)]
