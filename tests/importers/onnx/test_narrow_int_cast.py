"""4- and 2-bit integers (int4, uint4, int2, uint2) at the ONNX boundary, against onnxruntime (which
cannot hand back such arrays, and has no 2-bit Cast: it checks the float results of int4/uint4) and onnx's reference evaluator (the narrow ones).

TOSA 1.0 has no 4- or 2-bit tensors; tosaconv holds their true values in INT8. A Cast to one of them
keeps the low bits of the integer (ONNX's Cast wraps: int4 -9 is 7), sign-extended for the signed types;
a Cast from one reads the INT8 values. A run returns the model's type (ml_dtypes arrays, as onnx gives
them). Fractional values are truncated as for the other integer Casts (the reference evaluator does the
same; onnxruntime rounds negative ones for int4), so the data is integral. An input of such a type that another op reads is refused, naming the published limit."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tosaconv.diagnostics import TosaconvError
from tosaconv.io_dtypes import to_model, to_program
from tosaconv.lowering.limits import limit_note

from .harness import F32, convert, info, make_model, run_graph, run_onnxruntime, specialize_and_emit

NARROW = [TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2]


def round_trip(to: int, narrow_output: bool = True):
    """float -> ``to`` (an output unless not ``narrow_output``) -> float (another output)."""
    nodes = [helper.make_node("Cast", ["x"], ["n"], name="to_narrow", to=to),
             helper.make_node("Cast", ["n"], ["f"], name="to_float", to=TensorProto.FLOAT)]
    outputs = [info("n", to, None)] * narrow_output + [info("f", F32, None)]
    return make_model(nodes, [info("x", F32, ["N"])], outputs, (), 21)


@pytest.mark.parametrize("to", NARROW, ids=[TensorProto.DataType.Name(t) for t in NARROW])
def test_cast_to_and_from_narrow_integers_matches_onnxruntime(to):
    model = round_trip(to)
    graph = convert(model)
    assert graph.output_dtypes["n"] == TensorProto.DataType.Name(to).lower()
    x = np.arange(-20, 21, dtype=np.float32)   # wraps several times
    want = ReferenceEvaluator(model).run(None, {"x": x})
    if to in (TensorProto.INT4, TensorProto.UINT4):   # onnxruntime has no Cast of 2-bit integers
        np.testing.assert_array_equal(run_onnxruntime(round_trip(to, False), {"x": x})[0], want[1])
    static = specialize_and_emit(graph, {"x": x.shape})[0]
    for program in (graph, static):
        got = to_model(program, dict(zip(program.output_names, run_graph(program, to_program(program, {"x": x})))))
        assert got["n"].dtype == want[0].dtype
        np.testing.assert_array_equal(got["n"].astype(np.int32), want[0].astype(np.int32))
        np.testing.assert_array_equal(got["f"], want[1])


def test_narrow_input_read_by_another_op_is_refused():
    model = make_model([helper.make_node("Neg", ["x"], ["y"], name="neg")], [info("x", TensorProto.INT4, [4])],
                       [info("y", TensorProto.INT4, None)], (), 21)
    with pytest.raises(TosaconvError, match=r"input 'x' has element type INT4.*Neg 'neg' reads it") as e:
        convert(model)
    assert limit_note("input-type") in e.value.diagnostics[0].notes


def test_narrow_input_through_cast_keeps_its_values():
    model = make_model([helper.make_node("Cast", ["x"], ["y"], name="c", to=TensorProto.INT8)],
                       [info("x", TensorProto.INT4, [16])], [info("y", TensorProto.INT8, None)], (), 21)
    x = np.arange(-8, 8).astype(np.int8).astype(ml_dtypes.int4)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]   # onnxruntime takes no int4 arrays
    np.testing.assert_array_equal(want, np.arange(-8, 8))
    graph = convert(model)
    got = run_graph(graph, to_program(graph, {"x": x}))
    assert got[0].dtype == np.int8
    np.testing.assert_array_equal(got[0], want)
