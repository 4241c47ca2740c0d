"""One time step of an ONNX LSTM, GRU or RNN cell, written as plain TOSA ops.

:mod:`~tosaconv.lowering.recurrent_unroll` unrolls a RECURRENT op by calling a
step function once per time step and direction. Every tensor here is rank 3
with a leading 1 (``[1, batch, width]``), so MATMUL takes the state as is and
no step needs a reshape. The input projection ``X_t·W^T + biases`` arrives
precomputed (``xw``); a step adds ``H_{t-1}·R^T``, applies the ONNX gate
equations in the order onnxruntime evaluates them (clip, then activation;
peepholes before the clip; LSTM's ``input_forget`` makes ``f = 1 - i``) and
returns the new state. Activations are built from their ``(name, alpha,
beta)`` triples; their alpha/beta defaults are resolved by the importer.
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from collections.abc import Callable
from typing import Optional

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Value
from ..ir.ops import Op, OpDef


@dataclass
class Weights:
    """One direction's recurrent weights, transposed for MATMUL, and its in-loop constants."""

    rt: Value                      # [1, H, G*H]: R^T of every gate (GRU: of z and r only)
    rt_h: Optional[Value] = None   # [1, H, H]: GRU's Rh^T
    rbh: Optional[Value] = None    # [1, 1, H]: GRU's Rbh when linear_before_reset (else folded into xw)
    peep: Optional[tuple[Value, ...]] = None   # LSTM peepholes (Pi, Po, Pf), each [1, 1, H]


@dataclass
class Cell:
    """What a step needs besides the state: the builder, sizes, activations and clip."""

    b: Builder
    hidden: int
    acts: list[tuple[str, float, float]]   # (name, alpha, beta) of this direction: f, g[, h]
    clip: float = 0.0
    input_forget: bool = False
    linear_before_reset: bool = False

    def const(self, value: float, like: Value) -> Value:
        return self.b.scalar_like(value, like.tensor_type)

    def gate(self, z: Value, k: int, count: int = 1) -> Value:
        _, batch, _ = z.tensor_type.shape
        return self.b.emit(Op.SLICE, z, attrs=A.SliceAttrs((0, 0, k * self.hidden), (1, batch, count * self.hidden)))

    def matmul(self, h: Value, rt: Optional[Value]) -> Value:
        assert rt is not None   # Weights holds every matrix the cell kind uses
        return self.b.emit(Op.MATMUL, h, rt)

    def add(self, x: Value, y: Value) -> Value:
        return self.b.emit(Op.ADD, x, y)

    def mul(self, x: Value, y: Value) -> Value:
        return self.b.emit(Op.MUL, x, y, attrs=A.MulAttrs(0))

    def one_minus(self, x: Value) -> Value:
        return self.b.emit(Op.SUB, self.const(1.0, x), x)

    def act(self, k: int, x: Value) -> Value:
        """Activation ``k`` of this direction (0 = f, 1 = g, 2 = h) on the clipped ``x``."""
        if self.clip:
            x = self.b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(-float(self.clip), float(self.clip)))
        name, alpha, beta = self.acts[k]
        return activation(self, name, alpha, beta, x)


def lstm_step(cell: Cell, w: Weights, xw: Value, h: Value, c: Value) -> tuple[Value, Value]:
    """ONNX LSTM (gates i, o, f, c): returns (H_t, C_t)."""
    z = cell.add(xw, cell.matmul(h, w.rt))
    i, o, f, g = (cell.gate(z, k) for k in range(4))
    if w.peep is not None:
        i, f = cell.add(i, cell.mul(w.peep[0], c)), cell.add(f, cell.mul(w.peep[2], c))
    i = cell.act(0, i)
    f = cell.one_minus(i) if cell.input_forget else cell.act(0, f)
    c_new = cell.add(cell.mul(f, c), cell.mul(i, cell.act(1, g)))
    if w.peep is not None:
        o = cell.add(o, cell.mul(w.peep[1], c_new))
    o = cell.act(0, o)
    name, alpha, beta = cell.acts[2]    # onnxruntime does not clip the cell state before h
    return cell.mul(o, activation(cell, name, alpha, beta, c_new)), c_new


def gru_step(cell: Cell, w: Weights, xw: Value, h: Value) -> Value:
    """ONNX GRU (gates z, r, h), either form of linear_before_reset: returns H_t."""
    zr = cell.add(cell.gate(xw, 0, 2), cell.matmul(h, w.rt))
    z, r = cell.act(0, cell.gate(zr, 0)), cell.act(0, cell.gate(zr, 1))
    if cell.linear_before_reset:
        linear = cell.matmul(h, w.rt_h)
        if w.rbh is not None:
            linear = cell.add(linear, w.rbh)
        recurrent = cell.mul(r, linear)
    else:
        recurrent = cell.matmul(cell.mul(r, h), w.rt_h)
    candidate = cell.act(1, cell.add(cell.gate(xw, 2), recurrent))
    return cell.add(cell.mul(cell.one_minus(z), candidate), cell.mul(z, h))


def rnn_step(cell: Cell, w: Weights, xw: Value, h: Value) -> Value:
    """ONNX RNN: H_t = f(X_t·W^T + H_{t-1}·R^T + Wb + Rb)."""
    return cell.act(0, cell.add(xw, cell.matmul(h, w.rt)))


# -- activation functions (onnxruntime's definitions) ------------------------------------

def _relu(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    top = float(np.finfo(x.tensor_type.dtype.numpy).max)
    return cell.b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(0.0, top))


def _affine(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    return cell.add(cell.mul(x, cell.const(alpha, x)), cell.const(beta, x))


def _select(cell: Cell, cond_op: OpDef, x: Value, threshold: float, yes: Value, no: Value) -> Value:
    return cell.b.emit(Op.SELECT, cell.b.emit(cond_op, x, cell.const(threshold, x)), yes, no)


def _leaky_relu(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    return _select(cell, Op.GREATER_EQUAL, x, 0.0, x, cell.mul(x, cell.const(alpha, x)))


def _thresholded_relu(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    return _select(cell, Op.GREATER, x, alpha, x, cell.const(0.0, x))


def _scaled_tanh(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    inner = cell.b.emit(Op.TANH, cell.mul(x, cell.const(beta, x)))
    return cell.mul(inner, cell.const(alpha, x))


def _hard_sigmoid(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    return cell.b.emit(Op.CLAMP, _affine(cell, x, alpha, beta), attrs=A.ClampAttrs(0.0, 1.0))


def _elu(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    expm1 = cell.b.emit(Op.SUB, cell.b.emit(Op.EXP, x), cell.const(1.0, x))
    return _select(cell, Op.GREATER_EQUAL, x, 0.0, x, cell.mul(expm1, cell.const(alpha, x)))


def _softsign(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    denominator = cell.add(cell.b.emit(Op.ABS, x), cell.const(1.0, x))
    return cell.mul(x, cell.b.emit(Op.RECIPROCAL, denominator))


def _softplus(cell: Cell, x: Value, alpha: float, beta: float) -> Value:
    return cell.b.emit(Op.LOG, cell.add(cell.b.emit(Op.EXP, x), cell.const(1.0, x)))


# (cell, x, alpha, beta) -> the activation of x
Activation = Callable[[Cell, Value, float, float], Value]
ACTIVATIONS: dict[str, Activation] = {
    "Sigmoid": lambda cell, x, a, b: cell.b.emit(Op.SIGMOID, x),
    "Tanh": lambda cell, x, a, b: cell.b.emit(Op.TANH, x),
    "Relu": _relu, "Affine": _affine, "LeakyRelu": _leaky_relu, "ThresholdedRelu": _thresholded_relu,
    "ScaledTanh": _scaled_tanh, "HardSigmoid": _hard_sigmoid, "Elu": _elu, "Softsign": _softsign,
    "Softplus": _softplus,
}


def activation(cell: Cell, name: str, alpha: float, beta: float, x: Value) -> Value:
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown recurrent activation '{name}' (known: {', '.join(ACTIVATIONS)})")
    return ACTIVATIONS[name](cell, x, alpha, beta)
