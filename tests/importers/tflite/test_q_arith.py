"""Quantized TFLite elementwise ops against LiteRT's reference kernels, bit for bit.

ADD, SUB, MUL, SQUARED_DIFFERENCE, the comparisons, MAXIMUM, MINIMUM,
SELECT_V2, the RELU family, ABS and NEG on int8, uint8 and int16 where LiteRT
runs them: full-range random data (with the type's extremes and values a unit
apart across the two inputs), scales giving multipliers below and above 1,
broadcasting, fused activations, and a dynamic batch fed at two sizes. The
harness also runs the emitted .tosa on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(23)
NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}
RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}
OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}
SHAPES = [((2, 3, 16), (2, 3, 16)), ((2, 3, 16), (16,)), ((2, 3, 16), (3, 1))]
# (dtype, a (scale, zp), b (scale, zp), y (scale, zp)): multipliers below and above 1, uint8 zero points.
QUANT = [("INT8", (0.05, 3), (0.02, -10), (0.07, 5)), ("INT8", (0.003, -128), (0.5, 100), (1.7, 127)),
         ("INT8", (0.3, 0), (0.3, 0), (0.0001, -20)), ("UINT8", (0.05, 128), (0.1, 100), (0.08, 130)),
         ("INT16", (0.001, 0), (0.0007, 0), (0.002, 0)), ("INT16", (0.5, 0), (0.01, 0), (0.006, 0))]
RELU, RELU_N1_TO_1, RELU6 = 1, 2, 3


def binary_q_model(op, dtype, qa, qb, qy, a_shape, b_shape, out_type=None, **fields) -> bytes:
    m = ModelBuilder()
    a = m.input("a", a_shape, dtype, [-1, *a_shape[1:]], quant=([qa[0]], [qa[1]], 0))
    b = m.input("b", b_shape, dtype, _batched(a_shape, b_shape), quant=([qb[0]], [qb[1]], 0))
    shape = list(np.broadcast_shapes(a_shape, b_shape))
    quant = None if out_type == "BOOL" else ([qy[0]], [qy[1]], 0)
    y = m.tensor("y", shape, out_type or dtype, [-1, *shape[1:]], quant=quant)
    m.op(op, [a, b], [y], OPTIONS.get(op), **fields)
    m.output(y)
    return m.finish()


def _batched(a_shape, b_shape):
    """b's signature: a dynamic batch too when it has a's full shape."""
    return [-1, *b_shape[1:]] if tuple(b_shape) == tuple(a_shape) else None


def binary_feeds(dtype, a_shape, b_shape):
    """Two feeds (batch as built, then batch 3): random values, extremes, and near-equal pairs."""
    lo, hi = RANGE[dtype]
    feeds = []
    for batch in (a_shape[0], 3):
        a = RNG.integers(lo, hi + 1, size=(batch, *a_shape[1:]))
        b = RNG.integers(lo, hi + 1, size=(batch, *b_shape[1:]) if _batched(a_shape, b_shape) else b_shape)
        a.flat[:4], b.flat[:2] = [lo, hi, lo, hi], [hi, lo]
        near = np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))[0].reshape(-1)[:8]
        a.reshape(-1)[:8] = np.clip(near + RNG.integers(-1, 2, size=near.size), lo, hi)
        feeds.append({"a": a.astype(NP[dtype]), "b": b.astype(NP[dtype])})
    return feeds


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype,qa,qb,qy", QUANT)
@pytest.mark.parametrize("shapes", SHAPES)
def test_arith(op, dtype, qa, qb, qy, shapes, tmp_path):
    data = binary_q_model(op, dtype, qa, qb, qy, *shapes, FusedActivationFunction=0)
    check_exact_with_litert(data, binary_feeds(dtype, *shapes), tmp_path)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", [RELU, RELU6, RELU_N1_TO_1])
@pytest.mark.parametrize("dtype,qy", [("INT8", (0.05, -20)), ("UINT8", (0.03, 100)), ("INT16", (0.02, 0))])
def test_fused_activation(op, act, dtype, qy, tmp_path):
    shift = 128 if dtype == "UINT8" else 0
    qa, qb = ((0.04, 0), (0.02, 0)) if dtype == "INT16" else ((0.06, 5 + shift), (0.05, -3 + shift))
    shapes = SHAPES[1]
    data = binary_q_model(op, dtype, qa, qb, qy, *shapes, FusedActivationFunction=act)
    check_exact_with_litert(data, binary_feeds(dtype, *shapes), tmp_path)


@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize("log2s", [(-10, -12, -10), (-13, -11, -11), (-8, -8, -8)])
def test_int16_power_of_two_path(op, log2s, tmp_path):
    """All scales powers of two, zero points 0: add.cc/sub.cc's pot_scale_int16 path (the default)."""
    qa, qb, qy = ((2.0 ** s, 0) for s in log2s)
    data = binary_q_model(op, "INT16", qa, qb, qy, *SHAPES[0], FusedActivationFunction=RELU6)
    check_exact_with_litert(data, binary_feeds("INT16", *SHAPES[0]), tmp_path)


def test_int16_pot_sub_broadcasts(tmp_path):
    qa, qb, qy = (2.0 ** -10, 0), (2.0 ** -12, 0), (2.0 ** -10, 0)
    data = binary_q_model("SUB", "INT16", qa, qb, qy, *SHAPES[1], FusedActivationFunction=0)
    check_exact_with_litert(data, binary_feeds("INT16", *SHAPES[1]), tmp_path)


@pytest.mark.parametrize("qa,qb,qy", [q[1:] for q in QUANT if q[0] == "INT8"])
@pytest.mark.parametrize("shapes", SHAPES[:2])
def test_squared_difference(qa, qb, qy, shapes, tmp_path):
    data = binary_q_model("SQUARED_DIFFERENCE", "INT8", qa, qb, qy, *shapes)
    check_exact_with_litert(data, binary_feeds("INT8", *shapes), tmp_path)


COMPARE_QUANT = [("INT8", (0.05, 3), (0.05, 3)), ("INT8", (0.001, 3), (0.0011, -10)),
                 ("UINT8", (0.05, 128), (0.1, 100)), ("INT16", (0.001, 0), (0.0007, 0))]


@pytest.mark.parametrize("op", ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"])
@pytest.mark.parametrize("dtype,qa,qb", COMPARE_QUANT)
@pytest.mark.parametrize("shapes", SHAPES[:2])
def test_comparison(op, dtype, qa, qb, shapes, tmp_path):
    data = binary_q_model(op, dtype, qa, qb, None, *shapes, out_type="BOOL")
    check_exact_with_litert(data, binary_feeds(dtype, *shapes), tmp_path)


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("dtype,qa,qb", COMPARE_QUANT)
def test_maximum_minimum(op, dtype, qa, qb, tmp_path):
    data = binary_q_model(op, dtype, qa, qa, qa, *SHAPES[1])
    check_exact_with_litert(data, binary_feeds(dtype, *SHAPES[1]), tmp_path)


@pytest.mark.parametrize("op", ["SELECT", "SELECT_V2"])
@pytest.mark.parametrize("dtype", ["INT8", "UINT8", "INT16"])
def test_select(op, dtype, tmp_path):
    """SELECT_V2 broadcasts ``b``; SELECT takes operands of one shape."""
    m = ModelBuilder()
    c = m.input("c", [2, 16], "BOOL", [-1, 16])
    q = ([0.05], [0 if dtype == "INT16" else 7], 0)
    b_shape = [16] if op == "SELECT_V2" else [2, 16]
    a = m.input("a", [2, 16], dtype, [-1, 16], quant=q)
    b = m.input("b", b_shape, dtype, [-1, 16] if op == "SELECT" else None, quant=q)
    y = m.tensor("y", [2, 16], dtype, [-1, 16], quant=q)
    m.op(op, [c, a, b], [y])
    m.output(y)
    lo, hi = RANGE[dtype]
    feeds = [{"c": RNG.integers(0, 2, size=(n, 16)).astype(bool),
              "a": RNG.integers(lo, hi + 1, size=(n, 16)).astype(NP[dtype]),
              "b": RNG.integers(lo, hi + 1, size=[n, 16][2 - len(b_shape):]).astype(NP[dtype])} for n in (2, 5)]
    check_exact_with_litert(m.finish(), feeds, tmp_path)


def unary_q_model(op, dtype, qx, qy) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, 128], dtype, [-1, 128], quant=([qx[0]], [qx[1]], 0))
    y = m.tensor("y", [2, 128], dtype, [-1, 128], quant=([qy[0]], [qy[1]], 0))
    m.op(op, [x], [y])
    m.output(y)
    return m.finish()


def unary_feeds(dtype):
    lo, hi = RANGE[dtype]
    first = np.arange(lo, hi + 1).reshape(2, 128) if dtype != "INT16" else RNG.integers(lo, hi + 1, size=(2, 128))
    first.reshape(-1)[:2] = [lo, hi]
    return [{"x": first.astype(NP[dtype])}, {"x": RNG.integers(lo, hi + 1, size=(3, 128)).astype(NP[dtype])}]


UNARY_QUANT = [("INT8", (0.05, 3), (0.07, -5)), ("INT8", (0.3, -128), (0.011, -100)),
               ("INT8", (0.0123, 3), (0.0123, 3)), ("UINT8", (0.05, 131), (0.03, 128)),
               ("INT16", (0.001, 0), (0.0007, 0)), ("INT16", (0.02, 0), (0.5, 0))]


@pytest.mark.parametrize("op", ["RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "ABS", "NEG"])
@pytest.mark.parametrize("dtype,qx,qy", UNARY_QUANT)
def test_unary(op, dtype, qx, qy, tmp_path):
    no_int16 = op in ("RELU_N1_TO_1", "RELU_0_TO_1")      # LiteRT runs these on 8-bit data only
    if (dtype == "UINT8" and op in ("ABS", "NEG")) or (dtype == "INT16" and no_int16):
        with pytest.raises(ConversionError, match=f"quantized {op} on {dtype} is not supported"):
            convert(unary_q_model(op, dtype, qx, qy))
        return
    check_exact_with_litert(unary_q_model(op, dtype, qx, qy), unary_feeds(dtype), tmp_path)


def test_int16_pot_add_broadcast_refused():
    q = (2.0 ** -10, 0)
    data = binary_q_model("ADD", "INT16", q, q, q, *SHAPES[1], FusedActivationFunction=0)
    with pytest.raises(ConversionError, match="int16 ADD with power-of-two scales does not broadcast"):
        convert(data)


def test_comparison_scale_above_one_refused():
    data = binary_q_model("LESS", "INT8", (1.5, 3), (0.5, 0), None, *SHAPES[0], out_type="BOOL")
    with pytest.raises(ConversionError, match="input scale 1.5 >= 1 is not supported"):
        convert(data)


def test_int16_mul_zero_point_refused():
    data = binary_q_model("MUL", "INT16", (0.01, 3), (0.01, 0), (0.01, 0), *SHAPES[0], FusedActivationFunction=0)
    with pytest.raises(ConversionError, match="int16 MUL needs zero point 0"):
        convert(data)
