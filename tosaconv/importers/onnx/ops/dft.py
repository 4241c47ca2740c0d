"""Converters for ONNX DFT (opsets 17 and 20) and STFT (opset 17), through ``lowering.dft``.

DFT's data ends in a dim of 1 (real) or 2 (real, imaginary). The transformed
axis is moved last, padded with zeros or cropped to ``dft_length``, and
transformed (EXT-FFT or MATMUL, as ``--dft`` chooses); the inverse is scaled
by 1/n as ONNX defines it, and ``onesided`` keeps the first ``n/2 + 1`` bins.
Opset 17 gives ``axis`` as an attribute (default 1), opset 20 as an input
(default -2). ``inverse`` with ``onesided`` is opset 20's IRFFT: a one-sided
spectrum to ``dft_length`` (default ``2 * (bins - 1)``) real samples. STFT
frames the signal with one GATHER of constant indices (``frame_step`` and the
frame length must be constants; without either window or frame_length a frame
is the whole signal), multiplies by the window (a constant or a runtime input)
and transforms each frame. Lengths along the transformed axis must be static;
``dft_length`` and ``axis`` must be constants.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dft import STATIC_HINT, dft_last, irfft_last
from ....lowering.dims import reshape, slice_
from ....lowering.gather import take
from ....lowering.index_math import axis_last, inverse, transpose
from ....lowering.pad import pad_static
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish, published_limits

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


_NOT_CONSTANT = ("not a constant (an initializer or a value computed from constants)",)
publish("DFT", Limit("scalars-from-data", LimitKind.INPUT, "dft_length or axis", _NOT_CONSTANT,
                     "the transform size and axis decide the lowering", "make them initializers"))
publish("STFT", Limit("scalars-from-data", LimitKind.INPUT, "frame_step or frame_length", _NOT_CONSTANT,
                      "the frame count and size decide the output shape", "make them initializers"))


@converter("DFT", since=17)
def convert_dft_17(ctx: ImportContext, node: NodeReader) -> Converted:
    return _dft(ctx, node, int(node.attr("axis", 1)))


@converter("DFT", since=20)
def convert_dft_20(ctx: ImportContext, node: NodeReader) -> Converted:
    axis = _const_int(ctx, node, 2, "axis") if node.input(2) else -2
    return _dft(ctx, node, axis)


@converter("STFT", since=17)
def convert_stft(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.rank != 3:
        raise ConvertError(f"STFT takes a [batch, length, 1 or 2] signal, got rank {x.type.rank}")
    step = _const_int(ctx, node, 1, "frame_step")
    window = ctx.tensor(node.input(2)) if node.input(2) else None
    length = _const_int(ctx, node, 3, "frame_length") if node.input(3) else None
    length = length if length is not None else (window.type.shape[0] if window is not None else x.type.shape[1])
    if not isinstance(length, int):
        raise ConvertError(f"STFT: with neither window nor frame_length, a frame is the whole signal, whose "
                           f"length {length} is symbolic; {STATIC_HINT}")
    re, im = _parts(x, ctx)
    re, im = (None if v is None else _frames(ctx, v, step, length) for v in (re, im))
    if window is not None:
        w = reshape(ctx, window, [1, 1, length])
        re, im = (None if v is None else ctx.b.emit(Op.MUL, v, w, attrs=A.MulAttrs()) for v in (re, im))
    onesided = bool(node.attr("onesided", 1))
    out = dft_last(ctx, re, im, False, onesided, 1.0, f"STFT '{node.name}'")
    return _stack(ctx, *out)


def _dft(ctx: ImportContext, node: NodeReader, axis: int) -> Value:
    x = ctx.tensor(node.inputs[0])
    rank, what = x.type.rank, f"DFT '{node.name}'"
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank - 1:
        raise ConvertError(f"{what}: axis {axis} is out of range for rank {rank} data (the last dim holds "
                           f"the real/imaginary parts)")
    inverse_, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    perm = axis_last(rank - 1, axis)
    re, im = (None if v is None else transpose(ctx, v, perm) for v in _parts(x, ctx))
    if inverse_ and onesided:
        return _irfft(ctx, node, re, im, perm, what)
    n = _length(ctx, node, re, what)
    re, im = (None if v is None else _fit(ctx, v, n) for v in (re, im))
    out = dft_last(ctx, re, im, inverse_, onesided, 1.0 / n if inverse_ else 1.0, what)
    return _stack(ctx, *(transpose(ctx, v, inverse(perm)) for v in out))


def _irfft(ctx: ImportContext, node: NodeReader, re: Value, im: Optional[Value], perm: Sequence[int], what: str) -> Value:
    """inverse with onesided (opset 20's IRFFT): a one-sided spectrum to ``[..., n, 1]`` real samples."""
    if im is None:
        raise ConvertError(f"{what}: inverse with onesided takes a complex (last dim 2) one-sided spectrum")
    m = re.type.shape[-1]
    if not isinstance(m, int):
        raise ConvertError(f"{what}: the transformed axis has a symbolic length {m}; {STATIC_HINT}")
    n = _const_int(ctx, node, 1, "dft_length") if node.input(1) else 2 * (m - 1)
    if n < 1:
        raise ConvertError(f"{what}: the inverse length {n} must be >= 1 (give dft_length)")
    y = transpose(ctx, irfft_last(ctx, re, im, n, what), inverse(perm))
    return reshape(ctx, y, list(y.type.shape) + [1])


def _parts(x: Value, ctx: ImportContext) -> tuple:
    """(real, imaginary or None) of ONNX complex-as-last-dim data, without the last dim."""
    *lead, c = x.type.shape
    if c not in (1, 2):
        raise ConvertError(f"the last dim must be 1 (real) or 2 (complex), got {c}")
    if x.type.dtype.name not in ("FP32", "FP16", "BF16"):
        raise ConvertError(f"takes float data, got {x.type.dtype.name}")
    parts = [slice_(ctx, x, [0] * len(lead) + [i], lead + [1]) for i in range(c)]
    parts = [reshape(ctx, p, lead) for p in parts]
    return parts[0], (parts[1] if c == 2 else None)


def _length(ctx: ImportContext, node: NodeReader, re: Value, what: str) -> int:
    if not node.input(1):
        n = re.type.shape[-1]
        if not isinstance(n, int):
            raise ConvertError(f"{what}: the transformed axis has a symbolic length {n}; {STATIC_HINT}")
        return n
    n = _const_int(ctx, node, 1, "dft_length")
    if n < 1:
        raise ConvertError(f"{what}: dft_length must be >= 1, got {n}")
    return n


def _fit(ctx: ImportContext, v: Value, n: int) -> Value:
    """Zero-pad or crop the last axis to ``n`` (ONNX's dft_length)."""
    have = v.type.shape[-1]
    if not isinstance(have, int):
        raise ConvertError(f"the transformed axis has a symbolic length {have}; {STATIC_HINT}")
    rank = v.type.rank
    return pad_static(ctx, v, [0] * rank, [0] * (rank - 1) + [n - have], "constant")


def _frames(ctx: ImportContext, v: Value, step: int, length: int) -> Value:
    """``[batch, frames, length]`` frames of a ``[batch, signal]`` signal (one GATHER of constant rows)."""
    total = v.type.shape[1]
    if not isinstance(total, int):
        raise ConvertError(f"STFT: the signal length {total} is symbolic; {STATIC_HINT}")
    if step < 1 or length < 1 or length > total:
        raise ConvertError(f"STFT: frame_step {step} and frame length {length} do not fit a signal of {total}")
    count = 1 + (total - length) // step
    rows = (np.arange(count)[:, None] * step + np.arange(length)[None, :]).reshape(-1).astype(np.int32)
    framed = take(ctx, v, 1, ctx.b.const(rows))
    return reshape(ctx, framed, [v.type.shape[0], count, length])


def _stack(ctx: ImportContext, re: Value, im: Value) -> Value:
    """``[..., 2]`` from real and imaginary parts."""
    shape = list(re.type.shape)
    re, im = (reshape(ctx, v, shape + [1]) for v in (re, im))
    return ctx.b.emit(Op.CONCAT, re, im, attrs=A.AxisAttrs(len(shape)))


def _const_int(ctx: ImportContext, node: NodeReader, i: int, what: str) -> int:
    value = ctx.const(node.input(i))
    if value is None:
        raise published_limits(node.op_type)[0].refuse(f"{node.op_type} '{node.name}': {what}")
    return int(np.asarray(value).reshape(-1)[0])
