"""The converter for onnxruntime's com.microsoft QGemm (the QOperator form of a quantized Gemm).

Inputs, from onnxruntime's schema and CPU kernel: ``A, a_scale, a_zp, B,
b_scale, b_zp, C, y_scale, y_zp`` with attributes ``alpha``, ``transA``,
``transB`` (no ``beta``: the quantizer folds it into C). A is per tensor; B
per tensor or per output column (one scale and zero point for each of the N
columns, so on B's axis 1, or axis 0 when ``transB``). The kernel adds the
int32 C to the integer accumulator and scales the sum once::

    Y = alpha * a_scale * b_scale * ((A - a_zp)' (B - b_zp)' + C)

which is the float Gemm with ``alpha`` on the dequantized operands and C
dequantized with scale ``alpha * a_scale * b_scale``. With ``y_scale`` the
result is quantized (to the type of ``y_zp``, else of A); without it Y is
that float result. Built like QLinearConv (:mod:`.qlinear_base`), so the QDQ
folding makes it one integer MATMUL.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ms_domain import MS
from ..reader import ConvertError
from ..registry import converter
from .qlinear_base import bias_scale, dequantize_input, requantize, run_float
from .qtypes import INT32, QParams, read_qtensor
from .quant import recorded_dequantize

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader
    from .qtypes import Param


@converter("QGemm", since=1, domain=MS)
def convert_qgemm(ctx: ImportContext, node: NodeReader) -> Converted:
    alpha, trans_b = node.attr("alpha"), node.attr("transB")
    a, a_params = dequantize_input(ctx, node, 0, 1, 2)
    b, b_params = dequantize_input(ctx, node, 3, 4, 5, axis=0 if trans_b else 1)
    c = _bias(ctx, node, bias_scale(ctx, a_params, b_params, alpha)) if node.input(6) else None
    attrs = {"alpha": alpha, "transA": node.attr("transA"), "transB": trans_b}
    y = run_float(ctx, node, "Gemm", [a, b, c], attrs)
    if node.input(7) is None:
        return y
    return requantize(ctx, node, y, 7, 8)


def _bias(ctx: ImportContext, node: NodeReader, scale: Param) -> Value:
    """C as float: per tensor, or per column on C's last axis (C is [N], [1, N] or [M, N])."""
    data = read_qtensor(ctx, node.input(6), INT32)
    count = scale.size if isinstance(scale, np.ndarray) else int(np.prod(scale.type.static_shape()))
    if count == 1:
        return recorded_dequantize(ctx, data, QParams(scale, None))
    rank = np.ndim(data.const) if data.value is None else data.value.type.rank
    if rank == 0:
        raise ConvertError("QGemm with per-column B scales and a scalar C is not supported "
                           "(give C one value per output column)")
    return recorded_dequantize(ctx, data, QParams(scale, None, rank - 1))
