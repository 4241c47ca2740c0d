"""The MLIR writer on block records built by hand: constants of every type, symbolic programs, errors.

* Constants: each TOSA element type, as literals, splats and hex, with
  extreme, negative, infinite and NaN values, is written as MLIR, turned into
  a ``.tosa`` by the official ``tosa-opt --tosa-serialize`` and read back: the
  values must be the ones we started from (tosa-opt reads our text by its own
  rules, so a wrong encoding cannot pass).
* Symbolic programs: records with −1 dims, DIM and the EXT-SHAPE operators
  (as the symbolic ``.tosa`` writer makes them) print as ``?`` dims and
  ``!tosa.shape<N>`` values; ``tosa-opt`` parses them and validates them at
  ``specification_version=1.1.draft`` with the shape and dynamic extensions,
  and IREE runs a dynamic elementwise program at two shapes.
* A record the writer cannot express is an EmitError naming the op.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.iree_tools import run_mlir
from tests.tosa_tools import run_tool
from tosaconv.emit.deserialize import deserialize
from tosaconv.emit.errors import EmitError
from tosaconv.emit.mlir import records_to_mlir
from tosaconv.emit.mlir_text import float_literal, string_literal
from tosaconv.emit.records import BlockRecord, OpRecord, ShapeRecord, TensorRecord
from tosaconv.emit.tensor_data import from_le_bytes, to_le_bytes
from tosaconv.ir.dtypes import DType as D

TARGET_1_1 = ("--tosa-attach-target=profiles=pro_int,pro_fp extensions=int16,bf16,shape,dynamic "
              "specification_version=1.1.draft")


def _constants() -> dict:
    rng = np.random.default_rng(0)
    return {
        "bools": (D.BOOL, np.array([True, False, True])), "bool_grid": (D.BOOL, rng.random((5, 7)) > 0.5),
        "int4": (D.INT4, rng.integers(-7, 8, (3, 11))), "int8": (D.INT8, rng.integers(-128, 128, (40,))),
        "int8_ends": (D.INT8, np.array([-128, 127, 0])), "int16": (D.INT16, rng.integers(-2**15, 2**15, (4, 9))),
        "int32": (D.INT32, rng.integers(-2**31, 2**31, (33,))), "int48": (D.INT48, rng.integers(-2**47, 2**47, (20,))),
        "int48_ends": (D.INT48, np.array([-2**47, 2**47 - 1])),
        "fp16": (D.FP16, rng.standard_normal((30,)).astype(np.float16)),
        "bf16": (D.BF16, rng.standard_normal((30,)).astype(np.float32)),
        "fp32": (D.FP32, rng.standard_normal((2, 3, 5)).astype(np.float32)),
        "fp32_odd": (D.FP32, np.array([1e-45, 3.4028235e38, -0.0, 1e16, 0.1, -7.0], np.float32)),
        "fp32_special": (D.FP32, np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)),
        "splat": (D.FP32, np.full((4, 4), 0.25, np.float32)), "scalar": (D.INT32, np.array(5, np.int32)),
        "signed_zeros": (D.FP32, np.array([0.0, -0.0, 0.0], np.float32)),
    }


def _tosa_opt(text: str, tmp_path, *args) -> object:
    (tmp_path / "m.mlir").write_text(text)
    return run_tool("tosa-opt", [tmp_path / "m.mlir", *args, "-o", "/dev/null"])


def test_constants_of_every_type_survive_tosa_opt_serialize(tmp_path):
    consts = _constants()
    block = BlockRecord(outputs=list(consts))
    for name, (dtype, values) in consts.items():
        block.tensors.append(TensorRecord(name, tuple(np.shape(values)), dtype, to_le_bytes(values, dtype)))
        block.ops.append(OpRecord("CONST", {}, [], [name]))
    text = records_to_mlir(block)
    assert 'dense<"0x' in text and "dense<[true, false, true]>" in text and "dense<0.25>" in text
    proc = _tosa_opt(text, tmp_path, f"--tosa-serialize=tosa-flatbuffer-filename={tmp_path / 'back.tosa'}")
    assert proc.returncode == 0, proc.stderr
    back = deserialize((tmp_path / "back.tosa").read_bytes())
    tensors = {t.name: t for t in back.tensors}
    for (name, (dtype, values)), out in zip(consts.items(), back.outputs):
        got = tensors[out]
        assert (got.dtype, tuple(got.shape)) == (dtype, np.shape(values)), name
        want = from_le_bytes(to_le_bytes(values, dtype), dtype, np.shape(values))
        np.testing.assert_array_equal(from_le_bytes(got.data, dtype, got.shape), want, err_msg=name)
        if dtype.is_float:   # bit for bit: -0.0 stays -0.0
            assert np.array_equal(np.signbit(from_le_bytes(got.data, dtype, got.shape)), np.signbit(want)), name


def _shape(name: str, values=None, rank: int = 1) -> ShapeRecord:
    if values is None:
        return ShapeRecord(name, rank)
    return ShapeRecord(name, len(values), np.array(values, "<i8").view(np.uint8))


def _i32(name: str, value: int) -> TensorRecord:
    return TensorRecord(name, (1,), D.INT32, to_le_bytes(np.array([value]), D.INT32))


def symbolic_block() -> BlockRecord:
    """x: [?, 3] -> y = reshape(x, [3 * dim0]), with every shape operator on the way."""
    block = BlockRecord(inputs=["x"], outputs=["y"])
    block.tensors = [TensorRecord("x", (-1, 3), D.FP32), TensorRecord("y", (-1,), D.FP32),
                     _i32("one", 1), _i32("start", 0)]
    block.shapes = [_shape("three", [3]), _shape("d0"), _shape("n"), _shape("both", rank=2), _shape("s")]
    block.shapes += [_shape(f"t{i}") for i in range(7)]
    block.ops = [OpRecord("DIM", {"axis": 0}, ["x"], ["d0"], 'Shape "x" \\ ü\n'),   # escaped in loc(...)
                 OpRecord("CONST_SHAPE", {}, [], ["three"]), OpRecord("CONST", {}, [], ["one"]),
                 OpRecord("CONST", {}, [], ["start"]),
                 OpRecord("MUL_SHAPE", {}, ["d0", "three"], ["n"]),
                 OpRecord("CONCAT_SHAPE", {}, ["d0", "three"], ["both"]),
                 OpRecord("SLICE_SHAPE", {}, ["both", "start", "one"], ["s"])]
    for i, op in enumerate(("ADD_SHAPE", "SUB_SHAPE", "DIV_FLOOR_SHAPE", "DIV_CEIL_SHAPE", "MOD_SHAPE",
                            "MIN_SHAPE", "MAX_SHAPE")):
        block.ops.append(OpRecord(op, {}, ["n", "three"], [f"t{i}"]))
    block.ops += [OpRecord("ASSERT_EQUAL_SHAPE", {"allow_broadcast": False}, ["s", "d0"], []),
                  OpRecord("RESHAPE", {}, ["x", "n"], ["y"], "Reshape 'y'")]
    return block


def test_symbolic_records_print_generically_and_validate_at_1_1_draft(tmp_path):
    text = records_to_mlir(symbolic_block())
    assert "function_type = (tensor<?x3xf32>) -> tensor<?xf32>" in text
    assert '"tosa.dim"(%arg0) <{axis = 0 : i32}> : (tensor<?x3xf32>) -> !tosa.shape<1>' in text
    assert '"tosa.concat_shape"' in text and "-> !tosa.shape<2>" in text
    assert '"tosa.assert_equal_shape"(' in text and "<{allow_broadcast = false}>" in text
    assert 'loc("Shape \\22x\\22 \\5C \\C3\\BC\\0A")' in text
    proc = _tosa_opt(text, tmp_path, TARGET_1_1, "--tosa-validate")
    assert proc.returncode == 0, proc.stderr


def test_symbolic_validation_can_fail(tmp_path):
    # At TOSA 1.0 the same program is refused (shape operators and dynamic dims are 1.1 features).
    proc = _tosa_opt(records_to_mlir(symbolic_block()), tmp_path,
                     "--tosa-attach-target=profiles=pro_fp", "--tosa-validate")
    assert proc.returncode != 0


def test_dynamic_elementwise_program_runs_on_iree_at_two_shapes(tmp_path):
    block = BlockRecord(inputs=["a", "b"], outputs=["y"])
    block.tensors = [TensorRecord("a", (-1, -1), D.FP32), TensorRecord("b", (1, -1), D.FP32),
                     TensorRecord("y", (-1, -1), D.FP32)]
    block.ops = [OpRecord("ADD", {}, ["a", "b"], ["y"])]
    text = records_to_mlir(block).encode()
    for n, shape in enumerate(((2, 3), (5, 4))):
        a = np.random.default_rng(n).standard_normal(shape).astype(np.float32)
        b = np.random.default_rng(n + 9).standard_normal((1, shape[1])).astype(np.float32)
        (got,) = run_mlir(text, [a, b], 1, tmp_path / str(n))
        np.testing.assert_allclose(got, a + b, rtol=1e-6)


def test_unknown_region_and_undefined_operand_are_errors():
    block = BlockRecord(inputs=["c", "x"], outputs=["y"])
    block.tensors = [TensorRecord("c", (), D.BOOL), TensorRecord("x", (2,), D.FP32), TensorRecord("y", (2,), D.FP32)]
    block.ops = [OpRecord("COND_IF", {"then_graph": "t", "else_graph": "e"}, ["c", "x"], ["y"], "If 'y'")]
    with pytest.raises(EmitError, match="COND_IF at If 'y'.*then_graph 't' is not a region"):
        records_to_mlir(block)
    block.ops = [OpRecord("ABS", {}, ["z"], ["y"], "Abs 'y'")]
    with pytest.raises(EmitError, match="cannot write ABS at Abs 'y' as MLIR: tensor 'z' is used before any op defines it"):
        records_to_mlir(block)


@pytest.mark.parametrize("value,text", [(1.0, "1.0"), (1e16, "1.0e+16"), (-0.0, "-0.0"), (0.1, "0.1"),
                                        (3.4028234663852886e38, "3.4028234663852886e+38")])
def test_float_literals_have_a_point(value, text):
    assert float_literal(value) == text


def test_strings_are_escaped():
    assert string_literal('a"b\\c\nd é') == '"a\\22b\\5Cc\\0Ad \\C3\\A9"'
