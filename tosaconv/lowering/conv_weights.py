"""Convolution weights and biases for the convolution converters of both importers.

A weight is a numpy array when it is an initializer (rearranged once, in
numpy, at import) or an IR value when it is computed or fed at run time
(rearranged with TRANSPOSE, RESHAPE, SLICE, PAD and REVERSE ops); every
helper here takes either. 1-D weights are lifted to 2-D with a kernel height
of 1. ConvTranspose's dilation is applied to the kernel itself: zeros between
its taps, which is exact.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from .dims import reshape, slice_
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext


def acc_type(x: Value) -> DType:
    """The accumulator of a float convolution; other data is refused (quantized convolutions have
    their own converters: ONNX ConvInteger and QLinearConv, TFLite's quantized forms)."""
    if not x.type.dtype.is_float:
        raise ConvertError(f"{x.type.dtype.value} convolution is not supported (this convolution is float-only; "
                           "quantized models use ConvInteger or QLinearConv in ONNX, quantized ops in TFLite)")
    return DType.FP32


def weight(ctx: LoweringContext, name: str, dtype: DType, rank: int) -> Union[np.ndarray, Value]:
    """The weight as a numpy array when constant, else as an IR value; rank 3 is lifted to 4-D."""
    w = ctx.const(name)
    if w is not None:
        w = w.astype(dtype.numpy, copy=False)   # rearrange() makes the one copy a constant needs
        return w[:, :, None, :] if rank == 3 else w
    v = ctx.tensor(name)
    if not v.type.is_static:
        raise ConvertError(f"weight '{name}' has symbolic dims {v.type}; convolution weights need a static shape")
    return reshape(ctx, v, [*v.type.shape[:2], 1, v.type.shape[2]]) if rank == 3 else v


def shape_of(w: Union[np.ndarray, Value]) -> tuple:
    return tuple(w.shape) if isinstance(w, np.ndarray) else tuple(w.type.shape)


def as_value(ctx: LoweringContext, v: Union[np.ndarray, Value]) -> Value:
    return ctx.b.const(v) if isinstance(v, np.ndarray) else v


def rearrange(ctx: LoweringContext, w: Union[np.ndarray, Value], shape: Sequence[Dim], perm: Sequence[int]) -> Value:
    """Reshape then transpose a weight: in numpy for constants (a view: the writer transposes the
    elements on their way into the file, so a weight is never copied whole), with IR ops otherwise."""
    if isinstance(w, np.ndarray):
        return ctx.b.const(w.reshape(shape).transpose(perm))
    return ctx.b.emit(Op.TRANSPOSE, reshape(ctx, w, shape), attrs=A.TransposeAttrs(tuple(perm)))


def rows(ctx: LoweringContext, w: Union[np.ndarray, Value], start: int, count: int) -> Union[np.ndarray, Value]:
    """Rows ``start:start+count`` of the leading axis of a weight or bias."""
    if isinstance(w, np.ndarray):
        return w[start:start + count]
    shape = list(w.type.shape)
    if start == 0 and count == shape[0]:
        return w
    return ctx.b.emit(Op.SLICE, w, attrs=A.SliceAttrs((start,) + (0,) * (len(shape) - 1),
                                                      (count, *shape[1:])))


def bias(ctx: LoweringContext, name: Optional[str], out_channels: int, dtype: DType) -> Union[np.ndarray, Value]:
    """The bias named ``name`` (a numpy array when constant), or zeros when there is none (None)."""
    if name is None:
        return np.zeros((out_channels,), dtype.numpy)
    c = ctx.const(name)
    return c.astype(dtype.numpy, copy=False) if c is not None else ctx.tensor(name)


def dilate(ctx: LoweringContext, w: Union[np.ndarray, Value], axis: int, d: int) -> Union[np.ndarray, Value]:
    """Insert ``d - 1`` zeros between the taps along ``axis``: kernel size k becomes (k-1)*d + 1."""
    if d == 1:
        return w
    shape = list(shape_of(w))
    k = shape[axis]
    if isinstance(w, np.ndarray):
        out = np.zeros(shape[:axis] + [(k - 1) * d + 1] + shape[axis + 1:], w.dtype)
        out[(slice(None),) * axis + (slice(None, None, d),)] = w
        return out
    spread = reshape(ctx, w, shape[:axis + 1] + [1] + shape[axis + 1:])
    padding = [0] * (2 * (len(shape) + 1))
    padding[2 * (axis + 1) + 1] = d - 1
    spread = ctx.b.emit(Op.PAD, spread, attrs=A.PadAttrs(tuple(padding), 0.0))
    spread = reshape(ctx, spread, shape[:axis] + [k * d] + shape[axis + 1:])
    sizes = shape[:axis] + [(k - 1) * d + 1] + shape[axis + 1:]
    return slice_(ctx, spread, [0] * len(shape), sizes)


def flip(ctx: LoweringContext, w: Union[np.ndarray, Value], axes: Sequence[int]) -> Union[np.ndarray, Value]:
    """Reverse ``w`` along each of ``axes`` (a transposed convolution's kernel, as a correlation)."""
    if isinstance(w, np.ndarray):
        return np.ascontiguousarray(np.flip(w, axis=tuple(axes)))
    for axis in axes:
        w = ctx.b.emit(Op.REVERSE, w, attrs=A.AxisAttrs(axis))
    return w
