"""``--int-io`` in the ONNX importer: QDQ models take and return their int8 (or uint8-as-int8) tensors.

In the QDQ form a float graph input goes straight into a QuantizeLinear and
a float graph output comes straight out of a DequantizeLinear.
:func:`plan` finds those nodes before anything converts and refuses, in one
error, every float input or output that has none, and every input that also
feeds other nodes (subgraphs included). Then:

* the QuantizeLinear converter calls :func:`quantized_input` for a planned
  input: the graph input is retyped to the quantized storage type under the
  model's input name, and it *is* the QuantizeLinear's result (uint8 data is
  carried as int8 ``q - 128``, turned into tosaconv's unsigned-bits storage
  by one exact RESCALE whose signed form later readers take directly);
* the driver calls :func:`output_value` for each graph output: a planned
  output becomes the DequantizeLinear's integer input, in signed form.

Scale and zero point must be constants and per tensor, since a deployer
quantizes an edge with one scale; anything else is refused with the edge
named. The one exception is an LSTM's state: a float input read only as an
LSTM's ``initial_h`` / ``initial_c`` and a float output that is its ``Y_h`` /
``Y_c`` (a streaming model carrying its state, such as silero's VAD) have no
QuantizeLinear, so the plan lists them in ``Plan.states`` and the integer LSTM
(:mod:`.ops.qdq_lstm`) makes them integer with tosaconv's own state formats
(:func:`state_input`, :func:`state_output`; recorded in the report's ``io``
with a warning); a state whose LSTM stays float is refused with the reason
(:func:`refuse_float_states`). The edges' scales and zero points are recorded on the graph. An edge that reaches its
QuantizeLinear (DequantizeLinear) only through layout ops is first rewritten so that it does not
(:mod:`.int_io_moves`); an edge that cannot be is refused with a note saying which op stops it.
"""
from __future__ import annotations

from dataclasses import field
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional

import numpy as np
import onnx

from ...diagnostics import ConversionError, Diagnostic, Severity
from ...ir.io_quant import EdgeQuant, numpy_name
from ...ir.location import Location
from ...passes.dce import eliminate_dead_code
from ..int_io import edge_problem, float_input, float_output, mixed_input, refuse, retype_input, signed_edge
from .ops.qtypes import QTensor, qtype_of, read_qtensor, signed_value, stored_from_signed
from .reader import ConvertError

if TYPE_CHECKING:
    from ...ir.dtypes import DType
    from ...ir.graph import Value
    from .context import ImportContext
    from .ops.qtypes import QParams, QType
    from .ops.qtypes import Param

_FLOATS = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16)
_DTYPES = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.FLOAT16: "float16",
           onnx.TensorProto.DOUBLE: "float64", onnx.TensorProto.BFLOAT16: "bfloat16"}
SOURCE = "onnx"


@dataclass
class Plan:
    inputs: dict = field(default_factory=dict)     # graph input name -> the QuantizeLinear NodeProto reading it
    outputs: dict = field(default_factory=dict)    # graph output name -> the DequantizeLinear NodeProto making it
    states: dict = field(default_factory=dict)     # LSTM state input / output name -> the LSTM NodeProto
    made_inputs: dict = field(default_factory=dict)    # state input name -> its integer program input
    made_outputs: dict = field(default_factory=dict)   # a state output's float value -> its integer value
    replaced: dict = field(default_factory=dict)       # state input name -> its float Value (now gone)


def _is(node: Optional[onnx.NodeProto], op_type: str) -> bool:
    return node is not None and node.op_type == op_type and node.domain in ("", "ai.onnx")


def _nested_names(node: onnx.NodeProto) -> set:
    """Every name the subgraphs of ``node`` read (they may capture the outer graph's inputs)."""
    names = set()
    for a in node.attribute:
        for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else
                    a.graphs if a.type == onnx.AttributeProto.GRAPHS else []):
            for n in sub.node:
                names.update(n.input)
                names |= _nested_names(n)
    return names


def plan(g: onnx.GraphProto, initializers: dict) -> Plan:
    """The QuantizeLinear / DequantizeLinear edge nodes of ``g`` that --int-io removes (after moving the
    quantization of edges that reach it through layout ops onto the edge, :mod:`.int_io_moves`, which
    rewrites ``g``: the importer's own copy)."""
    nested = set().union(*(_nested_names(n) for n in g.node)) if len(g.node) else set()
    from .int_io_moves import move_edges   # here: only --int-io plans edges (start-up, issue 13)
    why = move_edges(g, initializers, nested, _FLOATS)
    out, problems = Plan(), []
    for vi in g.input:
        if vi.name not in initializers:
            problems += _plan_input(g, vi, out, _note(why, vi.name))
    producers = {o: n for n in g.node for o in n.output}
    for vi in g.output:
        node = producers.get(vi.name)
        if _is(node, "DequantizeLinear"):
            out.outputs[vi.name] = node
        elif _is(node, "LSTM") and vi.name in node.output[1:3] and vi.type.tensor_type.elem_type in _FLOATS:
            out.states[vi.name] = node
        elif vi.type.tensor_type.elem_type in _FLOATS:
            problems.append(float_output(vi.name, _DTYPES[vi.type.tensor_type.elem_type], "DequantizeLinear",
                                         SOURCE, _note(why, vi.name)))
    refuse(problems)
    return out


def _note(why: dict, name: str) -> tuple:
    return (f"its quantization cannot move onto the edge: {why[name]}",) if name in why else ()


def _plan_input(g: onnx.GraphProto, vi: onnx.ValueInfoProto, out: Plan, notes: tuple) -> list:
    elem = vi.type.tensor_type.elem_type
    if elem not in _FLOATS:
        return []
    readers = [n for n in g.node if vi.name in n.input or vi.name in _nested_names(n)]
    quantizes = [n for n in readers if _is(n, "QuantizeLinear") and n.input[0] == vi.name]
    if not quantizes and readers and vi.name not in {o.name for o in g.output} and all(
            _is(n, "LSTM") and vi.name in n.input[5:7] and vi.name not in n.input[:5] for n in readers):
        out.states[vi.name] = readers[0]
        return []
    if not quantizes:
        return [float_input(vi.name, _DTYPES[elem], "QuantizeLinear", SOURCE, notes)]
    others = [(n.op_type, n.name or n.output[0]) for n in readers if n is not quantizes[0]]
    if others or vi.name in {o.name for o in g.output}:
        return [mixed_input(vi.name, "QuantizeLinear", others or [("graph output", vi.name)], SOURCE, notes)]
    out.inputs[vi.name] = quantizes[0]
    return []


def _one(params_scale: Optional[Param], zero_point: Optional[Param]) -> tuple:
    """The one constant (scale, zero point) of an edge, or a ConvertError saying why there is none."""
    if not isinstance(params_scale, np.ndarray) or (zero_point is not None and not isinstance(zero_point, np.ndarray)):
        raise ConvertError("is quantized with a scale or zero point computed at run time; a deployer needs "
                           "constants")
    if params_scale.size != 1:
        raise ConvertError(f"is quantized per axis ({params_scale.size} scales); an integer model edge needs "
                           "one scale and zero point")
    zp = 0 if zero_point is None else int(np.asarray(zero_point).reshape(-1)[0])
    return float(np.float32(params_scale.reshape(-1)[0])), zp


def quantized_input(ctx: ImportContext, name: str, x: Value, params: QParams, qtype: QType) -> Value:
    """The QuantizeLinear of planned input ``name`` (float value ``x``, not read by anything else): the
    input retyped to ``qtype``'s storage, returned as the QuantizeLinear's result."""
    try:
        scale, zp = _one(params.scale, params.zero_point)
    except ConvertError as e:
        raise ConvertError(f"--int-io: input '{name}' {e}") from None
    ctx.values.pop(name, None)
    v = retype_input(ctx.graph, name, qtype.dtype)
    ctx.graph.input_quant[name] = signed_edge(scale, zp, numpy_name(x.type.dtype), qtype.offset)
    return stored_from_signed(ctx, v, qtype)


def _const_params(ctx: ImportContext, node: onnx.NodeProto) -> Optional[tuple]:
    """The one constant (scale, zero point) of a QuantizeLinear / DequantizeLinear, else None."""
    zp_name = node.input[2] if len(node.input) > 2 else ""
    try:
        return _one(ctx.const(node.input[1]), ctx.const(zp_name) if zp_name else None)
    except ConvertError:
        return None


def record_integer_inputs(ctx: ImportContext, g: onnx.GraphProto) -> None:
    """The quantization of integer graph inputs a DequantizeLinear with constant parameters reads."""
    for v in ctx.graph.inputs:
        if v.name in ctx.graph.input_quant or not v.type.dtype.is_int:
            continue
        dq = next((n for n in g.node if _is(n, "DequantizeLinear") and n.input[0] == v.name), None)
        params = _const_params(ctx, dq) if dq is not None else None
        if params is not None:
            own = ctx.graph.input_dtypes.get(v.name, numpy_name(v.type.dtype))   # uint8 bits: "uint8"
            ctx.graph.input_quant[v.name] = EdgeQuant(*params, own, own.startswith("uint"))


def output_value(ctx: ImportContext, name: str, v: Value, g: onnx.GraphProto) -> Value:
    """Graph output ``name``: ``v``, or with --int-io the signed integer input of its DequantizeLinear
    (and a uint8 QuantizeLinear result in signed form); the quantization of integer outputs recorded."""
    node = ctx.int_io.outputs.get(name) if ctx.int_io is not None else None
    if ctx.int_io is not None and name in ctx.int_io.states:
        return ctx.int_io.made_outputs[v]     # checked by refuse_float_states
    if node is None:
        return _quantized_output(ctx, name, v, g)
    try:
        return _dequantized_source(ctx, name, node, v)
    except ConvertError as e:
        raise ConversionError([edge_problem("output", name, str(e), "convert without --int-io to keep the float "
                                            "output", SOURCE)]) from None


def _quantized_output(ctx: ImportContext, name: str, v: Value, g: onnx.GraphProto) -> Value:
    """An output a QuantizeLinear with constant parameters makes: recorded (uint8 bits made signed
    under --int-io); any other output as it is."""
    q = _quantize_makers(ctx, g).get(name)
    params = _const_params(ctx, q) if q is not None and len(q.input) > 2 else None
    qtype = qtype_of(ctx, q.input[2]) if params is not None else None
    if qtype is None or qtype.bits not in (8, 16):
        return v
    if ctx.int_io is None or not qtype.unsigned:
        ctx.graph.output_quant[name] = EdgeQuant(*params, qtype.name, qtype.unsigned)
        return v
    ctx.graph.output_quant[name] = signed_edge(*params, qtype.name, qtype.offset)
    return signed_value(ctx, QTensor(qtype, value=v))


def _quantize_makers(ctx: ImportContext, g: onnx.GraphProto) -> dict:
    """Each value a QuantizeLinear of ``g`` makes -> the first such node: one walk over the nodes for all the
    outputs (not one per output)."""
    if ctx.quantize_makers is None:
        makers: dict = {}
        for n in g.node:
            if _is(n, "QuantizeLinear"):
                for out in n.output:
                    makers.setdefault(out, n)
        ctx.quantize_makers = makers
    return ctx.quantize_makers


def _dequantized_source(ctx: ImportContext, name: str, node: onnx.NodeProto, v: Value) -> Value:
    x_name, zp_name = node.input[0], node.input[2] if len(node.input) > 2 else ""
    qtype = qtype_of(ctx, zp_name) or qtype_of(ctx, x_name)
    if qtype is None or qtype.bits not in (8, 16) or ctx.const(x_name) is not None:
        raise ConvertError("comes from a DequantizeLinear of a constant or of 32-bit data, not of an 8- or "
                           "16-bit tensor")
    scale = ctx.const(node.input[1])
    _, zp = _one(scale, ctx.const(zp_name) if zp_name else None)
    data = read_qtensor(ctx, x_name, qtype)
    ctx.graph.output_quant[name] = signed_edge(float(np.float32(scale.reshape(-1)[0])), zp,
                                               numpy_name(v.type.dtype), qtype.offset)
    return signed_value(ctx, data)


# -- LSTM state edges -----------------------------------------------------------------------

STATE_CODE = "W-INT-IO-STATE"


def is_state_input(ctx: ImportContext, v: Value) -> bool:
    """``v`` is a float graph input that --int-io plans as an LSTM state."""
    return ctx.int_io is not None and v.producer is None and v.name in ctx.int_io.states


def state_input(ctx: ImportContext, name: str, dtype: DType, scale: float, zero_point: int, what: str) -> Value:
    """Planned LSTM state input ``name`` as an integer input of ``dtype`` at (scale, zero point), once."""
    made = ctx.int_io.made_inputs
    if name not in made:
        ctx.values.pop(name, None)
        ctx.int_io.replaced[name] = next(v for v in ctx.graph.inputs if v.name == name)
        made[name] = retype_input(ctx.graph, name, dtype)
        ctx.graph.input_quant[name] = EdgeQuant(float(scale), int(zero_point), "float32")
        _warn_state(ctx, "input", name, made[name], scale, zero_point, what)
    return made[name]


def state_output(ctx: ImportContext, name: str, float_value: Value, value: Value, scale: float, zero_point: int, what: str) -> None:
    """Record that planned LSTM state output ``name`` (the float ``float_value``) is ``value``."""
    ctx.int_io.made_outputs[float_value] = value
    ctx.graph.output_quant[name] = EdgeQuant(float(scale), int(zero_point), "float32")
    _warn_state(ctx, "output", name, value, scale, zero_point, what)


def _warn_state(ctx: ImportContext, kind: str, name: str, value: Value, scale: float, zero_point: int, what: str) -> None:
    dtype = numpy_name(value.type.dtype)
    ctx.graph.import_warnings.append(Diagnostic(
        STATE_CODE, f"--int-io: LSTM state {kind} '{name}' is {dtype} at scale {scale!r}, zero point "
        f"{zero_point} ({what}); the model does not quantize it, so this is tosaconv's choice",
        Location(kind, name, source=SOURCE),
        notes=("the report's io section gives it; carry the state between calls as these integers",),
        hint="feed the state back exactly as the program returned it (no requantization needed)",
        severity=Severity.WARNING))


def refuse_float_states(ctx: ImportContext, g: onnx.GraphProto) -> None:
    """Every planned LSTM state edge whose LSTM stayed float, refused in one error with the LSTM's reason."""
    if ctx.int_io is None:
        return
    problems = []
    for name, node in ctx.int_io.states.items():
        is_input = name not in {o.name for o in g.output}
        done = name in ctx.int_io.made_inputs if is_input else ctx.values.get(name) in ctx.int_io.made_outputs
        if done:
            continue
        reason = ctx.graph.float_reasons.get(f"LSTM '{node.name}'", "the LSTM has no integer form here")
        kind = "input" if is_input else "output"
        problems.append(edge_problem(
            kind, name, f"is an LSTM state ({'initial_h or initial_c' if is_input else 'Y_h or Y_c'} of "
            f"LSTM '{node.name}'), which --int-io makes integer only with the integer LSTM, and that LSTM "
            f"stays float", "convert with --profile int (which makes the LSTM integer) or without --int-io",
            SOURCE, (f"why the LSTM stays float: {reason}",)))
    refuse(problems)


def drop_float_states(ctx: ImportContext) -> None:
    """After the outputs are set: drop the float LSTM ops that read the replaced float state inputs (dead
    now); a float op still reading one (the LSTM's Y also used as float elsewhere) is refused."""
    if ctx.int_io is None or not ctx.int_io.replaced:
        return
    eliminate_dead_code(ctx.graph)
    gone = {id(v): name for name, v in ctx.int_io.replaced.items()}
    problems = [edge_problem("input", gone[id(v)], f"is an LSTM state that the integer LSTM reads as an integer, "
                             f"but {op.location} still reads it as float (the LSTM's results are also used "
                             "by float ops)", "convert without --int-io", SOURCE)
                for op in ctx.graph.ops for v in op.operands if id(v) in gone]
    refuse(problems[:1] if problems else [])
