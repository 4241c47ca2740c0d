"""ONNX Resize as interpolation-matrix MATMULs (what TOSA RESIZE cannot express), against
onnxruntime: cubic in every coordinate_transformation_mode (cubic_coeff_a, exclude_outside),
antialias, tf_crop_and_resize with its extrapolation value, opset 18's axes and
keep_aspect_ratio_policy, opset 11's tf_half_pixel_for_nn, and the float resizes that fall back
from RESIZE (the batch or channel axis, scales that are not small fractions, borders that depend
on a symbolic size, TOSA's scale limits). Symbolic H and W become INTERP_MATRIX helper ops that
decay to constants when bound; those models run at two shapes and through specialization. Where
onnxruntime and ONNX's reference disagree (tf_crop_and_resize with scales), the reference is the
judge. Also what stays refused.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tosaconv import api
from tosaconv.diagnostics import ConversionError
from tosaconv.ir.verifier import check

from .harness import F32, I32, assert_close, check_with_onnxruntime, const, convert, info, make_model, rand
from .harness import run_graph
from .test_nn_resize import _resize

SYM = ["N", 3, "H", "W"]
SHAPES = [(1, 3, 4, 6), (2, 3, 6, 8)]       # every scale below gives an integer in*scale on both
CTMS = ["half_pixel", "pytorch_half_pixel", "asymmetric", "half_pixel_symmetric", "align_corners"]


def _feeds(*shapes):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


def _check_symbolic(model, shapes=SHAPES):
    """onnxruntime at every shape, before and after specialization (INTERP_MATRIX decays to a CONST)."""
    graph = check_with_onnxruntime(model, _feeds(*shapes))
    check(graph)
    assert "INTERP_MATRIX" in graph.histogram()
    for feeds in _feeds(*shapes):
        static = api.specialize(graph, api.solve_bindings(graph, {"x": feeds["x"].shape}))
        assert "INTERP_MATRIX" not in static.histogram() and "MATMUL" in static.histogram()
        assert_close(run_graph(static, feeds)[0], run_graph(graph, feeds)[0], 1e-6, 1e-6)
    return graph


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 0.5, 1.5]], ids=str)
def test_cubic_every_coordinate_mode_on_symbolic_sizes(ctm, scales):
    _check_symbolic(_resize(SYM, scales, mode="cubic", coordinate_transformation_mode=ctm))


@pytest.mark.parametrize("a,exclude", [(-0.5, 1), (-0.75, 0), (-0.6, 1)])
@pytest.mark.parametrize("sizes", [[1, 3, 9, 4], [1, 3, 2, 13]], ids=str)
def test_cubic_coefficient_and_exclude_outside(a, exclude, sizes):
    model = _resize([1, 3, 5, 7], sizes=sizes, mode="cubic", cubic_coeff_a=a, exclude_outside=exclude)
    check_with_onnxruntime(model, _feeds((1, 3, 5, 7)))


@pytest.mark.parametrize("opset", [11, 13, 18, 19])
def test_cubic_opsets(opset):
    check_with_onnxruntime(_resize([1, 3, 5, 7], [1, 1, 2, 3], opset=opset, mode="cubic"), _feeds((1, 3, 5, 7)))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scales", [[1, 1, 0.5, 0.5], [1, 1, 0.6, 0.3], [1, 1, 0.25, 2]], ids=str)
def test_antialias_on_static_sizes(mode, scales):
    model = _resize([1, 3, 10, 20], scales, opset=18, mode=mode, antialias=1)
    check_with_onnxruntime(model, _feeds((1, 3, 10, 20)))


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_on_symbolic_sizes(mode):
    _check_symbolic(_resize(SYM, [1, 1, 0.5, 0.5], opset=18, mode=mode, antialias=1))


def _crop_model(roi, sizes=None, scales=None, axes=None, opset=13, dims=(1, 3, 5, 7), **attrs):
    names, inits = ["x", "roi", "", ""], [const("roi", np.array(roi, np.float32))]
    if scales is not None:
        names[2] = "scales"
        inits.append(const("scales", np.array(scales, np.float32)))
    if sizes is not None:
        names[3] = "sizes"
        inits.append(const("sizes", np.array(sizes, np.int64)))
    kw = {} if axes is None else {"axes": axes}
    node = helper.make_node("Resize", names if sizes is not None else names[:3], ["y"],
                            coordinate_transformation_mode="tf_crop_and_resize", **kw, **attrs)
    return make_model([node], [info("x", F32, list(dims))], [info("y", F32, None)], inits, opset)


CROPS = [
    dict(roi=[0, 0, 0.2, 0.1, 1, 1, 0.9, 1.3], sizes=[1, 3, 4, 6], extrapolation_value=10.0),
    dict(roi=[0, 0, -0.3, 0.1, 1, 1, 0.9, 0.8], sizes=[1, 3, 7, 3]),
    dict(roi=[0.1, 0.3, 1.2, 0.9], sizes=[6, 4], axes=[3, 2], opset=18, extrapolation_value=-2.0, dims=("N", 3, 5, 7)),
]


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("attrs", CROPS, ids=lambda a: str(a["roi"]))
def test_tf_crop_and_resize(mode, attrs):
    shapes = [(1, 3, 5, 7)] + ([(2, 3, 5, 7)] if "N" in attrs.get("dims", ()) else [])
    check_with_onnxruntime(_crop_model(mode=mode, **attrs), _feeds(*shapes))


def test_tf_crop_and_resize_with_scales_follows_the_onnx_reference():
    model = _crop_model([0, 0, -0.2, 0.1, 1, 1, 0.9, 0.8], scales=[1, 1, 2, 1.5], mode="linear",
                        extrapolation_value=-1.0)
    x = rand(1, 3, 5, 7)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    assert_close(run_graph(convert(model), {"x": x})[0], want, 1e-5, 1e-6)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_cubic_keep_aspect_ratio_policy(policy):
    model = _resize([1, 3, 5, 7], sizes=[8, 9], opset=18, axes=[2, 3], keep_aspect_ratio_policy=policy, mode="cubic")
    check_with_onnxruntime(model, _feeds((1, 3, 5, 7)))


def test_cubic_axes_attribute():
    check_with_onnxruntime(_resize(SYM, [3, 0.5], opset=18, axes=[3, 2], mode="cubic"), _feeds(*SHAPES))


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 0.5, 1.5]], ids=str)
def test_tf_half_pixel_for_nn(mode, scales):
    model = _resize([1, 3, 4, 6], scales, opset=11, mode=mode, coordinate_transformation_mode="tf_half_pixel_for_nn")
    check_with_onnxruntime(model, _feeds((1, 3, 4, 6)))


FALLBACKS = [   # float resizes with no TOSA RESIZE form: the interpolation matrices take over
    (SYM, dict(scales=[1, 2, 2, 2])),                                     # the channel axis
    (SYM, dict(scales=[1, 1, 1.5, 2])),                                   # border depends on H
    (SYM, dict(scales=[1, 1, 1.5, 2], mode="linear")),
    (SYM, dict(scales=[1, 1, 2, 2], coordinate_transformation_mode="align_corners", mode="linear")),
]


@pytest.mark.parametrize("dims,attrs", FALLBACKS, ids=str)
def test_fallback_on_symbolic_sizes(dims, attrs):
    scales = attrs.pop("scales")
    _check_symbolic(_resize(dims, scales, **attrs))


@pytest.mark.parametrize("ctm", ["half_pixel", "asymmetric", "pytorch_half_pixel"])
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
def test_nearest_modes_in_the_matrix_form(ctm, nearest_mode):
    """Resizing C as well has no RESIZE form: one-hot interpolation matrices pick ONNX's pixels."""
    model = _resize(SYM, [1, 2, 1.5, 0.5], coordinate_transformation_mode=ctm, nearest_mode=nearest_mode)
    _check_symbolic(model)


@pytest.mark.parametrize("dims,attrs", [
    ([1, 3, 5, 7], dict(scales=[1, 1, 0.3333, 2])),                                    # not a small fraction
    ([1, 3, 5, 7], dict(scales=[1, 1, 4, 2], coordinate_transformation_mode="asymmetric", nearest_mode="ceil")),
    ([1, 3, 64, 64], dict(sizes=[1, 3, 2, 2])),                                        # a 16x downscale
    ([1, 3, 64, 64], dict(sizes=[1, 3, 3, 5], mode="linear")),
], ids=str)
def test_fallback_on_static_sizes(dims, attrs):
    scales, sizes = attrs.pop("scales", None), attrs.pop("sizes", None)
    graph = check_with_onnxruntime(_resize(dims, scales, sizes, **attrs), _feeds(tuple(dims)))
    assert "MATMUL" in graph.histogram() and "RESIZE" not in graph.histogram()


def test_an_unchanged_axis_costs_nothing():
    graph = convert(_resize(SYM, [1, 1, 1, 2], mode="cubic"))
    assert graph.histogram().get("MATMUL") == 1 and "TRANSPOSE" not in graph.histogram()


# -- what stays refused ---------------------------------------------------------------------

REFUSED = [
    (SYM, I32, dict(scales=[1, 1, 2, 2], mode="cubic"),
     "cubic Resize on i32 data: X of type int16 or int32 with mode linear, any integer with mode cubic is not supported"),
    (SYM, I32, dict(scales=[1, 2, 2, 2]), "batch or channel axis"),
    (SYM, I32, dict(scales=[1, 1, 1.5, 2]), "border depends on the size"),
    ([1, 3, 5, 7], I32, dict(scales=[1, 1, 0.3333, 2]), "not a fraction"),
    ([1, 3, 64, 64], I32, dict(sizes=[1, 3, 2, 2]), "16x or more"),
    ([1, 3, 5, 7], F32, dict(scales=[1, 1, 2, 2], coordinate_transformation_mode="tf_crop_and_resize"),
     "input roi not a constant \\(with tf_crop_and_resize\\) is not supported"),
    (SYM, F32, dict(sizes=[1, 3, 8, 9], opset=18, keep_aspect_ratio_policy="not_larger"), "needs static sizes"),
]


@pytest.mark.parametrize("dims,elem,attrs,message", REFUSED, ids=lambda v: str(v)[:50])
def test_refused_is_a_conversion_error(dims, elem, attrs, message):
    scales, sizes = attrs.pop("scales", None), attrs.pop("sizes", None)
    with pytest.raises(ConversionError, match=message) as err:
        convert(_resize(dims, scales, sizes, elem=elem, **attrs))
    assert err.value.diagnostics[0].location.name == "resize"


def test_tf_crop_and_resize_on_a_symbolic_axis_is_refused():
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="resize",
                            coordinate_transformation_mode="tf_crop_and_resize")
    inits = [const("roi", np.array([0, 0, 0.1, 0.2, 1, 1, 0.9, 0.8], np.float32)),
             const("sizes", np.array([1, 3, 4, 4], np.int64))]
    model = make_model([node], [info("x", F32, [1, 3, "H", 5])], [info("y", F32, None)], inits)
    with pytest.raises(ConversionError, match="tf_crop_and_resize on axis 2 of symbolic size H"):
        convert(model)
