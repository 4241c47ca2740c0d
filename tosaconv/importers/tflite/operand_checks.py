"""The operand facts LiteRT's kernels check when they prepare a model, checked once as the model is read.

LiteRT refuses a model whose ADD reads an int32 and a float32 tensor, or whose
CONV_2D bias is not a vector of one value per output channel (``add.cc``,
``concatenation.cc``, ``pack.cc``, ``conv.cc``... ``TF_LITE_ENSURE_TYPES_EQ``,
``TF_LITE_ENSURE_EQ``). Such a model is damaged, so tosaconv refuses it here,
where the operator enters, naming the operator and the tensors, instead of
letting the inconsistency reach a TOSA op. Two tables, one row per op type:

* :data:`SAME_TYPE`: the operand positions that must share one element type
  (``None``: every input).
* :data:`MIN_INPUTS`: the variadic ops' least number of inputs.
* :data:`WEIGHTS`: for a weighted op, the filter's position and rank, the axis
  of the filter that counts the output channels, and the bias's position. The
  bias, when given, is a vector with one value per output channel.

Only static shapes are compared; a symbolic dim is never refused here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ...records import dataclass   # not a NamedTuple: typing builds those with eval, ~1 ms of start-up (issue 13)

if TYPE_CHECKING:
    from .reader import OpInfo


@dataclass(frozen=True)
class Weights:
    filter: int
    rank: int
    channels_axis: int
    bias: int


SAME_TYPE = {
    "ADD": (0, 1), "SUB": (0, 1), "MUL": (0, 1), "DIV": (0, 1), "MAXIMUM": (0, 1), "MINIMUM": (0, 1),
    "SQUARED_DIFFERENCE": (0, 1), "FLOOR_DIV": (0, 1), "FLOOR_MOD": (0, 1), "POW": (0, 1),
    "EQUAL": (0, 1), "NOT_EQUAL": (0, 1), "LESS": (0, 1), "LESS_EQUAL": (0, 1), "GREATER": (0, 1),
    "GREATER_EQUAL": (0, 1), "SELECT": (1, 2), "SELECT_V2": (1, 2),
    "CONCATENATION": None, "PACK": None, "ADD_N": None,
}

WEIGHTS = {
    "CONV_2D": Weights(1, 4, 0, 2),
    "DEPTHWISE_CONV_2D": Weights(1, 4, 3, 2),
    "TRANSPOSE_CONV": Weights(1, 4, 0, 3),
    "CONV_3D": Weights(1, 5, 4, 2),
    "FULLY_CONNECTED": Weights(1, 2, 0, 2),
}


# variadic ops, which LiteRT prepares only with at least one input (pack.cc, concatenation.cc, add_n.cc)
MIN_INPUTS = {"PACK": 1, "CONCATENATION": 1, "ADD_N": 1}


def operand_problem(op: OpInfo, tensors: list) -> Optional[str]:
    """Why ``op``'s operands break a fact LiteRT checks, or None."""
    return _count_problem(op) or _type_problem(op, tensors) or _weights_problem(op, tensors)


def _count_problem(op: OpInfo) -> Optional[str]:
    need = MIN_INPUTS.get(op.op_type, 0)
    given = sum(1 for i in op.inputs if i >= 0)
    return f"it has {given} inputs; it needs at least {need}" if given < need else None


def _type_problem(op: OpInfo, tensors: list) -> Optional[str]:
    if op.op_type not in SAME_TYPE:
        return None
    where = SAME_TYPE[op.op_type]
    positions = range(len(op.inputs)) if where is None else where
    present = [op.inputs[i] for i in positions if i < len(op.inputs) and op.inputs[i] >= 0]
    kinds = {tensors[i].type_name for i in present}
    if len(kinds) <= 1:
        return None
    listed = ", ".join(f"'{tensors[i].name}' {tensors[i].type_name}" for i in present)
    return f"its operands must share one element type, but they are {listed}"


def _weights_problem(op: OpInfo, tensors: list) -> Optional[str]:
    spec = WEIGHTS.get(op.op_type)
    if spec is None or len(op.inputs) <= spec.filter or op.inputs[spec.filter] < 0:
        return None
    weights = tensors[op.inputs[spec.filter]]
    if len(weights.shape) != spec.rank:
        return f"its filter '{weights.name}' has shape {list(weights.shape)}; it must have rank {spec.rank}"
    if len(op.inputs) <= spec.bias or op.inputs[spec.bias] < 0:
        return None
    bias = tensors[op.inputs[spec.bias]]
    channels = weights.shape[spec.channels_axis]
    if len(bias.shape) != 1 or (channels > 0 and bias.shape[0] > 0 and bias.shape[0] != channels):
        return (f"its bias '{bias.name}' has shape {list(bias.shape)}; it must be a vector of {channels} values, "
                f"one per output channel of the filter '{weights.name}' {list(weights.shape)}")
    return None
