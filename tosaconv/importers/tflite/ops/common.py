"""Helpers shared by the TFLite converters: fused activations, float checks, padding.

``fused(ctx, node, y)`` applies an op's ``fused_activation_function``:
RELU, RELU_N1_TO_1 and RELU6 clamp (what TFLite's CalculateActivationRange
gives every kernel); TANH and SIGN_BIT leave the values as they are, because
that function gives them no bounds and these kernels apply nothing else.
``activation`` (used where TFLite applies the function itself) also has TANH
and SIGN_BIT (``x < 0 ? 1 : 0``).
``window(...)`` turns TFLite's SAME/VALID padding into the shared
:class:`~tosaconv.lowering.window.Window` with SAME_UPPER (TFLite's
``ComputePaddingWithOffset`` puts the odd extra pad at the end, like ONNX's
SAME_UPPER), so the shared geometry code fits symbolic H and W the same way.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, Sequence, Union

import numpy as np

from ....ir.ops import Op
from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from ....lowering.typed import clamp
from ....lowering.window import Window
from ..reader import ConvertError
from ..schema import tflite

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..node import OpReader
    from ....lowering.context import Converted
    from ..context import TfliteContext

ACT = tflite.ActivationFunctionType
_ACT_NAMES = {v: k for k, v in vars(ACT).items() if not k.startswith("_")}
FLOAT_MAX = float(np.finfo(np.float32).max)


def fused(ctx: TfliteContext, node: OpReader, y: Value, field: str = "FusedActivationFunction") -> Value:
    """The fused activation of an arithmetic, convolution, pooling or fully connected op.

    TFLite's kernels for these ops only clamp to CalculateActivationRange's bounds, which are the
    full float range for TANH and SIGN_BIT (tensorflow/lite/kernels/kernel_util.h), so LiteRT
    ignores those two here; tosaconv follows the kernels rather than the enum's name."""
    act = node.opt(field)
    return y if act in (ACT.TANH, ACT.SIGN_BIT) else activation(ctx, y, act)


def activation(ctx: TfliteContext, y: Value, act: int) -> Value:
    if act == ACT.NONE:
        return y
    if act == ACT.RELU:
        return clamp(ctx, y, 0, FLOAT_MAX if y.type.dtype.is_float else int(np.iinfo(np.int32).max))
    if act == ACT.RELU_N1_TO_1:
        return clamp(ctx, y, -1, 1)
    if act == ACT.RELU6:
        return clamp(ctx, y, 0, 6)
    if act == ACT.TANH:
        return ctx.b.emit(Op.TANH, y)
    if act == ACT.SIGN_BIT:
        negative = ctx.b.emit(Op.GREATER, ctx.b.scalar_like(0, y.type), y)
        return ctx.b.emit(Op.SELECT, negative, ctx.b.scalar_like(1, y.type), ctx.b.scalar_like(0, y.type))
    raise ConvertError(f"fused activation {_ACT_NAMES.get(act, act)} is not supported")


def float_input(ctx: TfliteContext, node: OpReader, i: int = 0) -> Value:
    """Input ``i`` as a tensor, refusing the quantized form (a later phase)."""
    x = ctx.tensor(node.inputs[i])
    info = node.input_infos[i]
    if info is not None and info.quant is not None and not x.type.dtype.is_float:
        raise ConvertError(f"quantized {node.op_type} ({x.type.dtype.value} with scale/zero point) is not "
                           "supported yet; only float models convert")
    return x


def require_float(node: OpReader, x: Value) -> Value:
    if not x.type.dtype.is_float:
        raise ConvertError(f"{node.op_type} on {x.type.dtype.value} data is not supported (float only)")
    return x


def window(node: OpReader, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int] = (1, 1)) -> Window:
    padding = node.opt("Padding")
    if padding not in (tflite.Padding.SAME, tflite.Padding.VALID):
        raise ConvertError(f"padding {padding} is neither SAME nor VALID")
    auto = "SAME_UPPER" if padding == tflite.Padding.SAME else "VALID"
    return Window(tuple(kernel), tuple(stride), tuple(dilation), (0, 0), (0, 0), auto, False, 4)


@dataclass(frozen=True)
class ComplexPair:
    """A complex tensor as its real and imaginary parts (TOSA has no complex type). Only the ops that
    take a part (TFLite REAL, IMAG, COMPLEX_ABS, CAST) or move both alike read one; :attr:`why_not_a_tensor` is the refusal any
    other reader gives."""

    real: object
    imag: object
    source: str

    @property
    def why_not_a_tensor(self) -> str:
        return (f"is the complex result of {self.source}; TOSA has no complex tensors, so only REAL, IMAG, "
                f"COMPLEX_ABS, CAST to a real type and the shape-only RESHAPE, SQUEEZE, EXPAND_DIMS and "
                f"TRANSPOSE can read it")


def complex_parts(fn: Callable[[TfliteContext, OpReader], Converted]) -> Callable[[TfliteContext, OpReader], Union[Converted, ComplexPair]]:
    """Wrap a data-movement converter so that a complex input 0 moves part by part: the converter runs on
    the real and on the imaginary part, and the op's result is the pair of its two results."""
    @functools.wraps(fn)
    def convert(ctx: TfliteContext, node: OpReader) -> Union[Converted, ComplexPair]:
        held = ctx.values.get(node.inputs[0])
        if not isinstance(held, ComplexPair):
            return fn(ctx, node)
        parts = []
        try:
            for part in (held.real, held.imag):
                ctx.values[node.inputs[0]] = part
                parts.append(fn(ctx, node))
        finally:
            ctx.values[node.inputs[0]] = held
        return ComplexPair(*parts, source=held.source)
    return convert
