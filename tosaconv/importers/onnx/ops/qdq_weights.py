"""Float weights between DequantizeLinear and QuantizeLinear, quantized by tosaconv under ``--profile int``.

onnxruntime's quantizer leaves some ops float with float weights inside an
otherwise integer model (in QOperator form a ConvTranspose: ``DequantizeLinear
-> ConvTranspose(float W, B) -> QuantizeLinear``). Such an op can only run on
an integer-only target if someone quantizes its weights, and that changes the
model's numbers, so tosaconv does it only when the user asked for an integer
program (``--profile int``) and says so with a warning naming each op and its
largest relative weight error.

The weights (a float constant, possibly through layout ops the converter
built) are quantized **symmetrically per output channel** to int8 in
``[-127, 127]``: ``s_c = max|w_c| / 127``, ``q = rint(w / s_c)``, so each
element is off by at most ``s_c / 2``, i.e. ``0.5 / 127`` (0.39 %) of its
channel's largest weight. An all-zero channel takes the smallest other scale.
The bias then goes to int32 at ``s_in * s_c`` through the same path as any
float bias, and the integer core and requantization do the rest.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ....diagnostics import Diagnostic, Severity
from ....ir.graph import Value
from ....ir.ops import Op
from .qdq_core import LAYOUT, Weights, replay_numpy

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ..context import ImportContext

CODE = "W-WEIGHTS-QUANTIZED"


def float_constant(v: Value) -> Optional[np.ndarray]:
    """The float constant ``v`` is (through layout ops), in the core's layout; None when it is not one."""
    ops = []
    while v.producer is not None and v.producer.op in LAYOUT:
        ops.append(v.producer)
        v = v.producer.operands[0]
    p = v.producer
    if p is None or p.op is not Op.CONST or not v.type.dtype.is_float:
        return None
    return replay_numpy(np.asarray(p.attrs.values, dtype=np.float64), ops[::-1])


def quantize_symmetric(w: np.ndarray, channel_axes: tuple) -> tuple:
    """(Weights with int8 data in [-127, 127] and one scale per output channel, the largest relative
    error ``|w - s*q| / max|w_c|`` over all channels)."""
    other = tuple(i for i in range(w.ndim) if i not in channel_axes)
    top = np.max(np.abs(w), axis=other, keepdims=True)
    scale = top / 127.0
    nonzero = scale[scale > 0]
    scale = np.where(scale > 0, scale, nonzero.min() if nonzero.size else 1.0)
    q = np.clip(np.rint(w / scale), -127, 127)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(top > 0, np.abs(w - q * scale) / top, 0.0)
    vector = np.broadcast_to(scale, w.shape)[tuple(0 if i in other else slice(None) for i in range(w.ndim))]
    weights = Weights(np.asarray(vector, dtype=np.float64).reshape(-1), q.astype(np.int64),
                      np.zeros(w.shape, np.int64))
    return weights, float(rel.max(initial=0.0))


def note_quantized(ctx: ImportContext, core: Operation, error: float) -> None:
    """The warning, once per core op, when its integer form is emitted."""
    key, warnings = str(core.location), ctx.graph.import_warnings
    if any(d.code == CODE and d.location == core.location for d in warnings):
        return
    warnings.append(Diagnostic(
        CODE, f"{key} has float weights between a DequantizeLinear and a QuantizeLinear; --profile int quantized "
        f"them to int8 (symmetric, per output channel): largest relative weight error {100 * error:.3f} %",
        core.location, notes=("the model's own numbers are float weights: this op's results can differ from "
                              "onnxruntime's by more than the usual rounding",),
        hint="quantize this op's weights in the model (e.g. onnxruntime's QDQ format) to choose their "
             "quantization yourself", severity=Severity.WARNING))
