"""What control-flow converters of both importers share: conditions and results of inlined bodies.

A TOSA condition (COND_IF, WHILE_LOOP) is a rank-0 bool tensor; ONNX and
TFLite give one-element bool tensors of any rank, reshaped by
:func:`bool_scalar`. A body inlined at import (a branch the bindings decide,
an unrolled loop) may yield import-time constants, which :func:`results`
records under the op's output names instead of emitting CONSTs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.dtypes import DType
from .dims import reshape
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext


def results(ctx: LoweringContext, outputs: list, helds: list) -> list:
    """Converter results for the op outputs named ``outputs``: constants are recorded under the output
    names (so they stay import-time constants), the rest returned."""
    out = []
    for name, held in zip(outputs, helds):
        if isinstance(held, np.ndarray) and name:
            ctx.set_const(name, held)
            held = None
        out.append(held)
    return out


def bool_scalar(ctx: LoweringContext, v: Value, what: str) -> Value:
    """``v`` as the rank-0 bool tensor TOSA conditions are."""
    if v.type.dtype is not DType.BOOL or not all(isinstance(d, int) and d == 1 for d in v.type.shape):
        raise ConvertError(f"{what} must be a one-element bool tensor, got {v.type}")
    return reshape(ctx, v, [])
