"""Kernel of RECURRENT (ONNX LSTM/GRU/RNN kept whole while the sequence length is a symbol).

The kernel is deliberately not a second implementation of the cell math: it
builds the static program that :func:`tosaconv.lowering.recurrent_unroll.unroll`
makes for these concrete input shapes (the same code specialization uses)
and evaluates it with the ordinary TOSA kernels. A symbolic program therefore
runs exactly what its specialized form would. Unrolled programs are cached
by attributes and input types, so running a model twice unrolls once.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..ir.builder import Builder
from ..ir.graph import Graph
from ..ir.types import TensorType
from ..lowering.recurrent_unroll import unroll
from .evaluator import evaluate

if TYPE_CHECKING:
    from ..ir.attrs import RecurrentAttrs
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def recurrent(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    signature = tuple((v.type.dtype, tuple(a.shape)) for v, a in zip(op.operands, args))
    graph = unrolled_program(op.attrs, signature)
    outputs = evaluate(graph, {v.name: a for v, a in zip(graph.inputs, args)})
    return [outputs[name] for name in graph.output_names]


@functools.lru_cache(maxsize=16)
def unrolled_program(attrs: RecurrentAttrs, signature: tuple) -> Graph:
    """The static program of one RECURRENT op for operands of ``signature`` ((dtype, shape) each)."""
    graph = Graph(name="recurrent")
    inputs = [graph.add_input(f"operand{i}", TensorType(dtype, shape)) for i, (dtype, shape) in enumerate(signature)]
    results = unroll(Builder(graph), attrs, inputs)
    graph.set_outputs(results, [f"result{i}" for i in range(len(results))])
    return graph
