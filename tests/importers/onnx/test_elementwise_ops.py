"""The elementwise converters against onnxruntime, on symbolic input dims run
at several shapes (one binding a dim to 1, so broadcasting happens at run
time): binary arithmetic with numpy-style broadcasting, Pow with the special
exponents and a tensor exponent, the unary math and activation ops, Clip with
constant, missing and run-time bounds, variadic Min/Max, Where, the
comparisons, Not, and Cast between the types TOSA has.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .harness import BOOL, F16, F32, I32, I64, check_with_onnxruntime, const, info, make_model, one_node, rand

SHAPES = [(2, 3, 4), (1, 5, 4), (3, 1, 4)]


def _x(elem=F32, name="x"):
    return info(name, elem, ["b", "s", 4])


def _y(elem=F32):
    return info("y", elem, None)


def _floats(low=-3.0, high=3.0):
    return [{"x": rand(*s, low=low, high=high, seed=i)} for i, s in enumerate(SHAPES)]


def _ints(low=-20, high=20, dtype=np.int32):
    return [{"x": np.random.default_rng(i).integers(low, high, s).astype(dtype)} for i, s in enumerate(SHAPES)]


# -- binary arithmetic --------------------------------------------------------------

@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("other", [(4,), (1, 4), (1, 1, 1), ()], ids=str)
def test_binary_with_a_broadcast_constant(op, other):
    c = const("c", rand(*other, low=0.5, high=2.0, seed=9))
    check_with_onnxruntime(one_node(op, [_x()], [_y()], [c], opset=14), _floats())


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_binary_of_two_symbolic_inputs(op):
    model = one_node(op, [_x(), info("z", F32, ["s", 1])], [_y()], opset=13)
    feeds = [dict(f, z=rand(f["x"].shape[1], 1, low=0.5, high=2.0, seed=5)) for f in _floats()]
    check_with_onnxruntime(model, feeds)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("elem,dtype", [(I32, np.int32), (I64, np.int64)])
def test_integer_binary(op, elem, dtype):
    c = const("c", np.array([3, -2, 5, 7], dtype))
    check_with_onnxruntime(one_node(op, [_x(elem)], [_y(elem)], [c], opset=14), _ints(dtype=dtype))


@pytest.mark.parametrize("exponent", [2.0, 3.0, 0.5, -1.0, 1.0, 1.5, 0.0])
def test_pow_with_a_constant_exponent(exponent):
    model = one_node("Pow", [_x()], [_y()], [const("e", np.array(exponent, np.float32))], opset=15)
    low = -3.0 if float(exponent).is_integer() else 0.1
    check_with_onnxruntime(model, _floats(low=low))


def test_pow_with_a_tensor_exponent():
    model = one_node("Pow", [_x(), info("e", F32, [4])], [_y()], opset=15)
    feeds = [dict(f, e=np.array([0.5, 1.0, 2.5, -1.5], np.float32)) for f in _floats(low=0.1)]
    check_with_onnxruntime(model, feeds)


# -- unary --------------------------------------------------------------------------

UNARY = ["Sqrt", "Reciprocal", "Exp", "Log", "Neg", "Abs", "Relu", "Sigmoid", "Tanh", "Erf"]
POSITIVE_ONLY = {"Sqrt", "Log"}


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("opset", [11, 13, 17])
def test_unary_float(op, opset):
    feeds = _floats(0.1, 4.0) if op in POSITIVE_ONLY else _floats()
    check_with_onnxruntime(one_node(op, [_x()], [_y()], opset=opset), feeds)


@pytest.mark.parametrize("op", ["Neg", "Abs", "Relu"])
def test_unary_int32(op):
    check_with_onnxruntime(one_node(op, [_x(I32)], [_y(I32)], opset=14), _ints())


@pytest.mark.parametrize("attrs", [{}, {"alpha": 0.3}])
def test_leaky_relu(attrs):
    check_with_onnxruntime(one_node("LeakyRelu", [_x()], [_y()], opset=16, **attrs), _floats())


# -- Clip, Min, Max, Where -------------------------------------------------------------

@pytest.mark.parametrize("bounds", [(-1.0, 1.5), (-1.0, None), (None, 0.5), (None, None), (2.0, 1.0)], ids=str)
def test_clip_with_constant_bounds(bounds):
    names = ["" if b is None else n for b, n in zip(bounds, ("lo", "hi"))]
    inits = [const(n, np.array(b, np.float32)) for b, n in zip(bounds, ("lo", "hi")) if b is not None]
    node = helper.make_node("Clip", ["x"] + names, ["y"])
    check_with_onnxruntime(make_model([node], [_x()], [_y()], inits, opset=13), _floats())


def test_clip_with_run_time_bounds():
    model = one_node("Clip", [_x(), info("lo", F32, []), info("hi", F32, [])], [_y()], opset=13)
    feeds = [dict(f, lo=np.array(-0.5, np.float32), hi=np.array(1.0, np.float32)) for f in _floats()]
    check_with_onnxruntime(model, feeds)


def test_clip_int32():
    inits = [const("lo", np.array(-5, np.int32)), const("hi", np.array(7, np.int32))]
    check_with_onnxruntime(one_node("Clip", [_x(I32)], [_y(I32)], inits, opset=13), _ints())


@pytest.mark.parametrize("op", ["Min", "Max"])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_variadic_min_max(op, count):
    others = [info(f"z{i}", F32, [[4], ["s", 1], []][i]) for i in range(count - 1)]
    model = one_node(op, [_x()] + others, [_y()], opset=13)
    feeds = []
    for f in _floats():
        s = f["x"].shape[1]
        shapes = [(4,), (s, 1), ()]
        feeds.append(dict(f, **{f"z{i}": rand(*shapes[i], seed=20 + i) for i in range(count - 1)}))
    check_with_onnxruntime(model, feeds)


def test_where_broadcasts_all_three_operands():
    model = one_node("Where", [info("c", BOOL, ["s", 1]), _x(), info("z", F32, [4])], [_y()], opset=16)
    feeds = [dict(f, c=rand(f["x"].shape[1], 1, seed=3) > 0, z=rand(4, seed=4)) for f in _floats()]
    check_with_onnxruntime(model, feeds)


# -- comparisons, logic, Cast ------------------------------------------------------------

@pytest.mark.parametrize("op", ["Equal", "Less", "Greater"])
@pytest.mark.parametrize("elem,feeds", [(F32, lambda: _floats()), (I32, lambda: _ints(-3, 3))])
def test_comparisons(op, elem, feeds):
    c = const("c", np.array([0, 1, -1, 2], np.float32 if elem == F32 else np.int32))
    check_with_onnxruntime(one_node(op, [_x(elem)], [_y(BOOL)], [c], opset=13), feeds())


def test_not():
    feeds = [{"x": f["x"] > 0} for f in _floats()]
    check_with_onnxruntime(one_node("Not", [_x(BOOL)], [_y(BOOL)], opset=13), feeds)


@pytest.mark.parametrize("src,dst,feeds", [
    pytest.param(F32, I32, lambda: _floats(-9.9, 9.9), id="f32-i32"),
    pytest.param(F32, I64, lambda: _floats(-9.9, 9.9), id="f32-i64"),
    pytest.param(I32, F32, lambda: _ints(), id="i32-f32"),
    pytest.param(I64, I32, lambda: _ints(dtype=np.int64), id="i64-i32"),
    pytest.param(F32, BOOL, lambda: [{"x": np.round(f["x"])} for f in _floats()], id="f32-bool"),
    pytest.param(BOOL, F32, lambda: [{"x": f["x"] > 0} for f in _floats()], id="bool-f32"),
    pytest.param(I32, BOOL, lambda: _ints(-2, 2), id="i32-bool"),
    pytest.param(F32, F16, lambda: _floats(), id="f32-f16"),
])
def test_cast(src, dst, feeds):
    check_with_onnxruntime(one_node("Cast", [_x(src)], [_y(dst)], opset=13, to=dst), feeds())


def test_cast_float_to_int_truncates_toward_zero():
    model = one_node("Cast", [info("x", F32, [6])], [_y(I32)], opset=13, to=I32)
    check_with_onnxruntime(model, [{"x": np.array([2.5, -2.5, 1.7, -1.7, 0.5, 3.5], np.float32)}])


@pytest.mark.parametrize("exponent", [0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5])
def test_pow_with_constant_exponent_handles_negative_bases(exponent, tmp_path):
    """TOSA POW is undefined for negative bases, so small integer exponents must not use it."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper

    import tosaconv.api as api

    x_info = h.make_tensor_value_info("x", T.FLOAT, ["n"])
    y_info = h.make_tensor_value_info("y", T.FLOAT, ["n"])
    e = numpy_helper.from_array(np.array(exponent, np.float32), "e")
    g = h.make_graph([h.make_node("Pow", ["x", "e"], ["y"], name="pow")], "g", [x_info], [y_info], [e])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 10
    path = str(tmp_path / "pow.onnx")
    onnx.save(model, path)
    x = np.array([-2.5, -1.0, 0.5, 1.5, 3.0], np.float32)
    if exponent == 0.5 or exponent < 0:
        x = np.abs(x) + 0.25
    graph = api.load(path)
    assert "POW" not in {op.op.name for op in graph.ops}
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(api.run(graph, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)
