"""uint8/uint16/uint32/uint64 model inputs that ops compute on (Add, Sub, Greater, Max...) against onnxruntime.

TOSA has no unsigned tensors. A uint8/uint16 input that only ops computing on values read (no quantized op
that needs its bits) is widened to an INT32 program input holding its true values, and uint32/uint64 inputs
are INT32 true values; the ops then compute on the true values, and an unsigned output (INT32) comes back in
the model's type modulo its range, as the model's own integer arithmetic wraps. The data below wraps
(uint8 sums past 255, differences below 0) and compares values whose uint16 bits would be negative as
int16, so a program that computed on the stored bits would fail; uint32 products wrap modulo 2**32 as in
onnxruntime. uint64 is computed in 32 bits as int64 is: its values (and results, which come back
sign-extended, so a wrapped difference is exact) must fit int32. A uint32 value beyond int32 is refused at
the run's boundary."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv.diagnostics import ShapeError
from tosaconv.io_dtypes import to_model, to_program

from tosaconv.diagnostics import TosaconvError
from tosaconv.lowering.limits import limit_note

from .harness import const, convert, info, make_model, run_graph, run_onnxruntime, specialize_and_emit

U8, U16, U32, U64 = TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64
NP = {U8: np.uint8, U16: np.uint16, U32: np.uint32, U64: np.uint64}


def arith_model(elem: int):
    """(a + b, a - b, a * b, a > b, a < b, a // b, a % b) of two inputs of ONNX type ``elem``."""
    ops = [("Add", elem), ("Sub", elem), ("Mul", elem), ("Greater", TensorProto.BOOL), ("Less", TensorProto.BOOL),
           ("Div", elem), ("Mod", elem)]
    nodes = [helper.make_node(op, ["a", "b"], [f"y{i}"], name=op.lower()) for i, (op, _) in enumerate(ops)]
    outputs = [info(f"y{i}", t, None) for i, (_, t) in enumerate(ops)]
    return make_model(nodes, [info("a", elem, ["N", 3]), info("b", elem, ["N", 3])], outputs, (), 17)


def feeds(elem: int, n: int, high: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.integers(high // 2, high, (n, 3)).astype(NP[elem])
    b = rng.integers(1, high, (n, 3)).astype(NP[elem])
    return {"a": a, "b": b}


def run_in_model_types(graph, feed: dict, static: bool) -> dict:
    if static:
        graph = specialize_and_emit(graph, {k: v.shape for k, v in feed.items()})[0]
    got = run_graph(graph, to_program(graph, feed))
    return to_model(graph, dict(zip(graph.output_names, got)))


@pytest.mark.parametrize("elem,high", [(U8, 256), (U16, 65536), (U32, 2**31), (U64, 2**15)])
def test_unsigned_arithmetic_matches_onnxruntime(elem, high):
    model = arith_model(elem)
    graph = convert(model)
    assert [v.type.dtype.name for v in graph.inputs] == ["INT32", "INT32"]
    assert graph.output_dtypes["y0"] == np.dtype(NP[elem]).name
    for seed, n in enumerate([2, 5]):
        feed = feeds(elem, n, high, seed)
        want = run_onnxruntime(model, feed)
        for static in (False, True):
            got = run_in_model_types(graph, feed, static)
            for name, w in zip(graph.output_names, want):
                assert got[name].dtype == w.dtype, name
                np.testing.assert_array_equal(got[name], w, err_msg=f"{name} static={static}")


def test_uint8_sums_and_differences_wrap_as_onnxruntime_does():
    model = arith_model(U8)
    feed = {"a": np.array([[250, 3, 128]] * 2, np.uint8), "b": np.array([[10, 7, 129]] * 2, np.uint8)}
    want = run_onnxruntime(model, feed)
    assert want[0][0, 0] == 4 and want[1][0, 1] == 252   # the data does wrap
    got = run_in_model_types(convert(model), feed, True)
    for i, w in enumerate(want):
        np.testing.assert_array_equal(got[f"y{i}"], w)


def test_uint32_value_beyond_int32_is_refused_at_the_boundary():
    graph = convert(arith_model(U32))
    feed = {"a": np.array([[2**31, 1, 2]], np.uint32), "b": np.ones((1, 3), np.uint32)}
    with pytest.raises(ShapeError, match=r"input 'a' has uint32 values outside the int32 range"):
        to_program(graph, feed)


def test_uint8_input_meeting_a_uint8_constant_stays_bits_and_is_refused():
    """uint8 constants stay INT8 bits, so an input they would meet in an Add is not widened: refused, naming
    the published limit."""
    model = make_model([helper.make_node("Add", ["a", "k"], ["y"], name="add")], [info("a", U8, [3])],
                       [info("y", U8, None)], [const("k", np.array([200, 5, 1], np.uint8))], 17)
    with pytest.raises(TosaconvError, match=r"input 'a' is uint8, .* Add 'add' reads it directly") as e:
        convert(model)
    assert limit_note("unsigned-input") in e.value.diagnostics[0].notes
