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
from tosaconv.diagnostics import ConversionError
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
    gives (the same ops, fields, types and constant data, in the same order; only names may differ), and
    running the symbolic file binds from the arrays and gives the static conversion's outputs bit for bit."""
    graph, path, _ = _symbolic_file(model, tmp_path)
    read = api.load(str(path))
    inputs = _inputs(graph, SHAPES[model][1])
    bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
    static = api.specialize(graph, bindings)
    assert _program(api.emit(api.specialize(read, bindings))) == _program(api.emit(static))
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
    assert "reads a size from tensor data ('target_2')" in message   # the Concat the Expand reads


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
