"""Quantized FILL (int8, uint8, int16): the value tensor's stored bits copied, as fill.cc does.

fill.cc ``Prepare`` requires the value and output to share scale and zero point
(and zero point 0 for int16), then ``Eval`` copies the value's bytes by their
size (``TF_LITE_FILL(int8_t)`` for 8-bit types), so the quantized form is the
plain FILL on storage. A uint8 constant value becomes int8 storage holding the
same bits first (:func:`..qmath.qtensor`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..qhelpers_data import same_quant
from ..qmath import qtensor
from ..quant import zero_point
from ..reader import ConvertError
from ..registry import converter
from .indexing import convert_fill

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext


@converter("FILL", form="quantized")
def convert_q_fill(ctx: TfliteContext, node: OpReader) -> Converted:
    same_quant(node, inputs=(1,))
    value = node.input_infos[1]
    if value.type_name == "INT16" and zero_point(value):
        raise ConvertError(f"quantized int16 FILL '{node.name}' needs zero point 0 (fill.cc refuses "
                           f"{zero_point(value)})")
    qtensor(ctx, node, 1)
    return convert_fill(ctx, node)
