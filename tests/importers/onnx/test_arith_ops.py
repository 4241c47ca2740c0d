"""Round, Sign, Mod, Sum and Mean against onnxruntime on symbolic input dims
run at several shapes.

Round: ties to even at every magnitude, values just below .5, integers past
2^23, infinities and NaN. Sign: float (zeros, NaN) and integer data. Mod:
integer floor mod (fmod=0) and truncated mod (fmod=1) with every sign
combination, int8/int16/int32/int64, float fmod with broadcasting, large
quotients, and Mod on shape values (index arithmetic). A zero integer
divisor is checked against the ONNX reference (onnxruntime's result there
is undefined). Sum and Mean: one to three broadcasting inputs. Also the clear
error for a float Mod with fmod=0, which ONNX does not define.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tosaconv.diagnostics import TosaconvError

from .harness import (F32, I32, I64, assert_close, check_with_onnxruntime, const, convert, info, make_model,
                      one_node, rand, run_graph)

I8, I16 = TensorProto.INT8, TensorProto.INT16
NUMPY = {I8: np.int8, I16: np.int16, I32: np.int32, I64: np.int64}


def _unary(op, elem, opset, dims=("N", "W")):
    return one_node(op, [info("x", elem, list(dims))], [info("y", elem, None)], opset=opset)


def test_round_ties_to_even():
    ties = np.array([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.49999997, 1.4999999, 2.5000002,
                     8388607.5, 8388609.0, 16777217.0, 1e10, -1e10, np.inf, -np.inf, np.nan], np.float32)
    model = _unary("Round", F32, 11, ("N",))
    check_with_onnxruntime(model, [{"x": ties}, {"x": ties[:1]}, {"x": rand(37, low=-20, high=20)}])


@pytest.mark.parametrize("opset", [11, 21])
def test_round_random(opset):
    feeds = [{"x": (rand(*s, seed=i) * 10).round(1)} for i, s in enumerate([(3, 5), (1, 7)])]
    check_with_onnxruntime(_unary("Round", F32, opset), feeds)


def test_sign_of_floats():
    x = np.array([[-2.5, -0.0, 0.0, 3.0, np.nan, -np.inf, np.inf, 1e-30]], np.float32)
    check_with_onnxruntime(_unary("Sign", F32, 13), [{"x": x}, {"x": rand(3, 4)}])


@pytest.mark.parametrize("elem", [I8, I16, I32, I64], ids=["i8", "i16", "i32", "i64"])
def test_sign_of_integers(elem):
    feeds = [{"x": np.random.default_rng(i).integers(-50, 50, s).astype(NUMPY[elem])}
             for i, s in enumerate([(3, 5), (1, 2)])]
    check_with_onnxruntime(_unary("Sign", elem, 13), feeds)


# -- Mod ----------------------------------------------------------------------------------------

def _mod_model(elem, fmod, opset=13, b_dims=(1, "W")):
    return one_node("Mod", [info("a", elem, ["N", "W"]), info("b", elem, list(b_dims))], [info("y", elem, None)],
                    opset=opset, fmod=fmod)


def _mod_feeds(dtype, low=-20, high=20):
    feeds = []
    for i, (n, w) in enumerate([(4, 6), (1, 3)]):
        rng = np.random.default_rng(i)
        a = rng.integers(low, high, (n, w)).astype(dtype)
        b = rng.integers(1, 7, (1, w)) * rng.choice([-1, 1], (1, w))
        feeds.append({"a": a, "b": b.astype(dtype)})
    return feeds


@pytest.mark.parametrize("elem", [I8, I16, I32, I64], ids=["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("opset", [11, 13, 21])
def test_integer_mod(elem, fmod, opset):
    check_with_onnxruntime(_mod_model(elem, fmod, opset), _mod_feeds(NUMPY[elem]))


def test_integer_mod_of_large_values():
    feeds = _mod_feeds(np.int32, -2**31, 2**31 - 1)
    check_with_onnxruntime(_mod_model(I32, 0), feeds)
    check_with_onnxruntime(_mod_model(I32, 1), feeds)


@pytest.mark.parametrize("fmod", [0, 1])
def test_integer_mod_by_zero_follows_the_onnx_reference(fmod):
    model = _mod_model(I32, fmod)
    feeds = {"a": np.array([[7, -7, 0, 5]], np.int32), "b": np.array([[0, 0, 0, 3]], np.int32)}
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, feeds)
    assert_close(run_graph(convert(model), feeds)[0], want[0], 0, 0)


@pytest.mark.parametrize("scale", [1.0, 1000.0])
def test_float_fmod(scale):
    feeds = []
    for i, (n, w) in enumerate([(4, 6), (1, 3), (2, 1)]):
        a = rand(n, w, low=-scale, high=scale, seed=i)
        b = rand(1, w, low=0.3, high=3.0, seed=10 + i) * np.random.default_rng(i).choice([-1, 1], (1, w))
        feeds.append({"a": a, "b": b.astype(np.float32)})
    feeds.append({"a": np.array([[6.0, -6.0, 7.5, -7.5, 0.0]], np.float32),
                  "b": np.array([[3.0, 3.0, -2.5, 2.5, 2.0]], np.float32)})
    check_with_onnxruntime(_mod_model(F32, 1), feeds, rtol=1e-4, atol=1e-4 * scale)


def test_mod_of_shape_values_is_index_arithmetic():
    """``Shape(x) mod 4`` feeding a Reshape stays Index arithmetic (no tensor op)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Mod", ["s", "four"], ["m"]),
             helper.make_node("Add", ["m", "one"], ["shape"]),
             helper.make_node("ConstantOfShape", ["shape"], ["y"], value=helper.make_tensor("v", 1, [1], [1.0]))]
    model = make_model(nodes, [info("x", F32, ["N", "W"])], [info("y", F32, None)],
                       [const("four", np.array([4, 4], np.int64)), const("one", np.array([1, 1], np.int64))])
    graph = check_with_onnxruntime(model, [{"x": rand(6, 3)}, {"x": rand(1, 9, seed=1)}])
    assert "INTDIV" not in graph.histogram()


def test_float_mod_without_fmod_is_refused():
    with pytest.raises(TosaconvError, match="Mod of floating-point tensors needs fmod=1"):
        convert(_mod_model(F32, 0))


# -- Sum, Mean ---------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["Sum", "Mean"])
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("opset", [11, 13, 21])
def test_variadic_sum_and_mean(op, count, opset):
    inputs = [info("a", F32, ["N", 3, "W"]), info("b", F32, [3, 1]), info("c", F32, ["W"])][:count]
    model = one_node(op, inputs, [info("y", F32, None)], opset=opset)
    shapes = {"a": [(2, 3, 4), (1, 3, 1)], "b": [(3, 1), (3, 1)], "c": [(4,), (1,)]}
    feeds = [{v.name: rand(*shapes[v.name][k], seed=k * 3 + j) for j, v in enumerate(inputs)} for k in range(2)]
    check_with_onnxruntime(model, feeds)

