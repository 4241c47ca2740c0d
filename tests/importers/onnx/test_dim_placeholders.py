"""ONNX dim_param placeholders (``?``, ``-1``, ``None``, ``unk__7``, ''): one fresh symbol per axis.

Paddle2ONNX writes ``?`` on every dynamic axis of an image input; tying those axes to one symbol
would refuse a 48x192 image that onnxruntime runs. The rule lives in
``tosaconv/importers/onnx/dim_names.py``; real names that repeat (``batch``) stay tied.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv.importers.onnx.dim_names import is_placeholder

from .harness import F32, check_with_onnxruntime, const, convert, info, make_model, rand


@pytest.mark.parametrize("text, placeholder", [
    ("?", True), ("", True), ("  ", True), ("-1", True), ("0", True), ("None", True), ("none", True),
    ("null", True), ("unk__123", True), ("unk__0", True), ("Unknown", True), ("dynamic", True), ("*", True),
    ("batch", False), ("N", False), ("seq_len", False), ("s0", False), ("unk__x", False), ("height", False),
    ("batch_size", False), ("x.2", False),
])
def test_placeholder_rule(text, placeholder):
    assert is_placeholder(text) is placeholder


def paddle_conv_model(placeholder: str = "?"):
    """x: [?, 3, ?, ?] -> Conv 3x3 (pad 1) -> Relu -> y: [?, 4, ?, ?], as Paddle2ONNX writes it."""
    w = np.random.default_rng(1).uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu0")]
    p = placeholder
    return make_model(nodes, [info("x", F32, [p, 3, p, p])], [info("y", F32, [p, 4, p, p])], [const("w", w)])


@pytest.mark.parametrize("placeholder", ["?", "-1", "None", "unk__12", ""])
def test_placeholders_become_one_symbol_per_axis(placeholder):
    graph = convert(paddle_conv_model(placeholder))
    assert sorted(graph.scope.symbols) == ["x.0", "x.2", "x.3"]
    assert [str(d) for d in graph.inputs[0].type.shape] == ["x.0", "3", "x.2", "x.3"]


def test_paddle_question_marks_convert_and_match_onnxruntime():
    check_with_onnxruntime(paddle_conv_model(), [{"x": rand(1, 3, 48, 192)}, {"x": rand(2, 3, 17, 5, seed=1)}])


def test_repeated_real_names_stay_tied_and_placeholders_do_not():
    """Concat of a: [batch, ?] and b: [batch, ?] on axis 1: batch is one symbol, the ?s are two."""
    nodes = [helper.make_node("Concat", ["a", "b"], ["y"], name="cat0", axis=1)]
    model = make_model(nodes, [info("a", F32, ["batch", "?"]), info("b", F32, ["batch", "?"])],
                       [info("y", F32, ["batch", "?"])])
    graph = check_with_onnxruntime(model, [{"a": rand(2, 3), "b": rand(2, 5, seed=1)},
                                           {"a": rand(4, 7), "b": rand(4, 1, seed=1)}])
    assert sorted(graph.scope.symbols) == ["a.1", "b.1", "batch"]
