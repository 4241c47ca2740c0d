"""CLAMP's bounds are of its input's type (the spec's in_out_t): a bound that type cannot hold is refused by
the verifier, and the importers write a float bound beyond the type's finite range as infinite (a Relu's
FLT_MAX on fp16 data: every fp16 value lies inside it and fp16's +inf stays +inf, as in onnxruntime)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from tests.importers.onnx.harness import convert, info, one_node, run_graph, run_onnxruntime
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.error_if import error_if
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType


def _reason(dtype: DType, lo: float, hi: float):
    return error_if("CLAMP", [TensorType(dtype, (2, 3))], A.ClampAttrs(lo, hi))


def test_a_float_bound_beyond_the_type_is_refused_and_infinity_is_not():
    assert "outside the range of FP16" in _reason(DType.FP16, 0.0, 70000.0)
    assert "outside the range of FP32" in _reason(DType.FP32, -1e39, 0.0)
    assert _reason(DType.FP16, 0.0, 65504.0) is None
    assert _reason(DType.FP32, float("-inf"), float("inf")) is None


def test_an_integer_bound_must_be_an_integer_of_the_type():
    assert "not an integer in the range of INT8" in _reason(DType.INT8, -129, 0)
    assert "not an integer in the range of INT16" in _reason(DType.INT16, 0, 0.5)
    assert _reason(DType.INT8, -128, 127) is None


def test_relu_on_fp16_has_an_infinite_upper_bound_and_matches_onnxruntime():
    model = one_node("Relu", [info("x", TensorProto.FLOAT16, [2, 3])], [info("y", TensorProto.FLOAT16, [2, 3])])
    graph = convert(model)
    (clamp,) = [op for op in graph.ops if op.op is Op.CLAMP]
    assert clamp.attrs.max_val == float("inf")
    x = np.array([[-1.0, 0.5, 60000.0], [np.inf, -np.inf, 3.0]], np.float16)
    (got,) = run_graph(graph, {"x": x})
    (want,) = run_onnxruntime(model, {"x": x})
    np.testing.assert_array_equal(got, want)
