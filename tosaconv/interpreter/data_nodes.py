"""The kernel of the TOSA chapter "Data Nodes": CONST.

CONST returns its attribute array itself, never a copy, so a big model's
weights exist once; kernels never write into their operands. Only when the
stored array's dtype differs from the IR type (an int64 array typed INT32,
say) is it converted, after checking that the values fit. Unsigned data of the
same width (uint8 typed INT8) keeps its bit pattern, which is how TOSA stores
unsigned values (RESCALE's ``input_unsigned`` reads them back).

Weights that are views of a model file's bytes can sit at any byte offset.
numpy hands a misaligned array to its own loops instead of BLAS (a 512x2048
MATMUL took 8 ms instead of 0.1 ms), so a misaligned constant is copied once,
aligned, and that copy is reused by later runs while the attribute array lives.
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from .numeric import check_range, out_dtype

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext

_ALIGNED: dict = {}     # id(attribute array) -> (weak reference to it, its aligned copy)


def const(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    values = op.attrs.values
    dtype = out_dtype(op)
    if values.dtype == dtype.numpy:
        return [values if values.flags.aligned else aligned(values)]
    if values.dtype.kind == "u" and values.dtype.itemsize == dtype.numpy.itemsize:
        return [values.view(dtype.numpy)]
    if dtype.is_int and values.dtype.kind in "iu":
        info = np.iinfo(dtype.numpy)
        check_range(values, int(info.min), int(info.max), f"CONST values of type {dtype.value}")
    return [values.astype(dtype.numpy)]


def aligned(values: np.ndarray) -> np.ndarray:
    """An aligned C-order copy of a misaligned array, made once per array and dropped with it."""
    key = id(values)
    cached = _ALIGNED.get(key)
    if cached is not None and cached[0]() is values:
        return cached[1]
    copy = np.array(values, order="C")
    copy.flags.writeable = False
    _ALIGNED[key] = (weakref.ref(values, lambda ref: _forget(key, ref)), copy)
    return copy


def _forget(key: int, ref: weakref.ref) -> None:
    if key in _ALIGNED and _ALIGNED[key][0] is ref:
        del _ALIGNED[key]
