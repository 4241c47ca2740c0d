"""One-op TFLite models compared with LiteRT's reference kernels, each with a
dynamic batch (shape_signature -1) fed at two sizes.

Tolerance rtol 1e-4 / atol 1e-5 (harness defaults); GELU uses atol 1e-4
because TOSA ERF and LiteRT's erf differ in the last bits.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, binary_model, check_with_litert, rand, unary_model

SIG = [-1, 3, 4]
FEEDS = [{"x": rand(2, 3, 4)}, {"x": rand(5, 3, 4, seed=1)}]
POS_FEEDS = [{"x": rand(2, 3, 4, low=0.1)}, {"x": rand(5, 3, 4, low=0.1, seed=1)}]

UNARY = [("EXP", None, {}, FEEDS), ("LOG", None, {}, POS_FEEDS), ("SQRT", None, {}, POS_FEEDS),
         ("RSQRT", None, {}, POS_FEEDS), ("ABS", None, {}, FEEDS), ("NEG", None, {}, FEEDS),
         ("FLOOR", None, {}, FEEDS), ("CEIL", None, {}, FEEDS), ("ROUND", None, {}, FEEDS),
         ("SIN", None, {}, FEEDS), ("COS", None, {}, FEEDS), ("SQUARE", None, {}, FEEDS),
         ("LOGISTIC", None, {}, FEEDS), ("TANH", None, {}, FEEDS), ("RELU", None, {}, FEEDS),
         ("RELU6", None, {}, [{"x": rand(2, 3, 4, low=-8, high=8)}]), ("RELU_N1_TO_1", None, {}, FEEDS),
         ("LEAKY_RELU", "LeakyReluOptions", {"Alpha": 0.2}, FEEDS),
         ("HARD_SWISH", None, {}, [{"x": rand(2, 3, 4, low=-5, high=5)}]),
         ("ELU", None, {}, FEEDS), ("SOFTMAX", "SoftmaxOptions", {"Beta": 0.5}, FEEDS),
         ("LOG_SOFTMAX", None, {}, FEEDS), ("L2_NORMALIZATION", "L2NormOptions", {}, FEEDS)]


@pytest.mark.parametrize("op,options,fields,feeds", UNARY, ids=[u[0] for u in UNARY])
def test_unary(op, options, fields, feeds):
    check_with_litert(unary_model(op, [1, 3, 4], SIG, options, **fields), feeds)


def test_round_half_to_even():
    x = np.array([[[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 3.5, 0.49], [-0.51, 7.5, 8.5, -3.5]]], np.float32)
    check_with_litert(unary_model("ROUND", [1, 3, 4], SIG), [{"x": x}])


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(approximate):
    check_with_litert(unary_model("GELU", [1, 3, 4], SIG, "GeluOptions", Approximate=approximate), FEEDS,
                      atol=1e-4)


BINARY = [("ADD", "AddOptions"), ("SUB", "SubOptions"), ("MUL", "MulOptions"), ("DIV", "DivOptions"),
          ("MAXIMUM", None), ("MINIMUM", None), ("SQUARED_DIFFERENCE", None), ("FLOOR_DIV", None),
          ("FLOOR_MOD", None)]


def _pair(n, seed, low=-2.0):
    return {"a": rand(n, 3, 4, seed=seed, low=low), "b": rand(1, 4, seed=seed + 7, low=0.5)}


@pytest.mark.parametrize("op,options", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcast(op, options):
    check_with_litert(binary_model(op, [1, 3, 4], [1, 4], [1, 3, 4], SIG, options), [_pair(2, 0), _pair(4, 1)])


def test_pow():
    check_with_litert(binary_model("POW", [1, 3, 4], [1, 4], [1, 3, 4], SIG), [_pair(2, 0, low=0.1)])


@pytest.mark.parametrize("act", [0, 1, 2, 3, 4, 5])
def test_fused_activation_on_add(act):
    """TANH (4) and SIGN_BIT (5) are no-ops in TFLite's ADD kernel; tosaconv must agree."""
    feeds = [{"a": rand(2, 3, 4, low=-4, high=4), "b": rand(1, 4, seed=3)}]
    check_with_litert(binary_model("ADD", [1, 3, 4], [1, 4], [1, 3, 4], SIG, "AddOptions",
                                   FusedActivationFunction=act), feeds)


@pytest.mark.parametrize("op", ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"])
def test_comparison(op):
    a = np.round(rand(2, 3, 4)).astype(np.float32)
    b = np.round(rand(1, 4, seed=1)).astype(np.float32)
    check_with_litert(binary_model(op, [1, 3, 4], [1, 4], [1, 3, 4], SIG, out_dtype="BOOL"), [{"a": a, "b": b}])


def test_select_v2():
    m = ModelBuilder()
    c = m.input("c", [1, 4], "BOOL", [-1, 4])
    a, b = m.input("a", [1, 4], signature=[-1, 4]), m.input("b", [1, 4], signature=[-1, 4])
    y = m.tensor("y", [1, 4], signature=[-1, 4])
    m.op("SELECT_V2", [c, a, b], [y])
    m.output(y)
    feeds = {"c": rand(3, 4) > 0, "a": rand(3, 4, seed=1), "b": rand(3, 4, seed=2)}
    check_with_litert(m.finish(), [feeds])


def test_cast_float_to_int_truncates():
    check_with_litert(unary_model("CAST", [1, 3, 4], SIG, out_dtype="INT32"), [{"x": rand(2, 3, 4, low=-5, high=5)}])


def test_prelu():
    m = ModelBuilder()
    x = m.input("x", [1, 3, 4], signature=SIG)
    y = m.tensor("y", [1, 3, 4], signature=SIG)
    m.op("PRELU", [x, m.const("alpha", rand(1, 4, low=0.0, high=0.5))], [y])
    m.output(y)
    check_with_litert(m.finish(), FEEDS)



@pytest.mark.parametrize("fields", [{"Radius": 2, "Bias": 1.0, "Alpha": 0.5, "Beta": 0.75},
                                    {"Radius": 1, "Bias": 2.0, "Alpha": 1.0, "Beta": 0.5},
                                    {"Radius": 5, "Bias": 0.5, "Alpha": 0.2, "Beta": 1.0}], ids=str)
def test_local_response_normalization(fields):
    """Windows inside, at and wider than the 6 channels; the RSQRT, RECIPROCAL and POW forms. The window is
    TensorFlow's ``c - radius .. c + radius``, which LiteRT's builtin kernel computes; its reference kernel
    stops one channel short (``c + radius`` exclusive), so the comparison is with the builtin kernel."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from tests.importers.tflite.harness import compare_both_paths, convert
    model = unary_model("LOCAL_RESPONSE_NORMALIZATION", [1, 3, 4, 6], [-1, -1, 4, 6],
                        "LocalResponseNormalizationOptions", **fields)
    graph = convert(model)
    for x in (rand(2, 3, 4, 6, low=-3, high=3), rand(1, 5, 4, 6, low=-3, high=3, seed=1)):
        interp = Interpreter(model_content=model,
                             experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        index = interp.get_input_details()[0]["index"]
        interp.resize_tensor_input(index, x.shape)
        interp.allocate_tensors()
        interp.set_tensor(index, x)
        interp.invoke()
        want = interp.get_tensor(interp.get_output_details()[0]["index"])
        compare_both_paths(graph, {"x": x}, [want], 1e-5, 1e-6)
