"""What IREE 3.13 takes symbolically: one-op programs with ``?`` dims, built as records, compiled once.

Each program is written by the MLIR writer from hand-built records (−1 dims,
as the symbolic writer makes them), compiled once by ``iree-compile`` and run
at two input shapes; the result must equal the numpy formula. The last case
is the known limit: a RESHAPE whose shape operand is computed from a dynamic
dim (DIM, MUL_SHAPE) does not compile, and the test checks IREE's message so
that a release that lifts the limit shows up here (and in the README).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.iree_tools import IreeError, compile_mlir, run_module
from tosaconv.emit.mlir import records_to_mlir
from tosaconv.emit.records import BlockRecord, OpRecord, ShapeRecord, TensorRecord
from tosaconv.emit.tensor_data import to_le_bytes
from tosaconv.ir.dtypes import DType

F32 = DType.FP32


def _tensor(name: str, shape, values=None, dtype=F32) -> TensorRecord:
    data = None if values is None else to_le_bytes(np.asarray(values), dtype)
    return TensorRecord(name, tuple(shape), dtype, data)


def _block(inputs: list, ops: list, tensors: list, shapes=()) -> BlockRecord:
    consts = [OpRecord("CONST", {}, [], [t.name]) for t in tensors if t.data is not None]
    consts += [OpRecord("CONST_SHAPE", {}, [], [s.name]) for s in shapes if s.data is not None]
    return BlockRecord(ops=consts + ops, tensors=tensors, shapes=list(shapes), inputs=inputs,
                       outputs=[ops[-1].outputs[0]])


def _zero(name: str) -> TensorRecord:
    return _tensor(name, (1,), [0.0])


def reduce_sum():
    return _block(["x"], [OpRecord("REDUCE_SUM", {"axis": 1}, ["x"], ["y"])],
                  [_tensor("x", (-1, 4)), _tensor("y", (-1, 1))]), lambda x: x.sum(1, keepdims=True)


def matmul():
    b = np.arange(12, dtype=np.float32).reshape(1, 3, 4) / 7
    block = _block(["x"], [OpRecord("MATMUL", {}, ["x", "b", "za", "zb"], ["y"])],
                   [_tensor("x", (1, -1, 3)), _tensor("b", (1, 3, 4), b), _zero("za"), _zero("zb"),
                    _tensor("y", (1, -1, 4))])
    return block, lambda x: x @ b


def transpose():
    return _block(["x"], [OpRecord("TRANSPOSE", {"perms": (1, 0)}, ["x"], ["y"])],
                  [_tensor("x", (-1, 4)), _tensor("y", (4, -1))]), lambda x: x.T


def conv2d():
    w = np.array([2.0, -1.0], np.float32).reshape(1, 1, 1, 2)
    fields = {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "local_bound": False, "acc_type": 7}
    block = _block(["x"], [OpRecord("CONV2D", fields, ["x", "w", "bias", "zi", "zw"], ["y"])],
                   [_tensor("x", (-1, 4, 4, 2)), _tensor("w", (1, 1, 1, 2), w), _tensor("bias", (1,), [0.5]),
                    _zero("zi"), _zero("zw"), _tensor("y", (-1, 4, 4, 1))])
    return block, lambda x: (x @ w.reshape(2, 1)) + 0.5


CASES = {"reduce_sum": reduce_sum, "matmul": matmul, "transpose": transpose, "conv2d": conv2d}
SHAPES = {"reduce_sum": [(2, 4), (5, 4)], "matmul": [(1, 2, 3), (1, 6, 3)], "transpose": [(2, 4), (7, 4)],
          "conv2d": [(1, 4, 4, 2), (3, 4, 4, 2)]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamic_op_compiles_once_and_runs_at_two_shapes(name, tmp_path):
    block, formula = CASES[name]()
    (tmp_path / "m.mlir").write_text(records_to_mlir(block))
    vmfb = compile_mlir(tmp_path / "m.mlir", tmp_path / "m.vmfb")
    for n, shape in enumerate(SHAPES[name]):
        x = np.random.default_rng(n).standard_normal(shape).astype(np.float32)
        work = tmp_path / str(n)
        work.mkdir()
        (got,) = run_module(vmfb, [x], 1, work)
        np.testing.assert_allclose(got, formula(x), rtol=1e-5, atol=1e-6)


def test_reshape_with_a_computed_shape_does_not_compile(tmp_path):
    shapes = [ShapeRecord("d0", 1), ShapeRecord("three", 1, np.array([3], "<i8").view(np.uint8)),
              ShapeRecord("n", 1)]
    ops = [OpRecord("DIM", {"axis": 0}, ["x"], ["d0"]), OpRecord("MUL_SHAPE", {}, ["d0", "three"], ["n"]),
           OpRecord("RESHAPE", {}, ["x", "n"], ["y"])]
    block = _block(["x"], ops, [_tensor("x", (-1, 3)), _tensor("y", (-1,))], shapes)
    (tmp_path / "m.mlir").write_text(records_to_mlir(block))
    with pytest.raises(IreeError, match="failed to legalize operation 'tosa.reshape'"):
        compile_mlir(tmp_path / "m.mlir", tmp_path / "m.vmfb")
