"""Converters for TFLite RFFT2D and the ops that read its complex result: REAL, IMAG, COMPLEX_ABS.

RFFT2D transforms the last two dims of float32 data, first cropped or
zero-padded to ``fft_length`` (a constant pair; LiteRT requires powers of
two), into complex64 ``[..., fft_h, fft_w/2 + 1]``. TOSA has no complex type,
so the result is held as a :class:`~.common.ComplexPair` of
real and imaginary parts that REAL, IMAG and COMPLEX_ABS read, CAST to a
real type reads the real part of (as LiteRT's cast.cc does), and the
shape-only RESHAPE, SQUEEZE, EXPAND_DIMS and TRANSPOSE move part by part
(:func:`.common.complex_parts`; tf.signal.stft squeezes RFFT2D's result). Any other
reader, or a graph output, is refused by name. The transform itself is
``lowering.dft``'s: TOSA RFFT2D (EXT-FFT) or MATMULs, as ``--dft`` chooses.
TFLite has no builtin FFT2D or 1-D RFFT; TensorFlow's are Flex ops, which
stay unsupported.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir.ops import Op
from ....lowering.dft import STATIC_HINT, rfft2d_last2
from ....lowering.elementwise import sqrt
from ....lowering.pad import pad_static
from ..reader import ConvertError
from ..registry import converter
from .common import ComplexPair, float_input

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext


@converter("RFFT2D")
def convert_rfft2d(ctx: TfliteContext, node: OpReader) -> Converted:
    what = f"RFFT2D '{node.name}'"
    x = float_input(ctx, node)
    if x.type.rank < 2:
        raise ConvertError(f"{what} takes data of rank >= 2, got rank {x.type.rank}")
    lengths = ctx.const(node.input(1))
    if lengths is None or np.size(lengths) != 2:
        raise ConvertError(f"{what}: fft_length must be a constant pair [fft_h, fft_w]")
    fh, fw = (int(v) for v in np.asarray(lengths).reshape(-1))
    if fh < 1 or fw < 1:
        raise ConvertError(f"{what}: fft_length {[fh, fw]} must be positive")
    *_, h, w = x.type.shape
    if not (isinstance(h, int) and isinstance(w, int)):
        raise ConvertError(f"{what}: the transformed dims {h}, {w} are symbolic; {STATIC_HINT}")
    rank = x.type.rank
    x = pad_static(ctx, x, [0] * rank, [0] * (rank - 2) + [fh - h, fw - w], "constant")
    if node.outputs[0] in _graph_outputs(ctx):
        raise ConvertError(f"{what}: its complex64 result is a graph output; TOSA has no complex tensors "
                           f"(take REAL/IMAG/COMPLEX_ABS of it in the model)")
    return ComplexPair(*rfft2d_last2(ctx, x, what), source=what)


@converter("REAL")
def convert_real(ctx: TfliteContext, node: OpReader) -> Converted:
    return _pair(ctx, node).real


@converter("IMAG")
def convert_imag(ctx: TfliteContext, node: OpReader) -> Converted:
    return _pair(ctx, node).imag


@converter("COMPLEX_ABS")
def convert_complex_abs(ctx: TfliteContext, node: OpReader) -> Converted:
    pair = _pair(ctx, node)
    re2 = ctx.b.emit(Op.MUL, pair.real, pair.real)
    im2 = ctx.b.emit(Op.MUL, pair.imag, pair.imag)
    return sqrt(ctx, ctx.b.emit(Op.ADD, re2, im2))


def _pair(ctx: TfliteContext, node: OpReader) -> ComplexPair:
    held = ctx.values.get(node.inputs[0])
    if not isinstance(held, ComplexPair):
        raise ConvertError(f"{node.op_type} '{node.name}' reads a complex tensor; only RFFT2D's result is "
                           f"supported (TOSA has no complex tensors)")
    return held


def _graph_outputs(ctx: TfliteContext) -> set:
    return {ctx.keys[i] for i in ctx.sub.outputs}
