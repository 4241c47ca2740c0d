"""RECURRENT (ONNX LSTM, GRU, RNN) over an open sequence length, for ``--keep-symbols``: one WHILE_LOOP.

The static path unrolls a recurrence once binding fixes its length
(:mod:`.decay_recurrent`). A symbolic ``.tosa`` cannot unroll an open length,
so each direction becomes one TOSA WHILE_LOOP, built from data-independent
pieces only:

- the trip count: the length ``T`` as a dim is turned into an int32 tensor by
  DIMS_TO_TENSOR (the symbolic writer counts it: TILE a [1] tensor of ones by
  the shape value ``[T]``, then REDUCE_SUM);
- before the loop: ``X·W^T + biases`` for every step and direction, as the
  unroll computes it, reshaped to ``[1, T, batch*dirs*gates*hidden]``; the
  output ``Y`` starts as zeros ``[1, T, batch*hidden]`` (DYN_TILE);
- the loop carries the counter ``i``, ``T``, the projection, ``Y``, the state
  and the recurrent weights; its condition is ``i < T``; the body reads step
  ``t`` (``i``, or ``T-1-i`` in reverse) with GATHER, runs the step function of
  :mod:`tosaconv.lowering.recurrent_cells` and writes ``Y[t]`` with SCATTER;
- after it: Y of each direction reshaped to ``[T, 1, batch, hidden]`` and
  concatenated, the final states concatenated, in the op's layout.

A static length with an open batch needs no loop: :func:`decay_recurrent.unroll`
works on symbolic batch sizes as it is. ``sequence_lens`` and the integer LSTM
are not lowered here (refused with a message naming RECURRENT).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Graph, Operation, Value
from ..ir.ops import Op
from ..ir.types import ValueType
from ..lowering.int_lstm_emit import IntRecurrentAttrs
from ..symbolic.expr import Dim, Expr, mul
from .decay import DataDependentDim
from ..lowering.recurrent_unroll import ACTIVATION_COUNT, GATES, OPTIONAL, cell_step, direction_weights, \
    initial_state, named_inputs, project, reshape, transpose, unroll
from ..lowering.recurrent_cells import Cell, Weights

_Run = tuple[Value, list[Value]]   # one direction: Y as [1, T, batch*hidden], and its final state


def recurrent_symbolic(op: Operation, b: Builder, operands: list[Value]) -> list[Value]:
    """RECURRENT ``op`` on symbolic ``operands``: unrolled when the length is static, else WHILE_LOOPs."""
    attrs = op.attrs_as(A.RecurrentAttrs)
    seq = operands[0].tensor_type.shape[1 if attrs.layout else 0]
    attrs, operands = _explicit_states(b, attrs, operands)
    if not isinstance(seq, Expr):
        return unroll(b, attrs, operands)
    if isinstance(attrs, IntRecurrentAttrs) or attrs.has_sequence_lens:
        what = "an integer LSTM" if isinstance(attrs, IntRecurrentAttrs) else "sequence_lens"
        raise DataDependentDim(op, f"RECURRENT ({attrs.cell}) at {op.location} runs over the open length {seq} "
                                   f"as a WHILE_LOOP, which does not support {what} yet")
    ins = named_inputs(b, attrs, operands)
    xw = project(b, attrs, ins)
    seq, batch, width = xw.tensor_type.shape
    xw3 = reshape(b, xw, (1, seq, mul(batch, width)))
    trip = reshape(b, b.dims_to_tensor([b.get_dim(xw, 0)]), ())
    dirs = 2 if attrs.direction == "bidirectional" else 1
    dims = (b.get_dim(xw, 0), b.get_dim(xw, 1), width)
    runs = [_run_direction(b, attrs, ins, xw3, trip, d, dims) for d in range(dirs)]
    return _outputs(b, attrs, runs, seq, batch)


def _explicit_states(b: Builder, attrs: A.RecurrentAttrs,
                     operands: list[Value]) -> tuple[A.RecurrentAttrs, list[Value]]:
    """``(attrs, operands)`` with zero initial states passed explicitly when the batch is open (the
    unroll makes missing ones as constants, which need a static batch)."""
    x = operands[0]
    batch = x.tensor_type.shape[0 if attrs.layout else 1]
    if not isinstance(batch, Expr) or isinstance(attrs, IntRecurrentAttrs):
        return attrs, operands
    names = [n for n, flag in OPTIONAL if getattr(attrs, flag)]
    ins = dict(zip(["x", "w", "r"] + names, operands))
    dirs, hidden = operands[1].tensor_type.static_shape()[0], attrs.hidden_size
    block, axis = ((1, dirs, hidden), 0) if attrs.layout else ((dirs, 1, hidden), 1)
    multiples = [b.index(1), b.index(1), b.index(1)]
    multiples[axis] = b.get_dim(x, 0 if attrs.layout else 1)
    for name in ("initial_h", "initial_c"):
        if name not in ins and (name == "initial_h" or attrs.cell == "LSTM"):
            ins[name] = tiled_zeros(b, block, multiples, x.tensor_type.dtype.numpy)
    attrs = replace(attrs, has_initial_h="initial_h" in ins, has_initial_c="initial_c" in ins)
    order = ["x", "w", "r"] + [n for n, flag in OPTIONAL if getattr(attrs, flag)]
    return attrs, [ins[n] for n in order]


def tiled_zeros(b: Builder, block: tuple[int, ...], multiples: list[Value], dtype: np.dtype[Any]) -> Value:
    """Zeros: a static ``block`` tiled by Index values (GET_DIM of a value whose dims carry the symbols)."""
    return b.create(Op.DYN_TILE, [b.const(np.zeros(block, dtype))] + multiples).result


def _run_direction(b: Builder, attrs: A.RecurrentAttrs, ins: dict[str, Value], xw3: Value, trip: Value, d: int,
                   dims: tuple[Value, Value, Dim]) -> _Run:
    """(Y of direction ``d`` as [1, T, batch*hidden], final state) from one WHILE_LOOP; ``dims`` are the
    Index values of T and batch, and the projection's width per batch entry."""
    hidden, dtype = attrs.hidden_size, xw3.tensor_type.dtype.numpy
    batch = dims[1].index_type.value
    weights = direction_weights(b, attrs, ins, d)
    state = initial_state(b, attrs, ins, d, batch, dtype)
    w_values = _weight_values(weights)
    y0 = tiled_zeros(b, (1, 1, hidden), [b.index(1), dims[0], dims[1]], dtype)
    carried = [b.const(np.array(0, np.int32)), trip, xw3, y0] + list(state) + w_values
    types = [v.type for v in carried]
    cond = _cond_graph(b, types)
    body = _body_graph(b, attrs, types, d, len(state), weights, (batch, dims[2]))
    loop = b.create(Op.WHILE_LOOP, carried, A.WhileLoopAttrs(cond, body))
    return loop.results[3], loop.results[4:4 + len(state)]


def _weight_values(w: Weights) -> list[Value]:
    return [v for v in (w.rt, w.rt_h, w.rbh) + tuple(w.peep or ()) if v is not None]


def _weights_from(w: Weights, values: list[Value]) -> Weights:
    """``w``'s layout over ``values`` (the loop body's inputs carrying the weights)."""
    it = iter(values)
    rt = next(it)
    rt_h, rbh = (None if v is None else next(it) for v in (w.rt_h, w.rbh))
    peep = None if w.peep is None else tuple(next(it) for _ in w.peep)
    return Weights(rt, rt_h=rt_h, rbh=rbh, peep=peep)


def _shell(name: str, types: list[ValueType]) -> Graph:
    g = Graph(name=name)
    for i, t in enumerate(types):
        g.add_input(f"{name}_in{i}", t)
    return g


def _cond_graph(b: Builder, types: list[ValueType]) -> Graph:
    g = _shell("cond", types)
    inner = Builder(g, b.location)
    g.set_outputs([inner.emit(Op.GREATER, g.inputs[1], g.inputs[0])], ["cond"])
    return g


def _body_graph(b: Builder, attrs: A.RecurrentAttrs, types: list[ValueType], d: int, n_state: int, weights: Weights,
                sizes: tuple[Dim, Dim]) -> Graph:
    """Step ``t`` of direction ``d``: GATHER its projection row, run the cell, SCATTER its output into Y;
    ``sizes`` are the batch and the projection's width per batch entry."""
    g = _shell("body", types)
    inner = Builder(g, b.location)
    batch, per_batch = sizes
    counter, trip, xw3, y = g.inputs[:4]
    state = tuple(g.inputs[4:4 + n_state])
    one = inner.const(np.array(1, np.int32))
    reverse = d == 1 or attrs.direction == "reverse"
    t = inner.emit(Op.SUB, inner.emit(Op.SUB, trip, one), counter) if reverse else counter
    idx = reshape(inner, t, (1, 1))
    width, hidden = GATES[attrs.cell] * attrs.hidden_size, attrs.hidden_size
    row = reshape(inner, inner.emit(Op.GATHER, xw3, idx), (1, batch, per_batch))
    xw_t = _slice_dir(inner, row, d, width, batch)
    n = ACTIVATION_COUNT[attrs.cell]
    acts = A.parse_activations(attrs.activations)[d * n:(d + 1) * n]
    cell = Cell(inner, hidden, acts, attrs.clip, attrs.input_forget, attrs.linear_before_reset)
    new = cell_step(cell, attrs.cell, _weights_from(weights, list(g.inputs[4 + n_state:])), xw_t, state)
    y_t = reshape(inner, new[0], (1, 1, mul(batch, hidden)))
    y_new = inner.emit(Op.SCATTER, y, idx, y_t)
    nxt = inner.emit(Op.ADD, counter, one)
    g.set_outputs([nxt, trip, xw3, y_new] + list(new) + list(g.inputs[4 + n_state:]),
                  [f"out{i}" for i in range(len(types))])
    return g


def _slice_dir(b: Builder, row: Value, d: int, width: int, batch: Dim) -> Value:
    if row.tensor_type.shape[2] == width:
        return row
    return b.emit(Op.SLICE, row, attrs=A.SliceAttrs((0, 0, d * width), (1, batch, width)))


def _outputs(b: Builder, attrs: A.RecurrentAttrs, runs: list[_Run], seq: Dim, batch: Dim) -> list[Value]:
    """Y [T, dirs, batch, hidden] and the final states [dirs, batch, hidden], in the op's layout."""
    hidden = attrs.hidden_size
    per_dir = [reshape(b, y, (seq, 1, batch, hidden)) for y, _ in runs]
    y = per_dir[0] if len(per_dir) == 1 else b.emit(Op.CONCAT, *per_dir, attrs=A.AxisAttrs(1))
    states = []
    for k in range(len(runs[0][1])):
        parts = [state[k] for _, state in runs]
        states.append(parts[0] if len(parts) == 1 else b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(0)))
    if attrs.layout:
        y = transpose(b, y, (2, 0, 1, 3))
        states = [transpose(b, s, (1, 0, 2)) for s in states]
    return [y] + states

