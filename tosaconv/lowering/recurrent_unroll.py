"""Unrolling RECURRENT (ONNX LSTM, GRU, RNN) into static TOSA, shared by specialization and the interpreter.

Design. A recurrent node's sequence length is usually a symbol (``seq``), and
the static TOSA we write has no loops (WHILE_LOOP is not produced), so the
recurrence can only become TOSA by unrolling it, which needs the number of
steps. The importer therefore keeps each node as ONE data-dependent RECURRENT
op whose shape rule gives the symbolic Y, Y_h and Y_c; it costs one line in
the symbolic program instead of a loop body per step. Once binding fixes the
sequence length, :func:`unroll` writes it out: layout 1 is transposed to layout 0;
``X·W^T`` for every step and both directions is ONE MATMUL
(``[1, seq*batch, input] x [1, input, dirs*gates*hidden]``) plus the
input-side biases (``Wb + Rb``, except GRU's ``Rbh`` under
linear_before_reset, which must stay inside ``r ⊙ (...)``); each step slices
its rows and :mod:`.recurrent_cells` adds ``H·R^T`` and the gate equations.
``sequence_lens`` become SELECT masks ``t < len[b]``: a masked step keeps the
previous state and outputs 0, so Y_h and Y_c hold each batch entry's last
valid step and a reverse direction starts at each entry's own last element,
as onnxruntime computes them. The decay rule (:mod:`tosaconv.passes.decay_recurrent`)
calls :func:`unroll` once the shapes are static, and the interpreter's kernel for
RECURRENT calls it on the concrete input shapes and evaluates the result, so the
symbolic program and the static one share this single lowering. It lives here, below
both, so the interpreter never imports a pass.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Value
from ..ir.ops import Op
from ..symbolic.expr import Dim
from .int_lstm_emit import IntRecurrentAttrs, emit_lstm
from .recurrent_cells import Cell, Weights, gru_step, lstm_step, rnn_step

_Ins = dict[str, Value]        # the op's operands by ONNX input name ("x", "w", "r", "b", ...)
_State = tuple[Value, ...]     # (H) or, for LSTM, (H, C): each [1, batch, hidden]
_Run = tuple[list[Value], _State]   # one direction: Y_t in time order, and its final state

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
ACTIVATION_COUNT = {"LSTM": 3, "GRU": 2, "RNN": 1}
OPTIONAL = (("b", "has_bias"), ("sequence_lens", "has_sequence_lens"), ("initial_h", "has_initial_h"),
            ("initial_c", "has_initial_c"), ("p", "has_peepholes"))


def unroll(b: Builder, attrs: A.RecurrentAttrs, operands: Sequence[Value]) -> list[Value]:
    """Static TOSA ops computing RECURRENT's results (Y, Y_h[, Y_c]) from static ``operands``."""
    if isinstance(attrs, IntRecurrentAttrs):
        states = dict(zip([n for n, flag in OPTIONAL if getattr(attrs, flag)], operands[3:]))
        return emit_lstm(b, attrs.int_plan, operands[0], states.get("initial_h"), states.get("initial_c"))
    ins = named_inputs(b, attrs, operands)
    xw = project(b, attrs, ins)
    masks = _Masks(b, ins.get("sequence_lens"))
    dirs = 2 if attrs.direction == "bidirectional" else 1
    runs = [_run_direction(b, attrs, ins, xw, d, masks) for d in range(dirs)]
    return _outputs(b, attrs, runs)


def named_inputs(b: Builder, attrs: A.RecurrentAttrs, operands: Sequence[Value]) -> _Ins:
    """RECURRENT's operands by ONNX input name, sequence-major (``layout`` 1 transposed to 0)."""
    ins = dict(zip(["x", "w", "r"] + [n for n, flag in OPTIONAL if getattr(attrs, flag)], operands))
    if attrs.layout:
        for name in ("x", "initial_h", "initial_c"):
            if name in ins:
                ins[name] = transpose(b, ins[name], (1, 0, 2))
    return ins


# -- before the loop ---------------------------------------------------------------------

def project(b: Builder, attrs: A.RecurrentAttrs, ins: _Ins) -> Value:
    """``X·W^T + biases`` of every step and direction: [seq, batch, dirs*gates*hidden]."""
    x, w = ins["x"], ins["w"]
    seq, batch, size = x.tensor_type.shape
    dirs, width, _ = w.tensor_type.static_shape()
    x2 = reshape(b, x, (1, seq * batch, size))
    wt = transpose(b, reshape(b, w, (1, dirs * width, size)), (0, 2, 1))
    xw = b.emit(Op.MATMUL, x2, wt)
    if "b" in ins:
        xw = b.emit(Op.ADD, xw, reshape(b, _input_bias(b, attrs, ins["b"], width), (1, 1, dirs * width)))
    return reshape(b, xw, (seq, batch, dirs * width))


def _input_bias(b: Builder, attrs: A.RecurrentAttrs, bias: Value, width: int) -> Value:
    """``Wb + Rb`` per direction ([dirs, gates*hidden]); GRU keeps Rbh out under linear_before_reset."""
    dirs = bias.tensor_type.static_shape()[0]
    wb = _slice(b, bias, (0, 0), (dirs, width))
    rb = _slice(b, bias, (0, width), (dirs, width))
    if attrs.cell == "GRU" and attrs.linear_before_reset:
        hidden = attrs.hidden_size
        zeros = b.const(np.zeros((dirs, hidden), bias.tensor_type.dtype.numpy))
        rb = b.emit(Op.CONCAT, _slice(b, rb, (0, 0), (dirs, 2 * hidden)), zeros, attrs=A.AxisAttrs(1))
    return b.emit(Op.ADD, wb, rb)


def direction_weights(b: Builder, attrs: A.RecurrentAttrs, ins: _Ins, d: int) -> Weights:
    r = ins["r"]
    _, width, hidden = r.tensor_type.static_shape()
    rt = transpose(b, _slice(b, r, (d, 0, 0), (1, width, hidden)), (0, 2, 1))
    if attrs.cell != "GRU":
        return Weights(rt, peep=_peepholes(b, ins.get("p"), d, hidden))
    rbh = None
    if attrs.linear_before_reset and "b" in ins:
        rbh = reshape(b, _slice(b, ins["b"], (d, 5 * hidden), (1, hidden)), (1, 1, hidden))
    return Weights(_slice(b, rt, (0, 0, 0), (1, hidden, 2 * hidden)),
                   rt_h=_slice(b, rt, (0, 0, 2 * hidden), (1, hidden, hidden)), rbh=rbh)


def _peepholes(b: Builder, p: Optional[Value], d: int, hidden: int) -> Optional[_State]:
    if p is None:
        return None
    return tuple(reshape(b, _slice(b, p, (d, k * hidden), (1, hidden)), (1, 1, hidden)) for k in range(3))


def initial_state(b: Builder, attrs: A.RecurrentAttrs, ins: _Ins, d: int, batch: Dim, dtype: Any) -> _State:
    names = ("initial_h", "initial_c") if attrs.cell == "LSTM" else ("initial_h",)
    hidden = attrs.hidden_size
    return tuple(_slice(b, ins[n], (d, 0, 0), (1, batch, hidden)) if n in ins
                 else b.const(np.zeros((1, batch, hidden), dtype)) for n in names)


# -- the loop ---------------------------------------------------------------------------------

class _Masks:
    """SELECT masks ``t < sequence_lens[b]`` ([1, batch, 1]), built once per step and shared by directions."""

    def __init__(self, b: Builder, lens: Optional[Value]) -> None:
        self.b = b
        self.lens = None if lens is None else reshape(b, lens, (1, lens.tensor_type.shape[0], 1))
        self.by_step: dict[int, Value] = {}
        self.zero: Optional[Value] = None

    def apply(self, t: int, new: _State, old: _State) -> tuple[Value, _State]:
        """(Y_t, state after step t): past a batch entry's length the output is 0 and the state stays."""
        if self.lens is None:
            return new[0], new
        if t not in self.by_step:
            step = self.b.const(np.full((1, 1, 1), t, self.lens.tensor_type.dtype.numpy))
            self.by_step[t] = self.b.emit(Op.GREATER, self.lens, step)
        mask = self.by_step[t]
        if self.zero is None:
            self.zero = self.b.scalar_like(0, new[0].tensor_type)
        kept = tuple(self.b.emit(Op.SELECT, mask, n, o) for n, o in zip(new, old))
        return self.b.emit(Op.SELECT, mask, new[0], self.zero), kept


def _run_direction(b: Builder, attrs: A.RecurrentAttrs, ins: _Ins, xw: Value, d: int, masks: _Masks) -> _Run:
    """(Y_t for every t in time order, final state) of direction ``d``."""
    seq, batch, _ = xw.tensor_type.shape
    width = GATES[attrs.cell] * attrs.hidden_size
    n = ACTIVATION_COUNT[attrs.cell]
    acts = A.parse_activations(attrs.activations)[d * n:(d + 1) * n]
    cell = Cell(b, attrs.hidden_size, acts, attrs.clip, attrs.input_forget, attrs.linear_before_reset)
    weights = direction_weights(b, attrs, ins, d)
    state = initial_state(b, attrs, ins, d, batch, xw.tensor_type.dtype.numpy)
    reverse = d == 1 or attrs.direction == "reverse"
    ys: dict[int, Value] = {}
    for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
        xw_t = _slice(b, xw, (t, 0, d * width), (1, batch, width))
        ys[t], state = masks.apply(t, cell_step(cell, attrs.cell, weights, xw_t, state), state)
    return [ys[t] for t in range(seq)], state


def cell_step(cell: Cell, kind: str, weights: Weights, xw_t: Value, state: _State) -> _State:
    if kind == "LSTM":
        return lstm_step(cell, weights, xw_t, *state)
    step = gru_step if kind == "GRU" else rnn_step
    return (step(cell, weights, xw_t, state[0]),)


# -- after the loop ---------------------------------------------------------------------------

def _outputs(b: Builder, attrs: A.RecurrentAttrs, runs: list[_Run]) -> list[Value]:
    """Y [seq, dirs, batch, hidden] and the final states [dirs, batch, hidden], in the op's layout."""
    per_dir = []
    for ys, _ in runs:
        seq_major = _concat(b, ys, 0)
        _, batch, hidden = seq_major.tensor_type.shape
        per_dir.append(reshape(b, seq_major, (len(ys), 1, batch, hidden)))
    y = _concat(b, per_dir, 1)
    states = [_concat(b, [state[k] for _, state in runs], 0) for k in range(len(runs[0][1]))]
    if attrs.layout:
        y = transpose(b, y, (2, 0, 1, 3))
        states = [transpose(b, s, (1, 0, 2)) for s in states]
    return [y] + states


def _concat(b: Builder, values: list[Value], axis: int) -> Value:
    return values[0] if len(values) == 1 else b.emit(Op.CONCAT, *values, attrs=A.AxisAttrs(axis))


def _slice(b: Builder, x: Value, start: tuple[Dim, ...], size: tuple[Dim, ...]) -> Value:
    if tuple(size) == tuple(x.tensor_type.shape):
        return x
    return b.emit(Op.SLICE, x, attrs=A.SliceAttrs(tuple(start), tuple(size)))


def reshape(b: Builder, x: Value, shape: tuple[Dim, ...]) -> Value:
    if tuple(shape) == tuple(x.tensor_type.shape):
        return x
    return b.emit(Op.RESHAPE, x, attrs=A.ReshapeAttrs(tuple(shape)))


def transpose(b: Builder, x: Value, perms: tuple[int, ...]) -> Value:
    return b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(tuple(perms)))
