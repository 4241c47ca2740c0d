"""The TOSA profiles and extensions a program needs, judged by the official ``tosa-opt`` validator.

For every sample and control-flow model the requirements tosaconv states must be *enough* (tosa-opt
accepts the emitted ``.tosa`` for exactly that target, at level 8K) and *each one needed* (tosa-opt
rejects the target without it). On top of that, the cases the profile analysis exists for: a float
model needs PRO-FP, an int8 model PRO-INT alone, int16x8 EXT-INT16, COND_IF and WHILE_LOOP
EXT-CONTROLFLOW, a stateful model EXT-VARIABLE. Symbolic programs count helper ops by their tensors'
types and say so; importers' float reasons survive specialization.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import tosaconv.api as api
from tests.analysis.target import validate
from tests.importers.tflite.test_control_flow import if_model, nested_model, while_model
from tosaconv.analysis import note_float_reason, summary

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

MODELS = {
    "small_cnn.tflite": (SAMPLES / "tflite" / "small_cnn.tflite", {}),
    "int8_cnn.tflite": (SAMPLES / "tflite" / "int8_cnn.tflite", {}),
    "uint8_io.tflite": (SAMPLES / "tflite" / "uint8_io.tflite", {}),
    "int8_float_io.tflite": (SAMPLES / "tflite" / "int8_float_io.tflite", {}),
    "int16x8.tflite": (SAMPLES / "tflite" / "int16x8.tflite", {}),
    "running_sum.tflite": (SAMPLES / "tflite" / "running_sum.tflite", {}),
    "small_cnn.onnx": (SAMPLES / "small_cnn.onnx", {"N": 1, "H": 8, "W": 8}),
    "tiny_transformer.onnx": (SAMPLES / "tiny_transformer.onnx", {"batch": 1, "seq": 4}),
}
BUILT = {"if_int32.tflite": lambda: if_model((2, 3), "INT32"), "if_float.tflite": lambda: if_model((2, 3)),
         "while_int32.tflite": lambda: while_model((2, 3), "INT32"), "nested.tflite": nested_model}


def _static(name: str, tmp_path: Path):
    """The static program of a sample or built model, and its emitted .tosa."""
    if name in BUILT:
        path, bindings = tmp_path / name, {}
        path.write_bytes(BUILT[name]())
    else:
        path, bindings = MODELS[name]
    static = api.specialize(api.load(str(path)), bindings)
    tosa = tmp_path / (Path(name).stem + ".tosa")
    tosa.write_bytes(api.emit(static))
    return static, tosa


@pytest.mark.parametrize("name", [*MODELS, *BUILT])
def test_stated_requirements_are_enough_and_each_is_needed(name, tmp_path):
    static, tosa = _static(name, tmp_path)
    tosa_section = summary(static)
    needed = tosa_section["profiles"] + tosa_section["extensions"]
    assert tosa_section["exact"] and not tosa_section["unsupported"]
    accepted, errors = validate(tosa, needed, level="8k")
    assert accepted, errors
    for dropped in needed:
        accepted, _ = validate(tosa, [r for r in needed if r != dropped])
        assert not accepted, f"{name}: tosa-opt accepts the program without {dropped}"


@pytest.mark.parametrize("name, profiles, extension", [
    ("small_cnn.tflite", ["PRO-FP"], None),
    ("small_cnn.onnx", ["PRO-FP"], None),
    ("int8_cnn.tflite", ["PRO-INT"], None),
    ("uint8_io.tflite", ["PRO-INT"], None),
    ("int16x8.tflite", ["PRO-INT"], "EXT-INT16"),
    ("if_int32.tflite", ["PRO-INT"], "EXT-CONTROLFLOW"),
    ("while_int32.tflite", ["PRO-INT"], "EXT-CONTROLFLOW"),
    ("running_sum.tflite", ["PRO-FP"], "EXT-VARIABLE"),
])
def test_the_cases_the_profiles_exist_for(name, profiles, extension, tmp_path):
    tosa_section = summary(_static(name, tmp_path)[0])
    assert tosa_section["profiles"] == profiles
    assert extension is None or extension in tosa_section["extensions"]
    assert ("EXT-INT16" in tosa_section["extensions"]) == (name == "int16x8.tflite")


def test_each_requirement_names_how_many_ops_need_it_and_the_first(tmp_path):
    tosa_section = summary(_static("int16x8.tflite", tmp_path)[0])
    uses = {u["name"]: u for u in tosa_section["requirements"]}
    assert set(uses) == {"PRO-INT", "EXT-INT16", "EXT-DOUBLEROUND"}
    assert uses["EXT-DOUBLEROUND"]["first"]["op"] == "RESCALE"
    assert all(u["ops"] >= 1 and u["first"]["location"]["source"] == "tflite" for u in uses.values())


def test_an_int8_program_has_no_float_islands_and_a_float_one_lists_every_source_op(tmp_path):
    assert summary(_static("int8_cnn.tflite", tmp_path)[0])["float_islands"] == []
    static = _static("small_cnn.onnx", tmp_path)[0]
    import onnx
    nodes = {n.name for n in onnx.load(str(MODELS["small_cnn.onnx"][0])).graph.node}
    islands = summary(static)["float_islands"]
    assert {i["location"]["name"] for i in islands} <= nodes
    assert all(i["reason"].startswith("the model is a float model") for i in islands)
    # every source node that left an op in the static program is a float island
    assert {i["location"]["name"] for i in islands} == {op.location.name for op in static.ops}


def test_mixed_program_lists_only_its_float_edges_with_the_default_reason(tmp_path):
    islands = summary(_static("int8_float_io.tflite", tmp_path)[0])["float_islands"]
    assert [i["location"]["op_type"] for i in islands] == ["QUANTIZE", "DEQUANTIZE"]
    assert islands[0]["reason"] == "QUANTIZE has no integer lowering in tosaconv"
    assert islands[0]["dtypes"] == ["f32"]


def test_an_importer_reason_survives_specialization(tmp_path):
    graph = api.load(str(MODELS["small_cnn.onnx"][0]))
    relu = next(op for op in graph.ops if op.location.op_type == "Relu")
    note_float_reason(graph, relu.location, "Relu reads a float tensor from the model input")
    static = api.specialize(graph, MODELS["small_cnn.onnx"][1])
    islands = {i["location"]["text"]: i["reason"] for i in summary(static)["float_islands"]}
    assert islands[str(relu.location)] == "Relu reads a float tensor from the model input"


def test_a_reason_noted_inside_a_region_reaches_the_enclosing_program(tmp_path):
    static, _ = _static("if_float.tflite", tmp_path)
    cond_if = next(op for op in static.ops if op.op.name == "COND_IF")
    then_graph = cond_if.attrs.then_graph
    note_float_reason(then_graph, then_graph.ops[0].location, "branch reason")
    islands = {i["location"]["text"]: i["reason"] for i in summary(static)["float_islands"]}
    assert islands[str(then_graph.ops[0].location)] == "branch reason"


def test_symbolic_program_counts_helper_ops_by_type_and_says_it_is_not_exact():
    graph = api.load(str(MODELS["tiny_transformer.onnx"][0]))
    tosa_section = summary(graph)
    assert tosa_section["profiles"] == ["PRO-FP"] and not tosa_section["exact"]


def test_float_reasons_round_trip_through_the_text_ir():
    from tosaconv.ir.parser import parse_graph
    graph = api.load(str(MODELS["small_cnn.onnx"][0]))
    relu = next(op for op in graph.ops if op.location.op_type == "Relu")
    note_float_reason(graph, relu.location, 'a "quoted" reason')
    text = api.print_ir(graph)
    assert f'float_reason "Relu \'{relu.location.name}\'" "a \\"quoted\\" reason"' in text
    again = parse_graph(text)
    assert again.float_reasons == graph.float_reasons
    assert api.print_ir(again) == text


def test_an_op_with_no_tosa_form_needs_what_constants_of_its_types_need():
    # The spec's CONST rows: i32 is in PRO-INT and in PRO-FP, fp32 only in PRO-FP, i48 needs EXT-INT16.
    from tosaconv.analysis.profiles import op_need
    from tosaconv.ir.dtypes import DType
    from tosaconv.ir.graph import Operation, Value
    from tosaconv.ir.location import UNKNOWN_LOCATION
    from tosaconv.ir.ops import Op
    from tosaconv.ir.types import TensorType

    def need(*dtypes):
        values = [Value(f"v{i}", TensorType(d, (2,))) for i, d in enumerate(dtypes)]
        n = op_need(Operation(Op.DYN_SLICE, values, [], None, UNKNOWN_LOCATION))
        assert not n.exact
        return [set(alt) for alt in n.alternatives]
    assert need(DType.INT32) == [{"PRO-INT"}, {"PRO-FP"}]
    assert need(DType.INT8, DType.FP32) == [{"PRO-FP"}]
    assert need(DType.INT48) == [{"EXT-INT16"}]
