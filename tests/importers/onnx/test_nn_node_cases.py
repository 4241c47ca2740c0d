"""The onnx package's node test cases for Conv, ConvTranspose, MaxPool,
AveragePool, GlobalAveragePool, MatMul, Gemm and Resize, imported and
evaluated by tosaconv and compared with the cases' expected outputs. Every
case either passes or is listed in ``UNSUPPORTED`` with the reason TOSA (or
tosaconv's scope) cannot express it, and then must fail to convert with a
conversion error saying so. Nothing is skipped. Resize's roi, scales and
sizes are graph inputs in these cases; tosaconv needs them at import time, so
they are frozen into initializers with the case's own values.
"""
from __future__ import annotations

import onnx
import pytest
from onnx import numpy_helper

from tosaconv.diagnostics import ConversionError

from .harness import CASE_ATOL, CASE_RTOL, assert_close, case_arrays, convert, node_cases, run_graph

OPS = ["Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "MatMul", "Gemm", "Resize"]
CASES = [c for op in OPS for c in node_cases(op)]

_RANK5 = "1-D and 2-D inputs .* not rank 5"               # 3-D pools/convolutions: out of scope
_POOL_DILATION = "TOSA pools have no dilation"
_CUBIC = "mode 'cubic' is not supported"
_CROP = "tf_crop_and_resize"

UNSUPPORTED = {
    "test_convtranspose_3d": _RANK5,
    "test_convtranspose_dilations": "TRANSPOSE_CONV2D has no dilation",
    "test_convtranspose_group_2": "group=2 is not supported",
    "test_convtranspose_group_2_image_3": "group=2 is not supported",
    "test_maxpool_2d_uint8": "element type UINT8",             # no unsigned TOSA tensors
    "test_maxpool_with_argmax_2d_precomputed_pads": "Indices output",
    "test_maxpool_with_argmax_2d_precomputed_strides": "Indices output",
    "test_maxpool_3d_default": _RANK5,
    "test_maxpool_2d_dilations": _POOL_DILATION,
    "test_maxpool_3d_dilations": _POOL_DILATION,
    "test_maxpool_3d_dilations_use_ref_impl": _POOL_DILATION,
    "test_maxpool_3d_dilations_use_ref_impl_large": _POOL_DILATION,
    "test_averagepool_3d_default": _RANK5,
    "test_averagepool_2d_dilations": _POOL_DILATION,
    "test_averagepool_3d_dilations_small": _POOL_DILATION,
    "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True": _POOL_DILATION,
    "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_False": _POOL_DILATION,
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True": _POOL_DILATION,
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_False": _POOL_DILATION,
    "test_resize_upsample_scales_cubic": _CUBIC,
    "test_resize_upsample_scales_cubic_align_corners": _CUBIC,
    "test_resize_upsample_scales_cubic_asymmetric": _CUBIC,
    "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside": _CUBIC,
    "test_resize_upsample_sizes_cubic": _CUBIC,
    "test_resize_downsample_scales_cubic": _CUBIC,
    "test_resize_downsample_scales_cubic_align_corners": _CUBIC,
    "test_resize_downsample_scales_cubic_A_n0p5_exclude_outside": _CUBIC,
    "test_resize_downsample_scales_cubic_antialias": _CUBIC,
    "test_resize_downsample_sizes_cubic": _CUBIC,
    "test_resize_downsample_sizes_cubic_antialias": _CUBIC,
    "test_resize_downsample_scales_linear_antialias": "no antialiasing filter",
    "test_resize_downsample_sizes_linear_antialias": "no antialiasing filter",
    "test_resize_tf_crop_and_resize": _CROP,
    "test_resize_tf_crop_and_resize_axes_2_3": _CROP,
    "test_resize_tf_crop_and_resize_axes_3_2": _CROP,
    "test_resize_tf_crop_and_resize_extrapolation_value": _CROP,
}


def _frozen(case) -> tuple:
    """(model, feeds, expected): Resize's roi/scales/sizes inputs become initializers."""
    inputs, outputs = case_arrays(case)
    feeds = {vi.name: a for vi, a in zip(case.model.graph.input, inputs)}
    model = onnx.ModelProto.FromString(case.model.SerializeToString())
    node = model.graph.node[0]
    frozen = {n for n in node.input[1:4] if n} & set(feeds) if node.op_type == "Resize" else set()
    keep = [vi for vi in model.graph.input if vi.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    model.graph.initializer.extend(numpy_helper.from_array(feeds[n], n) for n in sorted(frozen))
    return model, {k: v for k, v in feeds.items() if k not in frozen}, outputs


def test_every_op_has_cases_and_every_listed_case_exists():
    assert {op for op in OPS if node_cases(op)} == set(OPS)
    assert set(UNSUPPORTED) <= {c.name for c in CASES}


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in UNSUPPORTED], ids=lambda c: c.name)
def test_node_case(case):
    model, feeds, expected = _frozen(case)
    got = run_graph(convert(model), feeds)
    assert len(got) == len(expected)
    rtol, atol = max(CASE_RTOL, case.rtol), max(CASE_ATOL, case.atol)
    for i, (g, w) in enumerate(zip(got, expected)):
        assert_close(g, w, rtol, atol, f"{case.name} output {i}")


@pytest.mark.parametrize("case", [c for c in CASES if c.name in UNSUPPORTED], ids=lambda c: c.name)
def test_unsupported_case_is_a_conversion_error(case):
    model, _, _ = _frozen(case)
    with pytest.raises(ConversionError, match=UNSUPPORTED[case.name]):
        convert(model)
