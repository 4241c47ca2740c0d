"""``--int-io`` through layout ops at the edges: the edge quantization moves onto the graph input or output.

A quantizer puts its first QuantizeLinear where the first *computing* op reads,
so a float graph input may reach it only through layout ops (YOLO's
SpaceToDepth and Gather, a Transpose from NHWC, a Pad), and a DequantizeLinear
result may go through a Transpose or Reshape before it becomes a graph output.
Those ops commute with per-tensor affine quantization ``q(x) = sat(rint(x / s)
+ z)``, which acts element by element:

* data movement (Gather, SpaceToDepth, DepthToSpace, Reshape, Transpose, Slice,
  Squeeze, Unsqueeze, Flatten, Identity, Concat, Split, Tile, Expand, and Pad in
  edge, reflect or wrap mode) picks or copies elements, so ``q(f(x)) = f(q(x))``;
* a constant Pad writes ``c``: at an input ``q(pad(x, c)) = pad(q(x), q(c))``
  for any ``c``, exactly; at an output ``pad(dq(q), c) = dq(pad(q, q(c)))`` only
  when ``dq(q(c)) == c`` in float32, else that output is refused;
* MaxPool and Relu are order-preserving: ``q`` and ``dq`` are non-decreasing,
  so a maximum commutes, and ``relu`` becomes ``max(q, z)`` (int8 data only:
  CLAMP of uint8-as-int8 storage would compare bits, not values).

:func:`move_edges` rewrites the importer's own in-memory copy of the ONNX graph
so that one QuantizeLinear reads the input and the layout ops run on its
integers (the QuantizeLinear nodes they led to become Identity), or the layout
ops read the DequantizeLinear's integers and a new DequantizeLinear makes the
output. :mod:`.int_io` then plans those edges as it plans any other. The region
walked must be closed: every reader of a value inside it is a moved op, a
QuantizeLinear (inputs) or a Shape, and all those QuantizeLinear (or
DequantizeLinear) nodes share one constant per-tensor scale and zero point.
What stops the walk is returned, per edge, for the refusal's note.
"""
from __future__ import annotations

from dataclasses import field
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, Container, Optional

import numpy as np
import onnx
from onnx import helper, numpy_helper

MOVABLE = frozenset({"Gather", "SpaceToDepth", "DepthToSpace", "Reshape", "Transpose", "Slice", "Squeeze",
                     "Unsqueeze", "Flatten", "Identity", "Pad", "Concat", "Split", "Tile", "Expand", "MaxPool",
                     "Relu"})
ALL_INPUTS_ARE_DATA = frozenset({"Concat"})


@dataclass
class Region:
    """The ops between a graph edge and its QuantizeLinear (or DequantizeLinear) nodes."""

    nodes: list = field(default_factory=list)      # the movable nodes
    values: set = field(default_factory=set)       # every value they read or make on the data path
    ends: list = field(default_factory=list)       # the QuantizeLinear / DequantizeLinear nodes reached


@dataclass(frozen=True)
class EdgeParams:
    scale: np.float32
    zero_point: np.ndarray     # rank 0, of the quantized type (int8, uint8...)


class Blocked(Exception):
    """The edge cannot move (the message says which op stops it, and why)."""


def _is(node: onnx.NodeProto, op_type: str) -> bool:
    return node.op_type == op_type and node.domain in ("", "ai.onnx")


def _name(node: onnx.NodeProto) -> str:
    return f"{node.op_type} '{node.name or node.output[0]}'"


def data_inputs(node: onnx.NodeProto) -> list:
    return [i for i in node.input if i] if node.op_type in ALL_INPUTS_ARE_DATA else list(node.input[:1])


class Graph:
    """Readers, producers and constants of an ONNX graph, indexed once."""

    def __init__(self, g: onnx.GraphProto, initializers: dict, nested: set):
        self.g, self.initializers, self.nested = g, initializers, nested
        self.readers, self.producer, self.constants = {}, {}, {}
        for n in g.node:
            for i in n.input:
                self.readers.setdefault(i, []).append(n)
            for o in n.output:
                self.producer[o] = n
            if _is(n, "Constant") and n.attribute and n.attribute[0].name == "value":
                self.constants[n.output[0]] = n.attribute[0].t
        self.outputs = {o.name for o in g.output}

    def const(self, name: str) -> Optional[np.ndarray]:
        t = self.initializers.get(name)
        t = self.constants.get(name) if t is None else t
        return None if t is None else numpy_helper.to_array(t)

    def add_const(self, name: str, arr: np.ndarray) -> str:
        t = numpy_helper.from_array(arr, name)
        self.g.initializer.append(t)
        self.initializers[name] = t
        return name

    def fresh(self, base: str) -> str:
        name, k = f"{base}__int_io", 0
        while name in self.readers or name in self.producer or name in self.initializers:
            k, name = k + 1, f"{base}__int_io{k + 1}"
        self.readers.setdefault(name, [])
        return name


def _check_movable(node: onnx.NodeProto, v: str) -> None:
    if node.op_type not in MOVABLE or node.domain not in ("", "ai.onnx"):
        raise Blocked(f"{_name(node)} reads it, and {node.op_type} does not commute with quantization")
    repeated = list(node.input).count(v) > 1 and node.op_type not in ALL_INPUTS_ARE_DATA
    if v not in data_inputs(node) or repeated:
        raise Blocked(f"{_name(node)} reads it as something other than its data")
    if _is(node, "MaxPool") and len([o for o in node.output if o]) > 1:
        raise Blocked(f"{_name(node)} also returns indices")


# -- inputs ---------------------------------------------------------------------------

def input_region(gr: Graph, name: str) -> Region:
    region, stack = Region(values={name}), [name]
    while stack:
        v = stack.pop()
        if v in gr.nested:
            raise Blocked(f"'{v}' is read inside a subgraph")
        if v != name and v in gr.outputs:
            raise Blocked(f"'{v}', computed from it, is also a graph output")
        for n in gr.readers.get(v, []):
            if _is(n, "QuantizeLinear") and n.input[0] == v and v not in n.input[1:]:
                _add_once(region.ends, n)
            elif not _is(n, "Shape") and not _holds(region.nodes, n):
                _check_movable(n, v)
                region.nodes.append(n)
                new = [o for o in n.output if o and o not in region.values]
                region.values.update(new)
                stack += new
    _check_closed(region)
    if not region.ends:
        raise Blocked("no QuantizeLinear reads it, through layout ops or directly")
    return region


def _holds(nodes: list, node: onnx.NodeProto) -> bool:
    """Whether ``node`` is in ``nodes`` (by identity: two equal protos are still two nodes)."""
    return any(n is node for n in nodes)


def _add_once(nodes: list, node: onnx.NodeProto) -> None:
    if not _holds(nodes, node):
        nodes.append(node)


def _check_closed(region: Region) -> None:
    for n in region.nodes:
        outside = [i for i in data_inputs(n) if i not in region.values]
        if outside:
            raise Blocked(f"{_name(n)} also reads '{outside[0]}', which does not come from this edge")


def move_input(gr: Graph, name: str, region: Region) -> None:
    """One QuantizeLinear on input ``name``; the region's ops run on its integers."""
    params = _common_params(gr, region.ends, "QuantizeLinear")
    rewrites = [_integer_form(gr, n, params, at_input=True) for n in region.nodes]
    q_out = gr.fresh(name)
    scale, zp = _edge_consts(gr, name, params)
    quantize = helper.make_node("QuantizeLinear", [name, scale, zp], [q_out],
                                name=f"{region.ends[0].name or region.ends[0].output[0]} (on input {name})")
    for rewrite in rewrites:
        rewrite()
    for n in region.nodes:
        _rename_input(n, name, q_out)
    for q in region.ends:
        _become_identity(q)
    gr.g.node.insert(0, quantize)


# -- outputs --------------------------------------------------------------------------

def output_region(gr: Graph, name: str) -> Region:
    region, stack = Region(), [name]
    while stack:
        v = stack.pop()
        p = gr.producer.get(v)
        if p is None:
            raise Blocked(f"'{v}' is a graph input or a constant, not a DequantizeLinear result")
        if _is(p, "DequantizeLinear"):
            _add_once(region.ends, p)
            continue
        if _holds(region.nodes, p):
            continue
        _check_movable(p, data_inputs(p)[0] if data_inputs(p) else "")
        region.nodes.append(p)
        region.values.update(o for o in p.output if o)
        stack += data_inputs(p)
    _check_output_readers(gr, name, region)
    return region


def _check_output_readers(gr: Graph, name: str, region: Region) -> None:
    inner = region.values - {name}
    for v in inner:
        if v in gr.outputs or v in gr.nested:
            raise Blocked(f"'{v}', on the way to it, is also a graph output or read inside a subgraph")
        others = [n for n in gr.readers.get(v, []) if not _holds(region.nodes, n) and not _is(n, "Shape")]
        if others:
            raise Blocked(f"'{v}', on the way to it, is also read by {_name(others[0])}")


def move_output(gr: Graph, name: str, region: Region) -> None:
    """The region's ops read the DequantizeLinear inputs; one new DequantizeLinear makes output ``name``."""
    params = _common_params(gr, region.ends, "DequantizeLinear")
    rewrites = [_integer_form(gr, n, params, at_input=False) for n in region.nodes]
    for rewrite in rewrites:
        rewrite()
    for dq in region.ends:
        for n in region.nodes:
            _rename_input(n, dq.output[0], dq.input[0])
    last = gr.producer[name]
    inner = gr.fresh(name)
    last.output[list(last.output).index(name)] = inner
    scale, zp = _edge_consts(gr, name, params)
    dequantize = helper.make_node("DequantizeLinear", [inner, scale, zp], [name],
                                  name=f"{region.ends[0].name or region.ends[0].output[0]} (on output {name})")
    gr.g.node.insert(next(i for i, n in enumerate(gr.g.node) if n is last) + 1, dequantize)


# -- shared ---------------------------------------------------------------------------

def _common_params(gr: Graph, ends: list, what: str) -> EdgeParams:
    found = {}
    for n in ends:
        scale = gr.const(n.input[1])
        if not (len(n.input) > 2 and n.input[2]) and any(a.name == "output_dtype" and a.i for a in n.attribute):
            raise Blocked(f"{_name(n)} names its type by output_dtype, without a zero point")
        zp = gr.const(n.input[2]) if len(n.input) > 2 and n.input[2] else np.array(0, np.uint8)
        if scale is None or zp is None:
            raise Blocked(f"{_name(n)} has a scale or zero point computed at run time")
        if scale.size != 1 or zp.size != 1:
            raise Blocked(f"{_name(n)} quantizes per axis; an integer edge needs one scale and zero point")
        found[(np.float32(scale.reshape(-1)[0]), zp.dtype.str, int(zp.reshape(-1)[0]))] = n
    if len(found) > 1:
        raise Blocked(f"the {what} nodes it reaches ({', '.join(_name(n) for n in found.values())}) quantize "
                      "with different scales or zero points")
    scale, dtype, zp = next(iter(found))
    return EdgeParams(scale, np.array(zp, dtype=np.dtype(dtype)))


def _edge_consts(gr: Graph, name: str, params: EdgeParams) -> tuple:
    return (gr.add_const(gr.fresh(f"{name}_scale"), np.array(params.scale, np.float32)),
            gr.add_const(gr.fresh(f"{name}_zero_point"), params.zero_point))


def quantize_value(c: float, params: EdgeParams) -> np.ndarray:
    """ONNX QuantizeLinear of one float: float32 division, rounding half to even, saturation."""
    info = np.iinfo(params.zero_point.dtype)
    with np.errstate(all="ignore"):
        q = np.rint(np.float32(c) / params.scale) + int(params.zero_point)
    return np.array(np.clip(q, info.min, info.max), dtype=params.zero_point.dtype)


def _integer_form(gr: Graph, node: onnx.NodeProto, params: EdgeParams, at_input: bool) -> Callable[[], None]:
    """A check now, and a rewrite for later (nothing changes before every op of the edge has passed)."""
    if _is(node, "Pad") and _pad_mode(node) == "constant":
        return _pad_rewrite(gr, node, params, at_input)
    if _is(node, "Relu"):
        if params.zero_point.dtype != np.int8:
            raise Blocked(f"{_name(node)} on {params.zero_point.dtype} data (an integer relu is done for int8)")
        return lambda: _become(node, "Clip", [node.input[0], gr.add_const(gr.fresh(f"{node.output[0]}_min"),
                                                                            params.zero_point)])
    return lambda: None


def _pad_mode(node: onnx.NodeProto) -> str:
    mode = next((a.s for a in node.attribute if a.name == "mode"), b"constant")
    return mode.decode() if isinstance(mode, bytes) else mode


def _pad_rewrite(gr: Graph, node: onnx.NodeProto, params: EdgeParams, at_input: bool) -> Callable[[], None]:
    name = node.input[2] if len(node.input) > 2 else ""
    c = gr.const(name) if name else np.zeros((), np.float32)
    if c is None or c.size != 1:
        raise Blocked(f"{_name(node)} pads with a value computed at run time")
    c = np.float32(c.reshape(-1)[0])
    q = quantize_value(c, params)
    back = (np.float32(int(q) - int(params.zero_point))) * params.scale
    if not at_input and back != c:
        raise Blocked(f"{_name(node)} pads with {float(c)}, which the output's quantization (scale "
                      f"{float(params.scale)}, zero point {int(params.zero_point)}) cannot represent exactly")

    def rewrite() -> None:
        inputs = list(node.input) + [""] * (3 - len(node.input))
        inputs[2] = gr.add_const(gr.fresh(f"{node.output[0]}_pad_value"), q)
        _become(node, "Pad", inputs, keep_attributes=True)
    return rewrite


def _become(node: onnx.NodeProto, op_type: str, inputs: list, keep_attributes: bool = False) -> None:
    node.op_type, node.domain = op_type, ""
    del node.input[:]
    node.input.extend(inputs)
    if not keep_attributes:
        del node.attribute[:]


def _become_identity(node: onnx.NodeProto) -> None:
    _become(node, "Identity", [node.input[0]])


def _rename_input(node: onnx.NodeProto, old: str, new: str) -> None:
    for i, name in enumerate(node.input):
        if name == old:
            node.input[i] = new


# -- the pass -------------------------------------------------------------------------

def move_edges(g: onnx.GraphProto, initializers: dict, nested: set, floats: Container[int]) -> dict:
    """Move the quantization of every float edge that reaches it through layout ops onto the edge;
    returns, per edge that could not move, why (for the refusal's note)."""
    why = {}
    for vi in g.input:
        if vi.name in initializers or vi.type.tensor_type.elem_type not in floats:
            continue
        gr = Graph(g, initializers, nested)
        try:
            region = input_region(gr, vi.name)
            if region.nodes:
                move_input(gr, vi.name, region)
        except Blocked as e:
            why[vi.name] = str(e)
    for vo in g.output:
        gr = Graph(g, initializers, nested)
        p = gr.producer.get(vo.name)
        if vo.type.tensor_type.elem_type not in floats or p is None or _is(p, "DequantizeLinear"):
            continue
        try:
            move_output(gr, vo.name, output_region(gr, vo.name))
        except Blocked as e:
            why[vo.name] = str(e)
    return why
