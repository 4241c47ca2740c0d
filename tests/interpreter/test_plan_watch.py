"""A plan's validity check by counted edits (interpreter/watch.py): a graph changed after its plan was built
must never run on the stale plan, and an unchanged one skips the full field-by-field comparison.

Each changed graph's run is compared with numpy truth for the changed graph (or must fail its checked run,
where the change makes the graph contradict itself); the unchanged graph must keep its plan."""
from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest

from tosaconv.interpreter import KernelError, evaluate
from tosaconv.interpreter import plan as plan_module
from tosaconv.interpreter.plan import plan_for
from tosaconv.interpreter.watch import WatchedOperation, WatchedValue, edits
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Operation, Value
from tosaconv.ir.types import TensorType

from tests.interpreter.test_plan_runs import SHAPE, hardswish_graph, numpy_truth

X = (np.random.default_rng(5).standard_normal(SHAPE) * 4).astype(np.float32)


def _warm(graph) -> object:
    """Two runs (the checked one and a warm one); the graph's plan."""
    for _ in range(2):
        evaluate(graph, {"x": X})
    return plan_for(graph, {})


def _op_making(graph, name: str):
    return next(op for op in graph.ops if op.results[0].name == name)


def _full_checks(monkeypatch) -> list:
    """A list that gets an entry each time a plan compares its ops' fields one by one."""
    calls: list = []
    original = plan_module._op_fields
    monkeypatch.setattr(plan_module, "_op_fields", lambda ops: calls.append(1) or original(ops))
    return calls


def test_an_unchanged_graph_keeps_its_plan_without_the_full_comparison(monkeypatch):
    graph, _ = hardswish_graph()
    plan = _warm(graph)
    assert all(type(op) is WatchedOperation for op in graph.ops)
    assert all(type(v) is WatchedValue for op in graph.ops for v in op.results)
    calls, before = _full_checks(monkeypatch), edits()
    for _ in range(3):
        out = evaluate(graph, {"x": X})
        for name, want in numpy_truth(X).items():
            np.testing.assert_array_equal(out[name], want)
    assert plan_for(graph, {}) is plan and calls == [] and edits() == before    # a run edits nothing


def test_changed_clamp_bounds_run_as_changed():
    graph, _ = hardswish_graph()
    _warm(graph)
    clamp = next(op for op in graph.ops if op.op.name == "CLAMP")
    clamp.attrs = dataclasses.replace(clamp.attrs, min_val=1.0, max_val=2.0)
    y = X * np.linspace(0.5, 2.0, 4, dtype=np.float32).reshape(1, 4, 1, 1) + np.float32(0.25)
    want = y * np.clip(y + np.float32(3), np.float32(1), np.float32(2)) * np.float32(1 / 6)
    for _ in range(2):
        np.testing.assert_array_equal(evaluate(graph, {"x": X})["hs"], want)


def test_a_replaced_operand_list_runs_as_replaced():
    graph, _ = hardswish_graph()
    _warm(graph)
    plus = _op_making(graph, graph.outputs[2].name)
    hs = graph.outputs[0]
    plus.operands = [hs, plus.operands[1]]
    for _ in range(2):
        out = evaluate(graph, {"x": X})
        np.testing.assert_array_equal(out["plus"], numpy_truth(X)["hs"] + np.float32(1))


def test_a_result_type_changed_after_the_plan_fails_the_checked_run():
    """A changed type makes a new plan, whose first run checks it: here the type contradicts the kernel."""
    graph, _ = hardswish_graph()
    _warm(graph)
    value = graph.outputs[2]
    value.type = TensorType(DType.FP32, (1, 4, 3, 6))
    with pytest.raises(KernelError, match="but its type says <1x4x3x6>"):
        evaluate(graph, {"x": X})


def test_an_input_type_changed_after_the_plan_fails_the_checked_run():
    """The inputs' types are part of what a plan depends on: x retyped to a wider shape, given such an array,
    must reach a checked run (the ops' result types now contradict their kernels), not the warm steps."""
    graph, _ = hardswish_graph()
    _warm(graph)
    graph.inputs[0].type = TensorType(DType.FP32, (1, 4, 3, 6))
    # (a stale plan's warm steps would run on and fail later, at the RESHAPE, or not at all)
    with pytest.raises(KernelError, match=r"has shape \[1, 4, 3, 6\], but its type says <1x4x3x5>"):
        evaluate(graph, {"x": np.ones((1, 4, 3, 6), np.float32)})


def test_an_edit_undone_or_elsewhere_keeps_the_plan_after_a_full_comparison(monkeypatch):
    graph, _ = hardswish_graph()
    other, _ = hardswish_graph()
    plan = _warm(graph)
    _warm(other)
    calls = _full_checks(monkeypatch)
    clamp = next(op for op in graph.ops if op.op.name == "CLAMP")
    bounds = clamp.attrs
    clamp.attrs = dataclasses.replace(bounds, max_val=1.0)
    clamp.attrs = bounds
    assert plan_for(graph, {}) is plan and len(calls) == 1
    assert plan_for(graph, {}) is plan and len(calls) == 1        # matched as of the new count
    next(op for op in other.ops if op.op.name == "CLAMP").location = clamp.location
    assert plan_for(graph, {}) is plan and len(calls) == 2
    np.testing.assert_array_equal(evaluate(graph, {"x": X})["hs"], numpy_truth(X)["hs"])


class _OwnValue(Value):
    """A value class of a caller's own, which watch.py leaves alone."""

    __slots__ = ()


def test_a_graph_with_values_it_cannot_watch_keeps_the_full_comparison():
    graph, _ = hardswish_graph()
    plus = _op_making(graph, graph.outputs[2].name)
    object.__setattr__(plus.results[0], "__class__", _OwnValue)
    plan = _warm(graph)
    assert plan.edits is None and type(plus.results[0]) is _OwnValue
    assert plan_for(graph, {}) is plan
    plus.results[0].type = TensorType(DType.FP32, (1, 4, 3, 6))     # not counted, still seen
    with pytest.raises(KernelError, match="but its type says <1x4x3x6>"):
        evaluate(graph, {"x": X})


def test_watched_ops_and_values_behave_as_the_plain_ones():
    graph, _ = hardswish_graph()
    _warm(graph)
    op = graph.ops[-1]
    value = op.results[0]
    assert isinstance(op, Operation) and isinstance(value, Value)
    assert repr(op) == f"{op.op.name}({', '.join('%' + v.name for v in op.operands)}) at {op.location}"
    assert repr(value) == f"%{value.name}: {value.type}"
    assert repr(pickle.loads(pickle.dumps(value))) == repr(value)
    assert dataclasses.replace(value, name="renamed").name == "renamed"
    assert copy.copy(op).operands is op.operands
