"""ONNX Resize against onnxruntime: nearest and linear modes, every
coordinate_transformation_mode TOSA RESIZE can express, every nearest_mode,
scales and sizes (constant, or computed from the input's shape), opsets 11,
13, 18 (axes, keep_aspect_ratio_policy) and 19, integer scales on symbolic
dims run at two shapes. Where onnxruntime and ONNX's own reference disagree
(the fractional output length of align_corners, float ties of a non-dyadic
scale) the reference is the judge. Also the TOSA RESIZE parameters for common
cases, and the conversion errors for integer data TOSA RESIZE cannot take (it
has no interpolation-matrix fallback; test_nn_resize_matrix.py covers floats).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tosaconv.diagnostics import ConversionError
from tosaconv.ir.ops import Op
from tosaconv.ir.verifier import check

from .harness import F32, I32, assert_close, check_with_onnxruntime, const, convert, info, make_model, rand
from .harness import run_graph

SYM = ["N", 3, "H", "W"]
SHAPES = [(1, 3, 5, 7), (2, 3, 4, 6)]
CTMS = ["half_pixel", "asymmetric", "pytorch_half_pixel", "half_pixel_symmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def _resize(dims, scales=None, sizes=None, opset=19, elem=F32, **attrs):
    names, inits = ["x", "", "", ""], []
    if scales is not None:
        names[2] = "scales"
        inits.append(const("scales", np.array(scales, np.float32)))
    if sizes is not None:
        names[3] = "sizes"
        inits.append(const("sizes", np.array(sizes, np.int64)))
    if opset == 11:   # roi and scales are required inputs (they may be empty)
        names[1] = "roi"
        inits.append(const("roi", np.zeros((0,), np.float32)))
    if opset == 11 and scales is None:
        names[2] = "no_scales"
        inits.append(const("no_scales", np.zeros((0,), np.float32)))
    node = helper.make_node("Resize", names[:4 if sizes is not None else 3], ["y"], name="resize", **attrs)
    return make_model([node], [info("x", elem, dims)], [info("y", elem, None)], inits, opset)


def _feeds(*shapes):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


def _resize_op(graph):
    return next(o for o in graph.ops if o.op is Op.RESIZE)


INTEGER_SCALES = [[1, 1, 2, 2], [1, 1, 3, 2], [1, 1, 1, 4]]
# asymmetric 'ceil' at 4x reads past the last pixel: see UNSUPPORTED
NEAREST_CASES = [(c, m, s) for c in CTMS for m in NEAREST_MODES for s in INTEGER_SCALES
                 if not (c == "asymmetric" and m == "ceil" and max(s) >= 4)]


@pytest.mark.parametrize("ctm,nearest_mode,scales", NEAREST_CASES, ids=str)
def test_nearest_integer_scales_on_symbolic_sizes(ctm, nearest_mode, scales):
    model = _resize(SYM, scales, mode="nearest", coordinate_transformation_mode=ctm, nearest_mode=nearest_mode)
    check(check_with_onnxruntime(model, _feeds(*SHAPES)))


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("scales", INTEGER_SCALES, ids=str)
def test_linear_integer_scales_on_symbolic_sizes(ctm, scales):
    model = _resize(SYM, scales, mode="linear", coordinate_transformation_mode=ctm)
    check(check_with_onnxruntime(model, _feeds(*SHAPES)))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("ctm", CTMS + ["align_corners"])
@pytest.mark.parametrize("sizes", [[1, 3, 10, 14], [1, 3, 8, 4], [1, 3, 1, 7], [1, 3, 2, 3], [1, 3, 5, 21]],
                         ids=str)
def test_sizes_on_static_input(mode, ctm, sizes):
    model = _resize([1, 3, 5, 7], sizes=sizes, mode=mode, coordinate_transformation_mode=ctm)
    check_with_onnxruntime(model, _feeds(SHAPES[0]))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("ctm", CTMS + ["align_corners"])
@pytest.mark.parametrize("scales", [[1, 1, 0.5, 0.5], [1, 1, 1.5, 0.25], [1, 1, 2, 3]], ids=str)
def test_dyadic_scales_on_static_input(mode, ctm, scales):
    model = _resize([1, 3, 4, 8], scales, mode=mode, coordinate_transformation_mode=ctm)
    check_with_onnxruntime(model, [{"x": rand(1, 3, 4, 8)}])


@pytest.mark.parametrize("opset", [11, 13, 18, 19])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_opsets(opset, mode):
    scales = [1, 1, 2, 2]
    check_with_onnxruntime(_resize(SYM, scales, opset=opset, mode=mode), _feeds(*SHAPES))
    check_with_onnxruntime(_resize([1, 3, 5, 7], sizes=[1, 3, 9, 4], opset=opset, mode=mode), _feeds(SHAPES[0]))


@pytest.mark.parametrize("axes,values", [([2, 3], [2, 3]), ([3, 2], [3, 2]), ([-1], [2])], ids=str)
def test_axes_attribute(axes, values):
    check_with_onnxruntime(_resize(SYM, values, opset=18, axes=axes), _feeds(*SHAPES))


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_keep_aspect_ratio_policy(policy, mode):
    model = _resize([1, 3, 5, 7], sizes=[8, 9], opset=18, axes=[2, 3], keep_aspect_ratio_policy=policy, mode=mode)
    check_with_onnxruntime(model, _feeds(SHAPES[0]))


def test_sizes_computed_from_the_input_shape():
    """Shape -> Mul -> Resize(sizes): the output is 2*H x 2*W, a known multiple of the input."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Mul", ["s", "two"], ["s2"]),
             helper.make_node("Resize", ["x", "", "", "s2"], ["y"], mode="linear")]
    model = make_model(nodes, [info("x", F32, SYM)], [info("y", F32, None)],
                       [const("two", np.array([1, 1, 2, 2], np.int64))])
    graph = check_with_onnxruntime(model, _feeds(*SHAPES))
    assert _resize_op(graph).attrs.scale == (4, 2, 4, 2)


def test_common_parameters():
    """half_pixel x2 bilinear is scale 4/2 with offset -1 (x_src = (2x - 1) / 4); asymmetric x2 with
    nearest_mode floor rounds x/2 - 1/2 half up: scale 2/1, offset -1."""
    op = _resize_op(convert(_resize(SYM, [1, 1, 2, 2], mode="linear")))
    assert (op.attrs.scale, op.attrs.offset, op.attrs.border, op.attrs.mode) == ((4, 2, 4, 2), (-1, -1),
                                                                                  (1, 1), "BILINEAR")
    op = _resize_op(convert(_resize(SYM, [1, 1, 2, 2], mode="nearest", coordinate_transformation_mode="asymmetric",
                                    nearest_mode="floor")))
    assert op.attrs.mode == "NEAREST" and op.attrs.offset == (-1, -1) and op.attrs.scale == (2, 1, 2, 1)


def test_identity_resize_is_no_resize():
    graph = convert(_resize(SYM, [1, 1, 1, 1]))
    assert "RESIZE" not in graph.histogram()


# -- ONNX's reference where onnxruntime differs ---------------------------------------------------

REFERENCE_ONLY = [
    # align_corners with scales: the reference divides by the fractional length in*scale - 1
    ([1, 1, 0.6, 1.5], dict(mode="linear", coordinate_transformation_mode="align_corners")),
    ([1, 1, 0.6, 1.5], dict(mode="nearest", coordinate_transformation_mode="align_corners")),
    # a non-dyadic scale: in float64, 1.5 / 0.6000000238 - 0.5 is just below 2
    ([1, 1, 0.6, 1.5], dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="floor")),
]


@pytest.mark.parametrize("scales,attrs", REFERENCE_ONLY, ids=str)
def test_follows_the_onnx_reference_where_onnxruntime_differs(scales, attrs):
    model = _resize([1, 3, 5, 7], scales, **attrs)
    x = rand(1, 3, 5, 7)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert_close(run_graph(convert(model), {"x": x})[0], want, 1e-5, 1e-6)


# -- refusals (test_nn_resize_matrix.py covers what the interpolation matrices take over) -------------------

def test_align_corners_on_integer_data_needs_a_static_size():
    with pytest.raises(ConversionError, match="align_corners needs a static input size") as err:
        convert(_resize(SYM, [1, 1, 2, 2], elem=I32, coordinate_transformation_mode="align_corners"))
    assert err.value.diagnostics[0].location.name == "resize"


def test_nearest_reading_past_the_last_pixel_on_integer_data():
    model = _resize([1, 3, 5, 7], [1, 1, 4, 2], elem=I32, coordinate_transformation_mode="asymmetric",
                    nearest_mode="ceil")
    with pytest.raises(ConversionError, match="reads past the last input pixel"):
        convert(model)


def test_linear_integer_data_is_refused():
    with pytest.raises(ConversionError, match="linear Resize on i32"):
        convert(_resize(SYM, [1, 1, 2, 2], elem=I32, mode="linear"))


def test_runtime_scales_are_refused():
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"])
    model = make_model([node], [info("x", F32, SYM), info("scales", F32, [4])], [info("y", F32, None)])
    with pytest.raises(ConversionError, match="scales 'scales': input scales not a constant is not supported"):
        convert(model)


def test_nearest_integer_data():
    model = _resize(SYM, [1, 1, 2, 3], elem=I32, mode="nearest")
    feeds = [{"x": np.arange(np.prod(s)).reshape(s).astype(np.int32)} for s in SHAPES]
    check_with_onnxruntime(model, feeds)
