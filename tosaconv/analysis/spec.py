"""The TOSA 1.0 spec's profile, extension and level facts, and how an IR op's values fill its arguments.

``tosa_spec.json`` is written by ``scripts/gen_tosa_spec_table.py`` from the spec's ``tosa.xml``: per
operator, its tensor arguments (name, element type variable, shape text), its level limits, and one
row per supported type mode with the profiles or extensions that include it. :func:`op_spec` gives
an op's entry; :func:`arguments` pairs an IR op's operands and results with the spec's arguments by
position (our operand order is TOSA's; zero points and shape inputs, which the IR keeps as
attributes, come after the data operands in the spec and so stay unpaired), and :func:`type_bindings`
reads the type variables (``in_t``, ``out_t``...) off those values.
"""
from __future__ import annotations

import functools
import json
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from pathlib import Path
from typing import TYPE_CHECKING

from ..ir.dtypes import DType
from ..ir.types import TensorType

if TYPE_CHECKING:
    from ..ir.graph import Operation

SPEC_FILE = Path(__file__).with_name("tosa_spec.json")

# The spec's element type names for ours (INDEX lives only in symbolic programs and has none).
SPEC_TYPE = {DType.BOOL: "bool_t", DType.INT4: "i4_t", DType.INT8: "i8_t", DType.INT16: "i16_t",
             DType.INT32: "i32_t", DType.INT48: "i48_t", DType.FP16: "fp16_t", DType.BF16: "bf16_t",
             DType.FP32: "fp32_t"}


@functools.cache
def spec() -> dict:
    return json.loads(SPEC_FILE.read_text(encoding="utf-8"))


def op_spec(tosa_name: str) -> dict | None:
    """The spec's entry for a TOSA op, or None when the spec has no such op."""
    return spec()["ops"].get(tosa_name)


def level(name: str) -> dict:
    """``{"MAX_RANK": 6, ...}`` of a level named as tosa.xml names it (``"8K"``, ``"none"``)."""
    return spec()["levels"][name]


@dataclass(frozen=True)
class Argument:
    name: str
    is_list: bool
    type_var: str
    shape: str          # the spec's shape text: "shape1", "[N,IH,IW,C]", "-"
    value: object       # a Value, or a list of Values for a tensor list


def arguments(op: Operation, entry: dict) -> list:
    """The spec arguments of ``op`` that an IR value fills: inputs by position, then outputs."""
    results = [op.results] if _is_list(entry["outputs"]) else [[r] for r in op.results]
    return _pair(entry["inputs"], _operand_groups(op)) + _pair(entry["outputs"], results)


def _is_list(args: object) -> bool:
    return any(kind == "tensor_list_t" for _, kind, _, _ in args)


def _operand_groups(op: Operation) -> list:
    """The op's operands grouped as its table declares them (a variadic operand is one group)."""
    groups, i = [], 0
    for declared in op.op.operands:
        if declared.variadic:
            groups.append(op.operands[i:])
            break
        groups.append(op.operands[i:i + 1])
        i += 1
    return groups


def _pair(spec_args: list, groups: list) -> list:
    out = []
    for (name, kind, type_var, shape), group in zip(spec_args, groups):
        if kind == "tensor_list_t":
            out.append(Argument(name, True, type_var, shape, list(group)))
        elif len(group) == 1 and isinstance(group[0].type, TensorType):
            out.append(Argument(name, False, type_var, shape, group[0]))
    return out


def type_bindings(op: Operation, entry: dict) -> dict:
    """Type variable -> spec type name, from the op's tensors and typed attributes (``acc_type``, a
    variable's declared type). Variables whose values are not known here are left out."""
    out = {}
    for arg in arguments(op, entry):
        if not arg.is_list and arg.value.type.dtype in SPEC_TYPE:
            out.setdefault(arg.type_var, SPEC_TYPE[arg.value.type.dtype])
    acc = getattr(op.attrs, "acc_type", None)
    if acc in SPEC_TYPE and "acc_t" in entry["type_vars"]:
        out["acc_t"] = SPEC_TYPE[acc]
    declared = getattr(op.attrs, "dtype", None)
    for _, _, type_var, _ in entry["typed_attributes"]:
        if declared in SPEC_TYPE:
            out.setdefault(type_var, SPEC_TYPE[declared])
    return out


def matching_rows(entry: dict, bound: dict) -> list:
    """The type-support rows ``[mode, types, alternatives]`` that agree with every bound variable."""
    names = entry["type_vars"]
    return [row for row in entry["types"]
            if all(bound.get(v, t) == t for v, t in zip(names, row[1]))]
