"""A convolution and its constant elementwise steps run as one warm-run step (interpreter/epilogues.py).

A convolution followed by a batch norm's MUL and ADD and a ReLU CLAMP is run several times: every warm run
(the joined step) must give the bits of a cold run of a fresh copy of the graph (each op's own kernel, every
result checked), zeros with their sign and NaNs included. Near misses must not be joined: the convolution's
result or an intermediate read twice or being an output, a constant that broadcasts the result to another
shape. A failure inside the joined step is still reported at its own op.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError, evaluate
from tosaconv.interpreter.epilogues import _Epilogue
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from .helpers import fused_steps

LOC = Location("Conv", "block/conv", "onnx")
SHAPE = (1, 6, 7, 5)
OC = 4


def conv_bn_relu(kind: str, variant: str = "") -> Graph:
    """y = clamp(conv(x) * scale + shift, 0, 6); ``kind`` is CONV2D (1x1 or 3x3) or DEPTHWISE_CONV2D. ``variant``:
    "conv_read_twice" (the sum also feeds an output), "output" (the product is an output), "broadcast" (the
    shift is one per pixel and channel of a taller result)."""
    rng = np.random.default_rng(4)
    graph = Graph()
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, SHAPE))
    attrs = A.Conv2dAttrs((1, 1, 1, 1) if kind != "CONV2D_1x1" else (0, 0, 0, 0), (1, 1), (1, 1), DType.FP32)
    if kind == "DEPTHWISE_CONV2D":
        w, channels = rng.standard_normal((3, 3, SHAPE[3], 1)).astype(np.float32), SHAPE[3]
        conv = b.emit(Op.DEPTHWISE_CONV2D, x, b.const(w), b.const(np.zeros(channels, np.float32)), attrs=attrs)
    else:
        k = 1 if kind == "CONV2D_1x1" else 3
        w, channels = rng.standard_normal((OC, k, k, SHAPE[3])).astype(np.float32), OC
        conv = b.emit(Op.CONV2D, x, b.const(w), b.const(np.zeros(channels, np.float32)), attrs=attrs)
    scale = rng.standard_normal((1, 1, 1, channels)).astype(np.float32)
    scale[0, 0, 0, 0] = -0.0
    product = b.emit(Op.MUL, conv, b.const(scale), attrs=A.MulAttrs())
    shift_shape = (1, 3, *SHAPE[1:3], channels) if variant == "broadcast" else (1, 1, 1, channels)
    shifted = b.emit(Op.ADD, product, b.const(rng.standard_normal(shift_shape).astype(np.float32)))
    y = b.emit(Op.CLAMP, shifted, attrs=A.ClampAttrs(0.0, 6.0))
    outputs, names = [y], ["y"]
    if variant == "conv_read_twice":
        outputs, names = [y, b.emit(Op.ADD, conv, conv)], ["y", "twice"]
    if variant == "output":
        outputs, names = [y, product], ["y", "product"]
    graph.set_outputs(outputs, names)
    return graph


def epilogues(graph: Graph) -> list:
    """The joined convolution steps of the graph's warm plan (top-level steps and chain links)."""
    return fused_steps(graph, _Epilogue)


def inputs(rng: np.random.Generator) -> np.ndarray:
    x = (rng.standard_normal(SHAPE) * 2).astype(np.float32)
    x[0, 0, 0] = -0.0
    if rng.random() < 0.5:
        x[0, 3, 4, 1] = np.nan
    return x


def assert_same_bits(got: dict, want: dict) -> None:
    for name in want:
        np.testing.assert_array_equal(got[name].view(np.uint32), want[name].view(np.uint32), err_msg=name)


@pytest.mark.parametrize("kind", ["CONV2D_1x1", "CONV2D", "DEPTHWISE_CONV2D"])
def test_a_convolution_runs_its_batch_norm_and_relu_in_its_own_step_with_the_per_op_bits(kind):
    graph, rng = conv_bn_relu(kind), np.random.default_rng(9)
    for _ in range(4):
        x = inputs(rng)
        assert_same_bits(evaluate(graph, {"x": x}), evaluate(conv_bn_relu(kind), {"x": x}))
    [joined] = epilogues(graph)
    assert [op.op.name for op, _ in joined.tail] == ["MUL", "ADD", "CLAMP"]


@pytest.mark.parametrize("variant", ["conv_read_twice", "output", "broadcast"])
def test_near_misses_keep_their_steps_and_bits(variant):
    graph, rng = conv_bn_relu("CONV2D", variant), np.random.default_rng(13)
    for _ in range(3):
        x = inputs(rng)
        assert_same_bits(evaluate(graph, {"x": x}), evaluate(conv_bn_relu("CONV2D", variant), {"x": x}))
    joined = epilogues(graph)
    # the MUL may still join (it is read once and has the convolution's shape) unless the sum is read twice
    expected = {"conv_read_twice": [], "output": [["MUL"]], "broadcast": [["MUL"]]}[variant]
    assert [[op.op.name for op, _ in e.tail] for e in joined] == expected


def test_a_failure_inside_an_epilogue_names_its_own_op():
    graph, rng = conv_bn_relu("CONV2D"), np.random.default_rng(2)
    x = inputs(rng)
    evaluate(graph, {"x": x})
    evaluate(graph, {"x": x})
    [joined] = epilogues(graph)
    add_op, _ = joined.tail[1]

    def broken(acc: np.ndarray) -> None:
        raise ValueError("broken on purpose")
    joined.tail[1] = (add_op, broken)
    with pytest.raises(KernelError, match=r"while running ADD at .*block/conv.*broken on purpose") as info:
        evaluate(graph, {"x": x})
    assert info.value.op_name == "ADD"
