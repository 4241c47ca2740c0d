"""The symbolic ``.tosa`` (``convert --keep-symbols``) judged by the official tools.

For every dynamic sample model: the TOSA 1.1-draft file is accepted by
``tosa-opt --tosa-validate=strict-op-spec-alignment`` at the target
``profiles=pro_int,pro_fp extensions=...,shape,dynamic specification_version=1.1.draft``;
the official ``infer_shapes`` resolves it for two sets of input shapes; and the
official reference model running the resolved file gives what our numpy
interpreter gives on the *statically* converted model at the same bindings
(integers exactly, floats within 1e-5 relative). The static path is
untouched: those checks compare against a separately specialized program.
A model whose sizes come from tensor data is refused, naming the op (exit 3).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto

import tosaconv.api as api
from tosaconv.diagnostics import ConversionError, ShapeError
from tosaconv.emit.deserialize import deserialize
from tests.emit.symbolic_tools import infer_shapes, validate_shape
from tests.tosa_tools import run_reference_model

ROOT = Path(__file__).resolve().parents[2] / "sample_models"

# model -> two sets of input shapes (in input order); broadcast ones include dims bound to 1
SHAPES = {
    "tiny_transformer.onnx": [[(1, 3, 32)], [(2, 7, 32)]],
    "small_cnn.onnx": [[(1, 3, 8, 8)], [(2, 3, 17, 23)]],
    "tflite/dynamic_batch.tflite": [[(1, 16, 16, 3)], [(3, 16, 16, 3)]],
    "tflite/dynamic_hw.tflite": [[(1, 8, 8, 3)], [(1, 13, 5, 3)]],
    "tflite/int8_dynamic_batch.tflite": [[(1, 16, 16, 3)], [(2, 16, 16, 3)]],
    "tflite/shape_reshape.tflite": [[(1, 4, 6)], [(5, 4, 6)]],
    "broadcast/dyn_dyn.onnx": [[(1, 3), (4, 3)], [(2, 1), (2, 5)]],
    "broadcast/one_dyn.onnx": [[(1, 3), (2, 3)], [(1, 1), (4, 5)]],
    "broadcast/two_dyn.onnx": [[(2, 3), (1, 3)], [(2, 5), (2, 1)]],
    "broadcast/dyn2_2dyn.onnx": [[(1, 2), (2, 1)], [(2, 2), (2, 2)]],
    "broadcast/static2x2_dyn.onnx": [[(2, 2), (1, 1)], [(2, 2), (1, 2)]],
    "broadcast/five_dyn.onnx": [[(5,), (1,)], [(5,), (5,)]],
    "broadcast/dyn_dyn_1d.onnx": [[(1,), (4,)], [(4,), (1,)]],
    "broadcast/select_2xdyn.onnx": [[(2, 3), (2, 3), (2, 3)], [(2, 1), (2, 3), (2, 1)]],
}


def _inputs(graph, shapes, seed: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for v, shape in zip(graph.inputs, shapes):
        dt = v.type.dtype
        if dt.name == "BOOL":
            out[v.name] = rng.integers(0, 2, shape).astype(bool)
        elif dt.is_float:
            out[v.name] = rng.standard_normal(shape).astype(dt.numpy)
        else:
            out[v.name] = rng.integers(-128, 128, shape).astype(dt.numpy)
    return out


def _symbolic_file(model: str, tmp_path: Path) -> tuple:
    graph = api.load(str(ROOT / model))
    written = api.emit_symbolic(api.keep_symbols(graph, {}), {})
    path = tmp_path / "symbolic.tosa"
    path.write_bytes(written.data)
    return graph, path, written


def _assert_same(ref: dict, ours: dict):
    for name, value in ours.items():
        if value.dtype.kind == "f":
            np.testing.assert_allclose(ref[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(ref[name], value, err_msg=name)


@pytest.mark.parametrize("model", sorted(SHAPES))
def test_symbolic_tosa_validates_at_1_1_draft(model, tmp_path):
    graph, path, _ = _symbolic_file(model, tmp_path)
    block = deserialize(path.read_bytes())
    assert any(-1 in t.shape for t in block.tensors), "an open symbol must leave a -1 dim"
    accepted, errors = validate_shape(path)
    assert accepted, errors


@pytest.mark.slow
@pytest.mark.parametrize("model,which", [(m, i) for m in sorted(SHAPES) for i in (0, 1)])
def test_infer_shapes_then_reference_model_equals_static_conversion(model, which, tmp_path):
    graph, path, _ = _symbolic_file(model, tmp_path)
    shapes = SHAPES[model][which]
    inputs = _inputs(graph, shapes)
    bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
    ours = api.run(api.specialize(graph, bindings), inputs)
    resolved = infer_shapes(path, {k: v.shape for k, v in inputs.items()}, tmp_path / "infer")
    block = deserialize(resolved)
    assert all(d >= 0 for t in block.tensors for d in t.shape), "infer_shapes left a -1"
    ref = run_reference_model(resolved, inputs, list(ours), tmp_path / "ref")
    _assert_same(ref, ours)


def test_constraints_become_assertions_that_the_reference_model_checks(tmp_path):
    """dyn_dyn records broadcastable(a0, b0): the file asserts it, and infer_shapes refuses inputs that break
    it at that ASSERT_EQUAL_SHAPE."""
    graph, path, written = _symbolic_file("broadcast/dyn_dyn.onnx", tmp_path)
    assert len(written.asserted) == 2 and not written.unchecked
    block = deserialize(path.read_bytes())
    assert sum(op.op == "ASSERT_EQUAL_SHAPE" for op in block.ops) == 2
    bad = _inputs(graph, [(2, 3), (4, 3)])
    with pytest.raises(RuntimeError, match="(?s)ASSERT_EQUAL_SHAPE.*Broadcast incompatible"):
        infer_shapes(path, {k: v.shape for k, v in bad.items()}, tmp_path / "infer")


def test_partial_binding_fixes_bound_dims_only(tmp_path):
    graph = api.load(str(ROOT / "tiny_transformer.onnx"))
    written = api.emit_symbolic(api.keep_symbols(graph, {"batch": 2}), {"batch": 2})
    block = deserialize(written.data)
    x = next(t for t in block.tensors if t.name == "x")
    assert tuple(x.shape) == (2, -1, 32)


def _nonzero_model(tmp_path: Path) -> str:
    from tests.cli.conftest import save_model, tensor
    from onnx import helper
    path = tmp_path / "nz.onnx"
    save_model(path, [helper.make_node("NonZero", ["x"], ["y"], name="nz")],
               [tensor("x", [4], TensorProto.FLOAT)], [tensor("y", [1, "n"], TensorProto.INT64)])
    return str(path)


def test_data_dependent_size_is_refused_naming_the_op(tmp_path):
    graph = api.load(_nonzero_model(tmp_path))
    with pytest.raises(ConversionError) as e:
        api.emit_symbolic(api.keep_symbols(graph, {}), {})
    assert "NONZERO" in str(e.value) and "nz" in str(e.value)


def run_module(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT.parent)}
    return subprocess.run([sys.executable, "-m", "tosaconv", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def test_size_read_from_tensor_data_is_refused_naming_extract_dim(tmp_path):
    """A Reshape whose target shape is a graph input: its sizes are tensor data (EXTRACT_DIM)."""
    from tests.cli.conftest import save_model, tensor
    from onnx import helper
    path = tmp_path / "rs.onnx"
    save_model(path, [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
               [tensor("x", [4, 6]), tensor("s", [2], TensorProto.INT64)], [tensor("y", ["a", "b"])])
    graph = api.load(str(path))
    with pytest.raises(ConversionError) as e:
        api.emit_symbolic(api.keep_symbols(graph, {}), {})
    assert "cannot keep symbols through EXTRACT_DIM at Reshape 'rs'" in str(e.value)
    assert "reads a size from tensor data ('s')" in str(e.value)


def test_cli_keep_symbols_writes_1_1_draft_and_reports_assertions(tmp_path):
    out, report = tmp_path / "m.tosa", tmp_path / "r.json"
    proc = run_module("convert", str(ROOT / "broadcast" / "dyn_dyn.onnx"), "-o", str(out), "--keep-symbols",
                      "--bind", "a0=2", "--report", str(report))
    assert proc.returncode == 0, proc.stderr
    import json
    import jsonschema
    doc = json.loads(report.read_text())
    schema = json.loads((ROOT.parent / "schemas" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["symbolic_tosa"]["asserted"] == ["broadcastable(2, b0) (Add 'add')", "broadcastable(a1, b1) (Add 'add')"]
    assert doc["symbolic_tosa"]["unchecked"] == []
    assert [c["status"] for c in doc["constraints"]] == ["asserted", "asserted"]   # the file checks both
    assert tuple(deserialize(out.read_bytes()).tensors[0].shape) == (2, -1)
    assert validate_shape(out)[0]


def test_cli_keep_symbols_refuses_options_that_need_a_static_program(tmp_path):
    proc = run_module("convert", ROOT / "broadcast" / "dyn_dyn.onnx", "-o", tmp_path / "m.tosa", "--keep-symbols",
                      "--run")
    assert proc.returncode == 2 and "--keep-symbols does not combine with --run/--outputs" in proc.stderr


def test_cli_keep_symbols_refuses_data_dependent_with_exit_3(tmp_path):
    proc = run_module("convert", _nonzero_model(tmp_path), "-o", str(tmp_path / "m.tosa"), "--keep-symbols")
    assert proc.returncode == 3, proc.stderr
    assert "NONZERO" in proc.stderr and "E-KEEP-SYMBOLS" in proc.stderr
    assert not os.path.exists(tmp_path / "m.tosa")


# -- reading it back -------------------------------------------------------------------------------

def _program(data: bytes) -> tuple:
    """A .tosa file's program without its names: each op with its fields, each tensor's type and data."""
    block = deserialize(data)
    ops = [(op.op, sorted(op.fields.items()), len(op.inputs), len(op.outputs)) for op in block.ops]
    tensors = [(tuple(t.shape), t.dtype, None if t.data is None else bytes(t.data)) for t in block.tensors]
    shapes = [(s.rank, None if s.data is None else bytes(s.data)) for s in block.shapes]
    return ops, tensors, shapes


@pytest.mark.parametrize("model", sorted(SHAPES))
def test_read_back_specializes_to_the_program_of_the_source(model, tmp_path):
    """``specialize OUT.tosa --bind ...`` gives the program that converting the source with those bindings
    gives, byte for byte (the same ops, fields, types, constant data and tensor names, in the same order), and
    running the symbolic file binds from the arrays and gives the static conversion's outputs bit for bit."""
    graph, path, _ = _symbolic_file(model, tmp_path)
    read = api.load(str(path))
    inputs = _inputs(graph, SHAPES[model][1])
    bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
    static = api.specialize(graph, bindings)
    assert bytes(api.emit(api.specialize(read, bindings))) == bytes(api.emit(static))
    ours, theirs = api.run(static, inputs), api.run(read, inputs)
    for name, value in ours.items():
        np.testing.assert_array_equal(theirs[name], value, err_msg=name)


@pytest.mark.parametrize("model", ["broadcast/dyn_dyn.onnx", "small_cnn.onnx"])
def test_read_back_keeps_symbol_names_and_constraints(model, tmp_path):
    """Broadcastable and >= constraints (asserted as MAX_SHAPE(a, b) == a) come back as they were."""
    graph, path, _ = _symbolic_file(model, tmp_path)
    read = api.load(str(path))
    assert [str(v.type) for v in read.inputs] == [str(v.type) for v in graph.inputs]
    assert sorted(c.text() for c in read.ledger.entries) == sorted(c.text() for c in graph.ledger.entries)


def test_cli_specialize_and_run_a_symbolic_tosa(tmp_path):
    sym, static, direct = tmp_path / "m.tosa", tmp_path / "s.tosa", tmp_path / "d.tosa"
    model = str(ROOT / "tiny_transformer.onnx")
    assert run_module("convert", model, "-o", sym, "--keep-symbols").returncode == 0
    proc = run_module("specialize", sym, "--bind", "batch=2", "--bind", "seq=5", "-o", static)
    assert proc.returncode == 0, proc.stderr
    assert run_module("convert", model, "-o", direct, "--bind", "batch=2", "--bind", "seq=5").returncode == 0
    assert _program(static.read_bytes()) == _program(direct.read_bytes())
    x = np.random.default_rng(1).standard_normal((2, 5, 32)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    proc = run_module("run", sym, "--inputs", tmp_path / "x.npz", "--output", tmp_path / "o.npz")
    assert proc.returncode == 0, proc.stderr
    expected = api.run(api.specialize(api.load(model), {"batch": 2, "seq": 5}), {"x": x})["y"]
    np.testing.assert_array_equal(np.load(tmp_path / "o.npz")["y"], expected)


@pytest.mark.slow
def test_official_serialization_of_a_symbolic_file_reads_back(tmp_path):
    """tosa-opt's own writer (its names, its locations) for our symbolic file: still readable, symbols
    named ``input.axis``, and runs as the source model does."""
    from tests.emit.test_official_files import official_round_trip
    graph, path, _ = _symbolic_file("small_cnn.onnx", tmp_path)
    theirs = official_round_trip(path.read_bytes(), tmp_path)
    from tosaconv.emit import read_tosa
    from tosaconv.passes import run_pipeline
    read = run_pipeline(read_tosa(theirs))
    inputs = _inputs(graph, SHAPES["small_cnn.onnx"][1])
    ours = api.run(api.specialize(graph, api.solve_bindings(graph, {"image": inputs["image"].shape})), inputs)
    got = api.run(read, inputs)
    for name, value in ours.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)


# element types the IR lacks, or that npy files cannot carry as the reference model reads them; only the
# generator's DIM tests use them (the DIM reader is the same for every element type)
_OUTSIDE_THE_IR = ("_i64_", "_f8e5m2_", "_f8e4m3_", "_bf16_")
_OFFICIAL_FILTER = "^((add|sub|mul|div_floor|div_ceil|mod|min|max|concat|slice|const|assert_equal)_shape|dim)$"


@pytest.fixture(scope="module")
def official_shape_tests(tmp_path_factory):
    """The official generator's positive tests of the shape operators (TOSA 1.1)."""
    import shutil
    out = tmp_path_factory.mktemp("official_shape")
    exe = shutil.which("tosa_verif_build_tests")
    if exe is None:
        pytest.fail("tosa_verif_build_tests (tosa-tools) is not installed")
    proc = subprocess.run([exe, "-o", str(out), "--tosa-version", "1.1", "--filter", _OFFICIAL_FILTER,
                           "--test-type", "positive"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return sorted(p.parent for p in out.glob("*/*/test.tosa"))


@pytest.mark.slow
def test_official_shape_operator_tests_read_and_run_like_the_reference_model(official_shape_tests, tmp_path):
    """Every generated test of DIM, CONST_SHAPE, the shape arithmetic, CONCAT_SHAPE, SLICE_SHAPE and
    ASSERT_EQUAL_SHAPE: read by our reader and run by our interpreter, it equals the reference model's
    outputs (except the DIM tests on element types outside the IR, listed above and counted)."""
    import json
    from tosaconv.emit import read_tosa
    from tests.tosa_tools import run_reference_model
    checked, outside = 0, 0
    for case in official_shape_tests:
        if any(t in case.name + "_" for t in _OUTSIDE_THE_IR):
            assert case.name.startswith("dim_"), case.name
            outside += 1
            continue
        desc = json.loads((case / "desc.json").read_text())
        inputs = {n: np.load(case / f) for n, f in zip(desc["ifm_name"], desc["ifm_file"])}
        ours = api.run(read_tosa((case / "test.tosa").read_bytes()), inputs)
        ref = run_reference_model(case / "test.tosa", inputs, desc["ofm_name"], tmp_path / case.name)
        for name in desc["ofm_name"]:
            np.testing.assert_array_equal(ours[name], ref[name], err_msg=f"{case.name} {name}")
        checked += 1
    assert checked >= 100 and outside <= 24, (checked, outside)


@pytest.mark.parametrize("model", ["small_cnn.onnx", "broadcast/select_2xdyn.onnx"])
def test_rewriting_a_read_symbolic_file_keeps_the_program(model, tmp_path):
    """Read back and written again with --keep-symbols, the file still validates and still specializes
    to the source's program (shape values may get other names: they are fresh in the new file)."""
    graph, path, _ = _symbolic_file(model, tmp_path)
    again = tmp_path / "again.tosa"
    again.write_bytes(api.emit_symbolic(api.keep_symbols(api.load(str(path)), {}), {}).data)
    assert validate_shape(again)[0]
    inputs = _inputs(graph, SHAPES[model][0])
    bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
    assert _program(api.emit(api.specialize(api.load(str(again)), bindings))) == \
        _program(api.emit(api.specialize(graph, bindings)))


# -- control flow over open dims: recurrences as WHILE_LOOPs, If branches that use open dims ----------------

def _recurrent_model(path: Path, cell: str, direction: str, batch, sequence_lens: bool = False) -> Path:
    """One ONNX LSTM/GRU/RNN (opset 17, with bias) over X: [T, batch, 3], T symbolic."""
    from onnx import helper, numpy_helper
    from tests.cli.conftest import save_model, tensor
    gates, dirs, hidden = {"LSTM": 4, "GRU": 3, "RNN": 1}[cell], 2 if direction == "bidirectional" else 1, 4
    rng = np.random.default_rng(7)
    weights = {"W": (dirs, gates * hidden, 3), "R": (dirs, gates * hidden, hidden), "B": (dirs, 2 * gates * hidden)}
    inits = [numpy_helper.from_array((0.5 * rng.standard_normal(s)).astype(np.float32), n) for n, s in weights.items()]
    outs = ["Y", "Y_h"] + (["Y_c"] if cell == "LSTM" else [])
    extra = {"linear_before_reset": 1} if cell == "GRU" else {}
    inputs, ins = [tensor("X", ["T", batch, 3])], ["X", "W", "R", "B"]
    if sequence_lens:
        inputs.append(tensor("lens", [batch], TensorProto.INT32))
        ins.append("lens")
    node = helper.make_node(cell, ins, outs, name="rnn", hidden_size=hidden, direction=direction, **extra)
    return save_model(path, [node], inputs, [tensor(o, None) for o in outs], inits)


def _onnxruntime(path: Path, inputs: dict) -> dict:
    import onnxruntime as ort
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))


def _reference_after_infer_shapes(path: Path, inputs: dict, names: list, work: Path) -> dict:
    resolved = infer_shapes(path, {k: v.shape for k, v in inputs.items()}, work / "infer")
    assert all(d >= 0 for t in deserialize(resolved).tensors for d in t.shape), "infer_shapes left a -1"
    return run_reference_model(resolved, inputs, names, work / "ref")


@pytest.mark.parametrize("cell,direction,batch", [("LSTM", "forward", 1), ("GRU", "bidirectional", "B"),
                                                  ("RNN", "reverse", "B"), ("LSTM", "bidirectional", 2)])
def test_recurrence_over_an_open_length_is_a_while_loop_that_matches_onnxruntime(cell, direction, batch, tmp_path):
    """The length T stays open: each direction is one WHILE_LOOP (GATHER reads step t, SCATTER writes Y[t]).
    tosa-opt validates it; at two lengths (and batch sizes) the reference model on the file infer_shapes
    resolved equals onnxruntime, and our numpy run of the statically converted model."""
    model = _recurrent_model(tmp_path / "rnn.onnx", cell, direction, batch)
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    block = deserialize(path.read_bytes())
    assert sum(op.op == "WHILE_LOOP" for op in block.ops) == (2 if direction == "bidirectional" else 1)
    accepted, errors = validate_shape(path)
    assert accepted, errors
    for i, (steps, n) in enumerate([(1, 1), (6, 3)]):
        x = np.random.default_rng(i).standard_normal((steps, batch if isinstance(batch, int) else n, 3))
        inputs = {"X": x.astype(np.float32)}
        expected = _onnxruntime(model, inputs)
        ref = _reference_after_infer_shapes(path, inputs, list(expected), tmp_path / f"run{i}")
        ours = api.run(api.specialize(graph, api.solve_bindings(graph, {"X": x.shape})), inputs)
        for name, value in expected.items():
            np.testing.assert_allclose(ref[name], value, rtol=1e-5, atol=1e-6, err_msg=f"{name} T={steps}")
            np.testing.assert_allclose(ref[name], ours[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} T={steps}")


def test_recurrence_with_sequence_lens_over_an_open_length_is_refused_naming_it(tmp_path):
    model = _recurrent_model(tmp_path / "rnn.onnx", "LSTM", "forward", 2, sequence_lens=True)
    with pytest.raises(ConversionError) as e:
        api.emit_symbolic(api.keep_symbols(api.load(str(model)), {}), {})
    assert "cannot keep symbols through RECURRENT" in str(e.value) and "sequence_lens" in str(e.value)


def test_recurrence_with_a_static_length_and_an_open_batch_is_unrolled(tmp_path):
    from onnx import helper, numpy_helper
    from tests.cli.conftest import save_model, tensor
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((0.5 * rng.standard_normal(s)).astype(np.float32), n)
             for n, s in (("W", (1, 12, 3)), ("R", (1, 12, 4)))]
    model = save_model(tmp_path / "gru.onnx", [helper.make_node("GRU", ["X", "W", "R"], ["Y"], hidden_size=4)],
                       [tensor("X", [5, "B", 3])], [tensor("Y", None)], inits)
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    assert not any(op.op == "WHILE_LOOP" for op in deserialize(path.read_bytes()).ops)
    assert validate_shape(path)[0]
    for i, n in enumerate((1, 4)):
        inputs = {"X": np.random.default_rng(i).standard_normal((5, n, 3)).astype(np.float32)}
        ref = _reference_after_infer_shapes(path, inputs, ["Y"], tmp_path / f"run{i}")
        np.testing.assert_allclose(ref["Y"], _onnxruntime(model, inputs)["Y"], rtol=1e-5, atol=1e-6)


def _if_on_data_model(path: Path) -> Path:
    """``If(c)``: then reshapes x to [-1, 2] and back to Shape(x) (open dims used as sizes; the branch records
    ``N*M % 2 == 0``), else negates."""
    from onnx import helper
    from tests.cli.conftest import save_model, tensor
    flat = helper.make_node("Constant", [], ["flat"], value=helper.make_tensor("f", TensorProto.INT64, [2], [-1, 2]))
    then_g = helper.make_graph([flat, helper.make_node("Reshape", ["x", "flat"], ["v"]),
                                helper.make_node("Shape", ["x"], ["s"]),
                                helper.make_node("Reshape", ["v", "s"], ["w"]),
                                helper.make_node("Relu", ["w"], ["t"])], "then", [], [tensor("t", None)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [tensor("e", None)])
    node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)
    return save_model(path, [node], [tensor("c", [], TensorProto.BOOL), tensor("x", ["N", "M"])],
                      [tensor("y", ["N", "M"])])


def test_if_on_tensor_data_keeps_open_dims_in_its_branches(tmp_path):
    """Both branches keep the symbols (each computes its sizes from DIM of its own inputs); at two shapes and
    both conditions the reference model after infer_shapes equals onnxruntime."""
    model = _if_on_data_model(tmp_path / "if.onnx")
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    assert any(op.op == "COND_IF" for op in deserialize(path.read_bytes()).ops)
    accepted, errors = validate_shape(path)
    assert accepted, errors
    for i, (shape, c) in enumerate([((2, 3), True), ((4, 1), False), ((4, 7), True)]):
        inputs = {"c": np.array(c), "x": np.random.default_rng(i).standard_normal(shape).astype(np.float32)}
        ref = _reference_after_infer_shapes(path, inputs, ["y"], tmp_path / f"run{i}")
        np.testing.assert_allclose(ref["y"], _onnxruntime(model, inputs)["y"], rtol=1e-6, err_msg=str(shape))


def test_constraints_of_a_branch_are_asserted_inside_it(tmp_path):
    """The then branch's ``N*M % 2 == 0`` becomes an ASSERT_EQUAL_SHAPE in that region (listed as asserted);
    infer_shapes stops there for a 3x3 input, which the static conversion refuses too."""
    model = _if_on_data_model(tmp_path / "if.onnx")
    graph, path, written = _symbolic_file(str(model), tmp_path)
    assert any("% 2 == 0" in text for text in written.asserted) and not written.unchecked
    block = deserialize(path.read_bytes())
    assert any(op.op == "ASSERT_EQUAL_SHAPE" for region in block.regions.values() for op in region.ops)
    with pytest.raises(RuntimeError, match="ASSERT_EQUAL_SHAPE"):
        infer_shapes(path, {"c": (), "x": (3, 3)}, tmp_path / "infer")
    with pytest.raises(ShapeError):
        api.specialize(graph, {"N": 3, "M": 3})


def _loop_model(path: Path, data_condition: bool = False) -> Path:
    """``Loop(M = Shape(x)[0])``: state s += x[i], scan output 2*x[i]; optionally the body's condition is
    ``sum(s) < 3`` (tensor data)."""
    from onnx import helper, numpy_helper
    from tests.cli.conftest import save_model, tensor
    cond = [helper.make_node("ReduceSum", ["s_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "three"], ["c_out"])] if data_condition else \
        [helper.make_node("Identity", ["c_in"], ["c_out"])]
    body = helper.make_graph([helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
                              helper.make_node("Add", ["s_in", "row"], ["s_out"]),
                              helper.make_node("Mul", ["row", "two"], ["scan"])] + cond, "body",
                             [tensor("i", [], TensorProto.INT64), tensor("c_in", [], TensorProto.BOOL),
                              tensor("s_in", [4])],
                             [tensor("c_out", [], TensorProto.BOOL), tensor("s_out", [4]), tensor("scan", [4])])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["M"]),
             helper.make_node("Loop", ["M", "yes" if data_condition else "", "s0"], ["s", "ys"], body=body,
                              name="loop")]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.zeros(4, np.float32), "s0"),
             numpy_helper.from_array(np.full(4, 2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(3.0, np.float32), "three"), numpy_helper.from_array(np.array(True), "yes")]
    return save_model(path, nodes, [tensor("x", ["N", 4])], [tensor("s", [4]), tensor("ys", None)], inits)


def test_loop_over_an_open_dim_is_a_while_loop_that_matches_onnxruntime(tmp_path):
    """The trip count Shape(x)[0] stays open: one WHILE_LOOP carrying the state and a SCATTER-filled buffer for
    the scan output; at two counts the reference model after infer_shapes equals onnxruntime."""
    model = _loop_model(tmp_path / "loop.onnx")
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    assert any(op.op == "WHILE_LOOP" for op in deserialize(path.read_bytes()).ops)
    accepted, errors = validate_shape(path)
    assert accepted, errors
    for n in (1, 6):
        inputs = {"x": np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)}
        expected = _onnxruntime(model, inputs)
        ref = _reference_after_infer_shapes(path, inputs, list(expected), tmp_path / f"run{n}")
        for name, value in expected.items():
            np.testing.assert_allclose(ref[name], value, rtol=1e-6, atol=1e-6, err_msg=f"{name} N={n}")


def test_loop_whose_iterations_depend_on_data_is_refused_naming_it(tmp_path):
    graph = api.load(str(_loop_model(tmp_path / "loop.onnx", data_condition=True)))
    with pytest.raises(ConversionError) as e:
        api.emit_symbolic(api.keep_symbols(graph, {}), {})
    assert "cannot keep symbols through LOOP" in str(e.value) and "Loop 'loop'" in str(e.value)


def test_read_back_of_a_recurrence_as_while_loop_runs_like_onnxruntime(tmp_path):
    """The reader gives each region's -1 dims the symbols of the values its op passes, so the symbolic file of
    a GRU reads back, runs (binding T and B from the array) and specializes to a static .tosa whose
    WHILE_LOOPs the reference model runs to the same result."""
    model = _recurrent_model(tmp_path / "rnn.onnx", "GRU", "bidirectional", "B")
    _, path, _ = _symbolic_file(str(model), tmp_path)
    read = api.load(str(path))
    inputs = {"X": np.random.default_rng(2).standard_normal((4, 2, 3)).astype(np.float32)}
    expected = _onnxruntime(model, inputs)
    static = api.specialize(read, api.solve_bindings(read, {"X": (4, 2, 3)}))
    ref = run_reference_model(api.emit(static), inputs, list(expected), tmp_path / "ref")
    ours = api.run(read, inputs)
    for name, value in expected.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(ref[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def _if_on_dims_model(path: Path, else_node) -> Path:
    """``If(Shape(x)[0] > Shape(x)[1])``: then ``2*x``, else ``else_node`` (output 'e')."""
    from onnx import helper, numpy_helper
    from tests.cli.conftest import save_model, tensor
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [tensor("t", None)])
    else_g = helper.make_graph([else_node], "else", [], [tensor("e", None)])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n0"]),
             helper.make_node("Gather", ["shape", "one"], ["n1"]), helper.make_node("Greater", ["n0", "n1"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="if")]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    return save_model(path, nodes, [tensor("x", ["N", "M"])], [tensor("y", None)], inits)


def test_if_on_a_comparison_of_dims_is_a_cond_if_on_a_counted_tensor(tmp_path):
    """The condition N > M is computed as int32 tensors (each dim counted with TILE + REDUCE_SUM, then SUB,
    MAXIMUM, MINIMUM as the Index ops do) and the If stays a COND_IF; both branches checked against
    onnxruntime through the reference model after infer_shapes."""
    from onnx import helper
    model = _if_on_dims_model(tmp_path / "if.onnx", helper.make_node("Add", ["x", "two"], ["e"]))
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    assert any(op.op == "COND_IF" for op in deserialize(path.read_bytes()).ops)
    accepted, errors = validate_shape(path)
    assert accepted, errors
    for i, shape in enumerate([(2, 3), (5, 1), (3, 3)]):
        inputs = {"x": np.random.default_rng(i).standard_normal(shape).astype(np.float32)}
        ref = _reference_after_infer_shapes(path, inputs, ["y"], tmp_path / f"run{i}")
        np.testing.assert_allclose(ref["y"], _onnxruntime(model, inputs)["y"], rtol=1e-6, err_msg=str(shape))


def test_if_on_dims_whose_branches_differ_in_shape_is_refused_naming_it(tmp_path):
    from onnx import helper
    model = _if_on_dims_model(tmp_path / "if.onnx", helper.make_node("Concat", ["x", "x"], ["e"], axis=0))
    with pytest.raises(ConversionError) as e:
        api.emit_symbolic(api.keep_symbols(api.load(str(model)), {}), {})
    assert "cannot keep symbols through IF" in str(e.value) and "different types" in str(e.value)


@pytest.mark.parametrize("cell,direction,attributes", [
    ("LSTM", "bidirectional", {"layout": 1}),
    ("LSTM", "forward", {"clip": 0.7, "input_forget": 1}),
    ("GRU", "reverse", {"layout": 1, "linear_before_reset": 0}),
    ("GRU", "forward", {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.3],
                        "activation_beta": [0.4]})])
def test_recurrence_variants_as_while_loops_equal_the_unrolled_static_program(cell, direction, attributes,
                                                                              tmp_path):
    """Batch-major layout, clip, input_forget and other activations (onnxruntime runs no layout-1 RNN): the
    WHILE_LOOP file through infer_shapes and the reference model equals our numpy run of the program
    unrolled at the same bindings (the static lowering, itself checked against onnxruntime)."""
    from onnx import helper, numpy_helper
    from tests.cli.conftest import save_model, tensor
    gates, dirs = {"LSTM": 4, "GRU": 3}[cell], 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((0.5 * rng.standard_normal(s)).astype(np.float32), n) for n, s in
             (("W", (dirs, gates * 3, 2)), ("R", (dirs, gates * 3, 3)), ("B", (dirs, 6 * gates)))]
    layout = attributes.get("layout", 0)
    node = helper.make_node(cell, ["X", "W", "R", "B"], ["Y", "Y_h"], hidden_size=3, direction=direction,
                            **attributes)
    model = save_model(tmp_path / "rnn.onnx", [node], [tensor("X", ["N", "T", 2] if layout else ["T", "N", 2])],
                       [tensor("Y", None), tensor("Y_h", None)], inits)
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    assert validate_shape(path)[0]
    for i, (steps, n) in enumerate([(1, 1), (4, 3)]):
        shape = (n, steps, 2) if layout else (steps, n, 2)
        inputs = {"X": np.random.default_rng(i).standard_normal(shape).astype(np.float32)}
        ours = api.run(api.specialize(graph, api.solve_bindings(graph, {"X": shape})), inputs)
        ref = _reference_after_infer_shapes(path, inputs, list(ours), tmp_path / f"run{i}")
        for name, value in ours.items():
            np.testing.assert_allclose(ref[name], value, rtol=1e-5, atol=1e-6, err_msg=f"{name} at {shape}")


def _map_fn_model(path: Path) -> Path:
    """TensorFlow's map_fn as ONNX exports it: Loop(M = 2^63 - 1, cond = 0 < N) whose body counts i up and
    continues while ``i + 1 < N`` (N = Shape(x)[0]); scan output 2*x[i]."""
    from onnx import helper, numpy_helper
    from tests.cli.conftest import save_model, tensor
    body = helper.make_graph([helper.make_node("Add", ["i_in", "one"], ["i_out"]),
                              helper.make_node("Gather", ["x", "i_in"], ["row"], axis=0),
                              helper.make_node("Mul", ["row", "two"], ["scan"]),
                              helper.make_node("Less", ["i_out", "n"], ["c_out"])], "body",
                             [tensor("it", [], TensorProto.INT64), tensor("c_in", [], TensorProto.BOOL),
                              tensor("i_in", [], TensorProto.INT64)],
                             [tensor("c_out", [], TensorProto.BOOL), tensor("i_out", [], TensorProto.INT64),
                              tensor("scan", [4])])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n"]),
             helper.make_node("Less", ["zero", "n"], ["c0"]),
             helper.make_node("Loop", ["M", "c0", "zero"], ["i_final", "ys"], body=body, name="map")]
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("zero", 0), ("one", 1), ("M", 2**63 - 1))]
    inits.append(numpy_helper.from_array(np.full(4, 2.0, np.float32), "two"))
    return save_model(path, nodes, [tensor("x", ["N", 4])], [tensor("i_final", [], TensorProto.INT64),
                                                              tensor("ys", None)], inits)


def test_loop_whose_condition_counts_up_to_a_dim_is_a_while_loop_of_that_count(tmp_path):
    """The condition ``i + 1 < N`` with i = 0, 1, ... proves the loop runs N times, so its scan output is
    [N, 4] and the loop a WHILE_LOOP; at two sizes the reference model after infer_shapes equals
    onnxruntime."""
    model = _map_fn_model(tmp_path / "map.onnx")
    graph, path, _ = _symbolic_file(str(model), tmp_path)
    assert any(op.op == "WHILE_LOOP" for op in deserialize(path.read_bytes()).ops)
    assert validate_shape(path)[0]
    for n in (1, 5):
        inputs = {"x": np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)}
        expected = _onnxruntime(model, inputs)
        ref = _reference_after_infer_shapes(path, inputs, list(expected), tmp_path / f"run{n}")
        for name, value in expected.items():
            np.testing.assert_array_equal(ref[name], value, err_msg=f"{name} N={n}")


@pytest.mark.parametrize("which", ["while", "if"])
def test_tflite_while_and_if_over_an_open_batch_keep_it_in_their_regions(which, tmp_path):
    """TFLite WHILE / IF whose tensors have an open batch: the regions are written with -1 dims; at two
    batch sizes the reference model after infer_shapes equals our numpy run of the static conversion (which
    tests/importers/tflite/test_control_flow.py checks against LiteRT)."""
    from tests.importers.tflite.test_control_flow import if_model, while_model
    path = tmp_path / f"{which}.tflite"
    path.write_bytes(while_model([1, 3], signature=[-1, 3]) if which == "while" else if_model([1, 4], signature=[-1, 4]))
    graph, tosa, _ = _symbolic_file(str(path), tmp_path)
    assert validate_shape(tosa)[0]
    rng = np.random.default_rng(4)
    for k in (1, 4):
        if which == "while":
            feeds = {"i": np.array(0, np.int32), "n": np.array(3, np.int32),
                     "x": rng.standard_normal((k, 3)).astype(np.float32), "b": np.ones((1, 3), np.float32)}
        else:
            feeds = {"c": np.array(k == 1), "a": rng.standard_normal((k, 4)).astype(np.float32),
                     "b": rng.standard_normal((k, 4)).astype(np.float32)}
        ours = api.run(api.specialize(graph, api.solve_bindings(graph, {n: v.shape for n, v in feeds.items()})), feeds)
        ref = _reference_after_infer_shapes(tosa, feeds, list(ours), tmp_path / f"run{k}")
        _assert_same(ref, ours)

# -- Range over an open dim (IOTA) and shape rules spelled with Equal/Where -----------------------

def _range_model(tmp_path: Path) -> str:
    """``y = Range(3, n, 2)`` (int64) and ``z = x + 0.5 * float(Range(0, n, 1))`` for x of shape [1, n]."""
    from tests.cli.conftest import save_model, tensor
    from onnx import helper, numpy_helper
    consts = {"one": 1, "zero": 0, "three": 3, "two": 2}
    inits = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in consts.items()]
    inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "half"))
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
             helper.make_node("Range", ["three", "n", "two"], ["y"], name="odd"),
             helper.make_node("Range", ["zero", "n", "one"], ["r"], name="positions"),
             helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["rf", "half"], ["h"]), helper.make_node("Add", ["x", "h"], ["z"])]
    path = tmp_path / "range.onnx"
    save_model(path, nodes, [tensor("x", [1, "n"])],
               [tensor("y", [None], TensorProto.INT64), tensor("z", [1, "n"])], inits)
    return str(path)


def _expand_by_where_model(tmp_path: Path) -> str:
    """torch.onnx's BERT token-type Expand: target ``Where(Equal(shape, -1 * ones), ones, shape)`` with
    ``shape = Reshape(Concat(batch, seq), [-1])``, the dims read with Shape/Gather/Unsqueeze."""
    from tests.cli.conftest import save_model, tensor
    from onnx import helper, numpy_helper
    arrays = {"i0": np.array(0, np.int64), "i1": np.array(1, np.int64), "ax": np.array([0], np.int64),
              "flat": np.array([-1], np.int64), "minus": np.array(-1, np.int64),
              "row": np.arange(1, 9, dtype=np.float32).reshape(1, 8)}
    inits = [numpy_helper.from_array(v, k) for k, v in arrays.items()]
    mk = helper.make_node
    nodes = [mk("Shape", ["x"], ["s"]), mk("Gather", ["s", "i0"], ["b"], axis=0),
             mk("Gather", ["s", "i1"], ["q"], axis=0), mk("Unsqueeze", ["b", "ax"], ["b1"]),
             mk("Unsqueeze", ["q", "ax"], ["q1"]), mk("Concat", ["b1", "q1"], ["bq"], axis=0),
             mk("Reshape", ["bq", "flat"], ["shape"]), mk("Shape", ["shape"], ["two"]),
             mk("ConstantOfShape", ["two"], ["ones"], value=numpy_helper.from_array(np.array([1], np.int64))),
             mk("Mul", ["ones", "minus"], ["neg"]), mk("Equal", ["shape", "neg"], ["keep"]),
             mk("Where", ["keep", "ones", "shape"], ["target"]),
             mk("Slice", ["row", "ax", "q1", "i1_v"], ["cut"]), mk("Expand", ["cut", "target"], ["e"], name="ex"),
             mk("Add", ["x", "e"], ["y"])]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "i1_v"))
    path = tmp_path / "expand.onnx"
    save_model(path, nodes, [tensor("x", ["batch", "seq"])], [tensor("y", ["batch", "seq"])], inits)
    return str(path)


def _reference_equals_onnxruntime(model: str, shapes: list, tmp_path: Path) -> None:
    """The symbolic file validates; resolved by infer_shapes at each input shape, the reference model's
    outputs equal onnxruntime's on the source model (ints exactly, floats to 1e-6), and so does our run of
    the symbolic file read back (it binds from the input array)."""
    import onnxruntime as ort
    written = api.emit_symbolic(api.keep_symbols(api.load(model), {}), {})
    path = tmp_path / "symbolic.tosa"
    path.write_bytes(written.data)
    accepted, errors = validate_shape(path)
    assert accepted, errors
    session = ort.InferenceSession(model)
    names = [o.name for o in session.get_outputs()]
    for i, shape in enumerate(shapes):
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        expected = dict(zip(names, session.run(None, {"x": x})))
        resolved = infer_shapes(path, {"x": shape}, tmp_path / f"infer{i}")
        ref = run_reference_model(resolved, {"x": x}, names, tmp_path / f"ref{i}")
        read_back = api.run(api.load(str(path)), {"x": x})
        for name in names:
            np.testing.assert_allclose(ref[name], expected[name], rtol=0, atol=1e-6, err_msg=f"{name} at {shape}")
            np.testing.assert_allclose(read_back[name], expected[name], rtol=0, atol=1e-6, err_msg=name)


def test_range_over_an_open_dim_matches_onnxruntime_in_the_reference_model(tmp_path):
    """IOTA as a prefix sum of ones: counts 1 and 149 for y (149 crosses 2^7), 5 and 300 for z (300 crosses
    the 256-element shift that a PAD-based shift got wrong in infer_shapes)."""
    _reference_equals_onnxruntime(_range_model(tmp_path), [(1, 5), (1, 300)], tmp_path)


def test_iota_uses_doubling_steps_bounded_by_the_count():
    from tosaconv.emit.symbolic_iota import MAX_STEPS, doubling_steps
    from tosaconv.symbolic.expr import dmin, sym
    assert doubling_steps(sym("n")) == MAX_STEPS == 31
    assert doubling_steps(dmin(sym("n"), 512)) == 9   # 2^9 = 512: x[i] = min(i + 1, 512) counts to 512
    assert doubling_steps(dmin(sym("n"), 513)) == 10


def test_expand_whose_target_is_where_over_the_shape_keeps_symbols(tmp_path):
    """The Equal against -1 is decided (a dim is never -1), so Where picks the shape's dims and the Expand
    needs no size read from tensor data."""
    model = _expand_by_where_model(tmp_path)
    graph = api.load(model)
    assert not [op for op in graph.ops if op.op.name == "EXTRACT_DIM"]
    _reference_equals_onnxruntime(model, [(1, 3), (4, 7)], tmp_path)


def test_equal_of_two_open_dims_stays_data_and_the_refusal_names_the_op(tmp_path):
    """``Where(Equal(batch, seq), ...)`` is not decided for every binding: the Expand's target is tensor
    data, and --keep-symbols refuses it naming EXTRACT_DIM, the Expand and the value it reads."""
    from tests.cli.conftest import save_model, tensor
    from onnx import helper, numpy_helper
    mk = helper.make_node
    inits = [numpy_helper.from_array(np.array([0], np.int64), "i0"),
             numpy_helper.from_array(np.array([1], np.int64), "i1")]
    nodes = [mk("Shape", ["x"], ["s"]), mk("Gather", ["s", "i0"], ["b"], axis=0),
             mk("Gather", ["s", "i1"], ["q"], axis=0), mk("Equal", ["b", "q"], ["square"]),
             mk("Where", ["square", "b", "q"], ["w"]), mk("Concat", ["w", "q"], ["target"], axis=0),
             mk("Expand", ["x", "target"], ["y"], name="ex")]
    path = tmp_path / "undecided.onnx"
    save_model(path, nodes, [tensor("x", ["batch", "seq"])], [tensor("y", [None, None])], inits)
    with pytest.raises(ConversionError) as e:
        api.emit_symbolic(api.keep_symbols(api.load(str(path)), {}), {})
    message = e.value.diagnostics[0].message
    assert "cannot keep symbols through EXTRACT_DIM at Expand 'ex'" in message
    assert "reads a size from tensor data (the output of Concat 'target')" in message   # what the Expand reads


def test_symbolic_mlir_of_a_range_over_an_open_dim_validates(tmp_path):
    """The IOTA construction printed as TOSA MLIR: tosa-opt validates it at 1.1.draft and prints it as it
    prints its own deserialization of the symbolic .tosa."""
    from tests.emit.test_mlir_symbolic import TARGET_1_1
    from tests.emit.test_mlir_tosa_opt import assert_prints_as_deserialized
    from tests.tosa_tools import run_tool
    program = api.keep_symbols(api.load(_range_model(tmp_path)), {})
    mlir, tosa = tmp_path / "m.mlir", tmp_path / "m.tosa"
    mlir.write_bytes(api.emit_symbolic(program, {}, "mlir").data)
    tosa.write_bytes(api.emit_symbolic(program, {}).data)
    proc = run_tool("tosa-opt", [mlir, TARGET_1_1, "--tosa-validate=strict-op-spec-alignment", "-o", "/dev/null"])
    assert proc.returncode == 0, proc.stderr
    assert_prints_as_deserialized(mlir, tosa, tmp_path)
