"""Dynamic-shape idioms as real exporters write them (PyTorch, tf2onnx, Paddle2ONNX).

Each model computes shapes from ``Shape`` at run time; tosaconv must resolve
the chain into helper ops on symbols, and after binding decay it to static
TOSA with no helper op left. Every case is compared with onnxruntime at
several bindings, both as the symbolic program and as the emitted ``.tosa``
(``check_with_onnxruntime`` does both), and the specialized program is
checked to contain only TOSA ops.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from tosaconv.ir.ops import Trait

from .harness import (F32, check_with_onnxruntime, const, info, make_model, rand,
                      specialize_and_emit)


def _n(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, name=f"{op}_{outputs[0]}", **attrs)


def _check(model, feed_sets):
    graph = check_with_onnxruntime(model, feed_sets)
    static, _ = specialize_and_emit(graph, {k: v.shape for k, v in feed_sets[0].items()})
    helpers = [op.op.name for op in static.ops if op.op.tosa is None]
    assert not helpers, f"helper ops left after specialization: {helpers}"
    return graph


def test_causal_attention_mask_built_from_seq():
    """PyTorch: mask = arange(seq)[None, :] > arange(seq)[:, None]; scores.masked_fill(mask, -inf)."""
    nodes = [_n("Shape", ["scores"], ["shp"]), _n("Gather", ["shp", "two"], ["seq"], axis=0),
             _n("Range", ["zero", "seq", "one"], ["r"]),
             _n("Unsqueeze", ["r", "ax0"], ["row"]), _n("Unsqueeze", ["r", "ax1"], ["col"]),
             _n("Greater", ["row", "col"], ["mask"]),
             _n("Where", ["mask", "neg", "scores"], ["masked"]), _n("Softmax", ["masked"], ["y"], axis=-1)]
    inits = [const("two", np.array(2, np.int64)), const("zero", np.array(0, np.int64)),
             const("one", np.array(1, np.int64)), const("ax0", np.array([0], np.int64)),
             const("ax1", np.array([1], np.int64)), const("neg", np.array(-1e9, np.float32))]
    model = make_model(nodes, [info("scores", F32, ["batch", "heads", "seq", "seq"])], [info("y", F32, None)],
                       inits, opset=13)
    _check(model, [{"scores": rand(b, 2, s, s, seed=s)} for b, s in ((1, 1), (2, 5), (1, 8))])


def test_view_with_halved_dim_and_minus_one():
    """PyTorch: x.view(x.size(0), x.size(1) // 2, -1)."""
    nodes = [_n("Shape", ["x"], ["shp"]), _n("Gather", ["shp", "i0"], ["d0"], axis=0),
             _n("Gather", ["shp", "i1"], ["d1"], axis=0), _n("Div", ["d1", "two"], ["half"]),
             _n("Unsqueeze", ["d0", "ax0"], ["u0"]), _n("Unsqueeze", ["half", "ax0"], ["u1"]),
             _n("Concat", ["u0", "u1", "minus1"], ["target"], axis=0), _n("Reshape", ["x", "target"], ["y"])]
    inits = [const("i0", np.array(0, np.int64)), const("i1", np.array(1, np.int64)),
             const("two", np.array(2, np.int64)), const("ax0", np.array([0], np.int64)),
             const("minus1", np.array([-1], np.int64))]
    model = make_model(nodes, [info("x", F32, ["b", "c", "w"])], [info("y", F32, None)], inits, opset=13)
    _check(model, [{"x": rand(b, c, w, seed=c)} for b, c, w in ((1, 2, 3), (2, 6, 5), (3, 4, 1))])


def test_constant_of_shape_of_a_computed_shape_then_expand():
    """tf2onnx: zeros(batch, 2*seq) then broadcast against an input of that shape."""
    nodes = [_n("Shape", ["x"], ["shp"]), _n("Slice", ["shp", "s0", "s1"], ["b"]),
             _n("Slice", ["shp", "s1", "s2"], ["s"]), _n("Mul", ["s", "two"], ["s2x"]),
             _n("Concat", ["b", "s2x"], ["target"], axis=0),
             _n("ConstantOfShape", ["target"], ["zeros"], value=helper.make_tensor("v", 1, [1], [0.5])),
             _n("Concat", ["x", "x"], ["xx"], axis=1), _n("Add", ["zeros", "xx"], ["sum"]),
             _n("Expand", ["bias", "target"], ["bb"]), _n("Mul", ["sum", "bb"], ["y"])]
    inits = [const("s0", np.array([0], np.int64)), const("s1", np.array([1], np.int64)),
             const("s2", np.array([2], np.int64)), const("two", np.array([2], np.int64)),
             const("bias", np.array([3.0], np.float32))]
    model = make_model(nodes, [info("x", F32, ["batch", "seq"])], [info("y", F32, None)], inits, opset=13)
    _check(model, [{"x": rand(b, s, seed=s)} for b, s in ((1, 1), (2, 7))])


def test_shape_cast_to_float_and_back():
    """tf2onnx: Cast(Shape) to float, scale, Floor, Cast back to int64 for a Reshape target."""
    nodes = [_n("Shape", ["x"], ["shp"]), _n("Cast", ["shp"], ["fshp"], to=1),
             _n("Mul", ["fshp", "scale"], ["scaled"]), _n("Floor", ["scaled"], ["fl"]),
             _n("Cast", ["fl"], ["ishp"], to=7), _n("Reshape", ["x", "ishp"], ["y"])]
    inits = [const("scale", np.array([1.0, 2.0, 0.5], np.float32))]
    model = make_model(nodes, [info("x", F32, ["a", "b", 4])], [info("y", F32, None)], inits, opset=13)
    _check(model, [{"x": rand(a, b, 4, seed=a)} for a, b in ((1, 3), (2, 5))])


def test_paddle_style_upsample_to_twice_the_input_size():
    """Paddle2ONNX: Resize with sizes = Concat(Shape[:2], Shape[2:] * 2)."""
    nodes = [_n("Shape", ["x"], ["shp"]), _n("Slice", ["shp", "s0", "s2"], ["nc"]),
             _n("Slice", ["shp", "s2", "s4"], ["hw"]), _n("Mul", ["hw", "two"], ["hw2"]),
             _n("Concat", ["nc", "hw2"], ["sizes"], axis=0),
             _n("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest")]
    inits = [const("s0", np.array([0], np.int64)), const("s2", np.array([2], np.int64)),
             const("s4", np.array([4], np.int64)), const("two", np.array([2], np.int64))]
    model = make_model(nodes, [info("x", F32, ["n", 3, "h", "w"])], [info("y", F32, None)], inits, opset=13)
    _check(model, [{"x": rand(n, 3, h, w, seed=h)} for n, h, w in ((1, 4, 6), (2, 5, 3))])


def test_position_ids_from_range_over_seq_gathered_from_a_table():
    """PyTorch: position_ids = arange(seq); emb = table[position_ids] + tokens."""
    nodes = [_n("Shape", ["tokens"], ["shp"]), _n("Gather", ["shp", "one"], ["seq"], axis=0),
             _n("Range", ["zero", "seq", "one"], ["pos"]), _n("Gather", ["table", "pos"], ["emb"], axis=0),
             _n("Add", ["tokens", "emb"], ["y"])]
    inits = [const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64)),
             const("table", rand(16, 8, seed=3))]
    model = make_model(nodes, [info("tokens", F32, ["batch", "seq", 8])], [info("y", F32, None)], inits, opset=13)
    graph = _check(model, [{"tokens": rand(b, s, 8, seed=s)} for b, s in ((1, 1), (2, 9), (3, 16))])
    assert any(op.op.has(Trait.DATA_DEPENDENT) or op.op.has(Trait.SHAPE_HELPER) for op in graph.ops)


def test_paddle_reshape_of_a_shape_element_to_a_scalar_keeps_it_symbolic():
    """Paddle2ONNX (PP-OCR rec): Slice(Shape) -> Squeeze -> Reshape(d, []) -> Unsqueeze ->
    Concat([0, 1, d, 120]) -> Reshape, where the 0 copies the input's batch dim."""
    nodes = [_n("Shape", ["x"], ["shp"]), _n("Slice", ["shp", "s1", "s2"], ["w1"]),
             _n("Squeeze", ["w1", "ax0"], ["w"]), _n("Reshape", ["w", "empty"], ["ws"]),
             _n("Unsqueeze", ["ws", "ax0"], ["wv"]), _n("Concat", ["zero", "one", "wv", "c"], ["target"], axis=0),
             _n("Reshape", ["x", "target"], ["y"])]
    inits = [const("s1", np.array([1], np.int64)), const("s2", np.array([2], np.int64)),
             const("ax0", np.array([0], np.int64)), const("empty", np.zeros(0, np.int64)),
             const("zero", np.array([0], np.int64)), const("one", np.array([1], np.int64)),
             const("c", np.array([6], np.int64))]
    model = make_model(nodes, [info("x", F32, ["n", "w", 6])], [info("y", F32, None)], inits, opset=13)
    _check(model, [{"x": rand(n, w, 6, seed=w)} for n, w in ((1, 3), (2, 8))])
