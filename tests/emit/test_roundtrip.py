"""Writing is deterministic and reading inverts it.

``read_tosa(write_tosa(g))`` has the same inputs, ops, attributes, types and
outputs as ``g``; writing that again gives the same bytes; writing the same
graph twice (or an identically built copy) gives the same bytes. Also covers
output naming (renamed outputs, pass-through inputs, a value returned twice)
and constant data of every element type we write.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tosa_tools import run_reference_model
from tosaconv.emit import read_tosa, write_tosa
from tosaconv.ir import attrs as A
from tosaconv.ir.attrs import attr_items
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from . import cases_misc, cases_nn  # noqa: F401  (register more cases)
from .cases import CASES


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b)) and np.shape(a) == np.shape(b)
    return a == b


def assert_same_graph(g, h):
    assert [(v.name, v.type) for v in g.inputs] == [(v.name, v.type) for v in h.inputs]
    assert g.output_names == h.output_names
    assert [v.type for v in g.outputs] == [v.type for v in h.outputs]
    assert len(g.ops) == len(h.ops)
    for op, back in zip(g.ops, h.ops):
        assert back.op is op.op
        assert [r.type for r in back.results] == [r.type for r in op.results]
        assert [v.type for v in back.operands] == [v.type for v in op.operands]
        assert type(back.attrs) is type(op.attrs)
        for (name, x), (_, y) in zip(attr_items(op.attrs), attr_items(back.attrs)):
            assert _same_value(x, y), f"{op.op.name}.{name}: {x!r} != {y!r}"
        assert back.location.name == str(op.location)
        assert back.location.op_type == op.op.tosa and back.location.source == "tosa"


@pytest.mark.parametrize("name", sorted(CASES))
def test_read_inverts_write(name):
    g = CASES[name]().graph
    data = write_tosa(g)
    back = read_tosa(data)
    assert_same_graph(g, back)
    assert write_tosa(back) == data


@pytest.mark.parametrize("name", sorted(CASES))
def test_writing_is_deterministic(name):
    assert write_tosa(CASES[name]().graph) == write_tosa(CASES[name]().graph)
    g = CASES[name]().graph
    assert write_tosa(g) == write_tosa(g)


def _const_graph(arrays: dict) -> Graph:
    g = Graph()
    b = Builder(g, Location("Constant", "c", "onnx"))
    outs = [b.emit(Op.CONST, attrs=A.ConstAttrs(arr), result_type=TensorType(dt, arr.shape), name=name)
            for name, (dt, arr) in arrays.items()]
    g.set_outputs(outs, list(arrays))
    return g


CONST_DATA = {
    "b": (DType.BOOL, np.array([[True, False, True]])),
    "i8": (DType.INT8, np.array([-128, 0, 127], dtype=np.int8)),
    "i16": (DType.INT16, np.array([-32768, 1, 32767], dtype=np.int16)),
    "i32": (DType.INT32, np.array([-2**31, 7, 2**31 - 1], dtype=np.int64)),
    "i48": (DType.INT48, np.array([-2**47, -1, 2**47 - 1], dtype=np.int64)),
    "f16": (DType.FP16, np.array([0.5, -65504.0, np.inf], dtype=np.float16)),
    "bf16": (DType.BF16, np.array([1.0, -2.5, 2.0**100], dtype=np.float32)),
    "f32": (DType.FP32, np.array([[1.5], [-0.0]], dtype=np.float32)),
    "scalar": (DType.FP32, np.array(3.25, dtype=np.float32)),
}


def test_constant_data_of_every_type_round_trips():
    g = _const_graph(CONST_DATA)
    data = write_tosa(g)
    back = read_tosa(data)
    for op, (name, (dt, arr)) in zip(back.ops, CONST_DATA.items()):
        assert op.result.type == TensorType(dt, arr.shape)
        np.testing.assert_array_equal(op.attrs.values, arr.astype(op.attrs.values.dtype), err_msg=name)
    assert write_tosa(back) == data


def test_bf16_data_rounds_to_nearest_even():
    from tosaconv.emit.tensor_data import from_le_bytes, to_le_bytes
    above_tie = np.nextafter(np.float32(1.00390625), np.float32(2))
    x = np.array([1.00390625, 1.01171875, above_tie, -3.0e38, np.nan], dtype=np.float32)
    back = from_le_bytes(to_le_bytes(x, DType.BF16).tobytes(), DType.BF16, x.shape)
    np.testing.assert_array_equal(back[:3], np.array([1.0, 1.015625, 1.0078125], dtype=np.float32))
    assert abs(back[3] / -3.0e38 - 1) < 2**-8
    assert np.isnan(back[4])


def test_reference_model_reads_constant_data(tmp_path):
    arrays = {k: CONST_DATA[k] for k in ("b", "i8", "i16", "i32", "f16", "f32")}
    out = run_reference_model(write_tosa(_const_graph(arrays)), {}, list(arrays), tmp_path)
    for name, (_, arr) in arrays.items():
        np.testing.assert_array_equal(out[name], arr.astype(out[name].dtype), err_msg=name)


def _naming_graph() -> Graph:
    """Output 'y' renames value 't'; output 'x_out' is input 'x'; value 'u' is returned twice;
    an intermediate is itself called 'y', so it must yield its name to the output."""
    g = Graph()
    x = g.add_input("x", TensorType(DType.FP32, (2, 2)))
    b = Builder(g, Location("Test", "n", "test"))
    inner = b.emit(Op.ABS, x, name="y")
    t = b.emit(Op.NEGATE, inner, attrs=A.NegateAttrs(), name="t")
    u = b.emit(Op.EXP, x, name="u")
    g.set_outputs([t, x, u, u], ["y", "x_out", "u", "u_again"])
    return g


def test_outputs_are_named_after_graph_outputs(tmp_path):
    g = _naming_graph()
    data = write_tosa(g)
    back = read_tosa(data)
    assert back.output_names == ["y", "x_out", "u", "u_again"]
    assert [v.name for v in back.outputs] == ["y", "x_out", "u", "u_again"]
    assert back.histogram() == {"ABS": 1, "NEGATE": 1, "EXP": 1, "IDENTITY": 2}
    assert write_tosa(back) == data
    x = np.array([[1.0, -2.0], [0.5, -0.25]], dtype=np.float32)
    out = run_reference_model(data, {"x": x}, back.output_names, tmp_path)
    np.testing.assert_allclose(out["y"], -np.abs(x))
    np.testing.assert_array_equal(out["x_out"], x)
    np.testing.assert_allclose(out["u"], np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(out["u_again"], out["u"])


def test_unsigned_rescale_zero_points_keep_their_bits():
    g = Graph()
    x = g.add_input("x", TensorType(DType.INT8, (4,)))
    b = Builder(g, Location("Test", "r", "test"))
    attrs = A.RescaleAttrs((1 << 30,), (30,), input_zp=128, output_zp=0, input_unsigned=True)
    y = b.emit(Op.RESCALE, x, attrs=attrs, result_type=TensorType(DType.INT8, (4,)))
    g.set_outputs([y], ["y"])
    assert read_tosa(write_tosa(g)).ops[0].attrs == attrs


def test_numpy_integer_dims_are_written_as_static():
    g = Graph()
    x = g.add_input("x", TensorType(DType.FP32, (np.int64(2), np.int32(3))))
    y = Builder(g).emit(Op.ABS, x)
    g.set_outputs([y], ["y"])
    assert read_tosa(write_tosa(g)).inputs[0].type == TensorType(DType.FP32, (2, 3))
