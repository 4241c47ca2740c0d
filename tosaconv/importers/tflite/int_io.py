"""``--int-io`` in the TFLite importer, and the quantization of the model's integer edges.

The op list says exactly where the float edges are: a QUANTIZE reading a
graph input and a DEQUANTIZE writing a graph output. :func:`plan` finds them
before anything converts (refusing, all at once, every float edge it cannot
remove and every input that also feeds float ops); the driver then declares
such an input with the QUANTIZE's integer type under the model's input name
and skips the QUANTIZE (:func:`declare_input`), and hands out the
DEQUANTIZE's integer input as the output (:func:`output_value`), whose
float ops the dead-code pass then drops.

uint8 edges (``inference_input_type=tf.uint8``: a requantizing QUANTIZE
uint8 -> int8 after the input and int8 -> uint8 before the output) are
integer already, but TOSA has no unsigned tensors: without ``--int-io``
tosaconv carries the uint8 bits in int8 storage (see :mod:`.quant`); with it,
the QUANTIZE is bypassed the same way and the program reads and writes the
int8 body tensors, so every edge is signed. A uint8 edge with no such
QUANTIZE becomes int8 ``q - 128`` (zero point minus 128) through one exact
RESCALE. int8 and int16 edges stay as they are. Every quantized edge's scale
and zero point is recorded on the graph, with or without ``--int-io``.
"""
from __future__ import annotations

from dataclasses import field
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, Union

from ...ir.location import Location
from ...ir.io_quant import EdgeQuant
from .quant import QUANT_TYPES, is_quantized, scale, unsigned, zero_point

if TYPE_CHECKING:
    from ...ir.graph import Value
    from .context import TfliteContext
    from .reader import TfliteModel
    from .reader import OpInfo, Subgraph, TensorInfo

SOURCE = "tflite"
FLOATS = ("FLOAT32", "FLOAT16")


@dataclass
class Plan:
    """The edge ops ``--int-io`` removes: by graph input / output tensor index, the op to bypass."""

    inputs: dict = field(default_factory=dict)     # input index -> the QUANTIZE reading it
    outputs: dict = field(default_factory=dict)    # output index -> the DEQUANTIZE or QUANTIZE writing it
    bypass: set = field(default_factory=set)       # indices of main-subgraph ops not converted


def _is(op: Optional[OpInfo], op_type: str) -> bool:
    return op is not None and not op.custom and op.op_type == op_type


def _per_tensor(info: TensorInfo) -> bool:
    return is_quantized(info) and not info.quant.per_channel and info.data is None


def _dtype(info: TensorInfo) -> str:
    return info.type_name.lower()


def plan(model: TfliteModel, names: dict) -> Plan:
    """The edges of ``model``'s main subgraph that ``--int-io`` makes integer (``names``: tensor index ->
    the program's name for each input and output); every edge it cannot is refused in one error."""
    # here and below: the shared int-io helpers, only for --int-io and uint8 edges (start-up, issue 13)
    from ..int_io import refuse
    sub, out, problems = model.graphs[0] if model.graphs else model, Plan(), []
    for index in sub.inputs:
        problems += _plan_input(sub, index, names[index], out)
    for index in sub.outputs:
        problems += _plan_output(sub, index, names[index], out)
    refuse(problems)
    return out


def _plan_input(sub: Union[Subgraph, TfliteModel], index: int, name: str, out: Plan) -> list:
    from ..int_io import float_input, mixed_input
    t = sub.tensors[index]
    readers = [op for op in sub.ops if index in op.inputs]
    quantizes = [op for op in readers if _is(op, "QUANTIZE") and _per_tensor(sub.tensors[op.outputs[0]])]
    if quantizes and (t.type_name in FLOATS or unsigned(t)):
        others = [(op.op_type, sub.tensors[op.outputs[0]].name if op.outputs else "?")
                  for op in readers if op is not quantizes[0]]
        if others:
            return [mixed_input(name, "QUANTIZE", others, SOURCE)]
        out.inputs[index] = quantizes[0]
        out.bypass.add(quantizes[0].index)
        return []
    return [float_input(name, _dtype(t), "QUANTIZE", SOURCE)] if t.type_name in FLOATS else []


def _plan_output(sub: Union[Subgraph, TfliteModel], index: int, name: str, out: Plan) -> list:
    from ..int_io import float_output
    t = sub.tensors[index]
    p = next((op for op in sub.ops if index in op.outputs), None)
    source = sub.tensors[p.inputs[0]] if p is not None and p.inputs else None
    if _is(p, "DEQUANTIZE") and _per_tensor(source) or \
            _is(p, "QUANTIZE") and unsigned(t) and _per_tensor(source) and not unsigned(source):
        out.outputs[index] = p
        return []
    return [float_output(name, _dtype(t), "DEQUANTIZE", SOURCE)] if t.type_name in FLOATS else []


def _edge(info: TensorInfo, source_dtype: str, signed: bool) -> EdgeQuant:
    if signed:
        from ..int_io import signed_edge
        return signed_edge(scale(info), zero_point(info), source_dtype, 128 if unsigned(info) else 0)
    return EdgeQuant(scale(info), zero_point(info), source_dtype, unsigned(info))


def declare_input(ctx: TfliteContext, index: int, name: str) -> None:
    """Record graph input ``index``'s quantization; with ``--int-io``, make it the signed integer
    tensor the model quantizes it to (its QUANTIZE is then skipped)."""
    t, q = ctx.sub.tensors[index], ctx.int_io.inputs.get(index) if ctx.int_io else None
    info = ctx.sub.tensors[q.outputs[0]] if q is not None else t
    if not _per_tensor(info):
        return
    if ctx.int_io is None or (q is None and not unsigned(t)):
        ctx.graph.input_quant[name] = _edge(t, _dtype(t), signed=False)
        return
    from ..int_io import retype_input
    from .qmath import to_unsigned   # here and below: only --int-io and uint8 edges need it (start-up, issue 13)
    key = ctx.keys[q.outputs[0]] if q is not None else ctx.keys[index]
    ctx.values.pop(ctx.keys[index], None)
    v = retype_input(ctx.graph, name, QUANT_TYPES[info.type_name])
    with ctx.b.at(Location("input", name, source=SOURCE)):
        ctx.values[key] = to_unsigned(ctx, v) if unsigned(info) else v
    ctx.graph.input_quant[name] = _edge(info, _dtype(t), signed=True)


def output_value(ctx: TfliteContext, index: int, name: str, v: Value) -> Value:
    """The value of graph output ``index`` (``v``, or with ``--int-io`` the signed integer tensor its
    DEQUANTIZE or uint8 QUANTIZE reads), its quantization recorded."""
    t, p = ctx.sub.tensors[index], ctx.int_io.outputs.get(index) if ctx.int_io else None
    info = ctx.sub.tensors[p.inputs[0]] if p is not None else t
    if not _per_tensor(info):
        return v
    if ctx.int_io is None or (p is None and not unsigned(t)):
        ctx.graph.output_quant[name] = _edge(t, _dtype(t), signed=False)
        return v
    from .qmath import signed_input
    if p is not None:
        v = ctx.tensor(ctx.keys[p.inputs[0]])
    ctx.graph.output_quant[name] = _edge(info, _dtype(t), signed=True)
    return signed_input(ctx, v, info)[0]
