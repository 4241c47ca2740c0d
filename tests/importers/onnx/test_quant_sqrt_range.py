"""A Sqrt whose TABLE is NaN on part of its input scale folds only when no input reaches that part.

silero's spectrum magnitude is ``Sqrt(Pow(re, 2) + Pow(im, 2))``; quantized with a symmetric int8 scale
the Add's result has zero point 0, so sqrt of the negative half of that scale is NaN, but a sum of two
squares never gets there: the integer program proves it (lowering.int_range) and the Sqrt is one TABLE.
The result agrees with onnxruntime (node by node) within one unit, and the reference model runs it bit for
bit like our interpreter. A Sqrt of a tensor that can be negative stays float, saying why.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .harness import check_reference_model, const, convert, rand, run_graph, run_onnxruntime, specialize_and_emit
from .harness import info as vinfo
from .quant_models import I8, finish
from .test_quant_qdq_ops import assert_within_one_lsb
from .test_quant_qdq_rules import _float_ops

F = TensorProto.FLOAT
SHAPE = [2, 3, 40]


def _q(name: str, src: str, scale: float) -> tuple:
    """Initializers and QuantizeLinear + DequantizeLinear (symmetric int8) of ``src`` -> ``name``."""
    inits = [const(name + "_s", np.float32(scale)), const(name + "_z", np.int8(0))]
    args = [name + "_s", name + "_z"]
    return inits, [helper.make_node("QuantizeLinear", [src, *args], [name + "_q"]),
                   helper.make_node("DequantizeLinear", [name + "_q", *args], [name])]


def _magnitude_model():
    parts = [_q("re_d", "re", 0.03), _q("im_d", "im", 0.02), _q("re2_d", "re2", 0.04), _q("im2_d", "im2", 0.03),
             _q("sum_d", "sum", 0.05)]
    inits = [i for p in parts for i in p[0]] + [const("two", np.float32(2.0))]
    q = {n.output[0]: n for p in parts for n in p[1]}
    nodes = [q["re_d_q"], q["re_d"], q["im_d_q"], q["im_d"],
             helper.make_node("Pow", ["re_d", "two"], ["re2"]), helper.make_node("Pow", ["im_d", "two"], ["im2"]),
             q["re2_d_q"], q["re2_d"], q["im2_d_q"], q["im2_d"],
             helper.make_node("Add", ["re2_d", "im2_d"], ["sum"]), q["sum_d_q"], q["sum_d"],
             helper.make_node("Sqrt", ["sum_d"], ["c"])]
    return finish(nodes, inits, [vinfo("re", F, SHAPE), vinfo("im", F, SHAPE)], I8, 0.03)


def test_sqrt_of_a_sum_of_squares_is_one_table_and_agrees(tmp_path):
    model = _magnitude_model()
    graph = convert(model)
    assert not _float_ops(graph), [str(op) for op in _float_ops(graph)]
    feeds = {"re": rand(*SHAPE, low=-4, high=4, seed=1), "im": rand(*SHAPE, low=-3, high=3, seed=2)}
    (got,), (want,) = run_graph(graph, feeds), run_onnxruntime(model, feeds, optimize=False)
    assert len(np.unique(want)) > 40, "a saturated output proves little"
    assert_within_one_lsb(got, want, "Sqrt(re^2 + im^2)")
    static, tosa = specialize_and_emit(graph, {k: v.shape for k, v in feeds.items()})
    check_reference_model(tosa, static, feeds, [got], tmp_path)


def test_sqrt_of_a_tensor_that_can_be_negative_stays_float_with_its_reason():
    inits, nodes = _q("x_d", "x", 0.03)
    model = finish(nodes + [helper.make_node("Sqrt", ["x_d"], ["c"])], inits, [vinfo("x", F, SHAPE)], I8, 0.03)
    graph = convert(model)
    assert _float_ops(graph)
    reasons = " ".join(graph.float_reasons.values())
    assert "NaN for some input value that the input can take" in reasons, reasons
