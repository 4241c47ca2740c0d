"""The ONNX import driver: model file in, symbolic IR graph out.

It reads the model (with a clear error for truncated or foreign files),
upgrades opsets older than 11 with ``onnx.version_converter`` (Scan version 8
through :mod:`.scan8`, which the converter would get wrong; when the converter
fails, opsets 7 to 10 are upgraded natively by :mod:`.legacy`), declares one
symbol per unknown input dim (``dim_param`` names, else ``<input>.<axis>``;
placeholders such as ``?`` or ``unk__3`` count as unnamed, see :mod:`.dim_names`),
lists *every* unsupported op before converting anything (subgraphs of If,
Loop and Scan included; an op of another domain, such as ``com.microsoft``,
is resolved against the model's import of that domain), then runs each node's converter at that node's
location (:func:`convert_nodes`, which converters call again for subgraphs).
Converters raise plain errors; this loop turns them into diagnostics that say
where.
"""
from __future__ import annotations


import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Iterable, Iterator

import onnx
from google.protobuf.message import DecodeError

from ...diagnostics import ConversionError, Diagnostic
from ...gc_tuning import fewer_collections
from ...ir.dtypes import DType
from ...ir.graph import Graph
from ...ir.location import Location
from ...ir.ops import Op
from ...ir.types import TensorType
from ...lowering.limits import EMPTY_RESULT, Limit, LimitKind, limit_note
from ...symbolic.scope import SymbolInfo
from . import unsigned_io
from .dim_names import symbol_name
from ..errors import Refusals, converting
from .context import ImportContext, ShapeTensor
from .external_data import load_external_data
from .lazy_weights import read_model
from .int_io import drop_float_states, output_value, record_integer_inputs, refuse_float_states
from .int_io import plan as int_io_plan
from .reader import ConvertError, NodeReader
from .registry import DEFAULT_DOMAINS, EVERY_OP, op_version, publish, resolve
from .validate import MIN_INPUT_RANK, input_rank_problem, validate_model, validate_opsets

if TYPE_CHECKING:
    from ...symbolic.expr import Dim

MIN_OPSET, MAX_OPSET = 11, 21

_ELEM_TYPES = {
    onnx.TensorProto.FLOAT: DType.FP32, onnx.TensorProto.FLOAT16: DType.FP16,
    onnx.TensorProto.INT64: DType.INT32, onnx.TensorProto.INT32: DType.INT32,
    onnx.TensorProto.INT16: DType.INT16, onnx.TensorProto.INT8: DType.INT8,
    onnx.TensorProto.BOOL: DType.BOOL, onnx.TensorProto.DOUBLE: DType.FP32,
    onnx.TensorProto.UINT8: DType.INT8, onnx.TensorProto.UINT16: DType.INT16,   # the same bits (see .unsigned_io)
    onnx.TensorProto.UINT32: DType.INT32, onnx.TensorProto.UINT64: DType.INT32,  # true values (see .unsigned_io)
    onnx.TensorProto.INT4: DType.INT8, onnx.TensorProto.UINT4: DType.INT8,       # true values (see .unsigned_io)
    onnx.TensorProto.INT2: DType.INT8, onnx.TensorProto.UINT2: DType.INT8,
}


INPUT_TYPE, INPUT_ZERO_DIM = publish(
    EVERY_OP,
    Limit("input-type", LimitKind.DTYPE, "a model input",
          tuple(name for name, code in onnx.TensorProto.DataType.items() if code not in _ELEM_TYPES)
          + ("INT4, UINT4, INT2 or UINT2 read by an op other than Cast, DequantizeLinear and layout ops",),
          "TOSA 1.0 (PRO-FP, PRO-INT) has no tensors of these types", "cast the input in the exporting framework"),
    Limit("input-zero-dim", LimitKind.INPUT, "of the model", ("with a dim of size 0",),
          "TOSA requires every dim to be >= 1", "give every input dim a size of 1 or more"))
SEQUENCES = publish(EVERY_OP, EMPTY_RESULT, Limit(
    "sequence-values", LimitKind.DTYPE, "data", ("sequence or optional (the Sequence* and Optional* ops)",),
    "TOSA has only tensors", "keep sequences and optionals out of the exported graph"))[1]


def _is_sequence_op(op_type: str) -> bool:
    return op_type.startswith(("Sequence", "Optional")) or op_type in ("SplitToSequence", "ConcatFromSequence")


@fewer_collections
def import_onnx(path: str, int_io: bool = False, quantize_weights: bool = False, npu_fast: bool = False) -> Graph:
    """The symbolic program of the model at ``path``; ``int_io``: integer inputs and outputs (see .int_io);
    ``quantize_weights`` (``--profile int``): float weights between QDQ pairs are quantized (see
    .ops.qdq_weights); ``npu_fast``: the integer LSTM keeps 8-bit weights (cheaper, less accurate)."""
    model, raw = _load(path, lazy=not int_io)
    domains = {o.domain: o.version for o in model.opset_import if o.domain not in DEFAULT_DOMAINS}
    if not any(o.domain in DEFAULT_DOMAINS for o in model.opset_import):
        _check_supported(model.graph, 0, domains)   # e.g. an ai.onnx.ml-only model: name its ops first
    if _default_opset(model) < MIN_OPSET and raw:   # the upgrade rewrites the model: give it all its data
        model, raw = _load(path, lazy=False)
    model = _upgrade(model, path)
    opset = _default_opset(model)
    _check_supported(model.graph, opset, domains)
    graph = Graph(source=f"{os.path.basename(path)} (ONNX opset {opset})", int_io=int_io)
    initializers = {t.name: t for t in model.graph.initializer}
    ctx = ImportContext(graph, opset, initializers, domains)
    ctx.raw = raw
    ctx.int_io = int_io_plan(model.graph, initializers) if int_io else None
    ctx.quantize_weights = quantize_weights
    ctx.npu_fast = npu_fast
    _declare_inputs(ctx, model.graph, initializers)
    unsigned_io.check_readers(model.graph, ctx.graph)
    convert_nodes(ctx, model.graph.node)
    refuse_float_states(ctx, model.graph)
    record_integer_inputs(ctx, model.graph)
    _set_outputs(ctx, model.graph)
    drop_float_states(ctx)
    unsigned_io.record_outputs(ctx, model.graph)
    return graph


def convert_nodes(ctx: ImportContext, nodes: Iterable[onnx.NodeProto]) -> None:
    """Convert ``nodes`` in order in ``ctx`` (the model's graph, or a subgraph's child context).

    A node refused by its converter does not stop the walk (:class:`~..errors.Refusals`): the nodes that
    do not read its results are still tried, so one run lists every refusal a user must fix. A node
    holding a subgraph may capture a refused result, so it is skipped too. Shape errors stop at once."""
    refusals = Refusals()
    for node in nodes:
        domain = node.domain
        reader = NodeReader(node, ctx.opset_of(domain), domain)   # (reads the node's fields once)
        outputs = [o for o in reader.outputs if o]
        if refusals.missing and refusals.blocks(reader.inputs, outputs, reader.holds_graphs()):
            continue
        try:
            _convert_node(ctx, reader)
        except ConversionError as e:
            refusals.add(e, outputs)
    refusals.raise_any()


def _load(path: str, lazy: bool) -> tuple:
    """``(model, raw)``: with ``lazy``, the large initializers' data stay in the file's bytes (``raw``, by
    name; see :mod:`.lazy_weights`), else ``raw`` is empty and the model holds all its data."""
    try:
        model, raw = read_model(path) if lazy else (onnx.load(path, load_external_data=False), {})
    except (DecodeError, ValueError, RuntimeError, OSError) as e:
        raise ConversionError.one(
            "E-MODEL-READ", f"cannot read '{path}' as an ONNX model: {e}",
            hint="check that the file is a complete .onnx model (a truncated download fails like this)") from None
    if model.ir_version <= 0 or not model.HasField("graph") or not model.opset_import:
        raise ConversionError.one(
            "E-MODEL-READ", f"'{path}' is not an ONNX model (no IR version, graph or opset import)",
            hint="check that the file is a complete .onnx model")
    validate_opsets(model, path)
    load_external_data(model, path)
    validate_model(model, path, {name: view.size for name, view in raw.items()})
    return model, raw


def _default_opset(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    raise ConversionError.one("E-MODEL-READ", "the model imports no version of the default ONNX op set")


def _upgrade(model: onnx.ModelProto, path: str) -> onnx.ModelProto:
    opset = _default_opset(model)
    if opset >= MIN_OPSET:
        return model
    from . import legacy, scan8   # here: only an old model is upgraded (start-up, issue 13)
    parked = opset < 9 and scan8.park(model, _all_nodes(model.graph))
    try:
        from onnx import version_converter
        upgraded = version_converter.convert_version(model, MIN_OPSET)
    except Exception as e:  # the converter raises many unrelated types
        unknown = sorted({n.op_type for n in model.graph.node
                          if n.domain in DEFAULT_DOMAINS and op_version(n.op_type, opset, n.domain) is None})
        if not unknown:  # the converter failed on ops that exist: upgrade them natively (see legacy.py)
            upgraded = legacy.upgrade(model, opset, _all_nodes(model.graph), path)
            if parked:
                scan8.unpark(upgraded, _all_nodes(upgraded.graph), opset, path)
            return upgraded
        notes = (f"ops ONNX does not define at opset {opset}: {', '.join(unknown)}",)
        raise ConversionError.one(
            "E-OPSET", f"'{path}' uses ONNX opset {opset}; upgrading it to opset {MIN_OPSET} failed: {e}",
            notes=notes, hint=f"re-export the model with opset {MIN_OPSET} to {MAX_OPSET}") from None
    if parked:  # onnx.version_converter would drop Scan 8's batch axis; see scan8.py
        scan8.unpark(upgraded, _all_nodes(upgraded.graph), opset, path)
    return upgraded


def _check_supported(g: onnx.GraphProto, opset: int, domains: dict) -> None:
    missing: "OrderedDict[tuple, list]" = OrderedDict()
    for node in _all_nodes(g):
        domain = node.domain
        version = opset if domain in DEFAULT_DOMAINS else domains.get(domain, 0)
        if resolve(node.op_type, version, domain) is None:
            key = (node.domain or "ai.onnx", node.op_type, version)
            missing.setdefault(key, []).append(node.name or (node.output[0] if node.output else "?"))
    if not missing:
        return
    diags = []
    for (domain, op_type, version), names in missing.items():
        diags.append(Diagnostic(
            "E-UNSUPPORTED-OP", f"unsupported op {op_type} ({domain}, {_what(op_type, domain, version)}): "
            f"{len(names)} node(s)", Location(op_type, names[0], "onnx"),
            notes=(f"first node: '{names[0]}'",) + ((limit_note(SEQUENCES.key),) if _is_sequence_op(op_type) else ()),
            hint="run 'tosaconv ops' for the supported list"))
    raise ConversionError(diags)


def _what(op_type: str, domain: str, version: int) -> str:
    """Which version of the op the model uses, or why it has none tosaconv knows."""
    if not version:
        return f"the model does not import the {'default ONNX' if domain in DEFAULT_DOMAINS else domain} op set"
    found = op_version(op_type, version, domain)
    if found:
        return f"version {found}"
    return "not an op of this opset" if domain in DEFAULT_DOMAINS else f"no converter for this op of {domain} version {version}"


def _all_nodes(g: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of ``g`` and of the subgraphs (If branches, Loop and Scan bodies) nested in it."""
    for node in g.node:
        yield node
        for a in node.attribute:
            kind = a.type     # (read once: a protobuf read is a call)
            if kind == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(a.g)
            elif kind == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from _all_nodes(sub)


def _declare_inputs(ctx: ImportContext, g: onnx.GraphProto, initializers: dict) -> None:
    for vi in g.input:
        if vi.name in initializers:
            continue
        tt = vi.type.tensor_type
        if tt.elem_type not in _ELEM_TYPES:
            raise ConversionError.one(
                "E-INPUT-TYPE", f"input '{vi.name}' has element type "
                f"{onnx.TensorProto.DataType.Name(tt.elem_type)}, which TOSA has no tensors for",
                notes=(limit_note(INPUT_TYPE.key),))
        if not tt.HasField("shape"):
            raise ConversionError.one("E-INPUT-RANK", f"input '{vi.name}' has no rank; tosaconv needs fixed ranks",
                                      hint="export the model with a shaped input")
        shape = tuple(_input_dim(ctx, vi.name, axis, d) for axis, d in enumerate(tt.shape.dim))
        _check_narrow_input(g, vi.name, tt.elem_type)
        dtype = unsigned_io.input_dtype(g, vi.name, tt.elem_type, _ELEM_TYPES[tt.elem_type])
        v = ctx.graph.add_input(vi.name, TensorType(dtype, shape))
        ctx.values[vi.name] = unsigned_io.declared_input(ctx, v, tt.elem_type)


def _check_narrow_input(g: onnx.GraphProto, name: str, elem_type: int) -> None:
    """Refuse a 4- or 2-bit integer input (an INT8 holding its true values) that an op other than Cast or
    DequantizeLinear reads: other ops would compute on it as 8-bit data."""
    if elem_type not in unsigned_io.NARROW:
        return
    readers = [n for n in unsigned_io.all_readers(g, name) if n.op_type not in ("Cast", "DequantizeLinear")]
    if readers:
        type_name = onnx.TensorProto.DataType.Name(elem_type)
        raise ConversionError.one(
            "E-INPUT-TYPE", f"input '{name}' has element type {type_name}, which TOSA has no tensors for; "
            f"{readers[0].op_type} '{readers[0].name or readers[0].output[0]}' reads it (tosaconv reads "
            f"{type_name} inputs only through Cast and DequantizeLinear, as INT8 values)",
            notes=(limit_note(INPUT_TYPE.key),), hint="cast the input in the exporting framework")


def _input_dim(ctx: ImportContext, input_name: str, axis: int, d: onnx.TensorShapeProto.Dimension) -> Dim:
    if d.HasField("dim_value") and d.dim_value > 0:
        return d.dim_value
    if d.HasField("dim_value") and d.dim_value == 0 and not d.HasField("dim_param"):
        raise ConversionError.one(
            "E-INPUT-SHAPE", f"input '{input_name}' axis {axis} has size 0; TOSA requires every dim to be >= 1",
            notes=(limit_note(INPUT_ZERO_DIM.key),))
    name = symbol_name(input_name, axis, d.dim_param if d.HasField("dim_param") else "")
    origin = f"input '{input_name}' axis {axis}"
    return ctx.graph.scope.declare(SymbolInfo(name, origin, input_name=input_name, axis=axis))


def _convert_node(ctx: ImportContext, node: NodeReader) -> None:
    fn = resolve(node.op_type, node.opset, node.domain)
    loc = node.location
    with ctx.b.at(loc), converting(loc, ConvertError):
        problem = input_rank_problem(node.op_type, [_rank(ctx, name) for name in node.inputs]) \
            if node.op_type in MIN_INPUT_RANK else ""     # the ops without a least rank need no ranks
        if problem:
            raise ConvertError(problem)
        results = fn(ctx, node)
    if not isinstance(results, (list, tuple)):
        results = [results]
    for name, value in zip(node.outputs, results):
        if name and value is not None:
            ctx.values[name] = value


def _rank(ctx: ImportContext, name: str) -> int:
    """The rank of input ``name`` where known without materializing it, else None."""
    v = ctx.values.get(name)
    if isinstance(v, ShapeTensor):
        return 0 if v.scalar else 1
    if v is not None and hasattr(v.type, "rank"):
        return v.type.rank
    if name in ctx.initializers:
        return len(ctx.initializers[name].dims)
    return None


def _set_outputs(ctx: ImportContext, g: onnx.GraphProto) -> None:
    values, names = [], []
    with ctx.b.at(Location("output", "graph outputs", "onnx")):
        for vi in g.output:
            if not ctx.has(vi.name):
                raise ConversionError.one("E-MODEL-READ", f"graph output '{vi.name}' is never produced")
            v = output_value(ctx, vi.name, ctx.tensor(vi.name), g)
            if isinstance(ctx.values.get(vi.name), ShapeTensor) or v.producer is None or v in values:
                v = ctx.b.emit(Op.IDENTITY, v, name=vi.name)
            values.append(v)
            names.append(vi.name)
    ctx.graph.set_outputs(values, names)
