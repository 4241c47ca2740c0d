"""Convolutions that skip a bias of +0.0 (interpreter/zero_bias.py) against the spec's arithmetic, bit for bit.

A batch-normed convolution (CONV2D with a zero bias, then a per-channel MUL
and ADD) is run several times; from the second run on the plan may skip the
bias. Every run must give the bits of the spec's sum (from +0.0, then the
bias, then the MUL and ADD), computed here in numpy on small integers, where
float32 sums are exact; zeros are compared with their sign. The skip is
allowed only where no output can see the sign of a zero, and these cases
check both sides of that rule.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import evaluate
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

LOC = Location("Conv", "block/conv", "onnx")
SHAPE = (1, 4, 5, 3)
WEIGHTS = np.array([[1, -1, 2], [0, 0, 0]], np.float32).reshape(2, 1, 1, 3)
SCALE = np.array([-2.0, 3.0], np.float32).reshape(1, 1, 1, 2)


def bn_conv_graph(bias: np.ndarray, shift: np.ndarray, conv_is_output: bool = False) -> Graph:
    """y = CONV2D(x, WEIGHTS, bias) * SCALE + shift; with ``conv_is_output`` the sum is an output too."""
    graph = Graph()
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, SHAPE))
    conv = b.emit(Op.CONV2D, x, b.const(WEIGHTS), b.const(bias),
                  attrs=A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.FP32))
    y = b.emit(Op.ADD, b.emit(Op.MUL, conv, b.const(SCALE), attrs=A.MulAttrs()), b.const(shift))
    graph.set_outputs([y, conv] if conv_is_output else [y], ["y", "conv"] if conv_is_output else ["y"])
    return graph


def spec_truth(x: np.ndarray, bias: np.ndarray, shift: np.ndarray) -> dict:
    """The spec's order: each sum from +0.0 (exact here: small integers), + bias, * SCALE, + shift."""
    acc = np.zeros((*SHAPE[:3], 2), np.float32)
    for i in range(SHAPE[3]):
        acc = acc + x[..., i:i + 1] * WEIGHTS[:, 0, 0, i]
    conv = acc + bias
    return {"y": conv * SCALE + shift, "conv": conv}


def inputs(rng: np.random.Generator) -> np.ndarray:
    """Small integers, with -0.0 and rows whose products cancel to zero."""
    x = rng.integers(-3, 4, SHAPE).astype(np.float32)
    x[0, 0] = -0.0
    x[0, 1] = [2.0, 2.0, 0.0]          # 2 - 2 + 0 = 0
    return x


def run_and_compare(graph: Graph, bias: np.ndarray, shift: np.ndarray) -> None:
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = inputs(rng)
        got = evaluate(graph, {"x": x})
        for name, want in spec_truth(x, bias, shift).items():
            if name in got:
                np.testing.assert_array_equal(got[name].view(np.uint32), want.view(np.uint32), err_msg=name)


def skipped(graph: Graph) -> bool:
    """True when the plan's warm runs call the convolution without its bias (zero_bias._without_bias)."""
    conv = [s for s in plan_for(graph, {}).steps if s.opdef.name == "CONV2D"][0]
    return conv.call.__qualname__.startswith("_without_bias.")


ZEROS = np.zeros(2, np.float32)
SHIFT = np.array([0.0, 1.5], np.float32).reshape(1, 1, 1, 2)


def test_a_zero_bias_before_a_batch_norm_is_skipped_with_the_same_bits():
    graph = bn_conv_graph(ZEROS, SHIFT)
    run_and_compare(graph, ZEROS, SHIFT)
    assert skipped(graph)


@pytest.mark.parametrize("bias, shift, conv_is_output", [
    (ZEROS, np.array([-0.0, 1.5], np.float32).reshape(1, 1, 1, 2), False),   # -0.0 + -0.0 keeps the sign
    (ZEROS, SHIFT, True),                                                      # the sum itself is an output
    (np.array([-0.0, 0.0], np.float32), SHIFT, False),                        # a bias of -0.0 is not +0.0
    (np.array([0.5, 0.0], np.float32), SHIFT, False),
])
def test_the_bias_is_added_where_an_output_could_tell(bias, shift, conv_is_output):
    graph = bn_conv_graph(bias, shift, conv_is_output)
    run_and_compare(graph, bias, shift)
    assert not skipped(graph)
