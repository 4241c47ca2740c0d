"""``DequantizeLinear -> LSTM (float W, R, B) -> layout ops, clamps -> QuantizeLinear`` as an integer LSTM.

onnxruntime's quantizer leaves ONNX ``LSTM`` float. Under ``--profile int``
(``ctx.quantize_weights``) this rule replaces the float RECURRENT op feeding a
QuantizeLinear (through Transpose/Reshape/Squeeze/Unsqueeze and Relu/Clip) by
the all-integer unrolled LSTM of :mod:`tosaconv.lowering.int_lstm_emit`
(int8-TABLE form, the one Vela accepts): x at its DequantizeLinear's
parameters; h at the QuantizeLinear's when Y reaches it through layout ops
only, else at Q0.7 with Y rescaled on its own and clamped (a Relu cuts off the
negative half of h the recurrence needs); W and R quantized by tosaconv (int8
pairs, 16-bit in effect; int8 alone under ``--npu-fast``); the cell state in
Q3.12 (|c| < 8 assumed), or Q8.7 (|c| < 256) when the caller carries the state.
QDQ carries no cell-state range, so the W-WEIGHTS-QUANTIZED warning names the
op and the assumption. See docs/integer-lstm.md.

Initial states may be absent, constant (quantized here), or, under
``--int-io``, model inputs read only by the LSTM (silero's ``h``, ``c``): those
become integer inputs, and ``Y_h``/``Y_c`` model outputs integer outputs, with
tosaconv's formats recorded in the report's ``io`` (:mod:`..int_io`).

Only the plain case is taken otherwise: layout 0, constant float W/R/B, no
peepholes, clip, input_forget or sequence_lens, default activations. The
sequence length may be symbolic: the integer LSTM is one RECURRENT op with
:class:`~tosaconv.lowering.int_lstm_emit.IntRecurrentAttrs` (int8 X, optional
int8 h0 and int16 c0), unrolled by :mod:`tosaconv.passes.decay_recurrent` once
it is bound. Anything else raises NotMine/NoFold so the float island keeps its
reason.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ....diagnostics import Diagnostic, Severity
from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from ....lowering import int_lstm
from ....lowering.int_lstm_emit import IntRecurrentAttrs
from ..int_io import is_state_input, state_input, state_output
from .qdq_core import LAYOUT, NoFold, NotMine, activation, emit_activation, replay, trace
from .qdq_weights import CODE, float_constant

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ..context import ImportContext

DEFAULT_ACTIVATIONS = ("Sigmoid", "Tanh", "Tanh")
Y_LAYOUT = LAYOUT + (Op.COLLAPSE_DIMS, Op.EXPAND_DIMS)     # Squeeze and Unsqueeze too


def lstm_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    rec, post, clamps = _find(x)
    attrs = rec.attrs
    if not getattr(ctx, "quantize_weights", False):
        raise NoFold("a float LSTM: its integer form quantizes its float weights, which tosaconv does only "
                     "under --profile int")
    _check_attrs(attrs)
    operands = _operands(rec)
    act = activation(trace(ctx, rec.operands[0], LAYOUT))
    dirs = 2 if attrs.direction == "bidirectional" else 1
    w, r = _const(operands["W"], "W"), _const(operands["R"], "R")
    b = _const(operands["B"], "B") if "B" in operands else None
    h_scale, h_zp, y_out = _h_format(y_scale, y_zp, clamps)
    states = {name: _state(ctx, operands.get(name), name) for name in ("initial_h", "initial_c")}
    cell_bits = int_lstm.STATE_CELL_BITS if _carries_state(ctx, rec, states) else int_lstm.GATE_BITS
    directions = tuple(int_lstm.quantize_direction(w[k], r[k], None if b is None else b[k], act.scale, act.zp,
                                                   h_scale, h_zp, table_bits=8, y_out=y_out, cell_bits=cell_bits,
                                                   split_weights=not getattr(ctx, "npu_fast", False))
                       for k in range(dirs))
    plan = int_lstm.IntLstmPlan(directions, tuple(attrs.direction == "reverse" or k == 1 for k in range(dirs)))
    initial = [_emit_state(ctx, states[n], n, h_scale, h_zp, cell_bits) for n in ("initial_h", "initial_c")]
    fields = {f.name: getattr(attrs, f.name) for f in dataclasses.fields(attrs)}
    fields.update(has_bias=False, has_initial_h=initial[0] is not None, has_initial_c=initial[1] is not None)
    int_attrs = IntRecurrentAttrs(**fields, int_plan=plan)
    wq = ctx.b.const(np.stack([d.w for d in directions]).astype(np.int8))
    rq = ctx.b.const(np.stack([d.r for d in directions]).astype(np.int8))
    results = ctx.b.create(Op.RECURRENT, [emit_activation(ctx, act), wq, rq] + [v for v in initial if v is not None],
                           int_attrs).results
    _state_outputs(ctx, rec, results, h_scale, h_zp, cell_bits)
    _note(ctx, rec, max(max(_weight_error(w[k], d.w, d.low), _weight_error(r[k], d.r, d.low, "r"))
                        for k, d in enumerate(directions)), cell_bits, directions)
    return replay(ctx, results[0], post)


def _find(x: Value) -> tuple[Operation, list, list]:
    """The RECURRENT LSTM op whose Y reaches ``x`` through layout ops and clamps (Relu, Clip), the layout
    ops in order, and the clamps."""
    post, clamps, v = [], [], x
    while v.producer is not None and (v.producer.op in Y_LAYOUT or v.producer.op is Op.CLAMP):
        (clamps if v.producer.op is Op.CLAMP else post).append(v.producer)
        v = v.producer.operands[0]
    p = v.producer
    if p is None or p.op is not Op.RECURRENT or p.attrs.cell != "LSTM":
        raise NotMine("not an LSTM")
    if p.results[0] is not v:
        raise NoFold("an LSTM's Y_h or Y_c is quantized (only Y has an integer form)")
    return p, post[::-1], clamps


def _h_format(y_scale: float, y_zp: int, clamps: list) -> tuple:
    """(h's scale, h's zero point, Y's own YOut or None). Y reaching its QuantizeLinear through layout ops
    only: h is quantized as Y is. Through a clamp: that QuantizeLinear's range lacks h's negative half,
    which the recurrence and the state need, so h is Q0.7 (h = o * tanh(c) lies in (-1, 1)) and Y is
    rescaled on its own, then clamped as the clamp would (rounding is monotonic)."""
    if not clamps:
        return y_scale, y_zp, None
    lo = max(_quantized_bound(c.attrs.min_val, y_scale, y_zp) for c in clamps)
    hi = min(_quantized_bound(c.attrs.max_val, y_scale, y_zp) for c in clamps)
    return int_lstm.H_SCALE, 0, int_lstm.YOut.of(y_scale, y_zp, lo, hi)


def _quantized_bound(bound: float, y_scale: float, y_zp: int) -> int:
    return int(np.clip(np.rint(np.float64(bound) / y_scale) + y_zp, -128, 127))


def _check_attrs(attrs: A.RecurrentAttrs) -> None:
    names = tuple(n for n, _, _ in A.parse_activations(attrs.activations))
    if attrs.layout != 0:
        raise NoFold("an LSTM with layout 1 has no integer form in tosaconv")
    if attrs.has_peepholes or attrs.has_sequence_lens or attrs.clip or attrs.input_forget:
        raise NoFold("an LSTM with peepholes, sequence_lens, clip or input_forget has no integer form")
    if any(n != DEFAULT_ACTIVATIONS[i % 3] for i, n in enumerate(names)):
        raise NoFold("an LSTM with non-default activations has no integer form")


def _operands(rec: Operation) -> dict:
    names = ["X", "W", "R"] + [n for n, flag in (("B", "has_bias"), ("sequence_lens", "has_sequence_lens"),
                                                  ("initial_h", "has_initial_h"), ("initial_c", "has_initial_c"),
                                                  ("P", "has_peepholes")) if getattr(rec.attrs, flag)]
    return dict(zip(names, rec.operands))


def _const(v: Value, name: str) -> np.ndarray:
    arr = float_constant(v)
    if arr is None:
        raise NoFold(f"the LSTM's {name} is not a float constant")
    return arr


def _state(ctx: ImportContext, v: Optional[Value], name: str) -> Union[np.ndarray, Value, None]:
    """An initial state: None (absent or all zeros), a float constant, or a planned --int-io state input
    (checked now, emitted after every other check passed: :func:`_emit_state`)."""
    if v is None:
        return None
    arr = float_constant(v)
    if arr is not None:
        return None if not np.any(arr) else arr
    if is_state_input(ctx, v):
        return v
    if v.producer is None:
        raise NoFold(f"the LSTM's {name} is the float graph input '{v.name}' (with --int-io it becomes an "
                     "integer state input)")
    raise NoFold(f"the LSTM's {name} is computed (the integer form takes a constant or a model input)")


def _carries_state(ctx: ImportContext, rec: Operation, states: dict) -> bool:
    """The LSTM's state comes from or goes to the model's caller (an --int-io state input or output)."""
    if any(isinstance(s, Value) for s in states.values()):
        return True
    return ctx.int_io is not None and any(n in ctx.int_io.states and ctx.values.get(n) in rec.results[1:]
                                          for n in ctx.int_io.states)


def _cell_what(cell_bits: int) -> str:
    limit = 2 ** (15 - cell_bits)
    return (f"the integer LSTM's cell state, Q{15 - cell_bits}.{cell_bits}: |c| < {limit} assumed, saturating "
            "beyond")


def _emit_state(ctx: ImportContext, state: Union[np.ndarray, Value, None], name: str, h_scale: float, h_zp: int, cell_bits: int) -> Optional[Value]:
    """The integer initial state: int8 h at h's (scale, zero point), int16 c with ``cell_bits`` fraction bits."""
    if state is None:
        return None
    if name == "initial_h":
        if isinstance(state, np.ndarray):
            return ctx.b.const(np.clip(np.rint(state / h_scale) + h_zp, -128, 127).astype(np.int8))
        return state_input(ctx, state.name, DType.INT8, h_scale, h_zp, _H_WHAT)
    if isinstance(state, np.ndarray):
        return ctx.b.const(int_lstm.quantize_cell(state, cell_bits).astype(np.int16))
    return state_input(ctx, state.name, DType.INT16, 2.0 ** -cell_bits, 0, _cell_what(cell_bits))


_H_WHAT = "the integer LSTM's h, which lies in (-1, 1)"


def _state_outputs(ctx: ImportContext, rec: Operation, results: Sequence[Value], h_scale: float, h_zp: int, cell_bits: int) -> None:
    """Y_h and Y_c that --int-io plans as state outputs: the integer LSTM's final h and c."""
    if ctx.int_io is None:
        return
    names = {v: n for n, v in ctx.values.items() if n in ctx.int_io.states}
    for k, (scale, zp, what) in ((1, (h_scale, h_zp, _H_WHAT)), (2, (2.0 ** -cell_bits, 0, _cell_what(cell_bits)))):
        name = names.get(rec.results[k])
        if name is not None:
            state_output(ctx, name, rec.results[k], results[k], scale, zp, what)


def _weight_error(w: np.ndarray, q: np.ndarray, low: Optional[int_lstm.LowWeights], which: str = "w") -> float:
    """The largest |w - its integer form| relative to its row's largest |w| (int_lstm.quantize_direction's
    per-row scale ``max|w| / 127``, and the residual at 1/256 of it when ``low`` holds one)."""
    top = np.abs(w).max(axis=1, keepdims=True)
    scale = np.maximum(top, 1e-30) / 127.0
    residual = 0.0 if low is None else getattr(low, which) / 256.0
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(top > 0, np.abs(w - (q + residual) * scale) / top, 0.0)
    return float(rel.max(initial=0.0))


def _weights_what(directions: Sequence[int_lstm.IntLstmDirection]) -> str:
    if directions[0].low is None:
        return "int8 (symmetric, per gate row; --npu-fast)"
    return ("int8 pairs (symmetric per gate row, plus the rounding residual at 1/256 of that scale: two int8 "
            "products each, 16-bit weights in effect)")


def _note(ctx: ImportContext, rec: Operation, error: float, cell_bits: int, directions: Sequence[int_lstm.IntLstmDirection]) -> None:
    warnings = ctx.graph.import_warnings
    if any(d.code == CODE and d.location == rec.location for d in warnings):
        return
    warnings.append(Diagnostic(
        CODE, f"{rec.location} is a float LSTM between a DequantizeLinear and a QuantizeLinear; --profile int "
        f"quantized its W and R to {_weights_what(directions)}: largest relative weight error "
        f"{100 * error:.3f} %; its cell state is int16 Q{15 - cell_bits}.{cell_bits}, assuming "
        f"|c| < {2 ** (15 - cell_bits)} (not calibrated: larger values saturate)",
        rec.location, notes=("the model's own numbers are float weights and a float cell state: Y can differ "
                             "from onnxruntime's by a few units",),
        hint=f"quantize the LSTM in the model yourself if its cell state can exceed {2 ** (15 - cell_bits)} in "
             "magnitude",
        severity=Severity.WARNING))
