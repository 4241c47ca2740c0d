"""No constant is written twice in a block (issue 13's output size).

A graph whose ops repeat parameters (RESHAPE's shape, PAD's padding and
pad_const) and hold two equal CONSTs is written; the file must hold each
distinct constant once (read with the deserializer: no two tensor or shape
records with the same type and bytes), a CONST returned as a graph output
must keep its own tensor under the output's name, and the official reference
model and tosaconv's reader (run by the interpreter) must both agree with
numpy on the outputs, and tosa-opt must deserialize the file to what it
parses from our MLIR.
"""
from __future__ import annotations

import numpy as np

from tests.tosa_tools import run_reference_model
from tosaconv.emit import write_tosa
from tosaconv.emit.deserialize import deserialize
from tosaconv.emit.reader import read_tosa
from tosaconv.interpreter import evaluate
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

K = np.arange(1, 5, dtype=np.int32).reshape(1, 4)


def _graph() -> Graph:
    g = Graph()
    x = g.add_input("x", TensorType(DType.INT32, (2, 4)))
    b = Builder(g, Location("Test", "op", "test"))
    a = b.emit(Op.ADD, x, b.const(K))
    a = b.emit(Op.ADD, a, b.const(K.copy()))         # equal to the first CONST, in other memory
    for _ in range(2):                                 # the same shape parameters twice
        flat = b.emit(Op.RESHAPE, a, attrs=A.ReshapeAttrs((8,)))
        a = b.emit(Op.RESHAPE, flat, attrs=A.ReshapeAttrs((2, 4)))
    for _ in range(2):                                 # the same padding and pad_const twice
        a = b.emit(Op.PAD, a, attrs=A.PadAttrs((0, 0, 1, 1), 7))
        a = b.emit(Op.SLICE, a, attrs=A.SliceAttrs((0, 1), (2, 4)))
    g.set_outputs([a, b.const(K.copy())], ["y", "k"])
    return g


def _expected(x: np.ndarray) -> dict:
    return {"y": x + 2 * K, "k": K}


def test_each_constant_is_written_once():
    block = deserialize(write_tosa(_graph()))
    tensors = [(t.type_code, tuple(t.shape), t.data.tobytes()) for t in block.tensors
               if t.data is not None and t.name not in block.outputs]
    shapes = [s.data.tobytes() for s in block.shapes]
    assert len(tensors) == len(set(tensors)), tensors
    assert len(shapes) == len(set(shapes)), shapes
    # one K for both ADDs, and the output "k" holds its own (an output tensor is never shared)
    assert sum(t[2] == K.tobytes() for t in tensors) == 1
    assert [t.data.tobytes() for t in block.tensors if t.name == "k"] == [K.tobytes()]
    # (8,), (2, 4) (also SLICE's size), the padding and SLICE's start
    assert sum(op.op == "CONST_SHAPE" for op in block.ops) == 4
    assert sum(op.op == "RESHAPE" for op in block.ops) == 4


def test_shared_constants_run_in_the_reference_model_and_read_back(tmp_path):
    x = np.random.default_rng(5).integers(-100, 100, (2, 4)).astype(np.int32)
    tosa = write_tosa(_graph())
    want = _expected(x)
    ref = run_reference_model(tosa, {"x": x}, ["y", "k"], tmp_path)
    back = evaluate(read_tosa(tosa), {"x": x})
    for name in ("y", "k"):
        np.testing.assert_array_equal(ref[name], want[name])
        np.testing.assert_array_equal(np.asarray(back[name]), want[name])


def test_tosa_opt_deserializes_shared_constants(tmp_path):
    # tosa-opt validates our MLIR (one SSA constant used by several ops) and prints its own
    # deserialization of the .tosa exactly as it prints that MLIR
    from tests.emit.test_mlir_tosa_opt import check_against_deserializer
    check_against_deserializer(_graph(), tmp_path)
