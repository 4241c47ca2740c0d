"""Every way writing or reading can fail gives EmitError / ReadError with a useful message.

Writing: symbolic dims (naming the op or the input and its first user),
helper ops, parameters TOSA cannot hold, bad output naming. Reading: truncated
and corrupted bytes (never a raw IndexError/struct.error), a wrong identifier,
unsupported versions, ops we do not map, parameters that are not constants.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.diagnostics import ShapeError
from tosaconv.emit import EmitError, ReadError, read_tosa, write_tosa
from tosaconv.emit import schema as S
from tosaconv.emit.records import BlockRecord, OpRecord, ShapeRecord, TensorRecord
from tosaconv.emit.serialize import serialize
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.symbolic.expr import sym

from . import cases_misc, cases_nn  # noqa: F401  (register more cases)
from .cases import CASES, _one

F32 = DType.FP32


def _static_input(shape=(2, 3), dtype=F32):
    g = Graph()
    return g, g.add_input("x", TensorType(dtype, shape)), Builder(g)


# -- writing -----------------------------------------------------------------------

def test_symbolic_op_result_names_the_op():
    g, x, b = _static_input()
    with b.at(Location("Tile", "tile_k", "onnx")):
        y = b.emit(Op.TILE, x, attrs=A.TileAttrs((sym("k"), 1)))
    g.set_outputs([y], ["y"])
    with pytest.raises(EmitError, match=r"result of TILE has symbolic type") as err:
        write_tosa(g)
    assert err.value.location == Location("Tile", "tile_k", "onnx")
    assert "Tile 'tile_k'" in str(err.value)


def test_symbolic_input_names_its_first_user():
    g = Graph()
    x = g.add_input("x", TensorType(F32, (sym("batch"), 3)))
    b = Builder(g)
    with b.at(Location("Abs", "abs1", "onnx")):
        y = b.emit(Op.ABS, x)
    g.set_outputs([y], ["y"])
    with pytest.raises(EmitError, match=r"graph input 'x' \(first used by ABS\).*symbolic.*batch"):
        write_tosa(g)


def test_helper_op_is_rejected_with_its_location():
    g, x, b = _static_input()
    with b.at(Location("Shape", "shape_of_x", "onnx")):
        d = b.get_dim(x, 0)
        y = b.dims_to_tensor([d])
    g.set_outputs([y], ["y"])
    with pytest.raises(EmitError, match=r"cannot emit GET_DIM.*shape-helper") as err:
        write_tosa(g)
    assert err.value.location.name == "shape_of_x"


@pytest.mark.parametrize("attrs, message", [
    (A.ClampAttrs(-0.5, 10), r"CLAMP min_val -0.5 is not an integer"),
    (A.ClampAttrs(-300, 10), r"does not fit INT8"),
])
def test_clamp_bounds_must_fit_the_input_type(attrs, message):
    c = _one(Op.CLAMP, {"x": (DType.INT8, (4,))}, {}, attrs)
    with pytest.raises(EmitError, match=message):
        write_tosa(c.graph)


def test_rescale_parameters_must_match():
    attrs = A.RescaleAttrs((1 << 30, 1 << 30), (31,), scale32=True)
    c = _one(Op.RESCALE, {"x": (DType.INT8, (4,))}, {}, attrs, result_type=TensorType(DType.INT8, (4,)))
    with pytest.raises(EmitError, match=r"cannot emit RESCALE: .*multiplier and shift differ"):
        write_tosa(c.graph)


def test_output_named_like_an_input_is_rejected():
    g, x, b = _static_input()
    g.set_outputs([b.emit(Op.ABS, x)], ["x"])
    with pytest.raises(EmitError, match=r"graph output 'x' has the name of a graph input"):
        write_tosa(g)


# -- reading -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def conv_bytes():
    return write_tosa(CASES["conv2d"]().graph)


def test_truncated_files_are_read_errors(conv_bytes):
    for cut in [0, 3, 7, 8, 12, 40, len(conv_bytes) // 2, len(conv_bytes) - 1]:
        with pytest.raises(ReadError):
            read_tosa(conv_bytes[:cut])


def test_corrupted_files_never_raise_raw_errors(conv_bytes):
    rng = np.random.default_rng(7)
    for _ in range(400):
        data = bytearray(conv_bytes)
        for pos in rng.integers(0, len(data), rng.integers(1, 5)):
            data[pos] = int(rng.integers(0, 256))
        try:
            read_tosa(bytes(data))
        except (ReadError, ShapeError):   # ShapeError: a declared size beyond --max-tensor-bytes
            pass


def test_wrong_identifier(conv_bytes):
    with pytest.raises(ReadError, match=r"file identifier is b'TFL3'"):
        read_tosa(conv_bytes[:4] + b"TFL3" + conv_bytes[8:])


def test_not_bytes():
    with pytest.raises(ReadError):
        read_tosa("model.tosa")


@pytest.mark.parametrize("version, ok", [
    ((1, 0, 0, False), True), ((1, 1, 0, True), True), ((1, 0, 0, True), True), ((1, 0, 2, True), True),
    ((1, 1, 0, False), False), ((0, 80, 0, False), False), ((1, 2, 0, True), False)])
def test_versions(monkeypatch, version, ok):
    monkeypatch.setattr(S, "WRITE_VERSION", version)
    data = write_tosa(CASES["add"]().graph)
    if ok:
        assert read_tosa(data).histogram() == {"ADD": 1}
    else:
        with pytest.raises(ReadError, match=r"TOSA version .* is not supported"):
            read_tosa(data)


def _block(ops, tensors, inputs=("x",), outputs=("y",), shapes=()):
    return serialize(BlockRecord(ops=list(ops), tensors=list(tensors), shapes=list(shapes),
                                 inputs=list(inputs), outputs=list(outputs)))


def _t(name, shape=(2, 2), dtype=F32, data=None):
    return TensorRecord(name, shape, dtype, data)


def test_unknown_op_is_a_read_error():
    data = _block([OpRecord("CUSTOM", {}, ["x"], ["y"])], [_t("x"), _t("y")])
    with pytest.raises(ReadError, match=r"TOSA op CUSTOM is not supported"):
        read_tosa(data)


def test_non_constant_shift_is_a_read_error():
    tensors = [_t("x"), _t("s", (1,), DType.INT8), _t("y")]
    data = _block([OpRecord("MUL", {}, ["x", "x", "s"], ["y"])], tensors, inputs=("x", "s"))
    with pytest.raises(ReadError, match=r"MUL 'y': operand shift \('s'\) is not a constant"):
        read_tosa(data)


def test_non_constant_shape_operand_is_a_read_error():
    tensors = [_t("x"), _t("y", (4,))]
    data = _block([OpRecord("RESHAPE", {}, ["x", "s"], ["y"])], tensors, shapes=[ShapeRecord("s", 1)])
    with pytest.raises(ReadError, match=r"RESHAPE 'y': operand shape \('s'\) is not a constant"):
        read_tosa(data)


def test_constant_without_data_is_a_read_error():
    data = _block([OpRecord("CONST", {}, [], ["y"])], [_t("y")], inputs=())
    with pytest.raises(ReadError, match=r"CONST 'y' has no data"):
        read_tosa(data)


def test_undefined_operand_is_a_read_error():
    data = _block([OpRecord("ABS", {}, ["z"], ["y"])], [_t("x"), _t("y")])
    with pytest.raises(ReadError, match=r"operand of ABS 'z' is not defined"):
        read_tosa(data)
