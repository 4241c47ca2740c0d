"""Native upgrade of opset 7 to 10 models to opset 11, used when ``onnx.version_converter`` fails.

``onnx.version_converter`` refuses some plain old models (for example
``Input W is undefined!`` when an initializer is not also a graph input, which
IR 4 allows). Between opsets 7 and 11 only a few ops changed meaning; every
other op of an opset-7..10 model means the same thing at opset 11. So the
upgrade is one explicit table, :data:`UPGRADES`: (op, oldest and newest old
``since_version``, rewrite). Each rewrite turns the old node, in place, into
its opset-11 form, mostly by moving attributes that later became inputs into
constant initializers:

- Slice-1: ``starts``/``ends``/``axes`` attributes become inputs.
- Pad-2: ``pads``/``value`` attributes become inputs.
- Clip-6: ``min``/``max`` attributes become inputs.
- TopK-1: the ``k`` attribute becomes an input.
- Upsample-7 (``scales`` attribute), Upsample-9 (``scales`` input) and
  Resize-10 become Resize-11 with ``asymmetric`` coordinates (and ``floor``
  for nearest), which is what those versions compute when upsampling.
- Scatter-9 becomes ScatterElements-11 (the same op, renamed).
- BatchNormalization-7: ``spatial=1`` (the default) is dropped; ``spatial=0``
  is refused.

Models older than opset 7 are refused with a message naming each op whose
legacy form (``broadcast``/``axis`` attributes, ``consumed_inputs``, ...) has
no opset-11 equivalent here. Softmax, LogSoftmax and Hardmax before 13 keep
their coerce-to-2-D meaning at opset 11, which their converters honor.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional

import numpy as np
import onnx
from onnx import defs, helper, numpy_helper

from ...diagnostics import ConversionError
from ...records import dataclass

TARGET = 11
OLDEST = 7
_DEFAULT = ("", "ai.onnx")


@dataclass(frozen=True)   # not a NamedTuple: typing builds those with eval, ~1 ms of start-up (issue 13)
class Upgrade:
    """One row of the table: nodes of ``op_type`` whose resolved version is in [first, last]."""

    op_type: str
    first: int
    last: int
    rewrite: Callable[["_Rewriter", onnx.NodeProto], None]


class _Rewriter:
    """Adds constant initializers to the model for the rewrites; names never collide."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.count = 0

    def const(self, node: onnx.NodeProto, what: str, array: np.ndarray) -> str:
        self.count += 1
        name = f"{node.name or node.output[0]}.legacy_{what}_{self.count}"
        self.model.graph.initializer.append(numpy_helper.from_array(array, name))
        return name


def _pop(node: onnx.NodeProto, name: str) -> Any:
    """Remove attribute ``name`` from ``node``; its value, or None when absent."""
    for i, a in enumerate(node.attribute):
        if a.name == name:
            value = helper.get_attribute_value(a)
            del node.attribute[i]
            return value
    return None


def _set_inputs(node: onnx.NodeProto, names: List[str]) -> None:
    while names and names[-1] == "":
        names.pop()
    del node.input[:]
    node.input.extend(names)


def _slice1(rw: _Rewriter, node: onnx.NodeProto) -> None:
    starts, ends, axes = _pop(node, "starts"), _pop(node, "ends"), _pop(node, "axes")
    names = [node.input[0], rw.const(node, "starts", np.array(starts, np.int64)),
             rw.const(node, "ends", np.array(ends, np.int64))]
    if axes is not None:
        names.append(rw.const(node, "axes", np.array(axes, np.int64)))
    _set_inputs(node, names)


def _pad2(rw: _Rewriter, node: onnx.NodeProto) -> None:
    pads, value = _pop(node, "pads"), _pop(node, "value")
    names = [node.input[0], rw.const(node, "pads", np.array(pads, np.int64))]
    if value:
        names.append(rw.const(node, "value", np.array(value, np.float32)))
    _set_inputs(node, names)


def _clip6(rw: _Rewriter, node: onnx.NodeProto) -> None:
    lo, hi = _pop(node, "min"), _pop(node, "max")
    names = [node.input[0],
             rw.const(node, "min", np.array(lo, np.float32)) if lo is not None else "",
             rw.const(node, "max", np.array(hi, np.float32)) if hi is not None else ""]
    _set_inputs(node, names)


def _topk1(rw: _Rewriter, node: onnx.NodeProto) -> None:
    k = _pop(node, "k")
    _set_inputs(node, [node.input[0], rw.const(node, "k", np.array([k], np.int64))])


def _as_resize11(node: onnx.NodeProto, scales: str) -> None:
    mode = _pop(node, "mode")
    mode = mode.decode() if isinstance(mode, bytes) else (mode or "nearest")
    node.op_type = "Resize"
    node.attribute.extend([helper.make_attribute("mode", mode),
                           helper.make_attribute("coordinate_transformation_mode", "asymmetric")])
    if mode == "nearest":
        node.attribute.append(helper.make_attribute("nearest_mode", "floor"))
    _set_inputs(node, [node.input[0], "", scales])


def _upsample7(rw: _Rewriter, node: onnx.NodeProto) -> None:
    scales = _pop(node, "scales")
    _as_resize11(node, rw.const(node, "scales", np.array(scales, np.float32)))


def _upsample9(rw: _Rewriter, node: onnx.NodeProto) -> None:
    _as_resize11(node, node.input[1])


def _scatter9(rw: _Rewriter, node: onnx.NodeProto) -> None:
    node.op_type = "ScatterElements"


def _batchnorm7(rw: _Rewriter, node: onnx.NodeProto) -> None:
    if _pop(node, "spatial") == 0:
        raise ValueError("spatial=0 (per-activation statistics) has no opset-11 form")


UPGRADES = (
    Upgrade("Slice", 1, 9, _slice1),
    Upgrade("Pad", 2, 10, _pad2),
    Upgrade("Clip", 6, 10, _clip6),
    Upgrade("TopK", 1, 9, _topk1),
    Upgrade("Upsample", 7, 8, _upsample7),
    Upgrade("Upsample", 9, 10, _upsample9),
    Upgrade("Resize", 10, 10, _upsample9),
    Upgrade("Scatter", 9, 10, _scatter9),
    Upgrade("BatchNormalization", 7, 8, _batchnorm7),
)


def _find(op_type: str, version: int) -> Optional[Upgrade]:
    for row in UPGRADES:
        if row.op_type == op_type and row.first <= version <= row.last:
            return row
    return None


def _since(op_type: str, opset: int) -> Optional[int]:
    try:
        return defs.get_schema(op_type, opset, "").since_version
    except Exception:  # onnx raises SchemaError for unknown ops
        return None


def upgrade(model: onnx.ModelProto, opset: int, nodes: Iterable[onnx.NodeProto], path: str) -> onnx.ModelProto:
    """Rewrite ``model`` (opset ``opset`` in 7..10; ``nodes``: all of its nodes) in place to opset 11."""
    nodes = [n for n in nodes if n.domain in _DEFAULT]
    if opset < OLDEST:
        _refuse_pre7(nodes, opset, path)
    rw = _Rewriter(model)
    for node in nodes:
        version = _since(node.op_type, opset)
        row = _find(node.op_type, version) if version is not None else None
        if row is None:
            continue
        try:
            row.rewrite(rw, node)
        except (ValueError, TypeError) as e:
            raise ConversionError.one(
                "E-OPSET", f"{node.op_type}-{version} node '{node.name or node.output[0]}' of opset {opset} "
                f"cannot be upgraded to opset {TARGET}: {e}",
                hint=f"re-export the model with opset {TARGET} to 21") from None
    for o in model.opset_import:
        if o.domain in _DEFAULT:
            o.version = TARGET
    return model


def _refuse_pre7(nodes: List[onnx.NodeProto], opset: int, path: str) -> None:
    """Opset < 7: name every op whose legacy version differs from its opset-7 form."""
    legacy = sorted({(n.op_type, v) for n in nodes
                     for v in [_since(n.op_type, opset)] if v is not None and _since(n.op_type, OLDEST) != v})
    what = ", ".join(f"{op}-{v}" for op, v in legacy) or "none"
    raise ConversionError.one(
        "E-OPSET", f"'{path}' uses ONNX opset {opset}; tosaconv converts opsets {OLDEST} to 10 natively, "
        f"and onnx.version_converter could not upgrade this one. Legacy op versions "
        f"(broadcast/axis attributes, consumed_inputs and other pre-opset-{OLDEST} forms): {what}",
        hint=f"re-export the model with opset {TARGET} to 21")
