"""Converters for onnxruntime's com.microsoft DynamicQuantizeMatMul and DynamicQuantizeLSTM, in float.

``onnxruntime.quantization.quantize_dynamic`` writes these: 8-bit weights
with their scales and zero points, float activations quantized at run time.

* DynamicQuantizeMatMul (``A, B, b_scale, b_zero_point, bias``): onnxruntime
  quantizes A to uint8 as DynamicQuantizeLinear does (one scale and zero
  point over all of A), multiplies with ``B - b_zero_point`` exactly in int32
  and scales by ``a_scale * b_scale`` (b per tensor or per column), then adds
  the bias. tosaconv builds that quantization of A (:func:`.dynamic_quant.quantize_uint8`)
  and the product in float32: ``(q_A - zp_A)`` and ``B - zp_B`` are integers
  of at most 255 in magnitude, exact in float32, so only the sum's rounding
  differs from onnxruntime's integer sum.
* DynamicQuantizeLSTM: the weights ``W [D, input, 4H]`` and ``R [D, H, 4H]``
  (per direction, or per direction and gate column) are dequantized at import
  and the float LSTM of ONNX runs on them (weights transposed to ONNX's
  ``[D, 4H, input]`` layout, same iofc gate order). onnxruntime also
  quantizes X and each step's hidden state to uint8 before its integer
  products; tosaconv keeps those in float, so its results are the float
  LSTM's and differ from onnxruntime's by that quantization's error (about
  ``scale / 2`` per input element; the tests measure it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.matmul import matmul
from ..ms_domain import MS
from ..reader import ConvertError
from ..registry import converter
from .dynamic_quant import quantize_uint8
from .ms_fused import delegate

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


def _constant(ctx: ImportContext, node: NodeReader, index: int, what: str) -> np.ndarray:
    value = ctx.const(node.input(index))
    if value is None:
        raise ConvertError(f"{node.op_type} {what} '{node.inputs[index]}' must be a constant (an initializer)")
    return value


@converter("DynamicQuantizeMatMul", since=1, domain=MS)
def convert_dynamic_quantize_matmul(ctx: ImportContext, node: NodeReader) -> Converted:
    a = ctx.tensor(node.inputs[0])
    if a.type.dtype is not DType.FP32:
        raise ConvertError(f"DynamicQuantizeMatMul takes float32 A, not {a.type.dtype.value}")
    b = _constant(ctx, node, 1, "B").astype(np.int32)
    b_zp = ctx.const(node.input(3))
    b_units = (b - (0 if b_zp is None else np.asarray(b_zp).astype(np.int32))).astype(np.float32)
    q, a_scale, a_zp = quantize_uint8(ctx, a)
    a_units = ctx.b.emit(Op.CAST, ctx.b.emit(Op.SUB, q, a_zp), attrs=A.CastAttrs(DType.FP32))
    y = matmul(ctx, a_units, ctx.b.const(b_units))
    b_scale = np.asarray(_constant(ctx, node, 2, "b_scale"), np.float32).reshape(-1)
    scale = ctx.b.emit(Op.MUL, _last_axis(ctx, a_scale, y.type.rank),
                       ctx.b.const(b_scale.reshape((1,) * (y.type.rank - 1) + (-1,))), attrs=A.MulAttrs(0))
    y = ctx.b.emit(Op.MUL, y, scale, attrs=A.MulAttrs(0))
    return ctx.b.emit(Op.ADD, y, ctx.tensor(node.input(4))) if node.input(4) else y


def _last_axis(ctx: ImportContext, v: Value, rank: int) -> Value:
    """A [1, ..., 1] value at ``rank``."""
    return v if v.type.rank == rank else ctx.b.emit(Op.RESHAPE, v, attrs=A.ReshapeAttrs((1,) * rank))


# -- DynamicQuantizeLSTM -------------------------------------------------------------------

_LSTM_ATTRS = ("hidden_size", "direction", "activations", "activation_alpha", "activation_beta", "clip",
               "input_forget")


@converter("DynamicQuantizeLSTM", since=1, domain=MS)
def convert_dynamic_quantize_lstm(ctx: ImportContext, node: NodeReader) -> Converted:
    names = list(node.inputs[:8]) + [""] * (8 - len(node.inputs[:8]))
    for index, scale_index in ((1, 8), (2, 10)):
        weight = _lstm_weight(ctx, node, index, scale_index)
        names[index] = f"{node.name}::dequantized:{index}"
        ctx.set_const(names[index], weight)
    attrs = {k: _plain(node.attr(k)) for k in _LSTM_ATTRS}
    return delegate(ctx, node, "LSTM", _trim(names), attrs)


def _lstm_weight(ctx: ImportContext, node: NodeReader, index: int, scale_index: int) -> np.ndarray:
    """W ``[D, in, 4H]`` (or R) dequantized and transposed to ONNX's ``[D, 4H, in]``."""
    what = {1: "W", 2: "R"}[index]
    q = _constant(ctx, node, index, what).astype(np.float32)
    scale = np.asarray(_constant(ctx, node, scale_index, f"{what}_scale"), np.float32)
    zp = np.asarray(_constant(ctx, node, scale_index + 1, f"{what}_zero_point")).astype(np.float32)
    if scale.ndim not in (1, 2) or zp.shape != scale.shape:
        raise ConvertError(f"DynamicQuantizeLSTM {what}_scale of shape {list(scale.shape)} and zero point of "
                           f"shape {list(zp.shape)}: expected [num_directions] or [num_directions, 4*hidden_size]")
    per = (slice(None), None, None) if scale.ndim == 1 else (slice(None), None, slice(None))
    return np.ascontiguousarray(((q - zp[per]) * scale[per]).transpose(0, 2, 1))


def _trim(names: list) -> list:
    while names and not names[-1]:
        names.pop()
    return names


def _plain(v: object) -> object:
    return list(v) if isinstance(v, tuple) else v
