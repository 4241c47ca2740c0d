"""Read an ``.onnx`` file with its large weights left in the file's bytes, as numpy views.

``onnx.load`` parses the whole file into protobuf messages: every weight is
copied out of the file's bytes into the message, and again (as a ``bytes``
object) each time ``raw_data`` is read. Here the file is read once; a short
walk over the protobuf wire format (ModelProto field 7 ``graph`` →
GraphProto field 5 ``initializer`` → TensorProto field 9 ``raw_data``)
finds each large top-level initializer's data, and the message is parsed
from a copy of the file *without* those data fields. The weights are then
``uint8`` views of the file's bytes (:func:`initializer_array` gives the
typed array), so a weight is held once, as in the file, until it is copied
into the output.

The ``value`` tensors of the top-level graph's ``Constant`` nodes (GraphProto
field 1 ``node`` → NodeProto field 5 ``attribute`` → AttributeProto field 5
``t``) are taken out the same way, under the name of the node's output
(:func:`constant_array`); models exported with their weights as Constant
nodes then hold them once too.

Only plain little-endian numeric types of at least :data:`MIN_BYTES` are
taken out; a file that is not plain protobuf wire format, an initializer name
used twice, or anything unexpected falls back to ``onnx.load``'s full parse.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import numpy as np
import onnx
from onnx import TensorProto, helper

if TYPE_CHECKING:
    from .reader import NodeReader

MIN_BYTES = 1024

_PLAIN = frozenset((TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16,
                    TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL, TensorProto.FLOAT16,
                    TensorProto.DOUBLE, TensorProto.UINT32, TensorProto.UINT64))
_GRAPH, _INITIALIZER = 7, 5                     # ModelProto.graph, GraphProto.initializer
_DATA_TYPE, _NAME, _RAW_DATA, _DATA_LOCATION, _SEGMENT = 2, 8, 9, 14, 3   # TensorProto fields
_NODE, _NODE_OUTPUT, _NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 4, 5, 7   # GraphProto.node, NodeProto
_ATTR_NAME, _ATTR_T = 1, 5                                                         # AttributeProto fields
_CONSTANT_OP_TYPE = bytes([_NODE_OP_TYPE << 3 | 2, 8]) + b"Constant"   # the field op_type = "Constant", encoded


class _Malformed(Exception):
    pass


def read_model(path: str) -> tuple:
    """``(model, raw)``: the parsed model with its large initializers' data taken out, and those data
    as ``uint8`` views by initializer name. Raises what ``onnx.load`` raises for an unreadable file."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        stripped, raw = _strip_model(data)
    except (_Malformed, IndexError, UnicodeDecodeError):
        return onnx.load(path, load_external_data=False), {}
    model = onnx.ModelProto()
    model.ParseFromString(stripped if raw else data)   # nothing taken out: parse the file's bytes, not a copy
    return model, {name: np.frombuffer(data, np.uint8, count=end - start, offset=start)
                   for name, (start, end) in raw.items()}


def initializer_array(t: TensorProto, raw: np.ndarray) -> np.ndarray:
    """The array of initializer ``t`` whose data :func:`read_model` took out (``raw``): a view."""
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).newbyteorder("<")
    return np.frombuffer(raw, dtype).reshape(tuple(t.dims))


def constant_array(node: NodeReader, raw: dict) -> Optional[np.ndarray]:
    """The ``value`` of a top-level ``Constant`` node whose data :func:`read_model` took out (a view of the
    file's bytes), or None when its data is in the message."""
    data = raw.get(node.outputs[0]) if node.outputs else None
    if data is None:
        return None
    t = node.node.attribute[0].t
    if t.HasField("raw_data") or t.data_location != TensorProto.DEFAULT:
        return None
    return initializer_array(t, data)


def _varint(buf: bytes, pos: int) -> tuple:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Malformed()


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _fields(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int, int, int]]:
    """``(field, wire type, tag start, tag end, value start, value end)`` of each field in ``buf[start:end]``
    (a length-delimited value starts after its length). One-byte tags and lengths, the common case, are
    read inline rather than by a call to :func:`_varint`."""
    pos = start
    while pos < end:
        tag_start = pos
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = _varint(buf, pos)
        kind = tag & 7
        tag_end = value_start = pos
        if kind == 2:
            size = buf[pos]
            if size < 0x80:
                value_start = pos + 1
            else:
                size, value_start = _varint(buf, pos)
            pos = value_start + size
        elif kind == 0:
            _, pos = _varint(buf, pos)
        elif kind == 1:
            pos += 8
        elif kind == 5:
            pos += 4
        else:
            raise _Malformed()
        if pos > end:
            raise _Malformed()
        yield tag >> 3, kind, tag_start, tag_end, value_start, pos


def _strip_model(buf: bytes) -> tuple:
    parts, raw = [], {}
    view = memoryview(buf)
    for field, kind, tag_start, tag_end, start, end in _fields(buf, 0, len(buf)):
        if field == _GRAPH and kind == 2:
            graph = _strip_graph(buf, view, start, end, raw)
            parts += [view[tag_start:tag_end], _encode_varint(len(graph)), graph]
        else:
            parts.append(view[tag_start:end])
    return (b"".join(parts) if raw else b""), raw   # nothing taken out: the caller parses ``buf`` itself


def _strip_graph(buf: bytes, view: memoryview, start: int, end: int, raw: dict) -> bytes:
    parts = []
    for field, kind, tag_start, tag_end, value_start, value_end in _fields(buf, start, end):
        tensor = None
        if kind != 2 or value_end - value_start < MIN_BYTES:
            pass    # a message this short holds no data worth taking out: not walked
        elif field == _INITIALIZER:
            tensor = _strip_tensor(buf, view, value_start, value_end, raw)
        elif field == _NODE:
            tensor = _strip_constant(buf, view, value_start, value_end, raw)
        if tensor is None:
            parts.append(view[tag_start:value_end])
        else:
            parts += [view[tag_start:tag_end], _encode_varint(len(tensor)), tensor]
    return b"".join(parts) if raw else b""   # nothing taken out: no copy of the graph either


def _strip_constant(buf: bytes, view: memoryview, start: int, end: int, raw: dict) -> None:
    """A ``Constant`` node's bytes with its one attribute ``value``'s data taken out (recorded in ``raw``
    under the node's output), or None to keep the node whole (any other node, or anything unusual)."""
    if buf.find(_CONSTANT_OP_TYPE, start, end) < 0:   # no op_type "Constant" field: not worth a walk
        return None
    outputs, op_type, domain, attributes, kept = [], None, "", [], []
    for field, kind, tag_start, tag_end, value_start, value_end in _fields(buf, start, end):
        if kind == 2 and field in (_NODE_OUTPUT, _NODE_OP_TYPE, _NODE_DOMAIN):
            text = bytes(view[value_start:value_end]).decode("utf-8")
            if field == _NODE_OUTPUT:
                outputs.append(text)
            elif field == _NODE_OP_TYPE:
                op_type = text
            else:
                domain = text
        if field == _NODE_ATTRIBUTE and kind == 2:
            attributes.append((len(kept), tag_start, tag_end, value_start, value_end))
        kept.append(view[tag_start:value_end])
    if op_type != "Constant" or domain not in ("", "ai.onnx") or len(outputs) != 1 or len(attributes) != 1:
        return None
    at, tag_start, tag_end, value_start, value_end = attributes[0]
    attribute = _strip_value_attribute(buf, view, value_start, value_end, raw, outputs[0])
    if attribute is None:
        return None
    kept[at:at + 1] = [view[tag_start:tag_end], _encode_varint(len(attribute)), attribute]
    return b"".join(kept)


def _strip_value_attribute(buf: bytes, view: memoryview, start: int, end: int, raw: dict, key: str) -> None:
    """The attribute ``value``'s bytes with its tensor's data taken out, or None."""
    name, tensor, kept = None, None, []
    for field, kind, tag_start, tag_end, value_start, value_end in _fields(buf, start, end):
        if field == _ATTR_NAME and kind == 2:
            name = bytes(view[value_start:value_end]).decode("utf-8")
        elif field == _ATTR_T and kind == 2:
            if tensor is not None:
                return None
            tensor = _strip_tensor(buf, view, value_start, value_end, raw, key)
            if tensor is None:
                return None
            kept += [view[tag_start:tag_end], _encode_varint(len(tensor)), tensor]
            continue
        kept.append(view[tag_start:value_end])
    if name != "value" or tensor is None:
        if tensor is not None:
            del raw[key]
        return None
    return b"".join(kept)


def _strip_tensor(buf: bytes, view: memoryview, start: int, end: int, raw: dict, key: "str | None" = None) -> Optional[bytes]:
    """The tensor's bytes without its ``raw_data`` (recorded in ``raw`` under its name, or ``key``), or None
    to keep it whole."""
    name, data_type, data, kept, external = None, 0, None, [], False
    for field, kind, tag_start, _, value_start, value_end in _fields(buf, start, end):
        if field == _RAW_DATA and kind == 2:
            data = (value_start, value_end)
            continue
        if field == _NAME and kind == 2:
            name = bytes(view[value_start:value_end]).decode("utf-8")
        elif field == _DATA_TYPE and kind == 0:
            data_type = _varint(buf, value_start)[0]
        elif (field == _DATA_LOCATION and _varint(buf, value_start)[0] != 0) or field == _SEGMENT:
            external = True
        kept.append(view[tag_start:value_end])
    name = name if key is None else key
    if name is None or data is None or external or data_type not in _PLAIN or data[1] - data[0] < MIN_BYTES:
        return None
    if name in raw:
        raise _Malformed()     # one name twice: leave it to the full parse and the validator
    raw[name] = data
    return b"".join(kept)
