"""Converters for onnxruntime's com.microsoft QLinear* ops, the QOperator format of its quantizer.

onnxruntime defines each as ``quantize(op(dequantize(inputs)))`` with
per-tensor scales and zero points (``docs/ContribOperators.md``), and
computes it with lookup tables or fixed-point kernels that agree with that
float definition up to rounding. Each converter builds that definition with
the helpers of :mod:`.qlinear_base`: recorded DequantizeLinears, the float
op by its own converter, then a QuantizeLinear that the QDQ folding turns
into integer TOSA where it can. Input orders, from onnxruntime's schemas:

* QLinearAdd / QLinearMul: ``A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp``.
* QLinearSigmoid / QLinearLeakyRelu (``alpha``) / QLinearGlobalAveragePool /
  QLinearAveragePool / QLinearReduceMean / QLinearSoftmax:
  ``X, X_scale, X_zp, Y_scale, Y_zp``. The pools take ``channels_last``
  (NHWC data); QLinearSoftmax's ``opset`` is the Softmax version whose axis
  rule it follows (one axis from 13, the flattened trailing block before),
  and its ``axis`` defaults to -1.
* QLinearConcat: ``Y_scale, Y_zp`` then one ``X, X_scale, X_zp`` triple per input.
* QLinearWhere: ``condition, X, X_scale, X_zp, Y, Y_scale, Y_zp, Z_scale, Z_zp``.

A zero point left out is 0 of the data's type. The contrib QuantizeLinear and
DequantizeLinear are ONNX's, registered again for their domain.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from ....ir import attrs as A
from ....ir.ops import Op
from ..ms_domain import MS
from ..reader import ConvertError
from ..registry import converter
from .qlinear_base import dequantize_input, requantize, run_float
from .quant import convert_dequantize_linear, convert_quantize_linear

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

converter("QuantizeLinear", since=1, domain=MS)(convert_quantize_linear)
converter("DequantizeLinear", since=1, domain=MS)(convert_dequantize_linear)


def _binary(op_type: str) -> Callable[[ImportContext, NodeReader], Value]:
    def convert(ctx: ImportContext, node: NodeReader) -> Value:
        a, _ = dequantize_input(ctx, node, 0, 1, 2)
        b, _ = dequantize_input(ctx, node, 3, 4, 5)
        return requantize(ctx, node, run_float(ctx, node, op_type, [a, b], {}), 6, 7)
    convert.__name__ = f"convert_qlinear_{op_type.lower()}"
    return convert


converter("QLinearAdd", since=1, domain=MS)(_binary("Add"))
converter("QLinearMul", since=1, domain=MS)(_binary("Mul"))


def _unary(ctx: ImportContext, node: NodeReader, op_type: str, attrs: dict, opset: Optional[int] = None, channels_last: bool = False) -> Value:
    """``X, X_scale, X_zp, Y_scale, Y_zp``: the float ``op_type`` on X (NHWC X moved to NCHW and back)."""
    x, _ = dequantize_input(ctx, node, 0, 1, 2)
    if channels_last:
        x = _transpose(ctx, x, _to_channels_first(x.type.rank))
    y = run_float(ctx, node, op_type, [x], attrs, opset)
    if channels_last:
        y = _transpose(ctx, y, _to_channels_last(y.type.rank))
    return requantize(ctx, node, y, 3, 4)


@converter("QLinearSigmoid", since=1, domain=MS)
def convert_qlinear_sigmoid(ctx: ImportContext, node: NodeReader) -> Converted:
    return _unary(ctx, node, "Sigmoid", {})


@converter("QLinearLeakyRelu", since=1, domain=MS)
def convert_qlinear_leaky_relu(ctx: ImportContext, node: NodeReader) -> Converted:
    return _unary(ctx, node, "LeakyRelu", {"alpha": node.attr("alpha")})


@converter("QLinearSoftmax", since=1, domain=MS)
def convert_qlinear_softmax(ctx: ImportContext, node: NodeReader) -> Converted:
    return _unary(ctx, node, "Softmax", {"axis": node.attr("axis")}, opset=node.attr("opset"))


@converter("QLinearReduceMean", since=1, domain=MS)
def convert_qlinear_reduce_mean(ctx: ImportContext, node: NodeReader) -> Converted:
    # ReduceMean 13 is the last version that takes ``axes`` as an attribute, as this op does.
    return _unary(ctx, node, "ReduceMean", {"axes": list(node.attr("axes")), "keepdims": node.attr("keepdims")},
                  opset=13)


@converter("QLinearGlobalAveragePool", since=1, domain=MS)
def convert_qlinear_global_average_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    return _unary(ctx, node, "GlobalAveragePool", {}, channels_last=bool(node.attr("channels_last")))


_POOL_ATTRS = ("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides")


@converter("QLinearAveragePool", since=1, domain=MS)
def convert_qlinear_average_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    attrs = {name: node.attr(name) for name in _POOL_ATTRS}
    attrs = {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}
    return _unary(ctx, node, "AveragePool", attrs, channels_last=bool(node.attr("channels_last")))


@converter("QLinearConcat", since=1, domain=MS)
def convert_qlinear_concat(ctx: ImportContext, node: NodeReader) -> Converted:
    if len(node.inputs) < 5 or (len(node.inputs) - 2) % 3:
        raise ConvertError(f"QLinearConcat takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) "
                           f"triples; this node has {len(node.inputs)} inputs")
    xs = [dequantize_input(ctx, node, i, i + 1, i + 2)[0] for i in range(2, len(node.inputs), 3)]
    y = run_float(ctx, node, "Concat", xs, {"axis": node.attr("axis")})
    return requantize(ctx, node, y, 0, 1, data_index=2)


@converter("QLinearWhere", since=1, domain=MS)
def convert_qlinear_where(ctx: ImportContext, node: NodeReader) -> Converted:
    x, _ = dequantize_input(ctx, node, 1, 2, 3)
    y, _ = dequantize_input(ctx, node, 4, 5, 6)
    z = run_float(ctx, node, "Where", [ctx.tensor(node.inputs[0]), x, y], {})
    return requantize(ctx, node, z, 7, 8, data_index=1)


def _to_channels_first(rank: int) -> tuple:
    return (0, rank - 1) + tuple(range(1, rank - 1))


def _to_channels_last(rank: int) -> tuple:
    return (0,) + tuple(range(2, rank)) + (1,)


def _transpose(ctx: ImportContext, x: Value, perms: tuple) -> Value:
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(perms))
