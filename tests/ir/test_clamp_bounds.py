"""CLAMP's bounds are of its input's type (the spec's in_out_t). An integer type's bound must be an integer
that type holds, or the verifier refuses it. A float bound beyond a float type's range is that type's
infinity, as IEEE conversion rounds it: the importers write a Relu's FLT_MAX on fp16 data as +inf (every fp16
value lies inside it and +inf stays +inf, as in onnxruntime), and the writer stores an out-of-range bound of a
hand-written program as infinity without a numpy overflow warning (a fuzz campaign found one leaking)."""
from __future__ import annotations

import warnings

import numpy as np
from onnx import TensorProto

from tests.importers.onnx.harness import convert, info, one_node, run_graph, run_onnxruntime
from tosaconv import api
from tosaconv.emit import read_tosa
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.error_if import error_if
from tosaconv.ir.ops import Op
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.types import TensorType


def _reason(dtype: DType, lo: float, hi: float):
    return error_if("CLAMP", [TensorType(dtype, (2, 3))], A.ClampAttrs(lo, hi))


def test_an_integer_bound_must_be_an_integer_of_the_type():
    assert "not an integer in the range of INT8" in _reason(DType.INT8, -129, 0)
    assert "not an integer in the range of INT16" in _reason(DType.INT16, 0, 0.5)
    assert _reason(DType.INT8, -128, 127) is None


def test_a_float_bound_beyond_the_type_is_written_as_infinity_without_a_warning():
    program = parse_graph("""tosair 1
func @main(%x: tensor<2xf32>) {
  %y = CLAMP(%x) {min_val = -1e39, max_val = 2147483648e+38, nan_mode = "PROPAGATE"} : tensor<2xf32> loc(test Clip "c")
  return %y as y
}
""")
    assert _reason(DType.FP32, -1e39, 2.1e47) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = api.emit(program)
    (clamp,) = [op for op in read_tosa(bytes(written)).ops if op.op is Op.CLAMP]
    assert (clamp.attrs.min_val, clamp.attrs.max_val) == (float("-inf"), float("inf"))


def test_relu_on_fp16_has_an_infinite_upper_bound_and_matches_onnxruntime():
    model = one_node("Relu", [info("x", TensorProto.FLOAT16, [2, 3])], [info("y", TensorProto.FLOAT16, [2, 3])])
    graph = convert(model)
    (clamp,) = [op for op in graph.ops if op.op is Op.CLAMP]
    assert clamp.attrs.max_val == float("inf")
    x = np.array([[-1.0, 0.5, 60000.0], [np.inf, -np.inf, 3.0]], np.float16)
    (got,) = run_graph(graph, {"x": x})
    (want,) = run_onnxruntime(model, {"x": x})
    np.testing.assert_array_equal(got, want)
