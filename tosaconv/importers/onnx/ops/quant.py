"""Converters for ONNX QuantizeLinear and DequantizeLinear (opsets 10 to 25).

Per tensor, per axis and blocked scales (:mod:`.qparams`); int8, uint8,
int16 and uint16 data (uint as unsigned bits in signed storage, see
:mod:`.qtypes`); int32 DequantizeLinear input (biases). float8, int4 and
2-bit types are refused: TOSA 1.0 has no such tensors.

A QuantizeLinear first tries the QDQ folding of :mod:`.qdq_fold`
(``DequantizeLinear -> Conv/MatMul/Gemm/Add -> QuantizeLinear`` as integer
TOSA). Otherwise both ops are float TOSA, as ONNX defines them:

* DequantizeLinear: ``(CAST(x) - zero_point) * scale``; unsigned data is
  first shifted to signed form, and the zero point with it, which is exact.
* QuantizeLinear: ``CAST<int32>(x * (1/scale))`` then the zero point and
  saturation in int32, then a CAST to the storage type. TOSA's float-to-int
  CAST rounds to nearest with ties to even (spec, "Type Conversion":
  "Conversion must use the round to nearest, ties to even rounding mode")
  and saturates, which is ONNX's ``rint``, so no explicit rounding is built.
  Saturation clamps ``round(x/scale)`` to ``[lo - zp, hi - zp]`` *before*
  adding the zero point, so nothing can overflow int32; the final CAST of
  ``0..255`` to int8 keeps the low byte, the unsigned bits. TOSA has no
  float division: ``x / scale`` is ``x * (1/scale)`` with one exact
  correction step (:mod:`.float_div`), so ties round as ONNX's do.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np
import onnx

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish
from .float_div import divide
from ..int_io import quantized_input
from .qdq_fold import fold_quantize
from .qparams import as_float32, broadcast, is_value, read_params
from .qtypes import (BY_ONNX_NAME, UINT8, DQRecord, QTensor, check_supported, clamp_int32, data_type, is_float16,
                     mark_unsigned, qtype_of, read_qtensor, signed_value, state)

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.types import TensorType
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader
    from .qtypes import QParams, QType
    from .qtypes import Param

_FLOAT_OUT = {onnx.TensorProto.FLOAT: DType.FP32, onnx.TensorProto.FLOAT16: DType.FP16}


DQ_OUTPUT_DTYPE = publish("DequantizeLinear", Limit(
    "output-dtype", LimitKind.ATTRIBUTE, "output_dtype", ("anything but FLOAT and FLOAT16 (BFLOAT16)",),
    "bf16 is TOSA's EXT-BF16 extension, outside PRO-FP", "dequantize to float32 or float16"))
Q_PRECISION = publish("QuantizeLinear", Limit(
    "precision", LimitKind.ATTRIBUTE, "precision", ("anything but FLOAT (FLOAT16, BFLOAT16)",),
    "tosaconv divides by the scale in float32", "leave precision unset"))


@converter("DequantizeLinear", since=10)
def convert_dequantize_linear(ctx: ImportContext, node: NodeReader) -> Converted:
    x_name, zp_name = node.inputs[0], node.input(2)
    qtype = qtype_of(ctx, zp_name) or qtype_of(ctx, x_name)
    check_supported(qtype, "DequantizeLinear input", allow_int32=True)
    data = read_qtensor(ctx, x_name, qtype)
    params = read_params(ctx, node, 1, 2, data_type(data))
    return recorded_dequantize(ctx, data, params, _dq_output_dtype(ctx, node))


def recorded_dequantize(ctx: ImportContext, data: QTensor, params: QParams, out_dtype: DType = DType.FP32) -> Value:
    """:func:`dequantize`, with the result recorded for the QDQ folding."""
    y = dequantize(ctx, data, params, data_type(data), out_dtype)
    state(ctx).dq[y] = DQRecord(data, params)
    return y


def _dq_output_dtype(ctx: ImportContext, node: NodeReader) -> DType:
    code = node.attr("output_dtype") if node.schema and "output_dtype" in node.schema.attributes else 0
    if not code:
        code = onnx.TensorProto.FLOAT16 if is_float16(ctx, node.inputs[1]) else onnx.TensorProto.FLOAT
    if code not in _FLOAT_OUT:
        raise DQ_OUTPUT_DTYPE.refuse(f"DequantizeLinear to {onnx.TensorProto.DataType.Name(code)}")
    return _FLOAT_OUT[code]


def dequantize(ctx: ImportContext, data: QTensor, params: QParams, data_type: TensorType, out_dtype: DType = DType.FP32) -> Value:
    """``(data - zero_point) * scale`` in float32, then ``out_dtype``."""
    x = ctx.b.emit(Op.CAST, signed_value(ctx, data), attrs=A.CastAttrs(DType.FP32))
    zp = _float_zero_point(ctx, params, data, data_type)
    if zp is not None:
        x = ctx.b.emit(Op.SUB, x, zp)
    scale = _as_tensor(ctx, broadcast(ctx, as_float32(ctx, params.scale), params, data_type))
    y = ctx.b.emit(Op.MUL, x, scale, attrs=A.MulAttrs(0))
    return y if out_dtype == DType.FP32 else ctx.b.emit(Op.CAST, y, attrs=A.CastAttrs(out_dtype))


def _float_zero_point(ctx: ImportContext, params: QParams, data: QTensor, data_type: TensorType) -> Optional[Value]:
    """The zero point in the signed form of ``data``, as float32 (None when it is 0)."""
    zp, offset = params.zero_point, data.qtype.offset
    if zp is None and not offset:
        return None
    if zp is None or not is_value(zp):
        shifted = (np.zeros((), np.int64) if zp is None else zp) - offset
        if not shifted.any():
            return None
        return ctx.b.const(broadcast(ctx, shifted.astype(np.float32), params, data_type))
    signed = signed_value(ctx, QTensor(data.qtype, value=zp))
    f = ctx.b.emit(Op.CAST, signed, attrs=A.CastAttrs(DType.FP32))
    return broadcast(ctx, f, params, data_type)


def _as_tensor(ctx: ImportContext, p: Param) -> Value:
    return ctx.b.const(p) if isinstance(p, np.ndarray) else p


# -- QuantizeLinear ---------------------------------------------------------------------

@converter("QuantizeLinear", since=10)
def convert_quantize_linear(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if not x.type.dtype.is_float:
        raise ConvertError(f"QuantizeLinear of {x.type.dtype.value} data is not supported (float input only)")
    _check_precision(node)
    qtype = _q_output_qtype(ctx, node)
    check_supported(qtype, "QuantizeLinear output")
    params = read_params(ctx, node, 1, 2, x.type)
    if ctx.int_io is not None and ctx.int_io.inputs.get(node.inputs[0]) is node.node:
        return quantized_input(ctx, node.inputs[0], x, params, qtype)   # --int-io: the input is the integer
    folded = fold_quantize(ctx, x, params, qtype)
    return folded if folded is not None else quantize(ctx, x, params, qtype)


def _check_precision(node: NodeReader) -> None:
    if node.schema and "precision" in node.schema.attributes:
        p = node.attr("precision")
        if p and p != onnx.TensorProto.FLOAT:
            raise Q_PRECISION.refuse(f"QuantizeLinear with precision {onnx.TensorProto.DataType.Name(p)}")


def _q_output_qtype(ctx: ImportContext, node: NodeReader) -> Optional[QType]:
    zp_name = node.input(2)
    if zp_name:
        return qtype_of(ctx, zp_name)
    code = node.attr("output_dtype") if node.schema and "output_dtype" in node.schema.attributes else 0
    return BY_ONNX_NAME.get(onnx.TensorProto.DataType.Name(code)) if code else UINT8


def quantize(ctx: ImportContext, x: Value, params: QParams, qtype: QType) -> Value:
    """ONNX's ``saturate(rint(x / scale) + zero_point)`` in float32 and int32 TOSA, stored as ``qtype``."""
    if x.type.dtype != DType.FP32:
        x = ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.FP32))
    v = ctx.b.emit(Op.CAST, _quotient(ctx, x, params), attrs=A.CastAttrs(DType.INT32))
    zp = params.zero_point
    if zp is None or not is_value(zp):
        v = _saturate_const_zp(ctx, v, params, qtype, x.type)
    else:
        v = _saturate_value_zp(ctx, v, params, qtype, x.type)
    return mark_unsigned(ctx, ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(qtype.dtype)), qtype)


def _quotient(ctx: ImportContext, x: Value, params: QParams) -> Value:
    """``x / scale`` (see :mod:`.float_div`)."""
    scale = broadcast(ctx, as_float32(ctx, params.scale), params, x.type)
    if isinstance(scale, np.ndarray):
        with np.errstate(divide="ignore"):
            return divide(ctx, x, scale, np.float32(1.0) / scale)
    return divide(ctx, x, scale, ctx.b.emit(Op.RECIPROCAL, scale))


def _saturate_const_zp(ctx: ImportContext, v: Value, params: QParams, qtype: QType, data_type: TensorType) -> Value:
    zp = np.zeros((), np.int64) if params.zero_point is None else params.zero_point
    if zp.size == 1:
        z = int(zp.reshape(-1)[0])
        v = clamp_int32(ctx, v, qtype.lo - z, qtype.hi - z)
        return v if z == 0 else ctx.b.emit(Op.ADD, v, ctx.b.scalar_like(z, v.type))
    zb = broadcast(ctx, zp, params, data_type)
    v = clamp_int32(ctx, v, qtype.lo - zb, qtype.hi - zb)
    return ctx.b.emit(Op.ADD, v, ctx.b.const(zb.astype(np.int32)))


def _saturate_value_zp(ctx: ImportContext, v: Value, params: QParams, qtype: QType, data_type: TensorType) -> Value:
    """A zero point known only at run time: widened to int32 (true value), then the same clamp."""
    signed = signed_value(ctx, QTensor(qtype, value=params.zero_point))
    z = ctx.b.emit(Op.CAST, signed, attrs=A.CastAttrs(DType.INT32))
    if qtype.offset:
        z = ctx.b.emit(Op.ADD, z, ctx.b.scalar_like(qtype.offset, z.type))
    z = broadcast(ctx, z, params, data_type)
    lo = ctx.b.emit(Op.SUB, ctx.b.scalar_like(qtype.lo, z.type), z)
    hi = ctx.b.emit(Op.SUB, ctx.b.scalar_like(qtype.hi, z.type), z)
    return ctx.b.emit(Op.ADD, clamp_int32(ctx, v, lo, hi), z)
