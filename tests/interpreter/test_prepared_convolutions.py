"""Convolution kernels made once per plan (convolution.prepared_depthwise, prepared_pointwise, prepared_window)
against truth.

From the second run of a static program on, a DEPTHWISE_CONV2D or a 1x1 CONV2D with constant float32
weights runs a kernel whose geometry (tiled weights, bias row) was made when the plan was checked. Every
depthwise run must give the same float32 bits as the pseudocode's sum (each tap's product added in
(ky, kx) order from 0, then the bias), with channel multipliers, strides, dilations and paddings; also
when its bias of zeros is skipped. A 1x1 CONV2D's sums are BLAS's: every run must equal the float64 sum
within float32 rounding, and later runs must give the first (unprepared) run's bits.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from tosaconv.interpreter import convolution, evaluate, windows
from tosaconv.interpreter import plan as plan_module
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from tests.interpreter.test_convolution_gemm import tap_order_depthwise_f32

RNG = np.random.default_rng(77)


def depthwise_graph(shape: tuple, w: np.ndarray, bias: np.ndarray, a: A.Conv2dAttrs, shift: np.ndarray) -> Graph:
    """y = DEPTHWISE_CONV2D(x, w, bias) + shift."""
    graph = Graph()
    b = Builder(graph, Location("Conv", "dw", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, shape))
    y = b.emit(Op.DEPTHWISE_CONV2D, x, b.const(w), b.const(bias), attrs=a)
    graph.set_outputs([b.emit(Op.ADD, y, b.const(shift))], ["y"])
    return graph


@pytest.mark.parametrize("channels, m, stride, dilation, pad", [
    (5, 1, (1, 1), (1, 1), (1, 1, 1, 1)),
    (6, 3, (2, 2), (1, 2), (2, 0, 1, 3)),
    (40, 1, (1, 3), (2, 1), (0, 0, 0, 0)),
    (200, 1, (2, 2), (1, 1), (1, 0, 1, 0)),        # many channels at stride 2: small enough for the row sum
])
@pytest.mark.parametrize("zero_bias", [False, True])
def test_later_runs_give_the_bits_of_the_taps_in_order(channels, m, stride, dilation, pad, zero_bias):
    shape = (2, 7, 9, channels)
    w = RNG.standard_normal((3, 2, channels, m)).astype(np.float32)
    bias = np.zeros(channels * m, np.float32) if zero_bias else RNG.standard_normal(channels * m).astype(np.float32)
    shift = RNG.standard_normal(channels * m).astype(np.float32).reshape(1, 1, 1, -1)
    a = A.Conv2dAttrs(pad, stride, dilation, DType.FP32)
    step = _runs_give_the_taps_bits(shape, w, bias, a, shift)
    assert step.call is not step.kernel


@pytest.mark.parametrize("pixels_hw, channels, outputs", [((2, 3), 40, 96), ((16, 24), 24, 48), ((8, 8), 96, 128)])
@pytest.mark.parametrize("zero_bias", [False, True])
def test_a_1x1_convolution_gives_the_first_runs_bits_on_later_runs(pixels_hw, channels, outputs, zero_bias):
    """Few pixels (the transposed product) and many, few output channels (the bias tiled along rows) and
    many; the input a TRANSPOSE's strided view."""
    shape = (1, *pixels_hw, channels)
    graph = Graph()
    b = Builder(graph, Location("Conv", "pw", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, (1, channels, *pixels_hw)))
    nhwc = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((0, 2, 3, 1)))
    w = RNG.standard_normal((outputs, 1, 1, channels)).astype(np.float32)
    bias = np.zeros(outputs, np.float32) if zero_bias else RNG.standard_normal(outputs).astype(np.float32)
    shift = RNG.standard_normal(outputs).astype(np.float32).reshape(1, 1, 1, -1)
    y = b.emit(Op.CONV2D, nhwc, b.const(w), b.const(bias), attrs=A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.FP32))
    graph.set_outputs([b.emit(Op.ADD, y, b.const(shift))], ["y"])
    data = RNG.standard_normal((1, channels, *pixels_hw)).astype(np.float32)
    first = evaluate(graph, {"x": data})["y"]
    truth = np.einsum("nhwc,oc->nhwo", data.transpose(0, 2, 3, 1).astype(np.float64), w[:, 0, 0].astype(np.float64))
    np.testing.assert_allclose(first, truth + bias + shift, rtol=1e-5, atol=1e-5)
    for _ in range(2):
        np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"].view(np.uint32), first.view(np.uint32))
    step = [s for s in plan_for(graph, {}).steps if s.opdef.name == "CONV2D"][0]
    assert step.call is not step.kernel
    assert shape == tuple(step.op.operands[0].type.shape)


def test_tiled_weights_above_the_cap_are_not_kept(monkeypatch):
    """A depthwise kernel whose tiled weights would exceed what a plan keeps runs the general kernel
    (which tiles them per call) on later runs too, with the same bits."""
    monkeypatch.setattr(convolution, "_PREPARED_TILED", 0)
    shape, channels = (1, 6, 8, 4), 4
    w = RNG.standard_normal((3, 3, channels, 1)).astype(np.float32)
    bias = RNG.standard_normal(channels).astype(np.float32)
    shift = np.full((1, 1, 1, channels), 0.5, np.float32)
    a = A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.FP32)
    step = _runs_give_the_taps_bits(shape, w, bias, a, shift)
    assert step.call is step.kernel


def _runs_give_the_taps_bits(shape: tuple, w: np.ndarray, bias: np.ndarray, a: A.Conv2dAttrs,
                             shift: np.ndarray) -> object:
    """Three runs of a depthwise conv + ADD on new inputs, each with the bits of the taps summed in order;
    the plan's DEPTHWISE_CONV2D step."""
    graph = depthwise_graph(shape, w, bias, a, shift)
    for _ in range(3):
        x = RNG.standard_normal(shape).astype(np.float32)
        want = tap_order_depthwise_f32(x, w, bias, a) + shift
        np.testing.assert_array_equal(evaluate(graph, {"x": x})["y"].view(np.uint32), want.view(np.uint32))
    return [s for s in plan_for(graph, {}).steps if s.opdef.name == "DEPTHWISE_CONV2D"][0]


def _windows_conv_f64(x: np.ndarray, w: np.ndarray, a: A.Conv2dAttrs) -> np.ndarray:
    """CONV2D's sums in float64, one tap at a time over the zero-padded input (the pseudocode's windows)."""
    (top, bottom, left, right), (sy, sx), (dy, dx) = a.pad, a.stride, a.dilation
    padded = np.pad(x.astype(np.float64), ((0, 0), (top, bottom), (left, right), (0, 0)))
    _, kh, kw, _ = w.shape
    oh = (padded.shape[1] - (kh - 1) * dy - 1) // sy + 1
    ow = (padded.shape[2] - (kw - 1) * dx - 1) // sx + 1
    acc = np.zeros((x.shape[0], oh, ow, w.shape[0]))
    for ky in range(kh):
        for kx in range(kw):
            tap = padded[:, ky * dy:ky * dy + (oh - 1) * sy + 1:sy, kx * dx:kx * dx + (ow - 1) * sx + 1:sx, :]
            acc += tap @ w[:, ky, kx, :].astype(np.float64).T
    return acc


@pytest.mark.parametrize("batch, hw, kernel, stride, dilation, pad, transposed", [
    (1, (16, 24), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), False),
    (1, (32, 48), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), True),       # a TRANSPOSE's strided view (a model's input)
    (1, (9, 11), (2, 2), (2, 2), (1, 1), (0, 1, 0, 1), False),       # windows side by side (no overlap)
    (1, (10, 7), (3, 2), (1, 2), (2, 1), (2, 0, 1, 3), False),
    (1, (6, 6), (1, 1), (2, 2), (1, 1), (0, 0, 0, 0), False),        # 1x1 at stride 2: windows, not pointwise
    (2, (8, 8), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), False),        # two batches: the general kernel
])
@pytest.mark.parametrize("zero_bias", [False, True])
def test_a_windowed_convolution_gives_the_first_runs_bits_on_later_runs(batch, hw, kernel, stride, dilation, pad,
                                                                          transposed, zero_bias):
    """A CONV2D with a window (convolution.prepared_window): every run equals the float64 sum within float32
    rounding, and later runs give the first (unprepared) run's bits, on new inputs too."""
    channels, outputs = 5, 7
    graph = Graph()
    b = Builder(graph, Location("Conv", "kxk", "onnx"))
    if transposed:
        x = graph.add_input("x", TensorType(DType.FP32, (batch, channels, *hw)))
        nhwc = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((0, 2, 3, 1)))
    else:
        nhwc = x = graph.add_input("x", TensorType(DType.FP32, (batch, *hw, channels)))
    w = RNG.standard_normal((outputs, *kernel, channels)).astype(np.float32)
    bias = np.zeros(outputs, np.float32) if zero_bias else RNG.standard_normal(outputs).astype(np.float32)
    shift = RNG.standard_normal(outputs).astype(np.float32).reshape(1, 1, 1, -1)
    a = A.Conv2dAttrs(pad, stride, dilation, DType.FP32)
    y = b.emit(Op.CONV2D, nhwc, b.const(w), b.const(bias), attrs=a)
    graph.set_outputs([b.emit(Op.ADD, y, b.const(shift))], ["y"])
    for _ in range(2):
        data = RNG.standard_normal(tuple(x.type.shape)).astype(np.float32)
        nhwc_data = data.transpose(0, 2, 3, 1) if transposed else data
        first = evaluate(graph, {"x": data})["y"]
        np.testing.assert_allclose(first, _windows_conv_f64(nhwc_data, w, a) + bias + shift, rtol=1e-5, atol=1e-5)
        for _ in range(2):
            np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"].view(np.uint32), first.view(np.uint32))
        step = [s for s in plan_for(graph, {}).steps if s.opdef.name == "CONV2D"][0]
        assert (step.call is step.kernel) == (batch > 1 and not zero_bias)
        graph = _copy_of(graph)     # a new graph: its plan's first run is unprepared again


def _copy_of(graph: Graph) -> Graph:
    """The same program as a new graph object (plans are kept per graph)."""
    return copy.deepcopy(graph)


def _padded_buffers(step: object) -> windows.PaddedBuffers:
    """The reused padded-input buffers of a prepared convolution step (held by its kernel)."""
    for cell in step.call.__closure__ or ():
        held = cell.cell_contents
        if isinstance(held, windows.WindowProduct):
            held = held.buffers
        if isinstance(held, windows.PaddedBuffers):
            return held
    raise AssertionError("the step's kernel keeps no padded buffers")


def _conv_graph(kind: str, shape: tuple, m: int, a: A.Conv2dAttrs) -> tuple:
    """A depthwise (multiplier ``m``) or kxk convolution of x + shift; its weights, bias and shift."""
    channels = shape[-1]
    if kind == "depthwise":
        w = RNG.standard_normal((3, 3, channels, m)).astype(np.float32)
        outputs = channels * m
    else:
        w = RNG.standard_normal((m, 3, 3, channels)).astype(np.float32)
        outputs = m
    bias = RNG.standard_normal(outputs).astype(np.float32)
    shift = RNG.standard_normal(outputs).astype(np.float32).reshape(1, 1, 1, -1)
    if kind == "depthwise":
        return depthwise_graph(shape, w, bias, a, shift), w, bias, shift
    graph = Graph()
    b = Builder(graph, Location("Conv", "kxk", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, shape))
    y = b.emit(Op.CONV2D, x, b.const(w), b.const(bias), attrs=a)
    graph.set_outputs([b.emit(Op.ADD, y, b.const(shift))], ["y"])
    return graph, w, bias, shift


@pytest.mark.parametrize("kind, m", [("depthwise", 1), ("depthwise", 3), ("window", 6)])
def test_a_reused_padded_buffer_shows_nothing_of_an_earlier_call(kind, m):
    """Later runs take the padded input buffer an earlier run left (windows.PaddedBuffers): whatever that buffer
    held inside (here NaN, put there on purpose) must be overwritten, its border must still be zeros, and every
    run must give the bits of a fresh computation (the tap-order depthwise sum; the first, unprepared run)."""
    shape, a = (1, 6, 7, 4), A.Conv2dAttrs((2, 1, 1, 2), (1, 1), (1, 1), DType.FP32)
    graph, w, bias, shift = _conv_graph(kind, shape, m, a)
    fresh = _copy_of(graph)
    evaluate(graph, {"x": RNG.standard_normal(shape).astype(np.float32)})
    step = next(s for s in plan_for(graph, {}).steps if s.opdef.name in ("CONV2D", "DEPTHWISE_CONV2D"))
    buffers = _padded_buffers(step)
    for run in range(3):
        x = RNG.standard_normal(shape).astype(np.float32) * 10 ** run
        if run == 2:
            x[0, 1, 2, :] = np.inf
        got = evaluate(graph, {"x": x})["y"]
        if kind == "depthwise":
            want = tap_order_depthwise_f32(x, w, bias, a) + shift
        else:
            want = evaluate(_copy_of(fresh), {"x": x})["y"]      # a new graph's first run: no buffer kept
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=f"run {run}")
        assert len(buffers.free) == 1
        kept = buffers.free[0]
        border = np.ones(kept.shape, bool)
        border[buffers.inside] = False
        assert not kept[border].any()
        kept[buffers.inside] = np.nan       # what the next run must overwrite


def test_padded_buffers_above_the_cap_are_not_kept(monkeypatch):
    monkeypatch.setattr(windows, "_KEPT_PADDED", 0)
    shape, a = (1, 6, 7, 4), A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.FP32)
    graph, w, bias, shift = _conv_graph("depthwise", shape, 1, a)
    for _ in range(3):
        x = RNG.standard_normal(shape).astype(np.float32)
        got = evaluate(graph, {"x": x})["y"]
        np.testing.assert_array_equal(got.view(np.uint32), (tap_order_depthwise_f32(x, w, bias, a) + shift).view(np.uint32))
    step = next(s for s in plan_for(graph, {}).steps if s.opdef.name == "DEPTHWISE_CONV2D")
    assert _padded_buffers(step).free == []


def test_a_plan_keeps_padded_buffers_up_to_its_budget_in_op_order(monkeypatch):
    """Two depthwise convolutions, a plan budget for the first one's buffer only: the second makes its own
    per call; both give the tap-order bits on every run."""
    shape, a = (1, 6, 7, 4), A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.FP32)
    padded_bytes = 1 * 8 * 9 * 4 * 4
    monkeypatch.setattr(plan_module, "KEPT_PADDED_PER_PLAN", padded_bytes + 4)
    w1, w2 = (RNG.standard_normal((3, 3, 4, 1)).astype(np.float32) for _ in range(2))
    b1, b2 = (RNG.standard_normal(4).astype(np.float32) for _ in range(2))
    graph = Graph()
    b = Builder(graph, Location("Conv", "dw", "onnx"))
    x = graph.add_input("x", TensorType(DType.FP32, shape))
    y = b.emit(Op.DEPTHWISE_CONV2D, x, b.const(w1), b.const(b1), attrs=a)
    graph.set_outputs([b.emit(Op.DEPTHWISE_CONV2D, y, b.const(w2), b.const(b2), attrs=a)], ["y"])
    for _ in range(3):
        data = RNG.standard_normal(shape).astype(np.float32)
        want = tap_order_depthwise_f32(tap_order_depthwise_f32(data, w1, b1, a), w2, b2, a)
        np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"].view(np.uint32), want.view(np.uint32))
    first, second = (_padded_buffers(s) for s in plan_for(graph, {}).steps if s.opdef.name == "DEPTHWISE_CONV2D")
    assert (first.keep, len(first.free)) == (True, 1)
    assert (second.keep, second.free) == (False, [])
