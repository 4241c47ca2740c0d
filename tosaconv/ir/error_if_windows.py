"""ERROR_IF rules of the TOSA 1.0 windowed operators: MATMUL, the convolutions, pooling and RESIZE.

Read from the specification's pseudocode (``pseudocode/operators/*.tosac``):
output sizes that must be exact divisions (``idiv_check``), kernel, stride,
dilation and padding limits, zero points only on int8 data, the dims two
operands share (MATMUL's C, a convolution's IC, its bias), and RESIZE's scale,
offset, border and size limits. Registered in :mod:`.error_if`'s table; like
every rule there, each returns a reason or None and never raises, and a value
that depends on a symbol is decided after binding.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from . import attrs as A
from ..symbolic.expr import Dim
from .error_if_core import Reason, _attr_tuples, _checked, _differ, _exact, _first, _static, _zero_point, rule
from .types import TensorType, ValueType


MAX_RESIZE_DIM = 16384      # ERROR_IF(max(OH, OW, IH, IW) >= 16384)


@rule("MATMUL")
def matmul(types: list[ValueType], attrs: A.MatMulAttrs) -> Reason:
    ts = _checked(types, 3, 3)
    if isinstance(ts, str):
        return ts
    a, b = ts[0], ts[1]
    if _differ(a.shape[0], b.shape[0]):
        return f"MATMUL needs A [N,H,C] and B [N,C,W] with the same N, got {a} and {b}"
    if _differ(a.shape[2], b.shape[1]):
        return f"MATMUL needs A [N,H,C] and B [N,C,W] with the same C, got {a} and {b}"
    return _first(_zero_point(attrs.a_zp, a.dtype, "a_zp"), _zero_point(attrs.b_zp, b.dtype, "b_zp"))


_ConvAttrs = Union[A.Conv2dAttrs, A.Conv3dAttrs]
_WindowAttrs = Union[A.Conv2dAttrs, A.Conv3dAttrs, A.AvgPool2dAttrs, A.MaxPool2dAttrs]


def _conv_common(ts: list[TensorType], attrs: _ConvAttrs, spatial: int) -> Reason:
    """The checks every convolution shares, on operands :func:`_checked` found to be tensors."""
    bad = _attr_tuples(attrs, pad=2 * spatial, stride=spatial)
    if bad:
        return bad
    if any(p < 0 for p in attrs.pad):
        return f"pad {list(attrs.pad)} has a negative entry"
    if any(s < 1 for s in attrs.stride):
        return f"stride {list(attrs.stride)} has an entry below 1"
    x, w = ts[0], ts[1]
    return _first(_zero_point(attrs.input_zp, x.dtype, "input_zp"),
                  _zero_point(attrs.weight_zp, w.dtype, "weight_zp"))


def _dilated(attrs: _ConvAttrs, spatial: int) -> Reason:
    bad = _attr_tuples(attrs, dilation=spatial)
    if bad:
        return bad
    return f"dilation {list(attrs.dilation)} has an entry below 1" if any(d < 1 for d in attrs.dilation) else None


def _windows(sizes: Sequence[Dim], kernels: Sequence[Dim], attrs: _WindowAttrs, dilation: Sequence[int]) -> Reason:
    """Each output size of a convolution or pooling must be an exact division (idiv_check)."""
    axes = "yx" if len(sizes) == 2 else "dyx"
    for i, (size, k) in enumerate(zip(sizes, kernels)):
        if not (isinstance(size, int) and isinstance(k, int)):
            continue
        span = (k - 1) * dilation[i] + 1
        numerator = size + attrs.pad[2 * i] + attrs.pad[2 * i + 1] - span
        bad = _exact(numerator, attrs.stride[i], f"the padded {axes[i]} extent minus the kernel")
        if bad:
            return bad
        if numerator < 0:
            return f"the kernel ({span} along {axes[i]}) is larger than the padded input ({size})"
    return None


def _bias(ts: list[TensorType], out_channels: Dim) -> Reason:
    bc = ts[2].shape[0]
    if _differ(bc, out_channels) and bc != 1:
        return f"bias has {bc} values; it needs 1 or one per output channel ({out_channels})"
    return None


@rule("CONV2D")
def conv2d(types: list[ValueType], attrs: A.Conv2dAttrs) -> Reason:
    return _conv(types, attrs, 2, "[OC,KH,KW,IC]")


@rule("CONV3D")
def conv3d(types: list[ValueType], attrs: A.Conv3dAttrs) -> Reason:
    return _conv(types, attrs, 3, "[OC,KD,KH,KW,IC]")


def _conv(types: list[ValueType], attrs: _ConvAttrs, spatial: int, layout: str) -> Reason:
    """CONV2D and CONV3D: ``spatial`` window dims between batch and channels, weights ``layout``."""
    ts = _checked(types, spatial + 2, spatial + 2, 1)
    if isinstance(ts, str):
        return ts
    bad = _conv_common(ts, attrs, spatial) or _dilated(attrs, spatial)
    if bad:
        return bad
    x, w = ts[0], ts[1]
    c = spatial + 1
    if _differ(x.shape[c], w.shape[c]):
        return f"input channels {x.shape[c]} differ from the weight's {w.shape[c]} ({layout})"
    return _first(_windows(x.shape[1:c], w.shape[1:c], attrs, attrs.dilation), _bias(ts, w.shape[0]))


@rule("DEPTHWISE_CONV2D")
def depthwise_conv2d(types: list[ValueType], attrs: A.Conv2dAttrs) -> Reason:
    ts = _checked(types, 4, 4, 1)
    if isinstance(ts, str):
        return ts
    bad = _conv_common(ts, attrs, 2) or _dilated(attrs, 2)
    if bad:
        return bad
    x, w = ts[0], ts[1]
    if _differ(x.shape[3], w.shape[2]):
        return f"input channels {x.shape[3]} differ from the weight's {w.shape[2]} ([KH,KW,C,M])"
    out = x.shape[3] * w.shape[3] if _static(x.shape[3], w.shape[3]) else None
    return _first(_windows(x.shape[1:3], w.shape[0:2], attrs, attrs.dilation),
                  _bias(ts, out) if out is not None else None)


@rule("TRANSPOSE_CONV2D")
def transpose_conv2d(types: list[ValueType], attrs: A.TransposeConv2dAttrs) -> Reason:
    ts = _checked(types, 4, 4, 1)
    bad = ts if isinstance(ts, str) else _attr_tuples(attrs, out_pad=4, stride=2)
    if bad or isinstance(ts, str):
        return bad
    if any(s < 1 for s in attrs.stride):
        return f"stride {list(attrs.stride)} has an entry below 1"
    x, w = ts[0], ts[1]
    if _differ(x.shape[3], w.shape[3]):
        return f"input channels {x.shape[3]} differ from the weight's {w.shape[3]} ([OC,KH,KW,IC])"
    kh, kw = w.shape[1], w.shape[2]
    top, bottom, left, right = attrs.out_pad
    if _static(kh, kw) and (min(top, bottom) <= -kh or min(left, right) <= -kw):
        return f"out_pad {list(attrs.out_pad)} reaches past the kernel ({kh}x{kw})"
    return _first(_zero_point(attrs.input_zp, x.dtype, "input_zp"),
                  _zero_point(attrs.weight_zp, w.dtype, "weight_zp"), _bias(ts, w.shape[0]))


@rule("AVG_POOL2D", "MAX_POOL2D")
def pool2d(types: list[ValueType], attrs: A.AvgPool2dAttrs | A.MaxPool2dAttrs) -> Reason:
    ts = _checked(types, 4)
    bad = ts if isinstance(ts, str) else _attr_tuples(attrs, kernel=2, stride=2, pad=4)
    if bad or isinstance(ts, str):
        return bad
    ky, kx = attrs.kernel
    checks = ((ky < 1 or kx < 1, f"kernel {list(attrs.kernel)} has an entry below 1"),
              (min(attrs.stride) < 1, f"stride {list(attrs.stride)} has an entry below 1"),
              (min(attrs.pad) < 0, f"pad {list(attrs.pad)} has a negative entry"),
              (max(attrs.pad[:2]) >= ky or max(attrs.pad[2:]) >= kx,
               f"pad {list(attrs.pad)} must be smaller than the kernel {list(attrs.kernel)}"))
    bad = next((why for broken, why in checks if broken), None)
    if bad:
        return bad
    if isinstance(attrs, A.AvgPool2dAttrs):
        dtype = ts[0].dtype
        bad = _first(_zero_point(attrs.input_zp, dtype, "input_zp"), _zero_point(attrs.output_zp, dtype, "output_zp"))
    return bad or _windows(ts[0].shape[1:3], attrs.kernel, attrs, (1, 1))


# -- image -------------------------------------------------------------------------------------

@rule("RESIZE")
def resize(types: list[ValueType], attrs: A.ResizeAttrs) -> Reason:
    ts = _checked(types, 4)
    bad = ts if isinstance(ts, str) else _attr_tuples(attrs, scale=4, offset=2, border=2)
    if bad or isinstance(ts, str):
        return bad
    if attrs.mode not in ("NEAREST", "BILINEAR"):
        return f"mode {attrs.mode!r} is not NEAREST or BILINEAR"
    y_n, y_d, x_n, x_d = attrs.scale
    if min(attrs.scale) <= 0:
        return f"scale {list(attrs.scale)} must be positive"
    return _first(_resize_axis("y", y_n, y_d, attrs.offset[0], attrs.border[0]),
                  _resize_axis("x", x_n, x_d, attrs.offset[1], attrs.border[1]),
                  _resize_sizes(ts[0], attrs))


def _resize_axis(axis: str, n: int, d: int, offset: int, border: int) -> Reason:
    checks = ((n > 1 << 11, f"scale_{axis}_n = {n} is above 2048"),
              (d >= 16 * n, f"scale_{axis}_d = {d} is at least 16 x scale_{axis}_n (below 1/16 downscale)"),
              (not -n <= offset < 16 * n,
               f"offset_{axis} = {offset} is outside [-scale_{axis}_n, 16 x scale_{axis}_n)"),
              (not -16 * n <= border < n,
               f"border_{axis} = {border} is outside [-16 x scale_{axis}_n, scale_{axis}_n)"))
    return next((why for broken, why in checks if broken), None)


def _resize_sizes(x: TensorType, attrs: A.ResizeAttrs) -> Reason:
    ih, iw = x.shape[1], x.shape[2]
    if not (isinstance(ih, int) and isinstance(iw, int)):
        return None
    y_n, y_d, x_n, x_d = attrs.scale
    ny = (ih - 1) * y_n - attrs.offset[0] + attrs.border[0]
    nx = (iw - 1) * x_n - attrs.offset[1] + attrs.border[1]
    bad = _exact(ny, y_d, "(IH - 1) * scale_y_n - offset_y + border_y") or \
        _exact(nx, x_d, "(IW - 1) * scale_x_n - offset_x + border_x")
    if bad:
        return bad
    oh, ow = ny // y_d + 1, nx // x_d + 1
    if max(oh, ow, ih, iw) >= MAX_RESIZE_DIM:
        return f"an image size (input {ih}x{iw}, output {oh}x{ow}) reaches {MAX_RESIZE_DIM}"
    if min(oh, ow) < 1:
        return f"the output size {oh}x{ow} is empty"
    return None
