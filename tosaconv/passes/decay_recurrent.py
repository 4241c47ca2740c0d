"""Decay rule of RECURRENT (ONNX LSTM, GRU, RNN): unroll the recurrence into static TOSA.

Once binding fixes the sequence length, every operand is static and the op
becomes one set of ops per time step through
:func:`tosaconv.lowering.recurrent_unroll.unroll` (which explains the
design, and which the interpreter's kernel shares). An operand still
symbolic after binding means the length is only known when the model runs.
"""
from __future__ import annotations

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Operation, Value, describe_value
from ..ir.ops import Op
from ..lowering.recurrent_unroll import unroll
from .decay import EXACT, DataDependentDim, decays


@decays(Op.RECURRENT, needs=EXACT)
def decay_recurrent(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    attrs = op.attrs_as(A.RecurrentAttrs)
    unknown = [v for v in operands if not v.type.is_static]
    if unknown:
        raise DataDependentDim(op, f"RECURRENT ({attrs.cell}) at {op.location} is unrolled into one set of "
                                   f"ops per time step, but its input {describe_value(unknown[0])} has shape "
                                   f"{unknown[0].type} after binding: the sequence length is only known when "
                                   "the model runs")
    return unroll(b, attrs, operands)
