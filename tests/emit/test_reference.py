"""The official reference model runs every one-op graph we emit.

For each case in ``cases.py`` / ``cases_nn.py``: write the graph, run
``tosa_reference_model`` on the case's inputs, check it exits 0 and writes an
output of the right shape and dtype, and compare with the numpy expectation
where the case gives one.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tosa_tools import run_reference_model
from tosaconv.emit import write_tosa
from tosaconv.ir.dtypes import DType

from . import cases_misc, cases_nn  # noqa: F401  (register more cases)
from .cases import CASES, _one

_NUMPY_OUT = {DType.FP32: np.float32, DType.INT32: np.int32, DType.INT16: np.int16, DType.INT8: np.int8,
              DType.BOOL: np.bool_}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_model_runs_emitted_op(name, tmp_path):
    c = CASES[name]()
    out = run_reference_model(write_tosa(c.graph), c.inputs, ["y"], tmp_path)["y"]
    y_type = c.graph.outputs[0].type
    assert out.shape == tuple(c.shapes["y"])
    assert out.dtype == _NUMPY_OUT[y_type.dtype]
    if c.expected is not None:
        np.testing.assert_allclose(out, c.expected["y"], atol=c.atol, rtol=1e-5)


def test_cast_rounds_ties_to_even(tmp_path):
    # The spec says "round to nearest"; the reference model breaks ties to even, like np.rint.
    from tosaconv.ir import attrs as A
    from tosaconv.ir.ops import Op
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], dtype=np.float32)
    c = _one(Op.CAST, {"x": (DType.FP32, (7,))}, {"x": x}, A.CastAttrs(DType.INT32))
    out = run_reference_model(write_tosa(c.graph), c.inputs, ["y"], tmp_path)["y"]
    np.testing.assert_array_equal(out, np.rint(x).astype(np.int32))


def test_helper_reports_missing_outputs_despite_exit_0(tmp_path):
    from tests.tosa_tools import ReferenceModelError
    c = CASES["add"]()
    with pytest.raises(ReferenceModelError, match=r"exited 0; missing outputs out0.npy"):
        run_reference_model(write_tosa(c.graph), c.inputs, ["not_an_output"], tmp_path)


def test_helper_reports_a_failing_run(tmp_path):
    from tests.tosa_tools import ReferenceModelError
    c = CASES["add"]()
    bad = dict(c.inputs, x=np.zeros((5, 5), np.float32))  # wrong shape for input x
    with pytest.raises(ReferenceModelError, match=r"(?s)exited -?[1-9].*Buffer size does not match"):
        run_reference_model(write_tosa(c.graph), bad, ["y"], tmp_path)


def test_helper_refuses_inputs_that_do_not_fit(tmp_path):
    c = CASES["table_int8"]()
    with pytest.raises(ValueError, match=r"do not fit INT8"):
        run_reference_model(write_tosa(c.graph), {"x": c.inputs["x"].astype(np.int32) * 4}, ["y"], tmp_path)
