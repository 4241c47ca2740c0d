"""Compressed weights: a narrow constant widened by a CAST at run time (fp16 or int8 weights of float math).

A model that stores its weights as float16 (TFLite's "float16 quantization":
a DEQUANTIZE of each fp16 buffer; an ONNX Cast of an fp16 initializer) or as
int8 with a scale (a Cast and Mul, or a DequantizeLinear, feeding float math)
keeps them that way in the ``.tosa``: a CONST of the narrow type and a CAST to
float (TOSA 1.0 PRO-FP has CAST fp16, i8 and i16 to fp32), as Arm's TFLite
converter does. Folding such a CAST would make the file 2x (fp16) or 4x (int8)
the source's weight bytes. :func:`keeps_cast` is the rule constant folding asks;
``--fp32-weights`` (:func:`fp32_weights`) restores folding, so every weight
is a float32 constant again. A CAST whose widening saves fewer than
:data:`MIN_SAVED_BYTES` folds anyway: its CONST and CAST records cost more.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from typing import TYPE_CHECKING, Iterator, Optional

import numpy as np

from ..ir.dtypes import DType
from ..ir.ops import Op

if TYPE_CHECKING:
    from ..ir.graph import Operation, Value

MIN_SAVED_BYTES = 256    # about the flatbuffer cost of the extra tensor and CAST op records
_NARROW = frozenset({DType.FP16, DType.INT8, DType.INT16})
_NARROW_NUMPY = frozenset(np.dtype(t) for t in (np.float16, np.int8, np.int16))
_FP32_WEIGHTS: contextvars.ContextVar = contextvars.ContextVar("fp32_weights", default=False)


@contextlib.contextmanager
def fp32_weights(enabled: bool = True) -> Iterator[None]:
    """Inside the block, imports and constant folding widen every weight to a float32 constant."""
    token = _FP32_WEIGHTS.set(bool(enabled))
    try:
        yield
    finally:
        _FP32_WEIGHTS.reset(token)


def keeps_cast(op: Operation) -> bool:
    """True when ``op`` is a CAST of a narrow weight CONST to float that stays a run-time CAST."""
    if op.op is not Op.CAST or _FP32_WEIGHTS.get() or len(op.operands) != 1:
        return False
    src = op.operands[0].producer
    if src is None or src.op is not Op.CONST or src.attrs.int48 or src.attrs.element_type:
        return False
    narrow, wide = op.operands[0].type, op.result.type
    if narrow.dtype not in _NARROW or not wide.dtype.is_float or not wide.is_static:
        return False
    saved = math.prod(wide.static_shape()) * (wide.dtype.bits - narrow.dtype.bits) // 8
    return saved >= MIN_SAVED_BYTES


def keeps_narrow(arr: np.ndarray, wide: DType = DType.FP32) -> bool:
    """True when the import-time constant ``arr`` (fp16, int8 or int16) should become a CONST of its own
    type and a CAST to ``wide``, not a ``wide`` constant: the same rule as :func:`keeps_cast`."""
    if _FP32_WEIGHTS.get() or arr.dtype not in _NARROW_NUMPY:
        return False
    return arr.size * (wide.bits - arr.dtype.itemsize * 8) // 8 >= MIN_SAVED_BYTES


def compressed(op: Operation) -> Optional[Value]:
    """The narrow CONST value behind ``op`` when ``op`` is a kept weight CAST, else None."""
    return op.operands[0] if keeps_cast(op) else None
