"""Quantized TFLite comparisons, MAXIMUM, MINIMUM and SELECT / SELECT_V2.

- EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL on int8/uint8
  (comparisons.cc ``ComparisonQuantized``, reference ``ComparisonWithScaling``):
  both sides become ``MultiplyByQuantizedMultiplier((q - zp) << 8, scale)``
  with the multiplier from each input's own scale (``QuantizeMultiplier``),
  whatever the scales are, then compare as int32 -- so two values that round
  to the same scaled integer compare equal, as in TFLite. On int16, LiteRT
  scales the same way for EQUAL and NOT_EQUAL but compares the stored
  integers for the orderings (found by running it); tosaconv does the same.
  An input scale >= 1 is refused: ``MultiplyByQuantizedMultiplierSmallerThanOneExp``
  then shifts by a negative amount, which its reference kernel does not define.
- MAXIMUM / MINIMUM (maximum_minimum.cc): the kernel takes the max/min of the
  stored integers and does not look at scales or zero points (the converter
  gives all three tensors one scale); tosaconv does the same, in int32 (TOSA
  has no int8 MAXIMUM), uint8 compared as unsigned.
- SELECT / SELECT_V2 (select.cc) move stored values: one SELECT on the
  storage type (uint8 bits are preserved as they are).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.int32_ops import input_as_int32, int32_to_output
from ....lowering.typed import compare
from ..qmath import qtensor, same_types, scale_int32, shifted_int32
from ..quant import scale
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader


def _scaled(ctx: TfliteContext, node: OpReader, i: int, raw_int16: bool) -> Value:
    info = node.input_infos[i]
    x = qtensor(ctx, node, i)
    if info.type_name == "INT16" and raw_int16:
        return input_as_int32(ctx, x, info.type_name)
    if not float(scale(info)) < 1.0:
        raise ConvertError(f"quantized {node.op_type} with input scale {float(scale(info))!r} >= 1 is not "
                           "supported: TFLite's kernel scales with MultiplyByQuantizedMultiplierSmallerThanOneExp, "
                           "which is not defined for multipliers >= 1; requantize the input below scale 1")
    return scale_int32(ctx, shifted_int32(ctx, x, info, 8), float(scale(info)))


def _comparison(op: OpDef, swap: bool = False, negate: bool = False) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        _check_inputs(node)
        raw_int16 = op is not Op.EQUAL      # LiteRT scales int16 only for EQUAL / NOT_EQUAL
        a, b = (_scaled(ctx, node, i, raw_int16) for i in range(2))
        y = compare(ctx, op, *((b, a) if swap else (a, b)))
        return ctx.b.emit(Op.LOGICAL_NOT, y) if negate else y
    return convert


def _check_inputs(node: OpReader) -> None:
    names = {i.type_name for i in node.input_infos[:2]}
    if len(names) != 1 or not names <= {"INT8", "UINT8", "INT16"}:
        raise ConvertError(f"quantized {node.op_type} on {sorted(names)} is not supported: TFLite compares two "
                           "inputs of one type (int8, uint8 or int16)")


for _name, _args in {"EQUAL": (Op.EQUAL,), "NOT_EQUAL": (Op.EQUAL, False, True), "GREATER": (Op.GREATER,),
                     "GREATER_EQUAL": (Op.GREATER_EQUAL,), "LESS": (Op.GREATER, True),
                     "LESS_EQUAL": (Op.GREATER_EQUAL, True)}.items():
    converter(_name, form="quantized")(_comparison(*_args))


def _extremum(op: OpDef) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        same_types(node)
        a, b = (input_as_int32(ctx, qtensor(ctx, node, i), node.input_infos[i].type_name) for i in range(2))
        return int32_to_output(ctx, ctx.b.emit(op, a, b, attrs=A.NanModeAttrs()), node.output_infos[0].type_name)
    return convert


converter("MAXIMUM", form="quantized")(_extremum(Op.MAXIMUM))
converter("MINIMUM", form="quantized")(_extremum(Op.MINIMUM))


@converter("SELECT", "SELECT_V2", form="quantized")
def convert_q_select(ctx: TfliteContext, node: OpReader) -> Converted:
    infos = node.input_infos[1:3] + [node.output_infos[0]]
    if len({i.type_name for i in infos}) != 1:
        raise ConvertError(f"quantized {node.op_type} mixes {sorted({i.type_name for i in infos})}; TFLite "
                           "selects between two inputs of the output's type")
    c = ctx.tensor(node.inputs[0])
    return ctx.b.emit(Op.SELECT, c, qtensor(ctx, node, 1), qtensor(ctx, node, 2))
