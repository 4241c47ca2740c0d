"""ONNX Pad whose amounts are computed from a symbolic shape (issue 11, class 3; seed 001's data-dependent PAD).

STFT front-ends pad the time axis by amounts they compute from the input's
shape: ``Shape -> Gather -> Mod/Sub/Div -> Unsqueeze -> Concat -> Cast -> Pad``
(here: ``T // 4`` before and ``(4 - T % 4) % 4`` after, so one binding pads 0
on a side); torch.onnx's export of ``F.pad`` also moves the amounts through
Reshape, a reversing Slice and Transpose, which are traced back to them. The importer keeps the amounts as Index values in one DYN_PAD,
which decays to static SLICE/PAD/CONCAT once ``T`` is bound. Every mode is
compared with onnxruntime at two bindings (the symbolic program and the
specialized, emitted and read-back one), and the official reference model
runs the emitted ``.tosa``. Also: amounts that crop, a pad value given at run
time, the text IR round trip, and the refusals: amounts read from tensor data,
a reflect pad that can never fit, one that does not fit a binding, a crop
that empties the axis, and the exit codes of the command line for them.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError, TosaconvError
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph

from .harness import (F32, I64, check_reference_model, check_with_onnxruntime, const, convert, info,
                      make_model, rand, run_graph, run_onnxruntime, specialize_and_emit)

HOP = 4
BINDINGS = (8, 13)          # 8 % 4 == 0: the right pad binds to 0; 13 pads 3 on the right


def _stft_pad_model(mode: str, left: str = "Div", right_sign: int = 1, value_input: bool = False):
    """x [2, T] padded on axis 1 by ``T // 4`` before and ``(4 - T % 4) % 4`` after (times ``right_sign``)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["t"], axis=0),
             helper.make_node("Mod", ["t", "hop"], ["r"]),
             helper.make_node("Sub", ["hop", "r"], ["q"]),
             helper.make_node("Mod", ["q", "hop"], ["right"]),
             helper.make_node("Mul", ["right", "sign"], ["right_s"]),
             helper.make_node(left, ["t", "hop"], ["left"]),
             helper.make_node("Unsqueeze", ["left", "ax0"], ["l1"]),
             helper.make_node("Unsqueeze", ["right_s", "ax0"], ["r1"]),
             helper.make_node("Concat", ["zero", "l1", "zero", "r1"], ["p64"], axis=0),
             helper.make_node("Cast", ["p64"], ["p32"], to=TensorProto.INT32),
             helper.make_node("Cast", ["p32"], ["pads"], to=TensorProto.INT64),
             helper.make_node("Pad", ["x", "pads"] + (["v"] if value_input else []), ["y"], mode=mode,
                              name="stft_pad")]
    inits = [const("one", np.array(1, np.int64)), const("hop", np.array(HOP, np.int64)),
             const("ax0", np.array([0], np.int64)), const("zero", np.array([0], np.int64)),
             const("sign", np.array(right_sign, np.int64))]
    inputs = [info("x", F32, [2, "T"])] + ([info("v", F32, [])] if value_input else [])
    return make_model(nodes, inputs, [info("y", F32, None)], inits, 18)


def torch_pad_model(mode: str):
    """torch.onnx's opset-11 export of ``F.pad(x, (0, amount))`` on x [2, 1, T], amount = (4 - T % 4) % 4:
    the amounts go Concat -> ConstantOfShape zeros -> Reshape [-1, 2] -> Slice (step -1) -> Transpose ->
    Reshape [-1] -> Cast, i.e. through tensor layout ops, before they reach Pad."""
    def ints(name, v):
        return const(name, np.array(v, np.int64))
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "two"], ["t"], axis=0),
             helper.make_node("Mod", ["t", "hop"], ["r"]),
             helper.make_node("Sub", ["hop", "r"], ["q"]),
             helper.make_node("Mod", ["q", "hop"], ["amount"]),
             helper.make_node("Unsqueeze", ["amount", "ax0"], ["a1"]),
             helper.make_node("Concat", ["zero1", "a1"], ["pad"], axis=0),
             helper.make_node("Shape", ["pad"], ["pad_shape"]),
             helper.make_node("Gather", ["pad_shape", "zero"], ["pad_len"], axis=0),
             helper.make_node("Sub", ["six", "pad_len"], ["ext"]),
             helper.make_node("Unsqueeze", ["ext", "ax0"], ["ext1"]),
             helper.make_node("ConstantOfShape", ["ext1"], ["zeros"],
                              value=helper.make_tensor("v", TensorProto.INT64, [1], [0])),
             helper.make_node("Cast", ["pad"], ["pad64"], to=TensorProto.INT64),
             helper.make_node("Concat", ["pad64", "zeros"], ["paddings"], axis=0),
             helper.make_node("Reshape", ["paddings", "m1_2"], ["p2"]),
             helper.make_node("Slice", ["p2", "m1", "big", "ax0", "m1"], ["flipped"]),
             helper.make_node("Transpose", ["flipped"], ["pt"], perm=[1, 0]),
             helper.make_node("Reshape", ["pt", "m1"], ["p1"]),
             helper.make_node("Cast", ["p1"], ["pads"], to=TensorProto.INT64),
             helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode, name="torch_pad")]
    inits = [ints("two", 2), ints("hop", HOP), ints("ax0", [0]), ints("zero1", [0]), ints("zero", 0),
             ints("six", 6), ints("m1_2", [-1, 2]), ints("m1", [-1]), ints("big", [-2**63 + 1])]
    return make_model(nodes, [info("x", F32, [2, 1, "T"])], [info("y", F32, None)], inits, 17)


def _feeds(**extra):
    return [dict({"x": rand(2, t, seed=t)}, **extra) for t in BINDINGS]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_from_shape_matches_onnxruntime_and_the_reference_model(mode, tmp_path):
    model = _stft_pad_model(mode)
    graph = check_with_onnxruntime(model, _feeds())
    assert graph.histogram().get("DYN_PAD") == 1 and "PAD" not in graph.histogram()
    for feeds in _feeds():
        static, tosa = specialize_and_emit(graph, {"x": feeds["x"].shape})
        assert not {"DYN_PAD", "DYN_SLICE", "DYN_TILE"} & set(static.histogram())
        got = run_graph(static, feeds)
        np.testing.assert_allclose(got[0], run_onnxruntime(model, feeds)[0], rtol=0, atol=0)
        check_reference_model(tosa, static, feeds, got, tmp_path / f"{mode}{feeds['x'].shape[1]}")


@pytest.mark.parametrize("mode", ["constant", "reflect"])
def test_torch_exported_pad_from_shape_matches_onnxruntime_and_the_reference_model(mode, tmp_path):
    model = torch_pad_model(mode)
    feeds = [{"x": rand(2, 1, t, seed=t)} for t in BINDINGS]
    graph = check_with_onnxruntime(model, feeds)
    assert graph.histogram().get("DYN_PAD") == 1 and "GATHER" not in graph.histogram()
    for f in feeds:
        static, tosa = specialize_and_emit(graph, {"x": f["x"].shape})
        check_reference_model(tosa, static, f, run_graph(static, f), tmp_path / f"{mode}{f['x'].shape[2]}")


@pytest.mark.parametrize("mode", ["constant", "edge"])
def test_pad_from_shape_that_crops_matches_onnxruntime(mode):
    check_with_onnxruntime(_stft_pad_model(mode, right_sign=-1), _feeds())


def test_padded_time_axis_feeds_stft_framing(tmp_path):
    """Pad time to a multiple of the hop (4T before, (4 - T % 4) % 4 after), frame it with Reshape [2, -1, 4]
    and apply a 4-point DFT-like MatMul: the padded dim flows into the frame count."""
    model = _stft_pad_model("constant", left="Mul")
    graph_proto = model.graph
    graph_proto.output.pop()
    graph_proto.node.extend([helper.make_node("Reshape", ["y", "frame_shape"], ["frames"]),
                             helper.make_node("MatMul", ["frames", "dft"], ["spec"])])
    k = np.arange(HOP)
    graph_proto.initializer.extend([const("frame_shape", np.array([2, -1, HOP], np.int64)),
                                    const("dft", np.cos(2 * np.pi * np.outer(k, k) / HOP).astype(np.float32))])
    graph_proto.output.append(info("spec", F32, None))
    graph = check_with_onnxruntime(model, _feeds())
    for f in _feeds():
        static, tosa = specialize_and_emit(graph, {"x": f["x"].shape})
        check_reference_model(tosa, static, f, run_graph(static, f), tmp_path / str(f["x"].shape[1]))


def test_pad_cropping_by_a_negated_dim_matches_onnxruntime():
    """pads = [0, 0, 0, -(T // 4)] with the minus from Neg (shape arithmetic, so DYN_PAD)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["t"], axis=0),
             helper.make_node("Div", ["t", "four"], ["q"]),
             helper.make_node("Neg", ["q"], ["neg"]),
             helper.make_node("Unsqueeze", ["neg", "ax0"], ["n1"]),
             helper.make_node("Concat", ["zero", "zero", "zero", "n1"], ["pads"], axis=0),
             helper.make_node("Pad", ["x", "pads"], ["y"])]
    inits = [const("one", np.array(1, np.int64)), const("ax0", np.array([0], np.int64)),
             const("zero", np.array([0], np.int64)), const("four", np.array(4, np.int64))]
    model = make_model(nodes, [info("x", F32, [2, "T"])], [info("y", F32, None)], inits, 18)
    assert "DYN_PAD" in check_with_onnxruntime(model, _feeds()).histogram()


def test_pad_from_shape_with_a_run_time_value_matches_onnxruntime():
    check_with_onnxruntime(_stft_pad_model("constant", value_input=True), _feeds(v=np.array(-3.5, np.float32)))


def test_dyn_pad_survives_the_text_ir():
    graph = convert(_stft_pad_model("reflect"))
    again = parse_graph(print_graph(graph))
    assert print_graph(again) == print_graph(graph)
    feeds = _feeds()[1]
    np.testing.assert_array_equal(run_graph(again, feeds)[0], run_graph(graph, feeds)[0])


def test_pad_amounts_from_tensor_data_are_refused_by_name():
    nodes = [helper.make_node("Pad", ["x", "p"], ["y"], name="data_pad")]
    model = make_model(nodes, [info("x", F32, [2, "T"]), info("p", I64, [4])], [info("y", F32, None)])
    with pytest.raises(TosaconvError, match=r"(?s)data_pad.*pads input 'p': input pads computed from tensor data at run "
                                            r"time is not supported: TOSA PAD takes padding fixed before the model runs"):
        convert(model)


def test_reflect_pad_from_shape_that_can_never_fit_is_refused():
    model = _stft_pad_model("reflect", left="Add")       # T + 4 rows before: never below T
    with pytest.raises(ShapeError, match="(?s)stft_pad.*reflect Pad of T \\+ 4"):
        convert(model)


def test_reflect_pad_from_shape_checks_each_binding():
    graph = convert(_stft_pad_model("reflect"))
    api.specialize(graph, {"T": 3})                      # pads 0 before and 1 after a dim of 3: fits
    with pytest.raises(ShapeError, match=r"T - 1 >= max\(.*\) does not hold.*with T=2") as e:
        api.specialize(graph, {"T": 2})                  # pads 0 before and 2 after a dim of 2
    diag = e.value.diagnostics[0]
    assert diag.location.name == "stft_pad" and "reflect Pad of" in diag.notes[0]


def test_pad_from_shape_that_crops_everything_is_refused():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "one"], ["t"], axis=0),
             helper.make_node("Neg", ["t"], ["neg"]),
             helper.make_node("Unsqueeze", ["neg", "ax0"], ["n1"]),
             helper.make_node("Concat", ["zero", "zero", "zero", "n1"], ["pads"], axis=0),
             helper.make_node("Pad", ["x", "pads"], ["y"], name="crop_all")]
    inits = [const("one", np.array(1, np.int64)), const("ax0", np.array([0], np.int64)),
             const("zero", np.array([0], np.int64))]
    model = make_model(nodes, [info("x", F32, [2, "T"])], [info("y", F32, None)], inits, 18)
    with pytest.raises(TosaconvError, match="(?s)crop_all.*Pad on axis 1 must leave a dim >= 1"):
        convert(model)


def _tosaconv(*args, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    return subprocess.run([sys.executable, "-m", "tosaconv", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_command_line_exit_codes(tmp_path):
    """Data pads: exit 3 at conversion; a binding the reflect pad does not fit: exit 4; a good one: 0."""
    onnx.save(_stft_pad_model("reflect"), tmp_path / "stft.onnx")
    data = make_model([helper.make_node("Pad", ["x", "p"], ["y"], name="data_pad")],
                      [info("x", F32, [2, "T"]), info("p", I64, [4])], [info("y", F32, None)])
    onnx.save(data, tmp_path / "data.onnx")
    r = _tosaconv("convert", "data.onnx", "--bind", "T=5", "-o", "d.tosa", cwd=tmp_path)
    assert r.returncode == 3 and "data_pad" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = _tosaconv("convert", "stft.onnx", "--bind", "T=2", "-o", "s.tosa", cwd=tmp_path)
    assert r.returncode == 4 and "stft_pad" in r.stderr and "reflect Pad" in r.stderr, r.stderr
    r = _tosaconv("convert", "stft.onnx", "--bind", "T=13", "-o", "s.tosa", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "s.tosa").exists(), r.stderr
