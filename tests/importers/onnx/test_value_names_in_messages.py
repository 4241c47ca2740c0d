"""Messages name a computed tensor by the source op that makes it, never by its internal IR name.

The IR names a converter's values after the node plus a counter ('gt_2'), which
a user never saw; a message used to print that name ("because its input
('gt_2') depends on tensor data"). It now says "the output of Greater 'gt'"
(a model input keeps its own quoted name, which the user knows).
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError

from .harness import BOOL, F32, I64, convert, info, make_model

_INTERNAL = re.compile(r"'gt_\d+'")


def _greater_then_nonzero():
    nodes = [helper.make_node("Greater", ["x", "zero"], ["mask"], name="gt"),
             helper.make_node("NonZero", ["mask"], ["y"], name="nz")]
    zero = helper.make_tensor("zero", F32, [], [0.0])
    model = make_model(nodes, [info("x", F32, ["n"])], [info("y", I64, None)], opset=17)
    model.graph.initializer.append(zero)
    return model


def test_a_data_dependent_count_names_the_op_that_makes_its_input():
    graph = convert(_greater_then_nonzero())
    with pytest.raises(ShapeError) as err:
        api.specialize(graph, {"n": 4})
    message = err.value.diagnostics[0].message
    assert "because its input (the output of Greater 'gt') depends on tensor data" in message
    assert not _INTERNAL.search(message), message


def test_a_wrong_assumption_names_the_op_that_makes_the_data():
    graph = convert(_greater_then_nonzero())
    count = next(op.attrs.count for op in graph.ops if op.op.name == "NONZERO")
    static = api.specialize(graph, {"n": 4, count: 2})
    with pytest.raises(ShapeError) as err:
        api.run(static, {"x": np.array([1, 2, 3, -1], np.float32)})    # three positives, not two
    message = err.value.diagnostics[0].message
    assert message.endswith("finds 3 non-zero element(s) in the output of Greater 'gt'"), message
    assert not _INTERNAL.search(message), message


def test_a_model_input_keeps_its_own_name():
    nodes = [helper.make_node("NonZero", ["x"], ["y"], name="nz")]
    graph = convert(make_model(nodes, [info("x", BOOL, ["n"])], [info("y", I64, None)], opset=17))
    with pytest.raises(ShapeError, match=r"because its input \('x'\) depends on tensor data"):
        api.specialize(graph, {"n": 4})
