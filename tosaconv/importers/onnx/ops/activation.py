"""Converters for the ONNX activations TOSA has no single op for: Elu, Selu,
Celu, HardSigmoid, HardSwish, PRelu, Softplus, Softsign, ThresholdedRelu,
Shrink, Gelu and Mish; and Dropout, which is the identity at inference.

Each is a short composition of TOSA elementwise ops that follows the ONNX
definition (the reference implementation or the schema's function body)
term by term, with the schema's defaults for the constants (Selu's alpha and
gamma, HardSigmoid's 0.2 and 0.5...). Two places differ on purpose:
Softplus is computed as ``max(x, 0) + log(1 + exp(-|x|))``, which equals
``log(exp(x) + 1)`` but does not overflow for large x (onnxruntime computes
it the same way), and a division by a constant is a multiplication by its
float32 reciprocal (TOSA has no float division).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.elementwise import hard_sigmoid
from ....lowering.typed import compare, mul
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

GELU_TANH_COEFF = 0.044715


def _x(ctx: ImportContext, node: NodeReader) -> Value:
    return ctx.tensor(node.inputs[0])


def _c(ctx: ImportContext, value: float, x: Value) -> Value:
    """A constant of x's type, ready to broadcast against x."""
    return ctx.b.scalar_like(value, x.type)


def _add(ctx: ImportContext, a: Value, b: Value) -> Value:
    return ctx.b.emit(Op.ADD, a, b)


def _sub(ctx: ImportContext, a: Value, b: Value) -> Value:
    return ctx.b.emit(Op.SUB, a, b)


def _select(ctx: ImportContext, cond: Value, a: Value, b: Value) -> Value:
    return ctx.b.emit(Op.SELECT, cond, a, b)


def _positive(ctx: ImportContext, x: Value) -> Value:
    return compare(ctx, Op.GREATER, x, _c(ctx, 0, x))


def _exp_minus_one(ctx: ImportContext, x: Value) -> Value:
    return _sub(ctx, ctx.b.emit(Op.EXP, x), _c(ctx, 1, x))


def softplus(ctx: ImportContext, x: Value) -> Value:
    """``log(1 + exp(x))`` as ``max(x, 0) + log(1 + exp(-|x|))`` (no overflow)."""
    tail = ctx.b.emit(Op.EXP, ctx.b.emit(Op.NEGATE, ctx.b.emit(Op.ABS, x), attrs=A.NegateAttrs(0, 0)))
    log_term = ctx.b.emit(Op.LOG, _add(ctx, tail, _c(ctx, 1, x)))
    return _add(ctx, ctx.b.emit(Op.MAXIMUM, x, _c(ctx, 0, x), attrs=A.NanModeAttrs()), log_term)


@converter("Elu", since=6)
def convert_elu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = _x(ctx, node)
    negative = mul(ctx, _exp_minus_one(ctx, x), _c(ctx, node.attr("alpha"), x))
    return _select(ctx, _positive(ctx, x), x, negative)


@converter("Selu", since=6)
def convert_selu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = _x(ctx, node)
    alpha = _c(ctx, node.attr("alpha"), x)
    negative = _sub(ctx, mul(ctx, ctx.b.emit(Op.EXP, x), alpha), alpha)
    return mul(ctx, _select(ctx, _positive(ctx, x), x, negative), _c(ctx, node.attr("gamma"), x))


@converter("Celu", since=12)
def convert_celu(ctx: ImportContext, node: NodeReader) -> Converted:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    x = _x(ctx, node)
    alpha = node.attr("alpha")
    if alpha == 0:
        raise ConvertError("Celu with alpha = 0 divides by zero; ONNX requires a nonzero alpha")
    scaled = mul(ctx, _exp_minus_one(ctx, mul(ctx, x, _c(ctx, 1.0 / alpha, x))), _c(ctx, alpha, x))
    zero = _c(ctx, 0, x)
    return _add(ctx, ctx.b.emit(Op.MAXIMUM, x, zero, attrs=A.NanModeAttrs()),
                ctx.b.emit(Op.MINIMUM, scaled, zero, attrs=A.NanModeAttrs()))


@converter("HardSigmoid", since=6)
def convert_hard_sigmoid(ctx: ImportContext, node: NodeReader) -> Converted:
    return hard_sigmoid(ctx, _x(ctx, node), node.attr("alpha"), node.attr("beta"))


@converter("HardSwish", since=14)
def convert_hard_swish(ctx: ImportContext, node: NodeReader) -> Converted:
    """``x * max(0, min(1, x / 6 + 0.5))`` (the schema's HardSigmoid with alpha 1/6, beta 0.5)."""
    x = _x(ctx, node)
    return mul(ctx, x, hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5))


@converter("PRelu", since=7)
def convert_prelu(ctx: ImportContext, node: NodeReader) -> Converted:
    """``slope * x`` where x < 0, else x; the slope broadcasts to x (numpy-style, e.g. [C, 1, 1])."""
    x, slope = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    if slope.type.rank > x.type.rank:
        raise ConvertError(f"PRelu slope has rank {slope.type.rank}, above the input's {x.type.rank}; "
                           "the slope must broadcast to the input")
    negative = compare(ctx, Op.GREATER, _c(ctx, 0, x), x)
    return _select(ctx, negative, mul(ctx, x, slope), x)


@converter("Softplus", since=1)
def convert_softplus(ctx: ImportContext, node: NodeReader) -> Converted:
    return softplus(ctx, _x(ctx, node))


@converter("Softsign", since=1)
def convert_softsign(ctx: ImportContext, node: NodeReader) -> Converted:
    x = _x(ctx, node)
    return mul(ctx, x, ctx.b.emit(Op.RECIPROCAL, _add(ctx, ctx.b.emit(Op.ABS, x), _c(ctx, 1, x))))


@converter("ThresholdedRelu", since=10)
def convert_thresholded_relu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = _x(ctx, node)
    above = compare(ctx, Op.GREATER, x, _c(ctx, node.attr("alpha"), x))
    return _select(ctx, above, x, _c(ctx, 0, x))


SHRINK_INT_BIAS = publish("Shrink", Limit(
    "int-fractional-bias", LimitKind.ATTRIBUTE, "bias", ("a fraction, on integer data",),
    "the shifted values are not integers, which needs float arithmetic", "cast the input to float first"))


@converter("Shrink", since=9)
def convert_shrink(ctx: ImportContext, node: NodeReader) -> Converted:
    """``x + bias`` where x < -lambd, ``x - bias`` where x > lambd, else 0."""
    x = _x(ctx, node)
    bias, lambd = node.attr("bias"), node.attr("lambd")
    low, high = -lambd, lambd
    if not x.type.dtype.is_float:
        if bias != int(bias):
            raise SHRINK_INT_BIAS.refuse(f"Shrink of {x.type.dtype.value} data with bias {bias}")
        # For integers x: x < -lambd <=> x < ceil(-lambd), and x > lambd <=> x > floor(lambd).
        low, high = math.ceil(-lambd), math.floor(lambd)
    below = compare(ctx, Op.GREATER, _c(ctx, low, x), x)
    above = compare(ctx, Op.GREATER, x, _c(ctx, high, x))
    b = _c(ctx, bias, x)
    inner = _select(ctx, above, _sub(ctx, x, b), _c(ctx, 0, x))
    return _select(ctx, below, _add(ctx, x, b), inner)


@converter("Gelu", since=20)
def convert_gelu(ctx: ImportContext, node: NodeReader) -> Converted:
    """approximate="none": ``0.5 x (1 + erf(x / sqrt 2))``;
    "tanh": ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``."""
    x = _x(ctx, node)
    approximate = node.attr("approximate")
    if approximate == "none":
        inner = ctx.b.emit(Op.ERF, mul(ctx, x, _c(ctx, 1.0 / math.sqrt(2.0), x)))
    elif approximate == "tanh":
        cube = mul(ctx, mul(ctx, x, x), x)
        poly = _add(ctx, x, mul(ctx, cube, _c(ctx, GELU_TANH_COEFF, x)))
        inner = ctx.b.emit(Op.TANH, mul(ctx, poly, _c(ctx, math.sqrt(2.0 / math.pi), x)))
    else:
        raise ConvertError(f"Gelu approximate='{approximate}' is not one of 'none', 'tanh'")
    return mul(ctx, mul(ctx, x, _c(ctx, 0.5, x)), _add(ctx, inner, _c(ctx, 1, x)))


@converter("Mish", since=18)
def convert_mish(ctx: ImportContext, node: NodeReader) -> Converted:
    x = _x(ctx, node)
    return mul(ctx, x, ctx.b.emit(Op.TANH, softplus(ctx, x)))


# -- Dropout -------------------------------------------------------------------------

DROPOUT_MODE_FROM_DATA, DROPOUT_TRAINING = publish(
    "Dropout",
    Limit("training-mode-from-data", LimitKind.INPUT, "training_mode", ("computed from tensor data at run time",),
          "tosaconv converts inference graphs and must know the mode at import",
          "make it a constant false (export in eval mode)"),
    Limit("training-mode", LimitKind.INPUT, "training_mode", ("true (with a ratio other than 0)",),
          "training mode drops random elements, which has no TOSA equivalent",
          "export the model in inference (eval) mode"))


@converter("Dropout", since=1)
def convert_dropout(ctx: ImportContext, node: NodeReader) -> Converted:
    """Inference: the output is the input and the optional mask is all true."""
    _check_inference(ctx, node)
    x = _x(ctx, node)
    if len(node.outputs) < 2 or not node.outputs[1]:
        return x
    # x > x is false for every x, NaN included: its negation is an all-true mask of x's shape.
    return [x, ctx.b.emit(Op.LOGICAL_NOT, compare(ctx, Op.GREATER, x, x))]


def _check_inference(ctx: ImportContext, node: NodeReader) -> None:
    """From opset 12 the mode is input 2; training with a nonzero ratio drops random elements."""
    if node.version < 12 or node.input(2) is None:
        return
    training = ctx.const(node.input(2))
    if training is None:
        raise DROPOUT_MODE_FROM_DATA.refuse(f"Dropout's training_mode input '{node.input(2)}'")
    if not bool(np.asarray(training).reshape(-1)[0]):
        return
    ratio = ctx.const(node.input(1)) if node.input(1) else np.array(0.5)
    if ratio is None or float(np.asarray(ratio).reshape(-1)[0]) != 0.0:
        raise DROPOUT_TRAINING.refuse("Dropout in training mode")
