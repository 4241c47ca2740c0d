"""One integer LSTM time step as TOSA ops, exactly :func:`tosaconv.lowering.int_lstm.step` (8-bit TABLEs).

Only ops Ethos-U's compiler (Vela 5.2) reads from TOSA are used: CONV2D 1x1
for the two matrix products (weights constant), RESCALE for every change of
scale, saturation and rounding shift (``multiplier 2**30, shift 30 + s`` is a
rounding right shift by ``s``), ADD, MUL (int16 x int16 -> int32), SLICE and
int8 TABLE (and CONCAT for a sequence). Per step, tensors are NHWC ``[1, B, 1, C]``
(the batch on H, so a whole sequence ``[T, B, 1, C]`` is sliced on N).
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from .int_lstm import ACT_BITS, IntLstmDirection, IntLstmPlan, SIGMOID8, TANH8, Table8, YOut, cell_tanh

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..ir.builder import Builder
    from ..ir.graph import Value
    from .int_lstm import Requant

ONE = 1 << 30


def _rescale(b: Builder, x: Value, dtype: DType, multiplier: ArrayLike, shift: ArrayLike, input_zp: int = 0,
             output_zp: int = 0) -> Value:
    per_channel = np.ndim(multiplier) > 0
    mult = tuple(int(m) for m in np.atleast_1d(multiplier))
    shifts = tuple(int(s) for s in np.atleast_1d(shift))
    attrs = A.RescaleAttrs(mult, shifts, input_zp, output_zp, True, "SINGLE_ROUND", per_channel,
                           output_dtype=dtype)
    return b.emit(Op.RESCALE, x, attrs=attrs, result_type=x.type.with_dtype(dtype))


def _shift(b: Builder, x: Value, dtype: DType, bits: int, input_zp: int = 0) -> Value:
    """A saturating rounding right shift by ``bits`` (a left shift for negative ``bits``)."""
    return _rescale(b, x, dtype, ONE, 30 + bits, input_zp)


def _matmul(b: Builder, x: Value, weights: np.ndarray, bias: np.ndarray, zp: int) -> Value:
    out = weights.shape[0]
    w = b.const(np.ascontiguousarray(weights.astype(np.int8).reshape(out, 1, 1, -1)))
    attrs = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.INT32, zp, 0)
    return b.emit(Op.CONV2D, x, w, b.const(bias.astype(np.int32)), attrs=attrs)


def _product(b: Builder, v: Value, weights: np.ndarray, bias: Optional[np.ndarray], zp: int, requant: Requant) -> Value:
    """``(v - zp) @ weights.T (+ bias)`` RESCALEd per gate row to Q3.12, in int32."""
    acc = _matmul(b, v, weights, np.zeros(weights.shape[0]) if bias is None else bias, zp)
    return _rescale(b, acc, DType.INT32, requant.multiplier, requant.shift)


def _activate(b: Builder, z16: Value, table: Table8) -> Value:
    index = _shift(b, z16, DType.INT8, table.narrow)
    looked = b.emit(Op.TABLE, index, attrs=A.TableAttrs(table.entries))
    return _rescale(b, looked, DType.INT16, *table.widen, input_zp=table.zp)


def _gate(b: Builder, z16: Value, k: int, hidden: int) -> Value:
    size = tuple(z16.type.shape[:-1]) + (hidden,)
    return b.emit(Op.SLICE, z16, attrs=A.SliceAttrs((0, 0, 0, k * hidden), size))


def emit_step(b: Builder, d: IntLstmDirection, x: Value, h: Value, c: Value) -> tuple:
    """int8 ``x`` [1,B,1,I], int8 ``h`` [1,B,1,H], int16 ``c`` [1,B,1,H] -> (int8 h, int16 c)."""
    h_new, c_new, _ = emit_step_y(b, d, x, h, c)
    return h_new, c_new


def emit_step_y(b: Builder, d: IntLstmDirection, x: Value, h: Value, c: Value) -> tuple:
    """:func:`emit_step` and the step's int8 Y (h itself, or ``d.y_out``'s own RESCALE and CLAMP)."""
    if d.table_bits != 8:
        raise ValueError("only the 8-bit-TABLE integer LSTM has a TOSA form Vela accepts")
    hidden = d.r.shape[1]
    terms = [_product(b, x, d.w, d.bias, d.x_zp, d.w_requant), _product(b, h, d.r, None, d.h_zp, d.r_requant)]
    if d.low is not None:
        terms += [_product(b, x, d.low.w, None, d.x_zp, d.low.w_requant),
                  _product(b, h, d.low.r, None, d.h_zp, d.low.r_requant)]
    total = terms[0]
    for term in terms[1:]:
        total = b.emit(Op.ADD, total, term)
    z16 = _shift(b, total, DType.INT16, 0)
    i, o, f = (_activate(b, _gate(b, z16, k, hidden), SIGMOID8) for k in (0, 1, 2))
    g = _activate(b, _gate(b, z16, 3, hidden), TANH8)
    keep = _shift(b, b.emit(Op.MUL, f, c, attrs=A.MulAttrs(0)), DType.INT32, ACT_BITS)
    new = _shift(b, b.emit(Op.MUL, i, g, attrs=A.MulAttrs(0)), DType.INT32, 2 * ACT_BITS - d.cell_bits)
    c_new = _shift(b, b.emit(Op.ADD, keep, new), DType.INT16, 0)
    product = b.emit(Op.MUL, o, _activate(b, c_new, cell_tanh(d.cell_bits)), attrs=A.MulAttrs(0))
    multiplier, shift = d.h_out
    h_new = _rescale(b, product, DType.INT8, multiplier, shift, output_zp=d.h_zp)
    return h_new, c_new, (h_new if d.y_out is None else _y_out(b, d.y_out, product))


def _y_out(b: Builder, y: YOut, product: Value) -> Value:
    out = _rescale(b, product, DType.INT8, y.multiplier, y.shift, output_zp=y.zp)
    if y.lo == -128 and y.hi == 127:
        return out
    return b.emit(Op.CLAMP, out, attrs=A.ClampAttrs(y.lo, y.hi))


def emit_sequence(b: Builder, d: IntLstmDirection, x: Value, h: Value, c: Value, reverse: bool = False) -> tuple:
    """int8 ``x`` [T,B,1,I] and initial ``h``, ``c`` [1,B,1,H] -> (int8 Y [T,B,1,H], h_T, c_T), unrolled."""
    steps, batch, _, width = x.type.shape
    ys = [None] * steps
    for t in (reversed(range(steps)) if reverse else range(steps)):
        x_t = b.emit(Op.SLICE, x, attrs=A.SliceAttrs((t, 0, 0, 0), (1, batch, 1, width)))
        h, c, ys[t] = emit_step_y(b, d, x_t, h, c)
    y = ys[0] if steps == 1 else b.emit(Op.CONCAT, *ys, attrs=A.AxisAttrs(0))
    return y, h, c


@dataclass(frozen=True)
class IntRecurrentAttrs(A.RecurrentAttrs):
    """RECURRENT's attributes for an integer LSTM: X is int8, W and R (int8) are unused, ``int_plan``
    holds the numbers (a subclass, so the IR's attribute table keeps its field types)."""
    int_plan: IntLstmPlan = None


def emit_lstm(b: Builder, plan: IntLstmPlan, x: Value, h0: Optional[Value] = None, c0: Optional[Value] = None) -> list:
    """An ONNX-layout integer LSTM: int8 ``x`` [T, B, I] and optional initial int8 ``h0`` and int16 ``c0``
    (the plan's cell format) [dirs, B, H] (zero states when absent) -> [Y [T, dirs, B, H] int8,
    Y_h [dirs, B, H] int8, Y_c [dirs, B, H] int16]."""
    steps, batch, width = x.type.shape
    x4 = b.emit(Op.RESHAPE, x, attrs=A.ReshapeAttrs((steps, batch, 1, width)))
    ys, hs, cs = [], [], []
    for k, (d, reverse) in enumerate(zip(plan.directions, plan.reverse)):
        hidden = d.r.shape[1]
        h = _initial(b, h0, k, np.full((1, batch, 1, hidden), d.h_zp, np.int8))
        c = _initial(b, c0, k, np.zeros((1, batch, 1, hidden), np.int16))
        y, h, c = emit_sequence(b, d, x4, h, c, reverse)
        ys.append(b.emit(Op.RESHAPE, y, attrs=A.ReshapeAttrs((steps, 1, batch, hidden))))
        hs.append(b.emit(Op.RESHAPE, h, attrs=A.ReshapeAttrs((1, batch, hidden))))
        cs.append(b.emit(Op.RESHAPE, c, attrs=A.ReshapeAttrs((1, batch, hidden))))
    return [v[0] if len(v) == 1 else b.emit(Op.CONCAT, *v, attrs=A.AxisAttrs(axis)) for v, axis in
            ((ys, 1), (hs, 0), (cs, 0))]


def _initial(b: Builder, state: Optional[Value], k: int, zeros: np.ndarray) -> Value:
    """Direction ``k``'s initial state [1, B, 1, H] from ``state`` [dirs, B, H], or the constant ``zeros``."""
    if state is None:
        return b.const(zeros)
    _, batch, _, hidden = zeros.shape
    one = b.emit(Op.SLICE, state, attrs=A.SliceAttrs((k, 0, 0), (1, batch, hidden)))
    return b.emit(Op.RESHAPE, one, attrs=A.ReshapeAttrs(zeros.shape))
