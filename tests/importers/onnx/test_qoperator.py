"""onnxruntime's com.microsoft QLinear* ops and QGemm (its quantizer's QOperator format) against onnxruntime.

Each one-op model (``qoperator_models``) runs with int8 and with uint8 data on symbolic dims fed
at two sizes. The symbolic program and the emitted static ``.tosa`` must agree with onnxruntime's
CPU kernels within one unit (LSB) on at most ``MAX_ONE_LSB_FRACTION`` of the elements: tosaconv
computes each op's definition, ``quantize(op(dequantize(x)))``, in float32 (or folds it into
integer TOSA, rounding half up where onnxruntime rounds half to even), while onnxruntime uses
256-entry lookup tables (Sigmoid, LeakyRelu, Concat), fixed-point kernels (Add, Mul, the pools)
or its own float Softmax; the two can land on either side of a rounding tie. The official
reference model runs every emitted ``.tosa`` and must equal our numpy run exactly on integers.
onnxruntime has no CPU kernel for QLinearReduceMean, so that op is compared with onnxruntime
running its documented definition (DequantizeLinear -> ReduceMean -> QuantizeLinear).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv.diagnostics import TosaconvError
from tests.tosa_tools import run_reference_model
from tosaconv.emit import read_tosa

from .harness import check_reference_model, const, convert, info, rand, run_graph, run_onnxruntime
from .harness import specialize_and_emit
from .qoperator_models import BOOL, I8, U8, contrib_qdq_model, direct_8bit_model, qgemm_model, qop_model
from .quant_models import op_histogram

ACTS = pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
MAX_ONE_LSB_FRACTION = 0.02


def assert_close_lsb(got, want, what: str, max_fraction: float = MAX_ONE_LSB_FRACTION):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=what)
        return
    diff = np.abs(got.astype(want.dtype).astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1, f"{what}: max |diff| {diff.max()} > 1 LSB"
    assert (diff > 0).mean() <= max_fraction, f"{what}: {(diff > 0).mean():.1%} of elements differ by 1 LSB"


def check(model, feed_sets, tmp_path, want_fn=None, max_fraction: float = MAX_ONE_LSB_FRACTION,
          reference_exact: bool = True):
    """Symbolic and emitted static programs against onnxruntime (or ``want_fn(feeds)``), and the
    reference model against our numpy run of the emitted program (exactly on integers, unless not
    ``reference_exact``: then like onnxruntime, within 1 LSB)."""
    graph = convert(model)
    for i, feeds in enumerate(feed_sets):
        want = want_fn(feeds) if want_fn else run_onnxruntime(model, feeds)
        static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
        emitted = run_graph(read_tosa(tosa), feeds)
        for how, got in (("symbolic", run_graph(graph, feeds)), ("emitted", emitted)):
            for j, (g, w) in enumerate(zip(got, want)):
                assert_close_lsb(g, w, f"{how} program, feed set {i}, output {j}", max_fraction)
        if reference_exact:
            check_reference_model(tosa, static, feeds, emitted, tmp_path / str(i))
        else:
            _reference_within_one_lsb(tosa, static, feeds, emitted, tmp_path / str(i), max_fraction)
    return graph


def _reference_within_one_lsb(tosa, static, feeds, emitted, workdir, max_fraction: float):
    ir_feeds = {v.name: np.asarray(feeds[v.name]).astype(v.type.dtype.numpy) for v in static.inputs}
    ref = run_reference_model(tosa, ir_feeds, static.output_names, workdir)
    for name, got in zip(static.output_names, emitted):
        assert_close_lsb(np.asarray(ref[name]).astype(got.dtype), got, f"reference model: {name}", max_fraction)


def feeds(*shape_sets, low: float = -3.0, high: float = 3.0):
    return [{f"x{j}": rand(*s, low=low, high=high, seed=10 * i + j) for j, s in enumerate(shapes)}
            for i, shapes in enumerate(shape_sets)]


# -- elementwise -----------------------------------------------------------------------------

@ACTS
@pytest.mark.parametrize("op,out_scale", [("QLinearAdd", 0.025), ("QLinearMul", 0.05)], ids=["add", "mul"])
def test_binary(op, out_scale, act, tmp_path):
    model = qop_model(op, act, [["N", 3, "W"], [1, 3, 1]], out_scale, (-5, 125))
    graph = check(model, feeds([(2, 3, 17), (1, 3, 1)], [(4, 3, 5), (1, 3, 1)]), tmp_path)
    if op == "QLinearAdd":   # the QDQ folding already takes an Add of two dequantized tensors
        assert ("ADD", "i32") in op_histogram(graph, {"N": 2, "W": 17})


@ACTS
def test_sigmoid(act, tmp_path):
    model = qop_model("QLinearSigmoid", act, [["N", "C"]], 1 / 256, (-128, 0))
    check(model, feeds([(3, 40)], [(7, 9)], low=-6, high=6), tmp_path)


@ACTS
def test_leaky_relu(act, tmp_path):
    model = qop_model("QLinearLeakyRelu", act, [["N", "C"]], 0.02, (-20, 110), alpha=0.1)
    check(model, feeds([(3, 40)], [(7, 9)]), tmp_path)


@ACTS
def test_where(act, tmp_path):
    cond = info("c", BOOL, ["N", 4])
    model = qop_model("QLinearWhere", act, [["N", 4], [1, 4]], 0.03, (2, 128), layout="cond", extra_inputs=[cond])
    sets = feeds([(5, 4), (1, 4)], [(2, 4), (1, 4)])
    for i, f in enumerate(sets):
        f["c"] = np.random.default_rng(i).random(f["x0"].shape) > 0.5
    check(model, sets, tmp_path)


# -- softmax, concat -----------------------------------------------------------------------------

@ACTS
@pytest.mark.parametrize("opset,axis,dims,shapes", [
    (13, -1, ["N", 10], [(4, 10), (9, 10)]),
    (12, 1, ["N", 3, 4], [(2, 3, 4), (5, 3, 4)]),     # before 13: over the flattened block axis..rank-1
], ids=["opset13", "opset12_flattened"])
def test_softmax(opset, axis, dims, shapes, act, tmp_path):
    model = qop_model("QLinearSoftmax", act, [dims], 1 / 256, (-128, 0), opset=opset, axis=axis)
    check(model, feeds([shapes[0]], [shapes[1]], low=-5, high=5), tmp_path)


@ACTS
def test_concat(act, tmp_path):
    model = qop_model("QLinearConcat", act, [["N", 2, "W"], ["N", 3, "W"]], 0.03, (1, 129), layout="out_in",
                      axis=1)
    check(model, feeds([(2, 2, 6), (2, 3, 6)], [(1, 2, 3), (1, 3, 3)]), tmp_path)


# -- pooling and reduction -----------------------------------------------------------------------

@ACTS
@pytest.mark.parametrize("channels_last", [0, 1], ids=["nchw", "nhwc"])
def test_global_average_pool(channels_last, act, tmp_path):
    dims = ["N", "H", "W", 3] if channels_last else ["N", 3, "H", "W"]
    shapes = [(2, 5, 7, 3), (1, 4, 4, 3)] if channels_last else [(2, 3, 5, 7), (1, 3, 4, 4)]
    model = qop_model("QLinearGlobalAveragePool", act, [dims], 0.01, (4, 126), channels_last=channels_last)
    check(model, feeds([shapes[0]], [shapes[1]]), tmp_path)


@ACTS
@pytest.mark.parametrize("channels_last", [0, 1], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("count_include_pad", [0, 1], ids=["exclude_pad", "include_pad"])
def test_average_pool(count_include_pad, channels_last, act, tmp_path):
    shape = [1, 9, 8, 3] if channels_last else [1, 3, 9, 8]
    model = qop_model("QLinearAveragePool", act, [shape], 0.015, (0, 128), kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1], count_include_pad=count_include_pad, channels_last=channels_last)
    check(model, feeds([tuple(shape)], [tuple(shape)]), tmp_path)


def _reduce_mean_definition(act: int, keepdims: int):
    """onnxruntime running QLinearReduceMean's documented definition (it has no CPU kernel for the op)."""
    model = qop_model("QLinearReduceMean", act, [["N", 4, "W"]], 0.01, (3, 131), axes=[1, 2], keepdims=keepdims)
    node = model.graph.node[-1]
    dq = helper.make_node("DequantizeLinear", ["q0", "s0", "z0"], ["xd"])
    mean = helper.make_node("ReduceMean", ["xd"], ["m"], axes=[1, 2], keepdims=keepdims)
    q = helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])
    definition = type(model)()
    definition.CopyFrom(model)
    del definition.graph.node[len(model.graph.node) - 1:]
    definition.graph.node.extend([dq, mean, q])
    assert node.op_type == "QLinearReduceMean"
    return model, definition


@ACTS
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_mean(keepdims, act, tmp_path):
    model, definition = _reduce_mean_definition(act, keepdims)
    check(model, feeds([(2, 4, 6)], [(3, 4, 2)]), tmp_path, want_fn=lambda f: run_onnxruntime(definition, f))


# -- QGemm ---------------------------------------------------------------------------------------

@ACTS
@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
@pytest.mark.parametrize("trans_b,alpha", [(0, 1.0), (1, 0.5)], ids=["plain", "transB_alpha"])
def test_qgemm(trans_b, alpha, per_column, act, tmp_path):
    graph = check(qgemm_model(act, per_column, trans_b, alpha, bias=True),
                  feeds([(5, 16)], [(2, 16)]), tmp_path)
    hist = op_histogram(graph, {"M": 5})
    assert ("MATMUL", "i8") in hist and ("MATMUL", "f32") not in hist


def test_qgemm_without_bias(tmp_path):
    check(qgemm_model(I8, True, 1, 1.0, bias=False), feeds([(3, 16)], [(8, 16)]), tmp_path)


@ACTS
def test_qgemm_float_output(act, tmp_path):
    """No y_scale: Y is the float ``alpha * a_scale * b_scale * (accumulator + C)``."""
    check(qgemm_model(act, True, 1, 0.5, bias=True, float_out=True), feeds([(5, 16)], [(2, 16)]), tmp_path)


# -- contrib QuantizeLinear / DequantizeLinear ------------------------------------------------------

@pytest.mark.parametrize("elem,zero_point", [(TensorProto.INT16, -300), (TensorProto.UINT16, 30000)],
                         ids=["int16", "uint16"])
def test_contrib_quantize_dequantize(elem, zero_point, tmp_path):
    check(contrib_qdq_model(elem, 0.001, zero_point), feeds([(3, 5)], [(6, 5)], low=-40, high=40), tmp_path,
          max_fraction=0.0)


# -- errors ------------------------------------------------------------------------------------

def test_unknown_contrib_op_is_listed_as_unsupported():
    model = qop_model("QLinearSigmoid", I8, [["N", 4]], 1 / 256, (-128, 0))
    model.graph.node[-1].op_type = "QLinearGelu"
    with pytest.raises(TosaconvError, match=r"unsupported op QLinearGelu \(com.microsoft, no converter"):
        convert(model)


def test_contrib_op_without_the_domain_import_is_refused():
    model = qop_model("QLinearSigmoid", I8, [["N", 4]], 1 / 256, (-128, 0))
    del model.opset_import[1:]
    with pytest.raises(TosaconvError, match="QLinearSigmoid .*the model does not import the com.microsoft op set"):
        convert(model)


def test_qgemm_with_per_column_scales_and_scalar_bias_is_refused():
    model = qgemm_model(I8, True, 0, 1.0, bias=True)
    c = next(t for t in model.graph.initializer if t.name == "c")
    c.CopyFrom(helper.make_tensor("c", TensorProto.INT32, [], [7]))
    with pytest.raises(TosaconvError, match="QGemm with per-column B scales and a scalar C"):
        convert(model)


def test_per_tensor_only_input_with_a_vector_scale_is_refused():
    model = qop_model("QLinearSigmoid", I8, [["N", 4]], 1 / 256, (-128, 0))
    node = model.graph.node[-1]
    model.graph.initializer.append(helper.make_tensor("vs", TensorProto.FLOAT, [4], [0.1] * 4))
    node.input[1] = "vs"
    with pytest.raises(TosaconvError, match="QLinearSigmoid version 1 has no axis attribute"):
        convert(model)


def test_a_converter_for_an_undeclared_domain_op_is_a_programming_error():
    from tosaconv.importers.onnx.registry import converter
    with pytest.raises(ValueError, match="com.example.Foo has a converter but no declared schema"):
        converter("Foo", domain="com.example")



def test_dequantize_linear_10_with_a_vector_scale_and_no_axis_is_refused():
    """DequantizeLinear 10 is per tensor; a 1-D scale is read per axis only where the node sets ``axis``
    (see test_quantizer_cnn for the models onnxruntime's quantizer writes so)."""
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"])
    model = helper.make_model(helper.make_graph(
        [node], "dq10", [], [info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("w", TensorProto.INT8, [3, 2], [1] * 6),
         helper.make_tensor("s", TensorProto.FLOAT, [3], [0.1, 0.2, 0.3])]),
        opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 10
    with pytest.raises(TosaconvError, match="DequantizeLinear version 10 has no axis attribute .*set 'axis'"):
        convert(model)


# -- ai.onnx ops on the quantized data ("direct 8-bit" ops of the QOperator format) ---------------------

_SCALES = const("scales", np.array([1, 1, 2, 2], np.float32))
_LINEAR = "Resize_linear"
DIRECT = {   # case: (op, extra initializers, output type or None for the activation type, attributes)
    "MaxPool": ("MaxPool", (), None, {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "Pad": ("Pad", (const("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)),), None, {}),
    "ArgMax": ("ArgMax", (), TensorProto.INT64, {"axis": 1}),
    "Resize_nearest": ("Resize", (None, _SCALES), None, {"mode": "nearest"}),
    **{f"{_LINEAR}_{m}": ("Resize", (None, _SCALES), None, {"mode": "linear", "coordinate_transformation_mode": m})
       for m in ("half_pixel", "asymmetric", "pytorch_half_pixel")},
}


@ACTS
@pytest.mark.parametrize("case", sorted(DIRECT))
def test_direct_8bit_op_on_quantized_data(case, act, tmp_path):
    """uint8 data is stored as int8 bits; MaxPool and ArgMax order values, so they must read the true
    (unsigned) values, and Pad must write the zero point's bits. A linear Resize of 8-bit data is
    interpolated in float and truncated toward zero, as onnxruntime does (see resize_8bit); with
    scale 2 every interpolated value of these modes is exact in float, so all must match exactly."""
    op, inits, out_elem, attrs = DIRECT[case]
    model = direct_8bit_model(act, op, inits, out_elem, **attrs)
    check(model, feeds([(2, 4, 6, 6)], [(1, 4, 6, 6)], low=-4, high=4), tmp_path, max_fraction=0.0)


@ACTS
@pytest.mark.parametrize("mode", ["half_pixel", "align_corners"])
def test_linear_resize_of_8bit_data_at_a_scale_with_inexact_weights(mode, act, tmp_path):
    """Scale 1.5 (and align_corners at any scale) gives weights such as 1/3, inexact in float: where
    the exact interpolation is an integer, truncation turns a float rounding error either way into
    one unit. onnxruntime, tosaconv's numpy run and the reference model (and a float64 evaluation)
    each land below it on about 2 % of the elements, so they agree within 1 LSB there only."""
    scales = const("scales", np.array([1, 1, 2, 1.5], np.float32))
    model = direct_8bit_model(act, "Resize", (None, scales), None, mode="linear",
                              coordinate_transformation_mode=mode)
    check(model, feeds([(2, 4, 6, 6)], [(1, 4, 6, 6)], low=-4, high=4), tmp_path, max_fraction=0.05,
          reference_exact=False)
