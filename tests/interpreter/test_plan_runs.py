"""Later runs of one plan (trusted steps, kept constants, in-place elementwise steps) against numpy truth.

The first run of a graph checks every result; later runs skip those checks, take the constants the first
run made and let an elementwise op write into an operand that dies with it. Every run here is compared
with the same arithmetic done directly in numpy, and the caller's input arrays must come back untouched.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tosaconv.diagnostics import ShapeError
from tosaconv.interpreter import KernelError, evaluate
from tosaconv.interpreter.plan import plan_for
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.limits import tensor_budget

from tests.interpreter.test_evaluator import symbolic_graph

LOC = Location("Mul", "block/mul", "onnx")
SHAPE = (1, 4, 3, 5)


def hardswish_graph() -> tuple:
    """y = x*s + t; hs = y * clamp(y + 3, 0, 6) * (1/6); also y reshaped (a view) and y + 1 as outputs."""
    graph = Graph()
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, SHAPE))
    scale = b.const(np.linspace(0.5, 2.0, 4, dtype=np.float32).reshape(1, 4, 1, 1))
    shift = b.const(np.full((1, 1, 1, 1), 0.25, np.float32))
    y = b.emit(Op.ADD, b.emit(Op.MUL, x, scale, attrs=A.MulAttrs()), shift)
    flat = b.emit(Op.RESHAPE, y, attrs=A.ReshapeAttrs((4, 15)))           # a view of y, kept to the end
    z = b.emit(Op.ADD, b.emit(Op.MUL, x, scale, attrs=A.MulAttrs()), shift)
    clamped = b.emit(Op.CLAMP, b.emit(Op.ADD, z, b.const(np.full((1, 1, 1, 1), 3.0, np.float32))),
                     attrs=A.ClampAttrs(0.0, 6.0))
    hs = b.emit(Op.MUL, b.emit(Op.MUL, z, clamped, attrs=A.MulAttrs()),
                b.const(np.full((1, 1, 1, 1), 1 / 6, np.float32)), attrs=A.MulAttrs())
    plus = b.emit(Op.ADD, y, b.const(np.ones((1, 1, 1, 1), np.float32)))
    graph.set_outputs([hs, flat, plus], ["hs", "flat", "plus"])
    return graph, scale


def numpy_truth(x: np.ndarray) -> dict:
    s = np.linspace(0.5, 2.0, 4, dtype=np.float32).reshape(1, 4, 1, 1)
    y = x * s + np.float32(0.25)
    hs = y * np.clip(y + np.float32(3), np.float32(0), np.float32(6)) * np.float32(1 / 6)
    return {"hs": hs, "flat": y.reshape(4, 15), "plus": y + np.float32(1)}


def test_later_runs_equal_numpy_and_leave_inputs_alone():
    graph, _ = hardswish_graph()
    rng = np.random.default_rng(0)
    for run in range(4):
        x = (rng.standard_normal(SHAPE) * 4).astype(np.float32)
        before = x.copy()
        out = evaluate(graph, {"x": x})
        for name, want in numpy_truth(before).items():
            np.testing.assert_array_equal(out[name], want, err_msg=f"run {run}, output {name}")
        np.testing.assert_array_equal(x, before)


def test_in_place_steps_are_the_ones_whose_operand_nobody_else_sees():
    graph, _ = hardswish_graph()
    evaluate(graph, {"x": np.zeros(SHAPE, np.float32)})
    steps = plan_for(graph, {}).steps
    in_place = {s.op.results[0].name: s.opdef.name for s in steps
                if s.call.__qualname__.split(".")[0] in ("_binary", "_binary_rows", "_clamp")}
    # the others compute into a new array (inplace._fresh_binary) or run their kernel
    assert all(s.call is s.kernel or s.call.__qualname__.startswith("_fresh_binary.") for s in steps
               if s.op.results[0].name not in in_place)
    # y and z write into their x*s; the CLAMP and both MULs of the HardSwish into their dying operand.
    # z + 3 may not (z lives on), nor y + 1 (RESHAPE returned a view of y, an output), nor x*s (the caller's x)
    assert sorted(in_place.values()) == ["ADD", "ADD", "CLAMP", "MUL", "MUL"]
    assert graph.outputs[2].name not in in_place


def test_a_kernel_failure_on_a_later_run_is_still_located():
    graph = Graph()
    where = Location("Div", "model/div", "onnx")
    a = graph.add_input("a", TensorType(DType.INT32, (2,)))
    d = graph.add_input("d", TensorType(DType.INT32, (2,)))
    graph.set_outputs([Builder(graph, where).emit(Op.INTDIV, a, d)], ["q"])
    ok = evaluate(graph, {"a": np.array([7, 9], np.int32), "d": np.array([2, -4], np.int32)})["q"]
    np.testing.assert_array_equal(ok, [3, -2])
    with pytest.raises(KernelError) as e:
        evaluate(graph, {"a": np.array([1, 2], np.int32), "d": np.array([1, 0], np.int32)})
    assert str(e.value) == "while running INTDIV at Div 'model/div': INTDIV by zero"
    assert e.value.location == where


def test_a_constant_replaced_between_runs_is_run_as_replaced():
    graph, scale = hardswish_graph()
    x = np.ones(SHAPE, np.float32)
    evaluate(graph, {"x": x})
    op = scale.producer
    op.attrs = dataclasses.replace(op.attrs, values=np.full((1, 4, 1, 1), 2.0, np.float32))
    got = evaluate(graph, {"x": x})["plus"]
    np.testing.assert_array_equal(got, np.full(SHAPE, np.float32(2.0 + 0.25 + 1.0)))


def test_a_smaller_budget_on_a_later_run_is_still_enforced():
    graph, _ = hardswish_graph()
    x = np.ones(SHAPE, np.float32)
    evaluate(graph, {"x": x})
    with tensor_budget(100), pytest.raises(ShapeError, match="max-tensor-bytes|budget"):
        evaluate(graph, {"x": x})


def test_a_symbolic_program_runs_each_binding_right_and_never_in_place():
    """Who shares whose memory may change with the bindings, so a program with symbols keeps every result."""
    graph = symbolic_graph()
    rng = np.random.default_rng(1)
    for batch, seq in [(2, 3), (5, 7), (2, 3), (1, 1)]:
        x = rng.standard_normal((batch, seq, 4)).astype(np.float32)
        mask = (rng.random((batch, seq)) > 0.5).astype(np.float32)
        out = evaluate(graph, {"x": x, "mask": mask})
        np.testing.assert_array_equal(out["flat"], (x * mask[:, :, None]).reshape(batch * seq, 4))
        assert int(out["rows"]) == batch * seq
    assert all(step.call is step.kernel for step in plan_for(graph, {}).steps)


def test_per_channel_constants_against_a_big_tensor_run_as_tiled_rows():
    """A batch norm's per-channel MUL and ADD (and a SUB with the constant first) on 64x64x16: the in-place
    form multiplies whole rows by the constant tiled along a row; every run must equal numpy's broadcast."""
    shape = (1, 64, 64, 16)
    graph = Graph()
    b = Builder(graph, LOC)
    x = graph.add_input("x", TensorType(DType.FP32, shape))
    rng = np.random.default_rng(2)
    scale, shift, top = (rng.standard_normal((1, 1, 1, 16)).astype(np.float32) for _ in range(3))
    scaled = b.emit(Op.MUL, x, b.const(scale), attrs=A.MulAttrs())
    shifted = b.emit(Op.ADD, scaled, b.const(shift))
    flipped = b.emit(Op.SUB, b.const(top), shifted)
    graph.set_outputs([flipped], ["y"])
    for _ in range(3):
        data = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(evaluate(graph, {"x": data})["y"], top - (data * scale + shift))
    tiled = sorted(s.opdef.name for s in plan_for(graph, {}).steps if "_binary_rows" in s.call.__qualname__)
    assert tiled == ["ADD", "SUB"]
