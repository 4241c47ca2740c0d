"""Quantized tensors in the ONNX importer: element types, unsigned data, scales and zero points.

**Unsigned data.** TOSA 1.0 has no unsigned tensors; only RESCALE reads or
writes int8/int16 storage as unsigned (``input_unsigned``/``output_unsigned``).
tosaconv follows that convention: a uint8 (uint16) ONNX tensor is an INT8
(INT16) IR tensor holding the *same bits* (200 is stored as -56), so a uint8
model output is bit-for-bit the ONNX value. Arithmetic never sees those bits:
a converter that reads unsigned data first turns it into the *shifted* signed
form ``q - 128`` (``q - 32768``) with one RESCALE (``input_unsigned``,
``input_zp = 128``), which is exact, and moves the zero point by the same
amount; one that writes unsigned data ends with a CAST that truncates
``0..255`` to its low byte, or a RESCALE with ``output_unsigned`` and
``output_zp = 128``. Which IR values hold unsigned bits is recorded here (a
side table per IR graph under construction), as is what every DequantizeLinear result
was made from (for the QDQ folding in :mod:`.qdq_fold`). Constants are read
from the initializers with their true numpy types. uint8 *model inputs*
never reach the converters: the driver refuses element types it has no
tensor for.
"""
from __future__ import annotations

import weakref
from dataclasses import field
from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from ....ir.types import TensorType
from ....lowering.quant_scale import ScaleError, multiplier_shift
from ..reader import ConvertError

if TYPE_CHECKING:
    from ..context import ImportContext


@dataclass(frozen=True)
class QType:
    """An integer element type of quantized ONNX data and the IR tensor type that stores it."""

    name: str
    bits: int
    unsigned: bool

    @property
    def dtype(self) -> DType:
        return {8: DType.INT8, 16: DType.INT16, 32: DType.INT32}[self.bits]

    @property
    def lo(self) -> int:
        return 0 if self.unsigned else -(1 << (self.bits - 1))

    @property
    def hi(self) -> int:
        return (1 << self.bits) - 1 if self.unsigned else (1 << (self.bits - 1)) - 1

    @property
    def offset(self) -> int:
        """What the shifted signed form subtracts: 128 for uint8, 32768 for uint16, else 0."""
        return 1 << (self.bits - 1) if self.unsigned else 0


INT8, UINT8 = QType("int8", 8, False), QType("uint8", 8, True)
INT16, UINT16 = QType("int16", 16, False), QType("uint16", 16, True)
INT32 = QType("int32", 32, False)
BY_NUMPY = {np.dtype(np.int8): INT8, np.dtype(np.uint8): UINT8, np.dtype(np.int16): INT16,
            np.dtype(np.uint16): UINT16, np.dtype(np.int32): INT32}
BY_ONNX_NAME = {"INT8": INT8, "UINT8": UINT8, "INT16": INT16, "UINT16": UINT16, "INT32": INT32}
_BY_DTYPE = {DType.INT8: INT8, DType.INT16: INT16, DType.INT32: INT32}
PASS_THROUGH = (Op.TRANSPOSE, Op.RESHAPE, Op.SLICE, Op.DYN_SLICE, Op.TILE, Op.DYN_TILE, Op.IDENTITY,
                Op.CONCAT, Op.GATHER, Op.REVERSE, Op.EXPAND_DIMS, Op.COLLAPSE_DIMS)

Param = Union[np.ndarray, Value]


@dataclass
class QTensor:
    """Quantized data: its IR tensor (unsigned bits as described above) and, when constant, its values."""

    qtype: QType
    value: Optional[Value] = None
    const: Optional[np.ndarray] = None     # the true integer values (int64)


@dataclass
class QParams:
    """Scale and zero point: numpy arrays when constant, else IR values; ``axis`` None means per tensor."""

    scale: Param
    zero_point: Optional[Param]
    axis: Optional[int] = None
    block_size: int = 0

    @property
    def is_const(self) -> bool:
        return isinstance(self.scale, np.ndarray) and not isinstance(self.zero_point, Value)


@dataclass
class DQRecord:
    """What a DequantizeLinear result was computed from."""

    data: QTensor
    params: QParams


@dataclass
class QuantState:
    dq: dict = field(default_factory=dict)         # DequantizeLinear result Value -> DQRecord
    unsigned: dict = field(default_factory=dict)   # Value holding unsigned bits -> QType
    signed: dict = field(default_factory=dict)     # Value holding unsigned bits -> its signed form


_STATES: dict = {}     # id(graph) -> QuantState, dropped when the graph is


def state(ctx: ImportContext) -> QuantState:
    """The quantization side table of the graph being built (shared by inlined subgraphs)."""
    key = id(ctx.graph)
    if key not in _STATES:
        _STATES[key] = QuantState()
        weakref.finalize(ctx.graph, _STATES.pop, key, None)
    return _STATES[key]


def mark_unsigned(ctx: ImportContext, v: Value, qtype: QType) -> Value:
    if qtype.unsigned:
        state(ctx).unsigned[v] = qtype
    return v


def stored_qtype(ctx: ImportContext, v: Value) -> Optional[QType]:
    """The QType of IR tensor ``v``, following layout ops back to a value recorded as unsigned."""
    seen = v
    while seen is not None:
        if seen in state(ctx).unsigned:
            return state(ctx).unsigned[seen]
        p = seen.producer
        seen = p.operands[0] if p is not None and p.op in PASS_THROUGH and p.operands else None
    return _BY_DTYPE.get(v.type.dtype)


def qtype_of(ctx: ImportContext, name: Optional[str]) -> Optional[QType]:
    """The quantized element type of ONNX tensor ``name`` (None when absent or not an integer type)."""
    if not name:
        return None
    c = ctx.const(name)
    if c is not None:
        return BY_NUMPY.get(c.dtype) if c.dtype != np.int64 else None
    return stored_qtype(ctx, ctx.tensor(name))


def read_qtensor(ctx: ImportContext, name: str, qtype: QType) -> QTensor:
    c = ctx.const(name)
    if c is not None:
        return QTensor(qtype, const=c.astype(np.int64))
    v = ctx.tensor(name)
    if v.type.dtype != qtype.dtype:
        raise ConvertError(f"'{name}' is {v.type.dtype.value} data, not {qtype.name}")
    return QTensor(qtype, value=v)


def data_type(qt: QTensor) -> TensorType:
    """The IR type of ``qt`` (a constant keeps its numpy shape and never becomes an IR tensor here)."""
    return qt.value.type if qt.value is not None else TensorType(qt.qtype.dtype, qt.const.shape)


def is_float16(ctx: ImportContext, name: str) -> bool:
    c = ctx.const(name)
    return (c.dtype == np.float16) if c is not None else ctx.tensor(name).type.dtype == DType.FP16


# -- signed forms ------------------------------------------------------------------

def rescale(ctx: ImportContext, v: Value, scales: Union[float, Sequence[float], np.ndarray], out_dtype: DType, *, input_zp: int = 0, output_zp: int = 0,
            input_unsigned: bool = False, output_unsigned: bool = False) -> Value:
    """A SINGLE_ROUND RESCALE by ``scales`` (one scale, or one per channel on the last axis).

    int48 input takes the 16-bit multiplier (``scale32 = false``), as the spec requires."""
    scales = np.asarray(scales, dtype=np.float64).reshape(-1)
    scale32 = v.type.dtype != DType.INT48
    try:
        pairs = [multiplier_shift(s, 32 if scale32 else 16) for s in scales]
    except ScaleError as e:
        raise ConvertError(f"cannot rescale: {e}") from None
    attrs = A.RescaleAttrs(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), int(input_zp), int(output_zp),
                           scale32=scale32, per_channel=len(pairs) > 1, input_unsigned=input_unsigned,
                           output_unsigned=output_unsigned, output_dtype=out_dtype)
    return ctx.b.emit(Op.RESCALE, v, attrs=attrs)


def signed_value(ctx: ImportContext, qt: QTensor) -> Value:
    """``qt`` as an IR tensor in signed form (``q - offset``)."""
    if qt.value is None:
        return ctx.b.const((qt.const - qt.qtype.offset).astype(qt.qtype.dtype.numpy))
    if not qt.qtype.unsigned:
        return qt.value
    forms = state(ctx).signed
    if qt.value not in forms:
        forms[qt.value] = rescale(ctx, qt.value, 1.0, qt.qtype.dtype, input_zp=qt.qtype.offset,
                                  input_unsigned=True)
    return forms[qt.value]


def stored_from_signed(ctx: ImportContext, v: Value, qtype: QType) -> Value:
    """Signed-form int8/int16 ``v`` as ``qtype`` storage (unsigned bits for uint8/uint16)."""
    if not qtype.unsigned:
        return v
    out = rescale(ctx, v, 1.0, qtype.dtype, output_zp=qtype.offset, output_unsigned=True)
    state(ctx).signed[out] = v          # a reader of these bits takes v itself
    return mark_unsigned(ctx, out, qtype)


def as_signed(ctx: ImportContext, v: Value) -> tuple[Value, Optional[QType]]:
    """``(v, None)``, or when ``v`` holds unsigned bits, ``(its signed form, its QType)``: ops that order
    values (MaxPool, ArgMax) work on the signed form, which keeps the order, and a value result goes
    back to unsigned storage with :func:`stored_from_signed`."""
    qtype = stored_qtype(ctx, v) if v.type.dtype in (DType.INT8, DType.INT16) else None
    if qtype is None or not qtype.unsigned:
        return v, None
    return signed_value(ctx, QTensor(qtype, value=v)), qtype


def clamp_int32(ctx: ImportContext, v: Value, lo: Union[int, np.ndarray, Value], hi: Union[int, np.ndarray, Value]) -> Value:
    """Clamp int32 ``v`` (TOSA's CLAMP takes int8/int16 only): MAXIMUM then MINIMUM with constants."""
    v = ctx.b.emit(Op.MAXIMUM, v, _int32_const(ctx, lo, v))
    return ctx.b.emit(Op.MINIMUM, v, _int32_const(ctx, hi, v))


def _int32_const(ctx: ImportContext, bound: Union[int, np.ndarray, Value], like: Value) -> Value:
    if isinstance(bound, Value):
        return bound
    arr = np.asarray(bound, dtype=np.int64)
    return ctx.b.const(arr.astype(np.int32).reshape(arr.shape if arr.ndim else (1,) * like.type.rank))


def check_supported(qtype: Optional[QType], what: str, allow_int32: bool = False) -> None:
    if qtype is None or (qtype is INT32 and not allow_int32):
        kinds = "int8, uint8, int16, uint16" + (" or int32" if allow_int32 else "")
        raise ConvertError(f"{what} must be {kinds}: TOSA 1.0 has no float8, 4-bit or 2-bit tensors "
                           "(re-export the model with 8- or 16-bit quantization)")
