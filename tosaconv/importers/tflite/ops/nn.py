"""Converters for TFLite's NHWC windowed ops and products: CONV_2D,
DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, FULLY_CONNECTED and
BATCH_MATMUL.

TFLite is NHWC already, so no TRANSPOSE pairs: CONV_2D's OHWI filter is TOSA
CONV2D's weight as is, and DEPTHWISE_CONV_2D's ``[1, KH, KW, C*M]`` filter is
reshaped to TOSA's ``[KH, KW, C, M]`` (output channel ``c*M + m`` in both).
SAME/VALID padding goes through the shared window geometry
(:func:`~tosaconv.lowering.window.fit_window`), which records ledger
facts and fits symbolic H/W exactly as TFLite computes its pads.
FULLY_CONNECTED flattens the input to ``[-1, K]`` and multiplies by the
transposed ``[O, K]`` weights; ``keep_num_dims`` keeps the leading dims.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering import pool as pooling
from ....lowering.dims import reshape, slice_
from ....lowering.matmul import matmul
from ....lowering.window import apply_fits, fit_window, geometry
from ....symbolic.constraints import Kind
from ....symbolic.expr import floordiv, product
from ..reader import ConvertError
from ..registry import converter
from .common import float_input, fused, require_float, window

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....lowering.window import Window
    from ..context import TfliteContext
    from ..node import OpReader


def _weight(ctx: TfliteContext, node: OpReader, i: int, dtype: DType) -> Union[np.ndarray, Value]:
    """Filter or weights: a numpy array when constant (the usual case), else the IR value."""
    w = ctx.const(node.inputs[i])
    if w is not None:
        return np.asarray(w).astype(dtype.numpy, copy=not _own(ctx, node.inputs[i], w))
    v = ctx.tensor(node.inputs[i])
    if not v.type.is_static:
        raise ConvertError(f"{node.op_type} weights with symbolic dims {v.type} are not supported")
    return v


def _shape(w: Union[np.ndarray, Value]) -> tuple:
    return tuple(w.shape) if isinstance(w, np.ndarray) else tuple(w.type.shape)


def _bias(ctx: TfliteContext, node: OpReader, i: int, channels: int, dtype: DType) -> Value:
    key = node.input(i)
    if key is None:
        return ctx.b.const(np.zeros((channels,), dtype.numpy))
    c = ctx.const(key)
    return ctx.b.const(np.asarray(c).astype(dtype.numpy, copy=not _own(ctx, key, c))) if c is not None else \
        ctx.tensor(key)


def _own(ctx: TfliteContext, key: str, value: object) -> bool:
    """Whether ``value`` is tensor ``key``'s data as read and only this op reads that memory (reader.TensorInfo's
    ``own_data``): then its CONST may view the file's bytes, uncopied (a copy of BirdNET's weights cost ~40 ms)."""
    info = ctx.infos.get(key)
    return info is not None and info.own_data and value is info.data


def _value(ctx: TfliteContext, w: Union[np.ndarray, Value]) -> Value:
    return ctx.b.const(np.ascontiguousarray(w)) if isinstance(w, np.ndarray) else w


def conv_window(ctx: TfliteContext, node: OpReader, x: Value, kernel: Sequence[int], acc: DType = DType.FP32, pad_value: float = 0.0) -> tuple[Value, A.Conv2dAttrs]:
    """A convolution's SAME/VALID window fitted to NHWC ``x``: (x, Conv2dAttrs without zero points).

    ``pad_value`` fills explicit pads (symbolic H/W); quantized converters pass the input zero point."""
    stride = (node.opt("StrideH"), node.opt("StrideW"))
    dilation = (node.opt("DilationHFactor"), node.opt("DilationWFactor"))
    x, pad = fit_window(ctx, x, window(node, kernel, stride, dilation), pad_value)
    return x, A.Conv2dAttrs(pad, stride, dilation, acc)


@converter("CONV_2D", options="Conv2DOptions")
def convert_conv_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    x = require_float(node, float_input(ctx, node))
    w = _weight(ctx, node, 1, x.type.dtype)
    o, kh, kw, i = _shape(w)
    if x.type.rank != 4:
        raise ConvertError(f"CONV_2D needs a rank-4 NHWC input, not rank {x.type.rank}")
    groups = conv_groups(ctx, x, w)
    b = _bias(ctx, node, 2, o, x.type.dtype)
    x, attrs = conv_window(ctx, node, x, (kh, kw))
    return fused(ctx, node, grouped_conv(ctx, x, w, b, attrs, groups))


def conv_groups(ctx: TfliteContext, x: Value, w: Union[np.ndarray, Value]) -> int:
    """How many groups CONV_2D's input channels form: input channels / filter channels (TFLite 2.9+
    runs a filter of ``[O, KH, KW, C / groups]`` as a grouped convolution; O must divide by groups)."""
    o, _, _, i = _shape(w)
    c = x.type.shape[3]
    if not isinstance(c, int) or c == i:   # a symbolic c: the ledger proves, records or refuses c == i
        ctx.require(Kind.EQ, c, i, "CONV_2D input channels = filter channels")
        return 1
    if c % i or o % (c // i):
        raise ConvertError(f"CONV_2D input has {c} channels and the filter {i} per group with {o} outputs: "
                           "not a grouped convolution (input channels and outputs must divide into equal groups)")
    return c // i


def grouped_conv(ctx: TfliteContext, x: Value, w: np.ndarray, b: Value, attrs: A.Conv2dAttrs, groups: int, finish: Optional[Callable[[Value, int, int], Value]] = None) -> Value:
    """CONV2D of ``x`` by ``w`` (OHWI) and bias ``b``; with ``groups`` > 1 one CONV2D per group of input
    channels and outputs, concatenated along channels (TOSA CONV2D has no groups). ``finish(acc, start,
    count)`` turns each group's result (output channels ``start:start+count``) into its final form
    before the CONCAT (quantized convs rescale there: TOSA cannot CONCAT int48 accumulators)."""
    finish = finish or (lambda acc, start, count: acc)
    if groups == 1:
        return finish(ctx.b.emit(Op.CONV2D, x, _value(ctx, w), b, attrs=attrs), 0, _shape(w)[0])
    n, h, wd, c = x.type.shape
    i, og = c // groups, _shape(w)[0] // groups
    parts = [finish(ctx.b.emit(Op.CONV2D, slice_(ctx, x, (0, 0, 0, g * i), (n, h, wd, i)),
                               _filter_slice(ctx, w, g * og, og), _bias_slice(ctx, b, g * og, og), attrs=attrs),
                    g * og, og)
             for g in range(groups)]
    return ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(3))


def _filter_slice(ctx: TfliteContext, w: Union[np.ndarray, Value], start: int, size: int) -> Value:
    """Output channels ``start:start+size`` of filter ``w`` (OHWI): a CONST of the numpy array's rows, or a
    SLICE of the IR value (an fp16 weight behind its CAST: constant folding slices the fp16 constant)."""
    if isinstance(w, np.ndarray):
        return _value(ctx, w[start:start + size])
    _, kh, kw, i = _shape(w)
    return slice_(ctx, w, (start, 0, 0, 0), (size, kh, kw, i))


def _bias_slice(ctx: TfliteContext, b: Value, start: int, size: int) -> Value:
    """Channels ``start:start+size`` of bias ``b``: a new CONST when ``b`` is one (int48 biases cannot be
    SLICEd in TOSA), else a SLICE."""
    if b.producer is not None and b.producer.op is Op.CONST:
        attrs = b.producer.attrs
        return ctx.b.emit(Op.CONST, attrs=replace(attrs, values=attrs.values[start:start + size]))
    return slice_(ctx, b, (start,), (size,))


@converter("DEPTHWISE_CONV_2D", options="DepthwiseConv2DOptions")
def convert_depthwise_conv_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    x = require_float(node, float_input(ctx, node))
    w = _weight(ctx, node, 1, x.type.dtype)
    _, kh, kw, cm = _shape(w)
    c = depthwise_channels(ctx, x, cm)
    m = cm // c
    if isinstance(w, np.ndarray):
        dw = ctx.b.const(np.ascontiguousarray(w.reshape(kh, kw, c, m)))
    else:
        dw = reshape(ctx, w, [kh, kw, c, m])
    b = _bias(ctx, node, 2, cm, x.type.dtype)
    x, attrs = conv_window(ctx, node, x, (kh, kw))
    return fused(ctx, node, ctx.b.emit(Op.DEPTHWISE_CONV2D, x, dw, b, attrs=attrs))


def depthwise_channels(ctx: TfliteContext, x: Value, cm: int) -> int:
    """DEPTHWISE_CONV_2D's input channels for a filter of ``cm`` channels; a symbolic channel dim is taken
    with depth multiplier 1, a fact the ledger checks at binding."""
    c = x.type.shape[3]
    if not isinstance(c, int):
        ctx.require(Kind.EQ, c, cm, "DEPTHWISE_CONV_2D input channels = filter channels (a symbolic channel dim "
                                    "is converted with depth multiplier 1)")
        return cm
    if cm % c:
        raise ConvertError(f"DEPTHWISE_CONV_2D filter has {cm} channels, not a multiple of the input's {c}")
    return c


def pool_window(node: OpReader) -> Window:
    kernel = (node.opt("FilterHeight"), node.opt("FilterWidth"))
    return window(node, kernel, (node.opt("StrideH"), node.opt("StrideW")))


def pool_fits(ctx: TfliteContext, x: Value, w: Window) -> list:
    geoms = [geometry(ctx, x.type.shape[1 + i], w, i) for i in range(2)]
    return pooling.pool_fits(x, w, geoms)


@converter("MAX_POOL_2D", options="Pool2DOptions")
def convert_max_pool_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    x = float_input(ctx, node)
    w = pool_window(node)
    x, pad = apply_fits(ctx, x, pool_fits(ctx, x, w), float("-inf"))
    y = ctx.b.emit(Op.MAX_POOL2D, x, attrs=A.MaxPool2dAttrs(w.kernel, w.stride, pad))
    return fused(ctx, node, y)


@converter("AVERAGE_POOL_2D", options="Pool2DOptions")
def convert_average_pool_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    """TFLite divides by the number of in-bounds taps, which is TOSA AVG_POOL2D (pads never count)."""
    x = require_float(node, float_input(ctx, node))
    w = pool_window(node)
    fits = pool_fits(ctx, x, w)
    if any(f.append for f in fits):
        y = pooling.average_pool_by_ratio(ctx, node.op_type, x, w, fits, None)
    else:
        y = pooling.average_pool(ctx, node.op_type, x, w, fits)
    return fused(ctx, node, y)


@converter("FULLY_CONNECTED", options="FullyConnectedOptions")
def convert_fully_connected(ctx: TfliteContext, node: OpReader) -> Converted:
    x = require_float(node, float_input(ctx, node))
    w = _weight(ctx, node, 1, x.type.dtype)
    if len(_shape(w)) != 2:
        raise ConvertError(f"FULLY_CONNECTED weights must be 2-D [out, in], not {list(_shape(w))}")
    o, k = _shape(w)
    flat = fc_rows(ctx, x, k)
    wt = ctx.b.const(transposed(w)) if isinstance(w, np.ndarray) else \
        ctx.b.emit(Op.TRANSPOSE, w, attrs=A.TransposeAttrs((1, 0)))
    y = ctx.b.emit(Op.ADD, matmul(ctx, flat, wt), _bias(ctx, node, 2, o, x.type.dtype))
    return fc_result(ctx, node, x, fused(ctx, node, y), k)


def transposed(w: np.ndarray, strip: int = 16) -> np.ndarray:
    """``w.T`` of a 2-D ``w`` as a new C-contiguous array, copied ``strip`` rows of ``w`` at a time: numpy's
    one-pass copy of a large transposed matrix misses the cache on nearly every element (BirdNET's
    6522x1024 classifier: 0.063 s that way, 0.017 s in strips)."""
    out = np.empty(w.shape[::-1], w.dtype)
    for i in range(0, w.shape[0], strip):
        out[:, i:i + strip] = w[i:i + strip].T
    return out


def fc_rows(ctx: TfliteContext, x: Value, k: int) -> Value:
    """FULLY_CONNECTED's input flattened to ``[rows, k]`` (the ledger records that k divides its size)."""
    total = product(x.type.shape)
    ctx.require(Kind.DIVISIBLE, total, k, "FULLY_CONNECTED input size divides by the weights' input size")
    return reshape(ctx, x, [floordiv(total, k), k])


def fc_result(ctx: TfliteContext, node: OpReader, x: Value, y: Value, k: int) -> Value:
    """The ``[rows, out]`` result, reshaped to ``[*x.shape[:-1], out]`` when ``keep_num_dims`` is set."""
    if node.opt("KeepNumDims"):
        ctx.require(Kind.EQ, x.type.shape[-1], k, "FULLY_CONNECTED keep_num_dims needs the last dim = input size")
        return reshape(ctx, y, [*x.type.shape[:-1], y.type.shape[-1]])
    return y


@converter("BATCH_MATMUL", options="BatchMatMulOptions")
def convert_batch_matmul(ctx: TfliteContext, node: OpReader) -> Converted:
    a, b = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    require_float(node, a)
    if node.opt("AdjX"):
        a = swap_last(ctx, a)
    if node.opt("AdjY"):
        b = swap_last(ctx, b)
    return matmul(ctx, a, b)


def swap_last(ctx: TfliteContext, x: Value) -> Value:
    perm = list(range(x.type.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(tuple(perm)))
