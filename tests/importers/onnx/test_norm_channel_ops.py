"""InstanceNormalization, GroupNormalization (opset 18: scale per group;
opset 21: scale per channel, stash_type), LpNormalization (p = 1 and 2,
rows whose norm is 0), MeanVarianceNormalization (default and explicit
axes) and Hardmax (the flatten-to-2-D semantics before opset 13, the single
axis after, ties) against onnxruntime on symbolic input dims run at several
shapes. Also the clear errors: channels that do not divide into the groups
(statically, and for a symbolic channel count once it is bound), an
unsupported Lp order.
"""
from __future__ import annotations

import numpy as np
import pytest

import tosaconv.api as api
from tosaconv.diagnostics import TosaconvError

from .harness import F32, check_with_onnxruntime, const, convert, info, one_node, rand

# Every instance has more than one element: a one-element block has variance 0, where onnxruntime's
# E[x^2] - E[x]^2 leaves rounding noise (which its tiny epsilon then amplifies, or a NaN).
NCHW = [(2, 4, 3, 5), (1, 4, 1, 2), (3, 4, 2, 1)]


def _nchw_feeds(shapes=NCHW, scale=2.0):
    return [{"x": rand(*s, low=-scale, high=scale, seed=i)} for i, s in enumerate(shapes)]


def _channel_consts(c, seed=3):
    rng = np.random.default_rng(seed)
    return (const("scale", rng.uniform(0.5, 1.5, c).astype(np.float32)),
            const("bias", rng.uniform(-1, 1, c).astype(np.float32)))


@pytest.mark.parametrize("opset", [11, 17, 21])
@pytest.mark.parametrize("epsilon", [None, 1e-2])
def test_instance_normalization(opset, epsilon):
    attrs = {} if epsilon is None else {"epsilon": epsilon}
    model = one_node("InstanceNormalization", [info("x", F32, ["N", 4, "H", "W"])], [info("y", F32, None)],
                     list(_channel_consts(4)), opset=opset, **attrs)
    check_with_onnxruntime(model, _nchw_feeds())


def test_instance_normalization_3d_input():
    model = one_node("InstanceNormalization", [info("x", F32, ["N", 3, "L"])], [info("y", F32, None)],
                     list(_channel_consts(3)), opset=17)
    check_with_onnxruntime(model, [{"x": rand(2, 3, 7)}, {"x": rand(1, 3, 2, seed=1)}])


@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization(groups, opset):
    params = _channel_consts(4 if opset >= 21 else groups)
    model = one_node("GroupNormalization", [info("x", F32, ["N", 4, "H", "W"])], [info("y", F32, None)],
                     list(params), opset=opset, num_groups=groups, epsilon=1e-3)
    check_with_onnxruntime(model, _nchw_feeds(scale=5.0))


def test_group_normalization_with_symbolic_channels():
    model = one_node("GroupNormalization", [info("x", F32, ["N", "C", "L"]), info("scale", F32, ["C"]),
                                            info("bias", F32, ["C"])],
                     [info("y", F32, None)], opset=21, num_groups=2)
    feeds = [{"x": rand(2, c, 5, seed=c), "scale": rand(c, seed=10 + c), "bias": rand(c, seed=20 + c)}
             for c in (4, 6)]
    check_with_onnxruntime(model, feeds)


def test_group_normalization_with_indivisible_channels_is_refused():
    model = one_node("GroupNormalization", [info("x", F32, ["N", 6, "L"])], [info("y", F32, None)],
                     list(_channel_consts(6)), opset=21, num_groups=4)
    with pytest.raises(TosaconvError, match="divide into 4 groups"):
        convert(model)


def test_group_normalization_binding_indivisible_channels_is_refused():
    model = one_node("GroupNormalization", [info("x", F32, ["N", "C", "L"]), info("scale", F32, ["C"]),
                                            info("bias", F32, ["C"])],
                     [info("y", F32, None)], opset=21, num_groups=2)
    graph = convert(model)
    with pytest.raises(TosaconvError, match=r"C % 2 == 0 does not hold") as failure:
        api.specialize(graph, {"N": 1, "C": 5, "L": 3})
    assert "the channels divide into 2 groups" in failure.value.diagnostics[0].notes[0]


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_lp_normalization(p, axis):
    model = one_node("LpNormalization", [info("x", F32, ["N", 3, "W"])], [info("y", F32, None)], opset=17,
                     p=p, axis=axis)
    feeds = [{"x": rand(*s, seed=i)} for i, s in enumerate([(2, 3, 4), (1, 3, 1)])]
    zeros = rand(2, 3, 4)
    zeros[:, :, 1] = 0.0
    zeros[1, :, :] = 0.0
    zeros[:, 2, :] = 0.0
    check_with_onnxruntime(model, feeds + [{"x": zeros}])


def test_lp_normalization_of_order_three_is_refused():
    model = one_node("LpNormalization", [info("x", F32, ["N", 3])], [info("y", F32, None)], opset=17, p=3)
    with pytest.raises(TosaconvError, match="p = 1 or 2"):
        convert(model)


@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3], [-1, -2]], ids=str)
@pytest.mark.parametrize("opset", [11, 13, 21])
def test_mean_variance_normalization(axes, opset):
    attrs = {} if axes is None else {"axes": axes}
    model = one_node("MeanVarianceNormalization", [info("x", F32, ["N", 4, "H", "W"])], [info("y", F32, None)],
                     opset=opset, **attrs)
    check_with_onnxruntime(model, _nchw_feeds(), atol=1e-4)


@pytest.mark.parametrize("opset", [11, 12, 13, 21])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_hardmax(opset, axis):
    attrs = {} if axis is None else {"axis": axis}
    model = one_node("Hardmax", [info("x", F32, ["N", 4, "H", "W"])], [info("y", F32, None)], opset=opset, **attrs)
    feeds = [{"x": np.random.default_rng(i).integers(-2, 3, s).astype(np.float32)} for i, s in enumerate(NCHW)]
    check_with_onnxruntime(model, feeds)
