"""Decay rule of DYN_PAD: an ONNX Pad whose amounts were computed from symbolic shapes.

Once binding makes every amount an int, the pad is lowered exactly as a Pad
with constant amounts is at import (:func:`tosaconv.lowering.pad.pad_static`):
negative amounts crop with a SLICE, zero amounts vanish, constant mode is one
PAD and edge/reflect/wrap are CONCATs of slices. An amount that the bindings
do not determine (it was read from tensor data) fails with the op's location.
A bound amount that the mode cannot take (a reflect pad as large as its dim,
a crop that empties an axis) is a shape error naming the amounts.
"""
from __future__ import annotations

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Operation, Value
from ..ir.ops import Op
from ..ir.shape_rules import ShapeRuleError
from ..lowering.context import LoweringContext
from ..lowering.errors import ConvertError
from ..lowering.pad import pad_static
from ..symbolic.constraints import ConstraintFailed
from .decay import EXACT, decays, index_value


class _BoundContext(LoweringContext):
    """The lowering context the static pad lowering needs, writing through the specialization's builder
    (constraints on the bound ints are decided at once: a false one raises)."""

    def __init__(self, b: Builder) -> None:
        super().__init__(b.graph)
        self.b = b


@decays(Op.DYN_PAD, needs=EXACT)
def decay_dyn_pad(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    attrs = op.attrs_as(A.DynPadAttrs)
    pads = [index_value(op, v) for v in operands[1:]]
    before, after = pads[0::2], pads[1::2]
    try:
        return [pad_static(_BoundContext(b), operands[0], before, after, attrs.mode, attrs.pad_const)]
    except (ConvertError, ConstraintFailed) as e:
        raise ShapeRuleError(f"{attrs.mode} Pad by (before {before}, after {after}) of a "
                             f"{list(operands[0].tensor_type.shape)} tensor: {e}") from None
