"""``--int-io`` for both importers: the program takes and returns integers, as a device feeds them.

A quantized model often keeps float edges around its integer body: a
QUANTIZE (ONNX QuantizeLinear) right after each float input and a DEQUANTIZE
(DequantizeLinear) right before each float output. A device, and Vela, which
runs nothing in float, wants the int8 tensors themselves. With ``--int-io``
each importer removes those edge ops where it knows them best (the TFLite
importer from the op list, the ONNX one in its QuantizeLinear converter and
at the graph outputs), keeps the model's input and output names, and records
each edge's scale and zero point on the graph (:mod:`tosaconv.ir.io_quant`).

What this module holds is what both share: the edge record, the signed form
of uint8 quantization (TOSA has no unsigned tensors: uint8 ``q`` travels as
int8 ``q - 128`` with the zero point moved by 128, exactly), retyping a graph
input that no op reads yet, and the refusals. A float edge that ``--int-io``
cannot make integer (no QUANTIZE after the input, no DEQUANTIZE before the
output) is an error, not a warning: the flag promises an all-integer
interface, and a float edge left in silently would break that promise on
the device (Vela rejects it). So is an input that feeds a QUANTIZE *and*
float ops: removing the QUANTIZE would leave those ops without their float
input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import ConversionError, Diagnostic
from ..ir.graph import Value
from ..ir.io_quant import EdgeQuant
from ..ir.location import Location
from ..ir.types import TensorType

if TYPE_CHECKING:
    from ..ir.dtypes import DType
    from ..ir.graph import Graph



def signed_edge(scale: float, zero_point: int, source_dtype: str, offset: int = 0) -> EdgeQuant:
    """The record of an edge now carried in signed form: unsigned data ``q`` travels as ``q - offset``
    (128 for uint8, 32768 for uint16), so its zero point moves by ``offset`` too."""
    return EdgeQuant(float(scale), int(zero_point) - int(offset), source_dtype)


def retype_input(graph: Graph, name: str, dtype: DType) -> Value:
    """Give graph input ``name`` (read by no op yet) a new element type; its shape, name and place stay."""
    index = [v.name for v in graph.inputs].index(name)
    old = graph.inputs[index]
    graph.inputs[index] = Value(name, TensorType(dtype, old.type.shape))
    return graph.inputs[index]


def edge_problem(kind: str, name: str, why: str, hint: str, source: str, notes: tuple = ()) -> Diagnostic:
    """One refused edge (``kind``: input or output), located at the edge."""
    return Diagnostic("E-INT-IO", f"--int-io: {kind} '{name}' {why}", Location(kind, name, source=source),
                      notes=notes, hint=hint)


def float_input(name: str, dtype: str, quantize: str, source: str, notes: tuple = ()) -> Diagnostic:
    return edge_problem("input", name, f"is {dtype} and is not quantized by a {quantize}",
                        f"--int-io makes integer inputs of float inputs that feed only a {quantize}, directly or "
                        "through layout ops; convert without --int-io to keep the float input", source, notes)


def float_output(name: str, dtype: str, dequantize: str, source: str, notes: tuple = ()) -> Diagnostic:
    return edge_problem("output", name, f"is {dtype} and is not produced by a {dequantize}",
                        f"--int-io makes integer outputs of float outputs that a {dequantize} produces, directly "
                        "or through layout ops; convert without --int-io to keep the float output", source, notes)


def mixed_input(name: str, quantize: str, others: list, source: str, notes: tuple = ()) -> Diagnostic:
    listed = ", ".join(f"{t} '{n}'" for t, n in others[:4]) + (", ..." if len(others) > 4 else "")
    return edge_problem("input", name, f"feeds a {quantize} and also {len(others)} other op(s) that read it as "
                        f"float ({listed})",
                        "--int-io can remove the quantize only when nothing else reads the float input; "
                        "convert without --int-io, or quantize that input once in the model", source, notes)


def refuse(problems: list) -> None:
    if problems:
        raise ConversionError(problems)
