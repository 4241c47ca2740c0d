"""What every QLinear-style converter shares: integer inputs dequantized, a float op, the result requantized.

ONNX's QLinearConv and QLinearMatMul, and onnxruntime's com.microsoft
QLinear* ops and QGemm, are each *defined* as ``quantize(op(dequantize(x),
...))``. Their converters build exactly that: :func:`dequantize_input` makes
a recorded DequantizeLinear (so the QDQ folding sees the integer source and
its scale and zero point), :func:`float_node` runs the existing float
converter of ``op`` (layout, padding and broadcasting are decided in one
place), and :func:`requantize` is a QuantizeLinear, which first tries the
folding into integer TOSA. So a QOperator model becomes the same
DequantizeLinear -> op -> QuantizeLinear islands as the QDQ model of the
same network, and gains every integer lowering the folding learns.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np
import onnx

from ....ir import attrs as A
from ....ir.ops import Op
from ..reader import ConvertError, NodeReader
from ..registry import resolve
from ....lowering.dims import reshape
from .qdq_fold import fold_quantize
from .qparams import as_float32, is_value, read_params, unit_params
from .qtypes import QParams, QTensor, check_supported, data_type, qtype_of, read_qtensor
from .quant import quantize, recorded_dequantize

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from .qtypes import Param


def integer_input(ctx: ImportContext, node: NodeReader, index: int, zp_index: Optional[int]) -> QTensor:
    """Input ``index`` as quantized data; its type comes from its zero point, else from the data."""
    name = node.inputs[index]
    qtype = qtype_of(ctx, node.input(zp_index) if zp_index is not None else None) or qtype_of(ctx, name)
    check_supported(qtype, f"{node.op_type} input {index}")
    return read_qtensor(ctx, name, qtype)


def dequantize_input(ctx: ImportContext, node: NodeReader, index: int, scale_index: int, zp_index: int, axis: Optional[int] = None) -> tuple[Value, QParams]:
    """``(dequantized input index, its QParams)``; ``axis`` is the axis of a 1-D scale."""
    data = integer_input(ctx, node, index, zp_index)
    params = read_params(ctx, node, scale_index, zp_index, data_type(data), axis=axis)
    return recorded_dequantize(ctx, data, params), params


def unit_dequantize(ctx: ImportContext, node: NodeReader, index: int, zp_index: int, axis: int) -> Value:
    """Input ``index`` minus its zero point, with scale 1 (ConvInteger, MatMulInteger)."""
    data = integer_input(ctx, node, index, zp_index)
    return recorded_dequantize(ctx, data, unit_params(ctx, node.input(zp_index), data_type(data), axis))


def float_node(ctx: ImportContext, node: NodeReader, op_type: str, values: Sequence[Optional[Value]], attrs: Optional[dict] = None,
               opset: Optional[int] = None) -> NodeReader:
    """A float ONNX ``op_type`` node on IR ``values`` (None = absent input) at ``opset`` (default: the
    model's), with ``attrs`` (None values left out), or else with ``node``'s own attributes."""
    names = []
    for i, v in enumerate(values):
        names.append("" if v is None else f"{node.name}::{op_type}:{i}")
        if v is not None:
            ctx.values[names[-1]] = v
    proto = onnx.helper.make_node(op_type, names, [f"{node.name}::{op_type}:out"], name=node.name)
    if attrs is None:
        proto.attribute.extend(node.node.attribute)
    else:
        proto.attribute.extend(onnx.helper.make_attribute(k, v) for k, v in attrs.items() if v is not None)
    return NodeReader(proto, ctx.opset if opset is None else opset)


def run_float(ctx: ImportContext, node: NodeReader, op_type: str, values: Sequence[Optional[Value]], attrs: Optional[dict] = None, opset: Optional[int] = None) -> Converted:
    """The float ``op_type`` on ``values``, built by its registered converter (see :func:`float_node`)."""
    fnode = float_node(ctx, node, op_type, values, attrs, opset)
    fn = resolve(op_type, fnode.version)
    if fn is None:
        raise ConvertError(f"{node.op_type} computes a float {op_type} version {fnode.version}, which tosaconv "
                           "does not convert")
    return fn(ctx, fnode)


def requantize(ctx: ImportContext, node: NodeReader, y: Value, scale_index: int, zp_index: int, data_index: int = 0) -> Value:
    """QuantizeLinear of float ``y`` with the node's output scale and zero point; the output type is
    the zero point's, else that of input ``data_index``."""
    qtype = qtype_of(ctx, node.input(zp_index)) or qtype_of(ctx, node.inputs[data_index])
    check_supported(qtype, f"{node.op_type} output")
    params = read_params(ctx, node, scale_index, zp_index, y.type)
    folded = fold_quantize(ctx, y, params, qtype)
    return folded if folded is not None else quantize(ctx, y, params, qtype)


def bias_scale(ctx: ImportContext, a: QParams, b: QParams, factor: float = 1.0) -> Param:
    """The scale of an int32 bias added to the accumulator of ``a`` times ``b``: ``factor * a_scale *
    b_scale``, flat (one value, or one per output channel); numpy when both scales are constants."""
    if not is_value(a.scale) and not is_value(b.scale):
        return (np.float32(factor) * a.scale.reshape(-1) * b.scale.reshape(-1)).astype(np.float32)
    product = ctx.b.emit(Op.MUL, _flat_f32(ctx, a.scale), _flat_f32(ctx, b.scale), attrs=A.MulAttrs(0))
    if factor == 1.0:
        return product
    return ctx.b.emit(Op.MUL, product, ctx.b.const(np.full((1,), factor, np.float32)), attrs=A.MulAttrs(0))


def _flat_f32(ctx: ImportContext, p: Param) -> Value:
    p = as_float32(ctx, p)
    if isinstance(p, np.ndarray):
        return ctx.b.const(p.reshape(-1))
    return reshape(ctx, p, [int(np.prod(p.type.static_shape()))])
