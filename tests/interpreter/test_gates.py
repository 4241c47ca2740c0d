"""Squeeze-excitation gates run as one warm-run step (interpreter/gates.py) against the per-op interpreter.

A squeeze-excitation block (TRANSPOSE, two REDUCE_SUMs, MUL, TRANSPOSE, 1x1 CONV2D, ADD, ReLU CLAMP, 1x1
CONV2D, ADD, hard sigmoid's MUL, ADD and CLAMP, then the MUL of x by the gate) is built here and run
several times: every warm run (the fused gate) must give the bits of a cold run of a fresh copy of the
graph (each op's own kernel, every result checked), zeros with their sign and NaNs included, and stay within
float32 rounding of the same arithmetic in float64. Near misses must not fuse: a branch value read twice,
a branch value that is an output, a constant that makes a branch value big, a gate that is a SUB.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError, evaluate
from tosaconv.interpreter.gates import _Gate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from .helpers import fused_steps

LOC = Location("SE", "block/se", "onnx")
C, S = 8, 4          # channels, squeezed channels
SHAPE = (1, 4, 6, C)
BIG = (1, 24, 32, C)  # 6144 values: above gates._SMALL
F32_MAX = float(np.finfo(np.float32).max)


def weights(rng: np.random.Generator) -> dict:
    """The block's constants: both 1x1 convolutions' weights, their shifts, the mean's scale."""
    return {"w1": rng.standard_normal((S, 1, 1, C)).astype(np.float32),
            "w2": rng.standard_normal((C, 1, 1, S)).astype(np.float32),
            "a1": rng.standard_normal((1, 1, 1, S)).astype(np.float32),
            "a2": rng.standard_normal((1, 1, 1, C)).astype(np.float32)}


def _conv(b: Builder, x: object, w: np.ndarray, bias: np.ndarray) -> object:
    return b.emit(Op.CONV2D, x, b.const(w), b.const(bias), attrs=A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.FP32))


def se_graph(k: dict, variant: str = "", bias: float = 0.0) -> Graph:
    """y = x * hardsigmoid(conv2(relu(conv1(mean(x)) + a1)) + a2), x = input + 0.5; ``variant`` makes a near miss:
    "read_twice" (the ReLU's input is also added to an output), "output" (the ReLU's result is an output),
    "big" (on a BIG input, the hard sigmoid's shift is one per pixel: a gate of 6144 values), "sub" (x - gate
    instead of x * gate), "add" (gate + x: an ADD gates too, its operands in that order), "avg_pool" (the mean as one AVG_POOL2D); ``bias`` is the first convolution's (+0.0 may be skipped: zero_bias.py)."""
    graph = Graph()
    b = Builder(graph, LOC)
    shape = BIG if variant == "big" else SHAPE
    x = b.emit(Op.ADD, graph.add_input("x", TensorType(DType.FP32, shape)), b.const(np.full((1, 1, 1, 1), 0.5, np.float32)))
    if variant == "avg_pool":          # MobileNetV3's global average pool (a kernel the gate calls as it is)
        squeezed = b.emit(Op.AVG_POOL2D, x, attrs=A.AvgPool2dAttrs(shape[1:3], (1, 1), (0, 0, 0, 0), DType.FP32))
    else:
        t = b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs((0, 3, 1, 2)))
        total = b.emit(Op.REDUCE_SUM, b.emit(Op.REDUCE_SUM, t, attrs=A.AxisAttrs(2)), attrs=A.AxisAttrs(3))
        mean = b.emit(Op.MUL, total, b.const(np.full((1, 1, 1, 1), 1 / 24, np.float32)), attrs=A.MulAttrs())
        squeezed = b.emit(Op.TRANSPOSE, mean, attrs=A.TransposeAttrs((0, 2, 3, 1)))
    shifted = b.emit(Op.ADD, _conv(b, squeezed, k["w1"], np.full(S, bias, np.float32)), b.const(k["a1"]))
    relu = b.emit(Op.CLAMP, shifted, attrs=A.ClampAttrs(0.0, F32_MAX))
    excited = b.emit(Op.ADD, _conv(b, relu, k["w2"], np.zeros(C, np.float32)), b.const(k["a2"]))
    scaled = b.emit(Op.MUL, excited, b.const(np.full((1, 1, 1, 1), 1 / 6, np.float32)), attrs=A.MulAttrs())
    shift = np.full((*shape[:3], 1) if variant == "big" else (1, 1, 1, 1), 0.5, np.float32)
    gate = b.emit(Op.CLAMP, b.emit(Op.ADD, scaled, b.const(shift)), attrs=A.ClampAttrs(0.0, 1.0))
    if variant in ("sub", "add"):
        y = b.emit(Op.SUB if variant == "sub" else Op.ADD, *((x, gate) if variant == "sub" else (gate, x)))
    else:
        y = b.emit(Op.MUL, x, gate, attrs=A.MulAttrs())
    outputs, names = [y], ["y"]
    if variant == "read_twice":
        outputs, names = [y, b.emit(Op.ADD, shifted, b.const(np.ones((1, 1, 1, S), np.float32)))], ["y", "side"]
    if variant == "output":
        outputs, names = [y, relu], ["y", "relu"]
    graph.set_outputs(outputs, names)
    return graph


def gates(graph: Graph) -> list:
    """The fused gates of the graph's warm plan (top-level steps and chain links)."""
    return fused_steps(graph, _Gate)


def inputs(rng: np.random.Generator, shape: tuple = SHAPE) -> np.ndarray:
    """Random values with -0.0, a NaN in some runs, and a pixel that the +0.5 makes a zero."""
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x[0, 0, 0, 0] = -0.0
    x[0, 1, 2, 3] = -0.5
    if rng.random() < 0.5:
        x[0, 2, 1, 5] = np.nan
    return x


def float64_truth(x: np.ndarray, k: dict, bias: float = 0.0) -> np.ndarray:
    """The block in float64 (x + 0.5 first, as the graph)."""
    x = x.astype(np.float64) + 0.5
    mean = x.sum(axis=(1, 2), keepdims=True) / 24
    relu = np.maximum(mean @ k["w1"].reshape(S, C).T.astype(np.float64) + bias + k["a1"], 0)
    gate = np.clip((relu @ k["w2"].reshape(C, S).T.astype(np.float64) + k["a2"]) / 6 + 0.5, 0, 1)
    return x * gate


def per_op(graph_of: object, x: np.ndarray) -> dict:
    """A cold run of a fresh graph: each op's own kernel, every result checked, nothing fused."""
    return evaluate(graph_of(), {"x": x})


def assert_same_bits(got: dict, want: dict) -> None:
    for name in want:
        np.testing.assert_array_equal(got[name].view(np.uint32), want[name].view(np.uint32), err_msg=name)


def runs_keep_the_bits(variant: str, seed: int, truth: bool = False) -> Graph:
    """Three runs of ``variant``'s graph (one cold, two warm) equal a cold per-op run bit for bit, and
    float64 within 1e-5 when ``truth``; returns the graph, whose plan is warm."""
    rng = np.random.default_rng(seed)
    k = weights(rng)
    graph = se_graph(k, variant)
    for _ in range(3):
        x = inputs(rng)
        got = evaluate(graph, {"x": x})
        assert_same_bits(got, per_op(lambda: se_graph(k, variant), x))
        if truth:
            np.testing.assert_allclose(got["y"], float64_truth(x, k), rtol=1e-5, atol=1e-5)
    return graph


def test_a_gate_added_to_x_runs_fused_with_the_per_op_bits():
    graph = runs_keep_the_bits("add", 19)
    assert len(gates(graph)) == 1 and not gates(graph)[0].x_first


@pytest.mark.parametrize("bias", [0.0, -0.0, 0.25])
def test_a_squeeze_excitation_gate_runs_fused_with_the_per_op_bits(bias):
    rng = np.random.default_rng(7)
    k = weights(rng)
    graph = se_graph(k, bias=bias)
    for run in range(4):
        x = inputs(rng)
        got, want = evaluate(graph, {"x": x}), per_op(lambda: se_graph(k, bias=bias), x)
        assert_same_bits(got, want)
        truth = float64_truth(x, k, bias)
        np.testing.assert_allclose(got["y"], truth, rtol=1e-5, atol=1e-5, err_msg=f"run {run}")
    assert len(gates(graph)) == 1
    assert len(gates(graph)[0].links) == 13     # every step between x and the gating MUL


@pytest.mark.parametrize("variant", ["read_twice", "output", "big", "sub"])
def test_near_misses_are_not_fused_and_keep_their_bits(variant):
    rng = np.random.default_rng(11)
    k = weights(rng)
    graph = se_graph(k, variant)
    for _ in range(3):
        x = inputs(rng, BIG if variant == "big" else SHAPE)
        assert_same_bits(evaluate(graph, {"x": x}), per_op(lambda: se_graph(k, variant), x))
    assert gates(graph) == []


def test_a_failure_inside_a_gate_names_its_own_op():
    rng = np.random.default_rng(3)
    graph = se_graph(weights(rng))
    x = inputs(rng)
    evaluate(graph, {"x": x})
    evaluate(graph, {"x": x})
    gate = gates(graph)[0]
    clamp_op, _ = gate.links[7]          # the ReLU

    def broken(v: np.ndarray, ctx: object) -> np.ndarray:
        raise ValueError("broken on purpose")
    gate.links[7] = (clamp_op, broken)
    with pytest.raises(KernelError, match=r"while running CLAMP at .*block/se.*broken on purpose") as info:
        evaluate(graph, {"x": x})
    assert info.value.op_name == "CLAMP"


def test_a_gate_whose_mean_is_an_average_pool_calls_that_kernel_and_keeps_the_bits():
    graph = runs_keep_the_bits("avg_pool", 17, truth=True)
    [gate] = gates(graph)
    assert [op.op.name for op, _ in gate.links][:2] == ["AVG_POOL2D", "CONV2D"] and len(gate.links) == 9
