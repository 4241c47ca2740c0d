"""LOOP (ONNX Loop) whose trip count is an open dim, for ``--keep-symbols``: one WHILE_LOOP.

The static path unrolls a LOOP once its trip count is bound (:mod:`.decay_control`).
With the count left open, the loop runs as a TOSA WHILE_LOOP, as a recurrence
over an open length does (:mod:`.recurrent_loop`):

- the trip count ``N`` (an Index expression of input dims) becomes an int32
  tensor by DIMS_TO_TENSOR (the symbolic writer counts it with TILE and
  REDUCE_SUM); the condition is ``counter < N``;
- the loop carries the counter, ``N``, the state, one buffer per scan output
  (``[1, N, size]``, zeros tiled by ``N``, filled with SCATTER at the running
  step) and the tensors the body captured;
- the body is rebuilt keeping symbols (the caller's rebuild), with the
  iteration number as int32 tensor arithmetic (:mod:`.while_lowering`);
  an Index value it captured is recomputed inside as GET_DIM of a captured
  tensor that carries it (a WHILE_LOOP carries tensors only).

Refused, naming LOOP: a loop with a condition (its iteration count is data),
scan inputs, scan outputs of an open size, or a body that uses the iteration
number as a size.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph
from ..ir.ops import Op
from ..ir.region_rules import iteration_symbol
from ..ir.types import IndexType, TensorType
from ..symbolic.expr import Expr, same
from .decay import DataDependentDim
from .recurrent_loop import _reshape, _zeros
from .while_lowering import _Iteration, _translate


def loop_symbolic(op, b: Builder, operands: list, rebuild: Callable) -> list:
    """LOOP ``op`` whose trip count ``operands[0]`` is open, as one WHILE_LOOP; returns its results."""
    a = op.attrs
    _check_supported(op)
    state = operands[1:1 + a.num_state]
    captured = operands[1 + a.num_state:]
    tensors = [v for v in captured if isinstance(v.type, TensorType)]
    trip_index = operands[0]
    trip = _reshape(b, b.dims_to_tensor([trip_index]), ())
    scans = _scan_shapes(op)
    buffers = [_zeros(b, (1, 1, _size(s)), [b.index(1), trip_index, b.index(1)], _dtype(t))
               for s, t in scans]
    carried = [b.const(np.array(0, np.int32)), trip] + list(state) + buffers + tensors
    types = [v.type for v in carried]
    body = _body_graph(op, b, types, captured, rebuild)
    loop = b.create(Op.WHILE_LOOP, carried, A.WhileLoopAttrs(_cond_graph(b, types), body))
    n = trip_index.type.value
    stacked = [_reshape(b, buf, (n,) + tuple(s)) for buf, (s, _) in
               zip(loop.results[2 + a.num_state:2 + a.num_state + len(buffers)], scans)]
    return list(loop.results[2:2 + a.num_state]) + stacked


def _check_supported(op) -> None:
    a = op.attrs
    why = None
    if a.has_cond:
        why = "it has a condition, so how many iterations run is decided by tensor data"
    elif a.scan_input_axes:
        why = "it has scan inputs"
    elif any(ax != 0 for ax in a.scan_output_axes):
        why = "a scan output stacks along an axis other than 0"
    elif any(isinstance(d, Expr) for s, _ in _scan_shapes(op) for d in s):
        why = "a scan output has an open size"
    elif any(iteration_symbol(a.body) in c.symbols() for c in a.body.ledger.entries):
        why = "its body checks sizes that depend on the iteration number"
    if why:
        raise DataDependentDim(op, f"LOOP at {op.location} runs an open number of iterations as a WHILE_LOOP, "
                                   f"but {why}")


def _scan_shapes(op) -> list:
    a = op.attrs
    outs = a.body.outputs[a.num_state:]
    return [(tuple(v.type.shape), v.type) for v in outs]


def _size(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


def _dtype(t: TensorType):
    return t.dtype.numpy


def _shell(name: str, types: list) -> Graph:
    g = Graph(name=name)
    for i, t in enumerate(types):
        g.add_input(f"{name}_in{i}", t)
    return g


def _cond_graph(b, types: list) -> Graph:
    g = _shell("cond", types)
    g.set_outputs([Builder(g, b.location).emit(Op.GREATER, g.inputs[1], g.inputs[0])], ["cond"])
    return g


def _body_graph(op, b, types: list, captured: list, rebuild: Callable) -> Graph:
    a, g = op.attrs, _shell("body", types)
    inner = Builder(g, b.location)
    counter = g.inputs[0]
    state = list(g.inputs[2:2 + a.num_state])
    n_scan = len(a.scan_output_axes)
    buffers = list(g.inputs[2 + a.num_state:2 + a.num_state + n_scan])
    tensors = iter(g.inputs[2 + a.num_state + n_scan:])
    region_tensors = list(g.inputs[2 + a.num_state + n_scan:])
    caps = [next(tensors) if isinstance(v.type, TensorType) else _index_in(op, inner, v.type, region_tensors)
            for v in captured]
    one = inner.const(np.array(1, np.int32))
    nxt = inner.emit(Op.ADD, counter, one)
    head = [_Iteration(_reshape(inner, nxt, (1,)))]
    body = a.body
    mapping = {id(v): o for v, o in zip(body.inputs, head + state + caps)}
    for step in body.ops:
        operands = [mapping[id(v)] for v in step.operands]
        with inner.at(step.location):
            if any(isinstance(v, _Iteration) for v in operands):
                results = [_translate(op, step, operands, inner)]
            else:
                results = rebuild(step, operands, inner, {})
        for old, new in zip(step.results, results):
            mapping[id(old)] = new
    outs = [mapping[id(v)] for v in body.outputs]
    idx = _reshape(inner, counter, (1, 1))
    written = [inner.emit(Op.SCATTER, buf, idx, _reshape(inner, v, (1, 1, _size(v.type.shape))))
               for buf, v in zip(buffers, outs[a.num_state:])]
    g.set_outputs([nxt, g.inputs[1]] + outs[:a.num_state] + written + region_tensors,
                  [f"out{i}" for i in range(len(types))])
    return g


def _index_in(op, b, t: IndexType, tensors: list):
    """A captured Index value inside the loop body: a constant, or GET_DIM of a captured tensor carrying it."""
    if not isinstance(t.value, Expr):
        return b.index(int(t.value))
    for v in tensors:
        for axis, d in enumerate(v.type.shape):
            if same(d, t.value):
                return b.get_dim(v, axis)
    raise DataDependentDim(op, f"LOOP at {op.location} captures the size {t.value}, which no tensor it carries "
                               "has as a dim, and a WHILE_LOOP carries tensors only")
