"""Chained warm-run steps (interpreter/chains.py) against numpy truth, and their failures' locations.

From the second run of a plan, neighbour steps whose intermediate value only the next one reads run as
one step. These graphs are run several times and every run compared with the same arithmetic done in
numpy (bit for bit, zeros with their sign); a value that is an output or read twice must not be joined
away; and a kernel failing inside a joined step is still reported at its own op.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError, evaluate
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from tests.interpreter.test_gates import gates
from tests.interpreter.test_plan_runs import SHAPE, hardswish_graph, numpy_truth
from tests.interpreter.test_zero_bias import bn_conv_graph, inputs, spec_truth


def run_names(graph: Graph) -> list:
    """The result names each warm-run step stores, in order."""
    return [step.names for step in plan_for(graph, {}).run_steps]


def test_a_batch_normed_convolution_runs_as_one_step_with_the_same_bits():
    bias, shift = np.zeros(2, np.float32), np.array([0.5, -1.0], np.float32).reshape(1, 1, 1, 2)
    graph = bn_conv_graph(bias, shift)
    rng = np.random.default_rng(1)
    for run in range(3):
        x = inputs(rng)
        got, want = evaluate(graph, {"x": x})["y"], spec_truth(x, bias, shift)["y"]
        assert got.tobytes() == want.tobytes(), f"run {run}"
    # CONV2D, MUL and ADD: the conv's sum and the product are read once each, by the next step
    assert run_names(graph) == [(graph.outputs[0].name,)]


def test_an_output_or_a_value_read_twice_is_still_stored():
    graph, _ = hardswish_graph()
    rng = np.random.default_rng(2)
    for run in range(3):
        x = (rng.standard_normal(SHAPE) * 4).astype(np.float32)
        out = evaluate(graph, {"x": x})
        for name, want in numpy_truth(x).items():
            assert out[name].tobytes() == want.tobytes(), f"run {run}, output {name}"
    stored = {name for names in run_names(graph) for name in names}
    plan = plan_for(graph, {})
    assert len(plan.run_steps) < len([s for s in plan.steps if not s.constant])
    # y (read by RESHAPE and by ADD) and every output stay in the values; z (read by ADD and MUL) too, unless
    # the step reading it is the fused gate z * clamp(z + 3) (gates.py), which reads it once
    y_add, z_add = (op for op in graph.ops if op.op.name == "ADD" and op.operands[0].producer.op.name == "MUL")
    assert y_add.results[0].name in stored and (z_add.results[0].name in stored or len(gates(graph)) == 1)
    assert {v.name for v in graph.outputs} <= stored


def division_chain() -> Graph:
    """q = INTDIV(x + 1, d) on int32: the ADD's sum is read only by the INTDIV, so the two are joined."""
    graph = Graph()
    b = Builder(graph, Location("Div", "head/div", "onnx"))
    x = graph.add_input("x", TensorType(DType.INT32, (4,)))
    d = graph.add_input("d", TensorType(DType.INT32, (4,)))
    total = b.emit(Op.ADD, x, b.const(np.ones(4, np.int32)))
    graph.set_outputs([b.emit(Op.INTDIV, total, d)], ["q"])
    return graph


def test_a_failure_inside_a_joined_step_names_its_own_op():
    graph = division_chain()
    x, d = np.array([5, -7, 9, 0], np.int32), np.array([2, 3, -4, 1], np.int32)
    for _ in range(2):
        np.testing.assert_array_equal(evaluate(graph, {"x": x, "d": d})["q"], [3, -2, -2, 1])
    assert len(run_names(graph)) == 1
    with pytest.raises(KernelError, match=r"while running INTDIV at .*head/div.*INTDIV by zero") as info:
        evaluate(graph, {"x": x, "d": np.array([2, 0, 1, 1], np.int32)})
    assert info.value.op_name == "INTDIV"
