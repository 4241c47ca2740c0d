"""Integer LSTM cell (8x8_16 style): the numeric plan, as numpy, in TOSA's own integer semantics.

This module fixes the formats and every rounding step of an all-integer ONNX
``LSTM`` (gates i, o, f, c; default Sigmoid/Tanh/Tanh; no peepholes, no clip)
so that a TOSA emitter can reproduce it op for op. It is format-neutral (no
ONNX or TFLite import) and is the arithmetic a converter's lowering must match.
The ONNX importer uses it under ``--profile int`` (importers/onnx/ops/qdq_lstm.py).

Formats (TFLite's 8x8_16 integer LSTM design):

- ``x`` and ``h``: int8 with their own (scale, zero point); weights ``W``, ``R``:
  int8, symmetric, one scale per gate row (per output channel).
- Gate pre-activations: int16 Q3.12 (real = q / 2**12, range [-8, 8)), each of
  the two int32 matmul accumulators (bias folded into the ``x`` one) RESCALEd to
  Q3.12 with TOSA's ``apply_scale_32`` and summed with saturation to int16.
- Sigmoid and tanh, two variants (``table_bits``):

  * 16 (TFLite's design): int16 TOSA TABLEs (513 entries, interpolating; the
    result has 7 extra fraction bits), output int16 Q0.15 after a rounding
    shift by 7.
  * 8 (what Ethos-U's compiler accepts: Vela 5.2's TOSA reader takes TABLE
    only with int8 input, output and table, ``constraint_table_dtype``): the
    Q3.12 pre-activation is RESCALEd (rounding shift) to int8 at scale 2**-4
    for sigmoid (range [-8, 8)) and 2**-5 for tanh ([-4, 4)), looked up in a
    256-entry int8 TABLE (sigmoid out at scale 1/255, zp -128; tanh out at
    1/127, zp 0: both ends of each range exact) and RESCALEd to Q0.15.
- Cell state: int16 with ``cell_bits`` fraction bits: Q3.12 by default, i.e.
  scale 2**-12, **|c| < 8 assumed** (not calibrated: ONNX QDQ carries no
  cell-state range; from zero states ``|c_t| < t``, so up to 8 steps cannot
  saturate); larger values saturate. A cell state carried between calls
  (state inputs and outputs) has no such bound and uses Q8.7
  (:data:`STATE_CELL_BITS`, |c| < 256: silero's VAD reaches 175). ``tanh(c)``
  looks up the same int8 table at scale 2**-5 whatever the format.
- ``h = o * tanh(c)``: Q0.15 x Q0.15 = Q0.30 in int32, RESCALEd to h's int8
  (scale, zp): the QuantizeLinear consuming ``Y`` when Y reaches it through
  layout ops only, else :data:`H_SCALE` (2**-7, zero point 0: h lies in
  (-1, 1), so Q0.7 holds all of it). In the second case (a Relu or Clip
  between Y and its QuantizeLinear, which cuts off the negative half the
  recurrence needs) ``Y`` is a second RESCALE of the same Q0.30 product to the
  QuantizeLinear's (scale, zp), then an int8 clamp (:class:`YOut`): one
  rounding for Y, as for h.
- Initial states: int8 h at h's (scale, zp) and int16 c in Q3.12 (a model's
  float state inputs become such integer inputs under ``--int-io``).
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, Optional

import numpy as np

from ..interpreter.fixed_point import apply_lookup_s, apply_scale_32

GATE_BITS = 12          # Q3.12 gate pre-activations and cell state
ACT_BITS = 15           # Q0.15 gate activations
CELL_LIMIT = 8.0        # the assumed bound on |c| (scale 2**-12 in int16)
H_SCALE = 2.0 ** -7     # h's own scale (zero point 0) when no QuantizeLinear gives it one
STATE_CELL_BITS = 7     # Q8.7: the cell format of a state carried between calls


def quantized_multiplier(real: float) -> tuple:
    """(multiplier, shift) of TOSA RESCALE (scale32) for a positive ``real`` below 2**15."""
    if not real > 0:
        raise ValueError(f"a rescale factor must be positive, got {real}")
    mantissa, exponent = np.frexp(real)
    multiplier = int(round(mantissa * (1 << 30)))
    shift = 30 - int(exponent)
    if multiplier == 1 << 30:
        multiplier, shift = 1 << 29, shift - 1
    if not 2 <= shift <= 62:
        raise ValueError(f"a rescale factor of {real} is outside RESCALE's shift range")
    return multiplier, shift


def int16_table(fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The 513 int16 entries of a TOSA TABLE computing ``fn`` from Q3.12 input to Q0.15 output."""
    inputs = (np.arange(513, dtype=np.int64) - 256) * 128 / float(1 << GATE_BITS)
    entries = np.rint(fn(inputs) * (1 << ACT_BITS))
    return np.clip(entries, -32768, 32767).astype(np.int16)


SIGMOID = int16_table(lambda v: 1.0 / (1.0 + np.exp(-v)))
TANH = int16_table(np.tanh)


@dataclass(frozen=True)
class Table8:
    """An int8 TABLE on a Q3.12 value narrowed by ``narrow`` bits; its output ``q`` is widened to Q0.15 by
    one RESCALE to int16: ``apply_scale_32(q - zp, *widen)``, saturating."""
    narrow: int
    entries: np.ndarray
    zp: int
    widen: tuple            # (multiplier, shift) of RESCALE: the output scale times 2**15

    def __call__(self, q12: np.ndarray) -> np.ndarray:
        index = np.clip(rounding_shift(q12, self.narrow), -128, 127)
        wide = apply_scale_32(self.entries[index + 128].astype(np.int64) - self.zp, *self.widen)
        return np.clip(wide, -32768, 32767)


def int8_table(fn: Callable[[np.ndarray], np.ndarray], narrow: int, out_scale: float, zp: int,
               lo: int = -128) -> Table8:
    """``fn`` on int8 inputs at scale 2**(narrow - 12), output int8 at ``out_scale`` with ``zp`` (entries
    from ``lo`` to 127)."""
    inputs = np.arange(-128, 128) * 2.0 ** (narrow - GATE_BITS)
    entries = np.clip(np.rint(fn(inputs) / out_scale) + zp, lo, 127).astype(np.int8)
    return Table8(narrow, entries, zp, quantized_multiplier(out_scale * (1 << ACT_BITS)))


# Output grids that hold both ends exactly: sigmoid 0..1 in 255 steps (a forget gate of 1 keeps the cell
# state: a 2**-8 grid tops out at 255/256 and would shrink c by 0.4 % every step), tanh -1..1 in 127 steps.
SIGMOID8 = int8_table(lambda v: 1.0 / (1.0 + np.exp(-v)), 8, 1.0 / 255, -128)
TANH8 = int8_table(np.tanh, 7, 1.0 / 127, 0, lo=-127)


def activations(table_bits: int) -> tuple:
    """(sigmoid, tanh) as functions Q3.12 -> Q0.15 for 16- or 8-bit TABLEs."""
    if table_bits == 16:
        return (lambda z: lookup(SIGMOID, z)), (lambda z: lookup(TANH, z))
    if table_bits == 8:
        return SIGMOID8, TANH8
    raise ValueError(f"table_bits must be 8 or 16, got {table_bits}")


def lookup(table: np.ndarray, q12: np.ndarray) -> np.ndarray:
    """TABLE then a rounding shift by 7 (RESCALE multiplier 1, shift 7): Q3.12 -> Q0.15 int16."""
    wide = apply_lookup_s(table, q12)
    return np.clip((wide + 64) >> 7, -32768, 32767)


def rounding_shift(value: np.ndarray, shift: int) -> np.ndarray:
    """ARITHMETIC_RIGHT_SHIFT with round = true."""
    return (value + (np.int64(1) << (shift - 1))) >> shift


@dataclass(frozen=True)
class Requant:
    """Per-row RESCALE of an int32 accumulator to Q3.12: multipliers and shifts, one per gate row."""
    multiplier: np.ndarray
    shift: np.ndarray

    @staticmethod
    def of(scales: np.ndarray) -> "Requant":
        pairs = [quantized_multiplier(float(s) * (1 << GATE_BITS)) for s in scales]
        return Requant(np.array([m for m, _ in pairs]), np.array([s for _, s in pairs]))

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        return apply_scale_32(acc, self.multiplier, self.shift)


@dataclass(frozen=True)
class YOut:
    """Y as its own int8 tensor: RESCALE (``multiplier``, ``shift``) of the Q0.30 product to ``zp``, then
    a clamp to [``lo``, ``hi``] (a Relu or Clip between Y and its QuantizeLinear)."""
    multiplier: int
    shift: int
    zp: int
    lo: int = -128
    hi: int = 127

    @staticmethod
    def of(y_scale: float, y_zp: int, lo: int = -128, hi: int = 127) -> "YOut":
        multiplier, shift = quantized_multiplier(2.0 ** -30 / y_scale)
        return YOut(multiplier, shift, int(y_zp), int(lo), int(hi))

    def __call__(self, product: np.ndarray) -> np.ndarray:
        y = np.clip(apply_scale_32(product, self.multiplier, self.shift) + self.zp, -128, 127)
        return np.clip(y, self.lo, self.hi)


@dataclass(frozen=True)
class LowWeights:
    """The rounding residual of int8 W and R, itself in int8 at 1/256 of their scale (``split_weights``):
    ``W ~ s * (Wq + W_lo / 256)``, so the gate pre-activations carry 16-bit weights through two int8 x int8
    products each (TOSA CONV2D), the second RESCALEd by 1/256 more."""
    w: np.ndarray
    r: np.ndarray
    w_requant: Requant
    r_requant: Requant


@dataclass(frozen=True)
class IntLstmDirection:
    """One direction's integer parameters: int8 W [4H, I], R [4H, H], int32 bias at W's scale."""
    w: np.ndarray
    r: np.ndarray
    bias: np.ndarray
    w_requant: Requant
    r_requant: Requant
    x_zp: int
    h_zp: int
    h_out: tuple            # (multiplier, shift) of Q0.30 -> int8 h
    table_bits: int = 16
    y_out: Optional[YOut] = None     # Y's own quantization; None: Y is h
    cell_bits: int = GATE_BITS       # the cell state's fraction bits (int16)
    low: Optional[LowWeights] = None  # the weights' residual (16-bit weights), or None (8-bit)


def quantize_direction(w: np.ndarray, r: np.ndarray, b: Optional[np.ndarray], x_scale: float, x_zp: int,
                       h_scale: float, h_zp: int,
                       table_bits: int = 16, y_out: Optional[YOut] = None,
                       cell_bits: int = GATE_BITS, split_weights: bool = False) -> IntLstmDirection:
    """Integer parameters from ONNX float ``W`` [4H, I], ``R`` [4H, H], ``B`` [8H] (or None); with
    ``split_weights`` also their residuals (:class:`LowWeights`)."""
    w_scale = np.maximum(np.abs(w).max(axis=1), 1e-30) / 127.0
    r_scale = np.maximum(np.abs(r).max(axis=1), 1e-30) / 127.0
    wq = np.clip(np.rint(w / w_scale[:, None]), -127, 127).astype(np.int64)
    rq = np.clip(np.rint(r / r_scale[:, None]), -127, 127).astype(np.int64)
    rows = w.shape[0]
    bias = np.zeros(rows) if b is None else b[:rows] + b[rows:]
    acc_scale = x_scale * w_scale
    bias_q = np.rint(bias / acc_scale).astype(np.int64)
    if cell_bits != GATE_BITS and table_bits != 8 or not 5 <= cell_bits <= GATE_BITS:
        raise ValueError(f"a cell state with {cell_bits} fraction bits needs 8-bit TABLEs and 5 to 12 bits")
    low = None
    if split_weights:
        low = LowWeights(_residual(w, wq, w_scale), _residual(r, rq, r_scale), Requant.of(acc_scale / 256),
                         Requant.of(h_scale * r_scale / 256))
    return IntLstmDirection(wq, rq, bias_q, Requant.of(acc_scale), Requant.of(h_scale * r_scale),
                            int(x_zp), int(h_zp), quantized_multiplier(2.0 ** -30 / h_scale), table_bits, y_out,
                            cell_bits, low)


def _residual(w: np.ndarray, wq: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``w - wq * scale`` (at most half a step) in int8 units of ``scale / 256``."""
    return np.clip(np.rint((w - wq * scale[:, None]) / (scale[:, None] / 256)), -127, 127).astype(np.int64)


def step(d: IntLstmDirection, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple:
    """One time step: int8 ``x`` [B, I], int8 ``h`` [B, H], int16 Q3.12 ``c`` [B, H] -> (h, c)."""
    h_new, c_new, _ = step_y(d, x, h, c)
    return h_new, c_new


def step_y(d: IntLstmDirection, x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple:
    """:func:`step` and this step's int8 Y: (h, c, y)."""
    xc, hc = x.astype(np.int64) - d.x_zp, h.astype(np.int64) - d.h_zp
    z = d.w_requant(xc @ d.w.T + d.bias) + d.r_requant(hc @ d.r.T)
    if d.low is not None:
        z = z + d.low.w_requant(xc @ d.low.w.T) + d.low.r_requant(hc @ d.low.r.T)
    z = np.clip(z, -32768, 32767)
    hidden = d.r.shape[1]
    i, o, f, g = (z[:, k * hidden:(k + 1) * hidden] for k in range(4))
    sigmoid, tanh = activations(d.table_bits)
    i, o, f, g = sigmoid(i), sigmoid(o), sigmoid(f), tanh(g)
    c_new = rounding_shift(f * c, ACT_BITS) + rounding_shift(i * g, 2 * ACT_BITS - d.cell_bits)
    c_new = np.clip(c_new, -32768, 32767)
    product = o * (tanh(c_new) if d.cell_bits == GATE_BITS else cell_tanh(d.cell_bits)(c_new))
    multiplier, shift = d.h_out
    h_new = np.clip(apply_scale_32(product, multiplier, shift) + d.h_zp, -128, 127)
    return h_new, c_new, (h_new if d.y_out is None else d.y_out(product))


def run(d: IntLstmDirection, xs: np.ndarray, h0: Optional[np.ndarray] = None,
        c0: Optional[np.ndarray] = None, reverse: bool = False) -> tuple:
    """int8 ``xs`` [T, B, I] -> (int8 Y [T, B, H], int8 h_T, int16 c_T), forward or reverse (Y at
    ``d.y_out`` when it has its own quantization)."""
    steps, batch = xs.shape[0], xs.shape[1]
    hidden = d.r.shape[1]
    h = np.full((batch, hidden), d.h_zp, np.int64) if h0 is None else h0.astype(np.int64)
    c = np.zeros((batch, hidden), np.int64) if c0 is None else c0.astype(np.int64)
    ys = [None] * steps
    for t in (reversed(range(steps)) if reverse else range(steps)):
        h, c, ys[t] = step_y(d, xs[t], h, c)
    return np.stack(ys), h, c


@dataclass(frozen=True, eq=False)
class IntLstmPlan:
    """The integer parameters of every direction of one LSTM (hashed by identity, so it can sit in op
    attributes): ``reverse`` per direction."""
    directions: tuple
    reverse: tuple


def quantize_cell(c: np.ndarray, cell_bits: int = GATE_BITS) -> np.ndarray:
    """A float cell state in the assumed format (Q3.12 by default, saturating at |c| = 8)."""
    return np.clip(np.rint(c * (1 << cell_bits)), -32768, 32767).astype(np.int64)


def cell_tanh(cell_bits: int) -> Table8:
    """:data:`TANH8` (input scale 2**-5) for a cell state with ``cell_bits`` fraction bits."""
    return Table8(cell_bits - 5, TANH8.entries, TANH8.zp, TANH8.widen)
