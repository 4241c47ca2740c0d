"""The state ops in the flatbuffer, as the official tools write them.

``tosa-opt --tosa-serialize`` and the reference model (checked with tosa-tools
2026.8.0) have no VARIABLE operator in the block: a variable is a tensor with
``variable = true``, its ``variable_name`` and its initial value as data.
VARIABLE_READ is an IDENTITY from that tensor to the value, and
VARIABLE_WRITE an IDENTITY from the value to that tensor; both carry the
VariableRead / VariableWrite attribute table, which is how a reader tells
them from a plain IDENTITY (an operator coded VARIABLE_READ is refused by the
reference model). :func:`lower` writes an IR state op that way and
:func:`lift_variables` / :func:`lift_access` read it back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
import numpy as np

from ..ir import attrs as A
from ..ir.location import Location
from ..ir.ops import OPS, Op, Trait
from ..ir.types import TensorType
from .errors import ReadError
from .records import TensorRecord
from .tensor_data import from_le_bytes, to_le_bytes

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .reader import _Lifting
    from .records import OpRecord
    from .writer import _Lowering

# the table's stateful (not PURE) ops; the accesses among them name a variable declared elsewhere
STATE_OPS = tuple(op for op in OPS.values() if not op.has(Trait.PURE))
ACCESS_OPS = tuple(op.name for op in STATE_OPS if op.attrs is A.VariableRefAttrs)


def lower(lowering: _Lowering, op: Operation, location: str) -> None:
    """Write IR state op ``op`` into ``lowering``'s block (see the module docstring)."""
    a = op.attrs
    tensors = lowering.variable_tensors
    if op.op is Op.VARIABLE:
        name = tensors[a.name] = lowering.names.fresh(a.name)
        t = TensorType(a.dtype, tuple(a.shape))
        data = to_le_bytes(np.asarray(a.initial), a.dtype)
        lowering.block.tensors.append(TensorRecord(name, t.shape, t.dtype, data, variable_name=a.name))
        return
    if a.name not in tensors:
        raise ValueError(f"variable '{a.name}' is not declared in the main graph before this access")
    if op.op is Op.VARIABLE_READ:
        out = lowering.names[op.result]
        lowering._add_tensor(out, op.result.type)
        lowering._add_op("IDENTITY", {}, [tensors[a.name]], [out], location)
        lowering.defined.add(op.result)
    else:
        lowering._add_op("IDENTITY", {}, [lowering.names[op.operands[0]]], [tensors[a.name]], location)
    lowering.block.ops[-1].attribute = op.op.name


def lift_variables(lifting: _Lifting) -> dict:
    """VARIABLE ops for the block's variable tensors; returns tensor name -> variable attributes."""
    out = {}
    for rec in lifting.block.tensors:
        if rec.variable_name is None:
            continue
        t = lifting._type(rec.name)
        if rec.data is None:
            raise ReadError(f"variable tensor '{rec.name}' has no initial value")
        try:
            initial = from_le_bytes(rec.data, t.dtype, t.shape)
        except ValueError as e:
            raise ReadError(f"variable tensor '{rec.name}': {e}") from None
        with lifting.builder.at(Location("VARIABLE", rec.variable_name, source="tosa")):
            try:
                lifting.builder.create(Op.VARIABLE, [], A.VariableAttrs(rec.variable_name, t.dtype, t.shape, initial))
            except ValueError as e:   # the VARIABLE shape rule (static dims >= 1)
                raise ReadError(f"variable tensor '{rec.name}': {e}") from None
        out[rec.name] = A.VariableRefAttrs(rec.variable_name, t.dtype, t.shape)
    return out


def lift_access(lifting: _Lifting, op: OpRecord) -> None:
    """A VARIABLE_READ or VARIABLE_WRITE record (an IDENTITY with the variable's table) as an IR op."""
    read = op.op == "VARIABLE_READ"
    side = op.inputs if read else op.outputs
    var = side[0] if side else None
    attrs = lifting.variables.get(var)
    if attrs is None or len(op.inputs) != 1 or len(op.outputs) != 1:
        raise ReadError(f"{op.op} must take one tensor and give one, with a variable tensor on its "
                        f"{'input' if read else 'output'} side; '{var}' is not a variable")
    text = op.location if op.location is not None else op.outputs[0]
    with lifting.builder.at(Location(op.op, text, source="tosa")):
        if read:
            lifting.values[op.outputs[0]] = lifting.builder.emit(Op.VARIABLE_READ, attrs=attrs, name=op.outputs[0])
        else:
            value = lifting._value(op.inputs[0], "operand of VARIABLE_WRITE")
            try:
                lifting.builder.create(Op.VARIABLE_WRITE, [value], attrs)
            except ValueError as e:   # the shape rule: the value must have the variable's own type
                raise ReadError(f"VARIABLE_WRITE '{text}': {e}") from None
