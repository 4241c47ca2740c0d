"""Upgrading Scan version 8 (opset 8) faithfully, which onnx.version_converter does not.

Scan 8 has a batch axis: every state is ``[B, ...]`` and every scan input
``[B, T, ...]``, and the body runs per batch element. ``onnx.version_converter``
upgrades it by dropping that axis from the graph's declared input shapes, so
the upgraded model no longer takes the original's inputs. Instead, before the
upgrade each Scan 8 node is parked in a private domain (the converter leaves
such nodes alone); after it, each becomes a Scan over the batch axis whose
body is a Scan over the time axis running the original body (itself upgraded
on its own), which is exactly Scan 8's meaning. ``sequence_lens`` (per-batch
lengths) has no such form and is refused.
"""
from __future__ import annotations

from typing import Iterable

import onnx
from onnx import helper, version_converter

from ...diagnostics import ConversionError
from . import legacy

PARKED = "tosaconv.scan8"


def park(model: onnx.ModelProto, nodes: Iterable[onnx.NodeProto]) -> bool:
    """Move the Scan 8 nodes among ``nodes`` into the private domain; True when there were any."""
    found = False
    for node in nodes:
        if node.op_type == "Scan" and node.domain in ("", "ai.onnx"):
            node.domain, found = PARKED, True
    if found:
        model.opset_import.append(helper.make_opsetid(PARKED, 1))
    return found


def unpark(model: onnx.ModelProto, nodes: Iterable[onnx.NodeProto], opset: int, path: str) -> None:
    """Rewrite every parked node (now in an upgraded model) as a Scan over the batch of Scans."""
    for node in nodes:
        if node.domain == PARKED:
            _rewrite(node, model, opset, path)
    kept = [o for o in model.opset_import if o.domain != PARKED]
    del model.opset_import[:]
    model.opset_import.extend(kept)


def _rewrite(node: onnx.NodeProto, model: onnx.ModelProto, opset: int, path: str) -> None:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.input and node.input[0]:
        raise ConversionError.one("E-OPSET", f"'{path}': Scan version 8 '{node.name}' gives sequence_lens "
                                  "(per-batch lengths), which no later Scan can express",
                                  hint="re-export the model with opset 11 to 21")
    inputs, n_scan = list(node.input[1:]), attrs["num_scan_inputs"]
    body = _upgraded_body(attrs["body"], model, opset, path)
    n_state = len(inputs) - n_scan
    slice_names = [f"{node.name or node.output[0]}/batch_slice{i}" for i in range(len(inputs))]
    inner_out = [f"{node.name or node.output[0]}/batch_out{i}" for i in range(len(node.output))]
    inner = helper.make_node("Scan", slice_names, inner_out, body=body, num_scan_inputs=n_scan,
                             scan_input_directions=list(attrs.get("directions", [0] * n_scan)))
    outer_body = helper.make_graph(
        [inner], "batch_body", [helper.make_empty_tensor_value_info(n) for n in slice_names],
        [helper.make_empty_tensor_value_info(n) for n in inner_out])
    del node.input[:], node.attribute[:]
    node.input.extend(inputs)
    node.domain = ""
    node.attribute.extend([helper.make_attribute("body", outer_body),
                           helper.make_attribute("num_scan_inputs", n_state + n_scan)])


def _upgraded_body(body: onnx.GraphProto, model: onnx.ModelProto, opset: int, path: str) -> onnx.GraphProto:
    """The Scan 8 body upgraded to opset 11 on its own (it is still at opset ``opset``)."""
    wrapper = helper.make_model(body, opset_imports=[helper.make_opsetid("", opset)])
    wrapper.ir_version = model.ir_version
    try:
        return version_converter.convert_version(wrapper, 11).graph
    except Exception as e:  # the converter raises many unrelated types
        if opset >= legacy.OLDEST:  # the native upgrade, as for the whole model (see legacy.py)
            return legacy.upgrade(wrapper, opset, wrapper.graph.node, path).graph
        raise ConversionError.one("E-OPSET", f"'{path}': upgrading the body of a Scan version 8 to opset 11 "
                                  f"failed: {e}", hint="re-export the model with opset 11 to 21") from None
