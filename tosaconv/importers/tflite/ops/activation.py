"""Converters for TFLite activations and normalizations: LOGISTIC, TANH, the
RELU family, LEAKY_RELU, PRELU, HARD_SWISH, GELU, ELU, SOFTMAX (with beta),
LOG_SOFTMAX, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION.

SOFTMAX and LOG_SOFTMAX work on the last axis (TFLite's only axis) and
subtract the max first, like the reference kernels. L2_NORMALIZATION is
``x * rsqrt(max(sum(x^2), 1e-6))`` over the last axis (the float kernel's
epsilon). LOCAL_RESPONSE_NORMALIZATION is ``x * (bias + alpha * sum(x^2 over
channels c - radius .. c + radius))^-beta`` on the last axis, the reference
kernel's formula, built by :func:`tosaconv.lowering.lrn.local_response`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.elementwise import hard_sigmoid
from ....lowering.typed import clamp, compare, mul
from ..registry import converter
from .common import ACT, activation, fused

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext

L2_EPSILON = 1e-6


def _x(ctx: TfliteContext, node: OpReader) -> Value:
    return ctx.tensor(node.inputs[0])


def _c(ctx: TfliteContext, value: float, x: Value) -> Value:
    return ctx.b.scalar_like(value, x.type)


@converter("LOGISTIC")
def convert_logistic(ctx: TfliteContext, node: OpReader) -> Converted:
    return ctx.b.emit(Op.SIGMOID, _x(ctx, node))


@converter("TANH")
def convert_tanh(ctx: TfliteContext, node: OpReader) -> Converted:
    return ctx.b.emit(Op.TANH, _x(ctx, node))


@converter("RELU")
def convert_relu(ctx: TfliteContext, node: OpReader) -> Converted:
    return activation(ctx, _x(ctx, node), ACT.RELU)


@converter("RELU6")
def convert_relu6(ctx: TfliteContext, node: OpReader) -> Converted:
    return activation(ctx, _x(ctx, node), ACT.RELU6)


@converter("RELU_N1_TO_1")
def convert_relu_n1_to_1(ctx: TfliteContext, node: OpReader) -> Converted:
    return activation(ctx, _x(ctx, node), ACT.RELU_N1_TO_1)


@converter("RELU_0_TO_1")
def convert_relu_0_to_1(ctx: TfliteContext, node: OpReader) -> Converted:
    return clamp(ctx, _x(ctx, node), 0, 1)


@converter("LEAKY_RELU", options="LeakyReluOptions")
def convert_leaky_relu(ctx: TfliteContext, node: OpReader) -> Converted:
    x = _x(ctx, node)
    negative = compare(ctx, Op.GREATER, _c(ctx, 0, x), x)
    return ctx.b.emit(Op.SELECT, negative, mul(ctx, x, _c(ctx, node.opt("Alpha"), x)), x)


@converter("PRELU")
def convert_prelu(ctx: TfliteContext, node: OpReader) -> Converted:
    x, alpha = _x(ctx, node), ctx.tensor(node.inputs[1])
    negative = compare(ctx, Op.GREATER, _c(ctx, 0, x), x)
    return ctx.b.emit(Op.SELECT, negative, mul(ctx, x, alpha), x)


@converter("HARD_SWISH")
def convert_hard_swish(ctx: TfliteContext, node: OpReader) -> Converted:
    x = _x(ctx, node)
    return mul(ctx, x, hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5))


@converter("GELU", options="GeluOptions")
def convert_gelu(ctx: TfliteContext, node: OpReader) -> Converted:
    x = _x(ctx, node)
    if node.opt("Approximate"):
        cube = mul(ctx, mul(ctx, x, x), x)
        poly = ctx.b.emit(Op.ADD, x, mul(ctx, cube, _c(ctx, 0.044715, x)))
        inner = ctx.b.emit(Op.TANH, mul(ctx, poly, _c(ctx, math.sqrt(2.0 / math.pi), x)))
    else:
        inner = ctx.b.emit(Op.ERF, mul(ctx, x, _c(ctx, 1.0 / math.sqrt(2.0), x)))
    return mul(ctx, mul(ctx, x, _c(ctx, 0.5, x)), ctx.b.emit(Op.ADD, inner, _c(ctx, 1.0, x)))


@converter("ELU")
def convert_elu(ctx: TfliteContext, node: OpReader) -> Converted:
    x = _x(ctx, node)
    negative = compare(ctx, Op.GREATER, _c(ctx, 0, x), x)
    em1 = ctx.b.emit(Op.SUB, ctx.b.emit(Op.EXP, x), _c(ctx, 1.0, x))
    return ctx.b.emit(Op.SELECT, negative, em1, x)


def _shifted(ctx: TfliteContext, node: OpReader, beta: float = 1.0) -> tuple[Value, Value, Value]:
    from ....lowering.reduce import reduce_chain   # here and below: only some activations reduce (start-up, issue 13)
    x = _x(ctx, node)
    axis = [x.type.rank - 1]
    shifted = ctx.b.emit(Op.SUB, x, reduce_chain(ctx, Op.REDUCE_MAX, x, axis))
    if beta != 1.0:
        shifted = mul(ctx, shifted, _c(ctx, beta, x))
    e = ctx.b.emit(Op.EXP, shifted)
    return shifted, e, reduce_chain(ctx, Op.REDUCE_SUM, e, axis)


@converter("SOFTMAX", options="SoftmaxOptions")
def convert_softmax(ctx: TfliteContext, node: OpReader) -> Converted:
    _, e, total = _shifted(ctx, node, float(node.opt("Beta")))
    return mul(ctx, e, ctx.b.emit(Op.RECIPROCAL, total))


@converter("LOG_SOFTMAX")
def convert_log_softmax(ctx: TfliteContext, node: OpReader) -> Converted:
    shifted, _, total = _shifted(ctx, node)
    return ctx.b.emit(Op.SUB, shifted, ctx.b.emit(Op.LOG, total))


@converter("L2_NORMALIZATION", options="L2NormOptions")
def convert_l2_normalization(ctx: TfliteContext, node: OpReader) -> Converted:
    from ....lowering.reduce import reduce_chain
    x = _x(ctx, node)
    total = reduce_chain(ctx, Op.REDUCE_SUM, mul(ctx, x, x), [x.type.rank - 1])
    total = ctx.b.emit(Op.MAXIMUM, total, _c(ctx, L2_EPSILON, x), attrs=A.NanModeAttrs())
    return fused(ctx, node, mul(ctx, x, ctx.b.emit(Op.RSQRT, total)))


@converter("LOCAL_RESPONSE_NORMALIZATION", options="LocalResponseNormalizationOptions")
def convert_local_response_normalization(ctx: TfliteContext, node: OpReader) -> Converted:
    from ....lowering.lrn import local_response
    x = _x(ctx, node)
    radius = int(node.opt("Radius"))
    return local_response(ctx, x, radius, radius, float(node.opt("Alpha")), float(node.opt("Bias")),
                          float(node.opt("Beta")), axis=x.type.rank - 1)
