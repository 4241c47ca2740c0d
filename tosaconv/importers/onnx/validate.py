"""Checks of an ONNX model's structure, made once when it is read and before anything is converted.

Converters trust what this module has checked, so a damaged or hand-made
model fails here with a message naming the file, the node or tensor, the
field and the limit, instead of deep inside a converter:

- every opset version is one ONNX defines (1 to the newest the onnx package knows);
- every name (nodes, values, tensors) is valid UTF-8 text;
- every tensor (initializers, Constant values, subgraphs included) has an ONNX element type numpy
  reads, dims >= 0, a size within ``--max-tensor-bytes``, and exactly the data its dims declare;
- every node of the default domain has the inputs and outputs its schema requires
  (``''`` only where an input is optional), attributes of the schema's types, initializer inputs of
  types the schema admits, and window attributes (strides, dilations, kernel_shape, group) >= 1,
  as ``onnx.checker`` demands; :data:`MIN_INPUT_RANK` gives the driver each op's least operand ranks.
Unlike ``onnx.checker.check_model`` it accepts attributes a schema does not list (onnxruntime's
quantizer writes ``axis`` on opset-10 DequantizeLinear, and real models carry it).
"""
from __future__ import annotations

import functools
import math
from typing import NoReturn, Optional, Union

import onnx
from onnx import TensorProto, defs, helper

from ...diagnostics import ConversionError
from ...limits import MAX_DIM, budget_diagnostic, max_tensor_bytes
from .registry import DEFAULT_DOMAINS
from .schema_facts import SchemaFacts, facts_of, lookup

_DATA_TYPES = frozenset(TensorProto.DataType.values())
_STR = frozenset((str,))
_TENSOR, _GRAPH, _GRAPHS = onnx.AttributeProto.TENSOR, onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS

# element types numpy_helper cannot read (each converter refuses the readable types it cannot use)
_UNREADABLE = frozenset((TensorProto.UNDEFINED, TensorProto.STRING))
# values per stored byte of the sub-byte types, and the typed field that holds each type's values
# when raw_data is empty (the ONNX spec's TensorProto table; int32_data otherwise)
_PACKED = {TensorProto.INT4: 2, TensorProto.UINT4: 2, TensorProto.FLOAT4E2M1: 2, TensorProto.INT2: 4,
           TensorProto.UINT2: 4}
_FIELD = {TensorProto.FLOAT: "float_data", TensorProto.COMPLEX64: "float_data", TensorProto.DOUBLE: "double_data",
          TensorProto.COMPLEX128: "double_data", TensorProto.INT64: "int64_data", TensorProto.UINT32: "uint64_data",
          TensorProto.UINT64: "uint64_data"}
_COMPLEX = (TensorProto.COMPLEX64, TensorProto.COMPLEX128)
_MAX_VERSION = 1 << 31
_WINDOW_OPS = frozenset(("Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "AveragePool", "MaxPool",
                         "LpPool", "MaxUnpool"))   # their pads are >= 0 (Pad-2's may crop)
_POSITIVE_ATTRS = frozenset(("strides", "dilations", "kernel_shape", "group"))   # window geometry: >= 1


def validate_model(model: onnx.ModelProto, path: str, raw_sizes: dict | None = None) -> None:
    """Raise a ConversionError (exit 3) at the first structural problem of ``model``. ``raw_sizes``: the data
    length of each top-level initializer whose data was read apart from the model (see lazy_weights)."""
    validate_opsets(model, path)
    opsets = {o.domain or "": o.version for o in model.opset_import}
    _check_graph(model.graph, path, opsets, {}, raw_sizes or {})


def _fail(path: str, message: str, hint: str = "re-export the model, or check the tool that wrote it") -> NoReturn:
    raise ConversionError.one("E-MODEL-INVALID", f"'{path}': {message}", hint=hint)


def validate_opsets(model: onnx.ModelProto, path: str) -> None:
    newest = defs.onnx_opset_version()
    for o in model.opset_import:
        default = o.domain in DEFAULT_DOMAINS
        if not isinstance(o.domain, str):
            _fail(path, "an opset import has a domain name that is not valid UTF-8")
        limit = newest if default else _MAX_VERSION
        if not 1 <= o.version <= limit:
            _fail(path, f"the model imports version {o.version} of the op set '{o.domain or 'ai.onnx'}'; "
                  f"versions run from 1 to {limit}" + (" (the newest this onnx package knows)" if default else ""))


def _check_graph(g: onnx.GraphProto, path: str, opsets: dict, outer: dict, raw_sizes: dict | None = None) -> None:
    """``outer``: element types of the enclosing graphs' initializers, by name."""
    known = dict(outer)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        name, t = vi.name, vi.type    # (``_check_name`` and ``_check_elem_type``, inline: one per value)
        if type(name) is not str:
            _check_name(path, "value", name)
        if t.HasField("tensor_type") and t.tensor_type.elem_type not in _DATA_TYPES:
            _check_elem_type(path, vi)
    inputs = {vi.name: vi.type.tensor_type.elem_type for vi in g.input if vi.type.HasField("tensor_type")}
    _check_dim_params(g, path)
    defined = _graph_names(g, path)
    for t in g.initializer:
        check_tensor_proto(t, path, "initializer", (raw_sizes or {}).get(t.name))
        known[t.name] = t.data_type
    for node in g.node:
        _check_node(node, path, opsets, known, raw_sizes, inputs, defined)


def _graph_names(g: onnx.GraphProto, path: str) -> dict:
    """What defines each name of the graph before its nodes: its inputs (each non-empty and declared once) and
    its initializers (each once; one may share an input's name: before IR version 4 an initializer is listed
    among the inputs too), as ``onnx.checker`` demands. The nodes then define each of their outputs once more
    (:func:`_check_defined`): a graph is in SSA form."""
    defined: dict = {}
    for vi in g.input:
        if not vi.name or vi.name in defined:
            _fail(path, "a graph input has an empty name" if not vi.name else
                  f"graph input '{vi.name}' is declared twice", hint="give each graph input its own name")
        defined[vi.name] = "a graph input"
    initializers: set = set()
    for t in g.initializer:
        if t.name in initializers:
            _fail(path, f"initializer '{t.name}' is declared twice", hint="give each initializer its own name")
        initializers.add(t.name)
        defined.setdefault(t.name, "an initializer")
    return defined


def _check_defined(path: str, where: str, outputs: list, defined: dict) -> None:
    """Each of a node's outputs defines a new name (an empty one is an omitted optional output)."""
    for name in outputs:
        if not name:
            continue
        if name in defined:
            _fail(path, f"{where} writes '{name}', which {defined[name]} already defines; an ONNX graph "
                  "defines each value once (SSA form)", hint="rename one of the two, or re-export the model")
        defined[name] = where


def _check_dim_params(g: onnx.GraphProto, path: str) -> None:
    """Each graph input's ``dim_param`` (it names a symbol) is text: protobuf hands invalid UTF-8 over as bytes."""
    for vi in g.input:
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_param") and type(d.dim_param) is not str:
                shown = bytes(d.dim_param)[:60].decode("utf-8", "replace")
                _fail(path, f"the dim_param of graph input '{vi.name}' axis {axis} is not valid UTF-8 text "
                      f"('{shown}')", hint="name the dim in UTF-8, or re-export the model")


def _check_name(path: str, what: str, name: Union[str, bytes]) -> None:
    if not isinstance(name, str):
        shown = bytes(name)[:60].decode("utf-8", "replace")
        _fail(path, f"a {what} name is not valid UTF-8 text ('{shown}')")


def _check_elem_type(path: str, vi: onnx.ValueInfoProto) -> None:
    if vi.type.HasField("tensor_type"):
        elem = vi.type.tensor_type.elem_type
        if elem not in _DATA_TYPES:
            _fail(path, f"value '{vi.name}' has element type {elem}, which is not an ONNX data type")


def _check_node(node: onnx.NodeProto, path: str, opsets: dict, known: dict, raw_sizes: "dict | None",
                graph_inputs: dict, defined: dict) -> None:
    """``raw_sizes``: data sizes of the Constant values that lazy_weights took out of the message, by output;
    ``graph_inputs``: the element types of the graph's inputs; ``defined``: what defines each name so far
    (:func:`_graph_names`). (Each protobuf field is read once: a read costs a call and, for a repeated field,
    a new container.)"""
    node_name, op_type, domain = node.name, node.op_type, node.domain
    if type(node_name) is not str or type(op_type) is not str or type(domain) is not str:
        for text, what in ((node_name, "node"), (op_type, "op type"), (domain, "domain")):
            _check_name(path, what, text)
    inputs, outputs = list(node.input), list(node.output)
    if not _STR.issuperset(map(type, inputs)) or not _STR.issuperset(map(type, outputs)):
        for name in inputs + outputs:
            _check_name(path, f"value (of node '{node_name}')", name)
    value_size = raw_sizes.get(outputs[0]) if raw_sizes and op_type == "Constant" and outputs else None
    where = f"node '{node_name}' ({op_type})"
    _check_defined(path, where, outputs, defined)
    default = domain in DEFAULT_DOMAINS
    attributes = [(a, a.name, a.type) for a in node.attribute]
    for a, name, kind in attributes:
        _check_attribute(a, name, kind, path, opsets, known, where, value_size)
        if default:
            _check_attribute_values(a, name, kind, op_type, path, where)
    if default:
        opset = opsets.get(domain, opsets.get("", 1))
        _check_arity(op_type, domain, inputs, len(outputs), [(n, k) for _, n, k in attributes], path,
                     opset, where, known)
        if not graph_inputs.keys().isdisjoint(inputs):
            _check_bool_inputs(node_name, op_type, domain, inputs, path, opset, graph_inputs)


def _check_attribute(a: onnx.AttributeProto, name: str, kind: int, path: str, opsets: dict, known: dict,
                     where: str, value_size: "int | None") -> None:
    """The attribute's name, and the tensor or graphs it holds."""
    if type(name) is not str:
        _check_name(path, f"attribute (of {where})", name)
    if kind == _TENSOR:
        check_tensor_proto(a.t, path, f"attribute '{name}' of {where}", value_size if name == "value" else None)
    if kind == _GRAPH:
        _check_graph(a.g, path, opsets, known)
    elif kind == _GRAPHS:   # (graphs in an attribute of another type are never read)
        for sub in a.graphs:
            _check_graph(sub, path, opsets, known)


def _check_attribute_values(a: onnx.AttributeProto, name: str, kind: int, op_type: str, path: str,
                            where: str) -> None:
    """Window geometry of a default-domain node: strides, dilations, kernel_shape, group >= 1, pads >= 0."""
    if name in _POSITIVE_ATTRS:
        values = [a.i] if kind == onnx.AttributeProto.INT else list(a.ints)
        if any(v < 1 for v in values):
            _fail(path, f"{where} has {name} {values}; each must be at least 1")
    if name == "pads" and op_type in _WINDOW_OPS:
        pads = list(a.ints)
        if any(v < 0 for v in pads):
            _fail(path, f"{where} has pads {pads}; ONNX window pads must be at least 0")


class _Schema:
    """What the checks need of one op schema, read out of its facts once."""

    def __init__(self, facts: SchemaFacts):
        self.attributes = {name: a.type for name, a in facts.attributes.items()}
        self.max_input, self.min_output = facts.max_input, facts.min_output
        self.required = [(i, f.name) for i, f in enumerate(facts.inputs) if f.single]
        self.inputs = [(f.name, f.allowed) for f in facts.inputs]


@functools.lru_cache(maxsize=None)
def _schema(op_type: str, opset: int, domain: str) -> Optional[_Schema]:
    if domain == "":
        facts = lookup(op_type, opset)
        return _Schema(facts) if facts is not None else None   # None: not an op of this opset (reported later)
    try:
        return _Schema(facts_of(defs.get_schema(op_type, opset, domain)))
    except defs.SchemaError:
        return None


def _check_arity(op_type: str, domain: str, inputs: list, n_outputs: int, attributes: list, path: str,
                 opset: int, where: str, known: dict) -> None:
    """The node's attribute types, input and output counts and initializer inputs against its schema
    (``attributes``: the (name, type) of each)."""
    schema = _schema(op_type, opset, domain)
    if schema is None:
        return
    for name, kind in attributes:
        declared = schema.attributes.get(name)
        if declared is not None and kind != declared:
            _fail(path, f"{where} has attribute '{name}' of type {_attr_type(kind)}; {op_type} "
                  f"defines it as {_attr_type(declared)}")
    given = len(inputs)
    if given > schema.max_input:
        _fail(path, f"{where} has {given} inputs; {op_type} takes at most {schema.max_input}")
    for i, name in schema.required:
        if i >= given or not inputs[i]:
            _fail(path, f"{where} lacks its required input {i} ('{name}')",
                  hint=f"{op_type} needs it; re-export the model")
    if n_outputs < schema.min_output:
        _fail(path, f"{where} has {n_outputs} outputs; {op_type} makes at least {schema.min_output}")
    if schema.inputs and any(name in known for name in inputs):
        _check_input_types(op_type, inputs, schema, path, where, known)


def _check_input_types(op_type: str, inputs: list, schema: _Schema, path: str, where: str, known: dict) -> None:
    """Initializers a node reads have an element type its schema admits (a graph input's type is
    the converters' to check, with the op's own words)."""
    for i, name in enumerate(inputs):
        if not name or name not in known:
            continue
        formal, types = schema.inputs[min(i, len(schema.inputs) - 1)]
        elem = known[name]
        text = f"tensor({TensorProto.DataType.Name(elem).lower()})" if elem in _DATA_TYPES else "?"
        if text not in types:
            _fail(path, f"{where} input {i} ('{name}') is a {text}; {op_type}'s '{formal}' takes "
                  f"{', '.join(sorted(types))}")


_BOOL_ONLY = frozenset(("tensor(bool)",))


def _check_bool_inputs(node_name: str, op_type: str, domain: str, node_inputs: list, path: str, opset: int,
                       inputs: dict) -> None:
    """A graph input read where the op's schema takes only bool (Where's condition, And, Or, Xor, Not)
    must be declared bool: tosaconv widens some integer inputs (uint8..uint64 to int32 values), which
    would otherwise reach a TOSA op that needs bool. onnxruntime refuses such a model too."""
    schema = _schema(op_type, opset, domain)
    if schema is None or not schema.inputs:
        return
    for i, name in enumerate(node_inputs):
        formal, types = schema.inputs[min(i, len(schema.inputs) - 1)]
        elem = inputs.get(name)
        if elem is not None and types == _BOOL_ONLY and elem != TensorProto.BOOL and elem in _DATA_TYPES:
            text = f"tensor({TensorProto.DataType.Name(elem).lower()})"
            _fail(path, f"node '{node_name}' ({op_type}) input {i} ('{name}') is a model input of type {text}; "
                  f"{op_type}'s '{formal}' takes only tensor(bool)")


def _attr_type(code: int) -> str:
    return onnx.AttributeProto.AttributeType.Name(code) if code in onnx.AttributeProto.AttributeType.values() \
        else str(code)


def check_tensor_proto(t: TensorProto, path: str, what: str, raw_size: int | None = None) -> None:
    """A tensor's type, dims and data length agree, and its size fits the budget."""
    name, data_type = t.name, t.data_type    # (each field is read once: a read costs a call)
    _check_name(path, what, name)
    where = f"{what} '{name}'"
    if data_type in _UNREADABLE or data_type not in _DATA_TYPES:
        shown = TensorProto.DataType.Name(data_type) if data_type in _DATA_TYPES else \
            f"{data_type} (not an ONNX data type)"
        _fail(path, f"{where} has element type {shown}, which tosaconv does not read",
              hint="TOSA tensors are numbers: float, integer or bool")
    dims = tuple(t.dims)
    if dims and min(dims) < 0:
        _fail(path, f"{where} has a negative dim: {list(dims)}")
    itemsize = helper.tensor_dtype_to_np_dtype(data_type).itemsize
    count = math.prod(dims)
    if count * itemsize > max_tensor_bytes() or (dims and max(dims) > MAX_DIM):   # else it fits: no words
        diag = budget_diagnostic(where, dims, itemsize)
        if diag is not None:
            _fail(path, diag.message, hint=diag.hint)
    if t.data_location == TensorProto.EXTERNAL:
        return   # checked against the file by external_data, and again here once loaded
    _check_data_length(t, path, where, count, itemsize, raw_size)


def _check_data_length(t: TensorProto, path: str, where: str, count: int, itemsize: int,
                       raw_size: int | None = None) -> None:
    pack = _PACKED.get(t.data_type, 1)
    if raw_size is not None or t.HasField("raw_data"):
        have = raw_size if raw_size is not None else len(t.raw_data)
        want, unit = -(-count // pack) * (1 if pack > 1 else itemsize), "bytes"
    else:
        field = _FIELD.get(t.data_type, "int32_data")
        want = count * 2 if t.data_type in _COMPLEX else -(-count // pack)
        have, unit = len(getattr(t, field)), f"values in {field}"
    if have != want:
        _fail(path, f"{where} has dims {list(t.dims)} ({count} elements) but holds {have} {unit}, "
              f"not {want}", hint="the file is damaged or was written by a faulty exporter")



# the least rank of each input (by position) an op's definition admits; converters rely on it
MIN_INPUT_RANK = {
    "MatMul": (1, 1), "MatMulInteger": (1, 1), "QLinearMatMul": (1, 0, 0, 1), "Gemm": (2, 2),
    "Gather": (1, 0), "GatherElements": (1, 1), "GatherND": (1, 1), "ScatterElements": (1, 1, 1),
    "ScatterND": (1, 1), "Conv": (3, 3), "ConvInteger": (3, 3), "ConvTranspose": (3, 3),
    "QLinearConv": (3, 0, 0, 3), "MaxPool": (3,), "AveragePool": (3,), "LpPool": (3,), "GlobalAveragePool": (3,),
    "GlobalMaxPool": (3,), "InstanceNormalization": (3,), "LRN": (3,), "BatchNormalization": (2,),
    "Softmax": (1,), "LogSoftmax": (1,), "Hardmax": (1,), "TopK": (1,), "CumSum": (1,), "Split": (1,),
    "Concat": (1,), "DepthToSpace": (4,), "SpaceToDepth": (4,), "Resize": (1,), "LayerNormalization": (1,),
}


def input_rank_problem(op_type: str, ranks: list) -> str:
    """Why the inputs' ranks (None where unknown) are impossible for ``op_type``; '' when they are fine."""
    for i, (least, rank) in enumerate(zip(MIN_INPUT_RANK.get(op_type, ()), ranks)):
        if rank is not None and rank < least:
            return f"input {i} has rank {rank}; {op_type} needs rank {least} or more"
    return ""
