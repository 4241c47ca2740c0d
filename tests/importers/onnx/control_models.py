"""Shared pieces of the control-flow tests: subgraph builders and an every-path check.

:func:`check_everywhere` compares tosaconv with onnxruntime on every road a
model can take: the imported symbolic program run by the numpy interpreter,
the program after the pass pipeline (whose text form must round-trip), and,
at each feed's bindings, the specialized program emitted as TOSA 1.0, read
back and run, optionally also by the official reference model.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from tosaconv.emit import read_tosa
from tosaconv.ir.graph import walk_graphs
from tosaconv.ir.parser import parse_graph
from tosaconv.ir.printer import print_graph
from tosaconv.passes import run_pipeline

from .harness import (ATOL, RTOL, assert_close, check_reference_model, check_with_onnxruntime, convert,
                      run_graph, run_onnxruntime, specialize_and_emit)


def subgraph(name: str, nodes, inputs, outputs, initializers=()):
    return helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(initializers))


def node(op_type: str, inputs, outputs, **attrs):
    return helper.make_node(op_type, list(inputs), list(outputs), name=f"{op_type.lower()}_{outputs[0]}", **attrs)


def check_everywhere(model, feed_sets, reference_dir=None) -> list:
    """Compare with onnxruntime on every path; returns the static programs, one per feed."""
    check_with_onnxruntime(model, feed_sets)
    graph = run_pipeline(convert(model))
    text = print_graph(graph)
    assert print_graph(parse_graph(text)) == text
    statics = []
    for i, feeds in enumerate(feed_sets):
        want = run_onnxruntime(model, feeds)
        static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
        got = run_graph(read_tosa(tosa), feeds)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, RTOL, ATOL, f"static output {k} at shapes {[np.shape(v) for v in feeds.values()]}")
        if reference_dir is not None:
            check_reference_model(tosa, static, feeds, got, reference_dir / f"feeds{i}")
        statics.append(static)
    return statics


def op_names(graph) -> set:
    """Op names of a graph and of every region nested in it."""
    return {op.op.name for g in walk_graphs(graph) for op in g.ops}
