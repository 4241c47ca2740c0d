"""External data: weights an ``.onnx`` keeps in side files, read only from the model's directory.

A tensor stored outside the model names a ``location`` relative to the model
file. Before reading any of it, every location is resolved (symlinks
included) and must lie inside the model's own directory, name a regular
file, and hold the tensor's ``offset`` + ``length`` bytes. A model cannot
make tosaconv read ``../../etc/passwd`` or an absolute path; each refusal
names the tensor, the location and why.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator, Optional

import onnx
from onnx import external_data_helper
from onnx.onnx_cpp2py_export import checker as c_checker

from ...diagnostics import ConversionError


def load_external_data(model: onnx.ModelProto, path: str) -> None:
    """Check every external tensor of ``model`` (read from ``path``), then load their data in place."""
    base = os.path.dirname(os.path.abspath(path))
    tensors = [t for t in _model_tensors(model) if external_data_helper.uses_external_data(t)]
    if tensors:   # (rare) the whole list as onnx walks it, so every tensor it will load is checked first
        tensors = [t for t in external_data_helper._get_all_tensors(model)
                   if external_data_helper.uses_external_data(t)]
    for t in tensors:
        _check(t, base, path)
    if tensors:
        try:
            external_data_helper.load_external_data_for_model(model, base)
        except (OSError, ValueError, onnx.checker.ValidationError) as e:
            _fail(f"cannot read the external data of '{path}': {e}")


def _model_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """The tensors a conversion reads: initializers, and the values of TENSOR and TENSORS attributes, in the
    graph, its subgraphs and the model's functions. Each attribute's type is read once, and only the field
    it names: onnx's own walk asks every attribute for every field, which costs more than the rest of
    reading a model with many Constant nodes."""
    yield from _graph_tensors(model.graph)
    for function in model.functions:
        yield from _attribute_tensors(function.node)


def _graph_tensors(g: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    yield from g.initializer
    yield from _attribute_tensors(g.node)


def _attribute_tensors(nodes: Iterable[onnx.NodeProto]) -> Iterator[onnx.TensorProto]:
    for node in nodes:
        for a in node.attribute:
            kind = a.type
            if kind == onnx.AttributeProto.TENSOR:
                yield a.t
            elif kind == onnx.AttributeProto.TENSORS:
                yield from a.tensors
            elif kind == onnx.AttributeProto.GRAPH:
                yield from _graph_tensors(a.g)
            elif kind == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    yield from _graph_tensors(sub)


def _check(tensor: onnx.TensorProto, base: str, path: str) -> None:
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    where = f"tensor '{tensor.name}' of '{path}' stores its data in {location!r}"
    if "\x00" in location:
        _fail(f"{where}, a path with a NUL byte")
    if not location or os.path.isabs(location):
        _fail(f"{where}, which is not a path relative to the model's directory")
    real_base = os.path.realpath(base)
    target = os.path.realpath(os.path.join(base, location))
    if os.path.commonpath([real_base, target]) != real_base:
        _fail(f"{where}, which resolves to '{target}', outside the model's directory '{real_base}'",
              hint="tosaconv reads external data only from the model's own directory; move the file there")
    if not os.path.isfile(target):
        _fail(f"{where}, which does not exist or is not a regular file",
              hint="copy the model's data files next to the .onnx file")
    _resolve_as_onnx_does(base, location, tensor.name, where)
    offset, length = _count(info, "offset", where), _count(info, "length", where)
    size = os.path.getsize(target)
    end = offset + (length or 0)
    if offset > size or end > size:
        _fail(f"{where} at bytes {offset}..{end}, but the file has only {size} bytes (truncated?)")


def _resolve_as_onnx_does(base: str, location: str, name: str, where: str) -> None:
    """onnx's own location check (symlinks, hard links, containment), so that what passes here also
    loads in onnx: a symlink inside the model's directory passes the realpath test above, but not this."""
    try:
        c_checker._resolve_external_data_location(base, location, name)
    except Exception as e:   # noqa: BLE001 - onnx raises its ValidationError and others
        _fail(f"{where}, which onnx refuses: {e}", hint="replace links by the data files themselves")


def _count(info: dict, key: str, where: str) -> Optional[int]:
    """The ``offset`` or ``length`` entry as a non-negative integer (None when absent)."""
    text = info.get(key)
    if text is None or text == "":
        return None
    if not text.isascii() or not text.isdigit():
        _fail(f"{where} with {key} {text!r}, which is not a non-negative integer")
    return int(text)


def _fail(message: str, hint: str = "check the model's external data files") -> None:
    raise ConversionError.one("E-EXTERNAL-DATA", message, hint=hint)
