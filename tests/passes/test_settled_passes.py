"""Passes the caller knows have nothing to do (``run_pipeline(settled=...)``) are not run until a pass changes
the graph; specialization settles dead-code elimination (it just ran) and constant folding when its rebuild
offered every op to folding and folding left them all. The result must be the one the full pipeline gives."""
from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from tosaconv import api
from tosaconv.ir import attrs as A
from tosaconv.ir.builder import Builder
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType
from tosaconv.passes.manager import Pass, run_pipeline

specialize_module = importlib.import_module("tosaconv.passes.specialize")
SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def _add_graph() -> Graph:
    g = Graph()
    x = g.add_input("x", TensorType(DType.FP32, (2, 3)))
    b = Builder(g)
    g.set_outputs([b.emit(Op.ADD, x, x)], ["y"])
    return g


def _recording(name: str, calls: list, change_on: set) -> Pass:
    """A pass that notes each run and reports a change on the runs numbered in ``change_on``."""
    def run(graph: Graph) -> bool:
        calls.append(name)
        return len(calls) in change_on
    return Pass(name, run, recurses=True)


def test_a_settled_pass_is_skipped_until_another_pass_changes_the_graph():
    calls: list = []
    first, second = _recording("first", calls, {2}), _recording("second", calls, set())
    run_pipeline(_add_graph(), [first, second, first, second, second], settled=frozenset({"second"}))
    # 'second' was settled: not run while nothing changed (the first 'first' reports no change), run
    # after the second 'first' reports one (the second run in all), and again after that
    assert calls == ["first", "first", "second", "second"]


def test_without_settled_passes_every_pass_runs():
    calls: list = []
    first, second = _recording("first", calls, set()), _recording("second", calls, set())
    run_pipeline(_add_graph(), [first, second])
    assert calls == ["first", "second"]


def _narrow_weight_slice() -> Graph:
    """y = x + SLICE(CAST(an fp16 weight)) (the slice of a compressed weight folds on the narrow constant)."""
    g = Graph()
    x = g.add_input("x", TensorType(DType.FP32, (1, 4)))
    b = Builder(g)
    w = b.const(np.arange(4096, dtype=np.float16).reshape(64, 64))
    wide = b.emit(Op.CAST, w, attrs=A.CastAttrs(DType.FP32))
    part = b.emit(Op.SLICE, wide, attrs=A.SliceAttrs((0, 0), (1, 4)))
    g.set_outputs([b.emit(Op.ADD, x, part)], ["y"])
    return g


def test_specialize_gives_what_the_full_pipeline_gives(monkeypatch):
    cases = [(api.load(str(SAMPLES / "small_cnn.onnx")), {"N": 1, "H": 8, "W": 8}),
             (api.load(str(SAMPLES / "tiny_transformer.onnx")), {"batch": 2, "seq": 5}),
             (api.load(str(SAMPLES / "broadcast" / "rank_3x4_2x3x4.onnx")), {}),
             (_narrow_weight_slice(), {})]
    skipped = [api.emit(api.specialize(g, b)) for g, b in cases]
    monkeypatch.setattr(specialize_module, "_settled", lambda static, declined: frozenset())
    full = [api.emit(api.specialize(g, b)) for g, b in cases]
    assert skipped == full


def test_constant_folding_is_settled_only_when_every_op_was_left_by_folding():
    g = _add_graph()
    ops = list(g.ops)
    assert specialize_module._settled(g, {id(op) for op in ops}) == {"dead-code", "constant-fold"}
    assert specialize_module._settled(g, set()) == {"dead-code"}
