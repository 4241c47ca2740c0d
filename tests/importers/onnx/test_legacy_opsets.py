"""Opsets 7 to 10 convert natively when onnx.version_converter fails (tosaconv.importers.onnx.legacy).

The issue's plain opset-7 Mul (an initializer that is not a graph input, on
which the converter says ``Input W is undefined!``) runs as it is. For every
op the native upgrade table rewrites, and for ops whose old meaning differs
(Softmax's coerce-to-2-D), models at opsets 7 to 10 are converted with the
converter made to fail, so the native path is what runs, and compared with
onnxruntime running the original old-opset model. The onnx package's own node
tests at opsets 7 to 10 run the same way against their expected outputs. A
model older than opset 7 is refused, naming the legacy op versions.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper, version_converter

from tosaconv.diagnostics import ConversionError

from .harness import _all_node_cases, check_with_onnxruntime, convert, info, rand, run_node_case


@pytest.fixture
def converter_fails(monkeypatch):
    """onnx.version_converter raising, as it does on the issue's model: the native path must carry it."""
    def fail(model, version):
        raise RuntimeError("Input W is undefined!")
    monkeypatch.setattr(version_converter, "convert_version", fail)


def _model(nodes, inputs, outputs, opset: int, inits=()) -> onnx.ModelProto:
    g = h.make_graph(nodes, "legacy", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 4 if opset >= 9 else 3
    return m


def _f(name, dims):
    return info(name, T.FLOAT, dims)


def test_issue_opset7_mul_converts_without_patching():
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "W")
    m = _model([h.make_node("Mul", ["X", "W"], ["Y"])], [_f("X", [2, 3])], [_f("Y", [2, 3])], 7, [w])
    with pytest.raises(Exception, match="Input W is undefined"):
        version_converter.convert_version(m, 11)
    graph = check_with_onnxruntime(m, [{"X": rand(2, 3)}])
    assert "opset 11" in graph.source


SLICE_PAD_CLIP = [
    (7, h.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, -1], axes=[0, 2]), [4, 3, 5]),
    (9, h.make_node("Slice", ["x"], ["y"], starts=[0, 1], ends=[2, 100]), [4, 3]),
    (7, h.make_node("Pad", ["x"], ["y"], pads=[0, 1, 2, 0, 2, 1], value=1.5), [2, 3, 4]),
    (10, h.make_node("Pad", ["x"], ["y"], mode="reflect", pads=[0, 2, 0, 1]), [3, 4]),
    (8, h.make_node("Pad", ["x"], ["y"], mode="edge", pads=[1, 0, 1, 2]), [3, 4]),
    (7, h.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.75), [3, 4]),
    (10, h.make_node("Clip", ["x"], ["y"], max=0.25), [3, 4]),
    (9, h.make_node("Clip", ["x"], ["y"]), [3, 4]),
]


@pytest.mark.parametrize("opset,node,shape", SLICE_PAD_CLIP, ids=lambda v: getattr(v, "op_type", str(v)))
def test_attribute_forms_match_onnxruntime(converter_fails, opset, node, shape):
    m = _model([node], [_f("x", shape)], [_f("y", None)], opset)
    check_with_onnxruntime(m, [{"x": rand(*shape, seed=opset)}])


@pytest.mark.parametrize("opset", [7, 9])
def test_topk1_k_attribute(converter_fails, opset):
    node = h.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1)
    m = _model([node], [_f("x", [3, 5])], [_f("v", None), info("i", T.INT64, None)], opset)
    check_with_onnxruntime(m, [{"x": rand(3, 5, seed=1)}])


@pytest.mark.parametrize("opset,mode", [(7, "nearest"), (8, "linear")])
def test_upsample7_scales_attribute(converter_fails, opset, mode):
    node = h.make_node("Upsample", ["x"], ["y"], mode=mode, scales=[1.0, 1.0, 2.0, 3.0])
    m = _model([node], [_f("x", [1, 2, 3, 4])], [_f("y", None)], opset)
    check_with_onnxruntime(m, [{"x": rand(1, 2, 3, 4, seed=2)}])


SCALED = [(opset, op, mode, scales) for opset, op in [(9, "Upsample"), (10, "Resize")]
          for mode in ("nearest", "linear")
          for scales in ([1, 1, 2, 2], [1, 1, 1.5, 2.5]) + (([1, 1, 0.5, 0.5],) if op == "Resize" else ())]


@pytest.mark.parametrize("opset,op,mode,scales", SCALED)
def test_upsample9_and_resize10_scales_input(converter_fails, opset, op, mode, scales):
    s = numpy_helper.from_array(np.array(scales, np.float32), "s")
    m = _model([h.make_node(op, ["x", "s"], ["y"], mode=mode)], [_f("x", [1, 2, 6, 5])], [_f("y", None)],
               opset, [s])
    check_with_onnxruntime(m, [{"x": rand(1, 2, 6, 5, seed=3)}])


def test_scatter9_is_scatter_elements(converter_fails):
    idx = numpy_helper.from_array(np.array([[1, 0, 2], [0, 2, 1]], np.int64), "i")
    m = _model([h.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1)],
               [_f("x", [2, 3]), _f("u", [2, 3])], [_f("y", None)], 9, [idx])
    check_with_onnxruntime(m, [{"x": rand(2, 3), "u": rand(2, 3, seed=4)}])


def _cnn(opset: int, spatial=None) -> onnx.ModelProto:
    rng = np.random.default_rng(opset)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n) for n, s in
             [("w", (4, 2, 3, 3)), ("cb", (4,)), ("sc", (4,)), ("bb", (4,)), ("mu", (4,)), ("gw", (5, 16)), ("gc", (5,))]]
    inits.append(numpy_helper.from_array(rng.uniform(0.5, 2, 4).astype(np.float32), "var"))
    bn = {"spatial": spatial} if spatial is not None else {}
    nodes = [h.make_node("Conv", ["x", "w", "cb"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["c", "sc", "bb", "mu", "var"], ["b"], **bn),
             h.make_node("Relu", ["b"], ["r"]),
             h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Dropout", ["p"], ["d"], ratio=0.3),
             h.make_node("Flatten", ["d"], ["f"]),
             h.make_node("Gemm", ["f", "gw", "gc"], ["g"], transB=1, alpha=0.5, beta=2.0),
             h.make_node("Softmax", ["g"], ["y"])]
    return _model(nodes, [_f("x", [1, 2, 4, 4])], [_f("y", None)], opset, inits)


@pytest.mark.parametrize("opset", [7, 8, 9, 10])
def test_small_cnn_at_each_old_opset(converter_fails, opset):
    check_with_onnxruntime(_cnn(opset, spatial=1 if opset < 9 else None), [{"x": rand(1, 2, 4, 4)}])


def test_batchnorm7_spatial0_is_refused(converter_fails):
    with pytest.raises(ConversionError) as e:
        convert(_cnn(7, spatial=0))
    msg = e.value.diagnostics[0].message
    assert "BatchNormalization-7" in msg and "spatial=0" in msg and "opset 7" in msg


@pytest.mark.parametrize("opset", [7, 9, 10])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_softmax_family_coerces_to_2d_before_13(converter_fails, opset, op):
    m = _model([h.make_node(op, ["x"], ["y"], axis=1)], [_f("x", [2, 3, 4])], [_f("y", None)], opset)
    check_with_onnxruntime(m, [{"x": rand(2, 3, 4, seed=5)}])


def test_opset6_legacy_broadcast_is_refused_naming_the_op(converter_fails):
    node = h.make_node("Mul", ["x", "w"], ["y"], broadcast=1, axis=1)
    w = numpy_helper.from_array(np.ones(3, np.float32), "w")
    m = _model([node], [_f("x", [2, 3, 4])], [_f("y", None)], 6, [w])
    with pytest.raises(ConversionError) as e:
        convert(m)
    msg = e.value.diagnostics[0].message
    assert "opset 6" in msg and "Mul-6" in msg and "broadcast" in msg


def _opset(model: onnx.ModelProto) -> int:
    return max([o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] or [0])


OLD_NODE_CASES = [c for c in _all_node_cases()
                  if 7 <= _opset(c.model) <= 10
                  and c.model.graph.node[0].op_type in
                  ("And", "Or", "Xor", "Shrink", "Upsample", "ReverseSequence", "Scatter", "Scan")]


@pytest.mark.parametrize("case", OLD_NODE_CASES, ids=lambda c: c.name)
def test_onnx_node_cases_of_opsets_7_to_10(converter_fails, case):
    run_node_case(case)


def test_old_node_cases_were_found():
    assert len(OLD_NODE_CASES) >= 30


# ops whose opset-7..10 versions mean the same at opset 11 (only relabelled): each old form vs onnxruntime
_N = h.make_node
RELABELLED = [
    (7, _N("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0), [2, 3, 4]),
    (9, _N("ReduceSum", ["x"], ["y"], axes=[0, 2]), [2, 3, 4]),
    (7, _N("ReduceMax", ["x"], ["y"]), [2, 3, 4]),
    (8, _N("Squeeze", ["x"], ["y"], axes=[1]), [2, 1, 4]),
    (10, _N("Unsqueeze", ["x"], ["y"], axes=[0, 3]), [2, 4]),
    (7, _N("Flatten", ["x"], ["y"], axis=2), [2, 3, 4]),
    (9, _N("Concat", ["x", "x"], ["y"], axis=1), [2, 3]),
    (7, _N("ArgMax", ["x"], ["y"], axis=1, keepdims=0), [3, 5]),
    (10, _N("ArgMin", ["x"], ["y"], axis=0), [3, 5]),
    (8, _N("DepthToSpace", ["x"], ["y"], blocksize=2), [1, 8, 2, 3]),
    (7, _N("Max", ["x", "x2"], ["y"]), [3, 4]),
    (8, _N("Sum", ["x", "x2"], ["y"]), [3, 4]),
    (7, _N("Mean", ["x", "x2"], ["y"]), [3, 4]),
    (9, _N("Cast", ["x"], ["y"], to=T.INT32), [3, 4]),
    (8, _N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), [1, 2, 6, 6]),
    (7, _N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1), [1, 2, 5, 5]),
    (10, _N("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), [1, 2, 5, 5]),
    (7, _N("PRelu", ["x", "x2"], ["y"]), [3, 4]),
    (7, _N("LeakyRelu", ["x"], ["y"], alpha=0.2), [3, 4]),
    (8, _N("Transpose", ["x"], ["y"], perm=[2, 0, 1]), [2, 3, 4]),
    (9, _N("MatMul", ["x", "x2"], ["y"]), [4, 4]),
    (7, _N("Tanh", ["x"], ["y"]), [3, 4]),
    (10, _N("Dropout", ["x"], ["y"]), [3, 4]),
]


@pytest.mark.parametrize("opset,node,shape", RELABELLED, ids=lambda v: getattr(v, "op_type", str(v)))
def test_relabelled_old_versions_match_onnxruntime(converter_fails, opset, node, shape):
    out = info("y", T.INT32 if node.op_type == "Cast" else T.INT64 if node.op_type.startswith("Arg") else T.FLOAT,
               None)
    inputs = [_f(n, shape) for n in dict.fromkeys(node.input)]
    m = _model([node], inputs, [out], opset)
    feeds = {n: rand(*shape, seed=i) for i, n in enumerate(dict.fromkeys(node.input))}
    check_with_onnxruntime(m, [feeds])
