"""Shape rules and program checks of the state ops VARIABLE, VARIABLE_READ and VARIABLE_WRITE.

A VARIABLE declares one tensor of state by name (TOSA 1.0 chapter
"Variable operators"); it has no operands and no results. VARIABLE_READ
returns the variable's current value and VARIABLE_WRITE replaces it, both
naming the variable and repeating its type, so each op's shape rule is local.
:func:`variable_problems` checks what no single op can: every read and write
names a variable declared earlier in the same graph with the same type, and
no name is declared twice. Variables live in the main graph only (a region's
reads and writes would name variables it does not declare).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Union

import numpy as np

from .attrs import VariableAttrs, VariableRefAttrs
from .region_rules import same_type
from .shape_rules import ShapeRuleError
from .types import TensorType, ValueType

if TYPE_CHECKING:
    from .graph import Graph


_VarAttrs = Union[VariableAttrs, VariableRefAttrs]


def declared_type(attrs: _VarAttrs) -> TensorType:
    return TensorType(attrs.dtype, tuple(attrs.shape))


def variable(types: Sequence[ValueType], attrs: VariableAttrs) -> list[ValueType]:
    if not all(isinstance(d, int) and d >= 1 for d in attrs.shape):
        raise ShapeRuleError(f"variable '{attrs.name}' must have a static shape of dims >= 1, got {attrs.shape}")
    initial = np.asarray(attrs.initial)
    if tuple(initial.shape) != tuple(attrs.shape) or initial.dtype != attrs.dtype.numpy:
        raise ShapeRuleError(f"variable '{attrs.name}' is {declared_type(attrs)}, but its initial value is "
                             f"{initial.dtype}{list(initial.shape)}")
    return []


def variable_read(types: Sequence[ValueType], attrs: VariableRefAttrs) -> list[ValueType]:
    return [declared_type(attrs)]


def variable_write(types: Sequence[ValueType], attrs: VariableRefAttrs) -> list[ValueType]:
    if not same_type(types[0], declared_type(attrs)):
        raise ShapeRuleError(f"VARIABLE_WRITE of {types[0]} to variable '{attrs.name}' of type "
                             f"{declared_type(attrs)}")
    return []


def variable_problems(graph: Graph) -> list[str]:
    """Declarations and uses that do not match, as text (empty when the graph is fine). The state ops are
    known by their attribute classes, which no other op takes (VARIABLE: VariableAttrs; VARIABLE_READ and
    VARIABLE_WRITE: VariableRefAttrs), so this module needs nothing of the op table that imports it."""
    declared: dict[str, TensorType] = {}
    problems: list[str] = []
    for i, op in enumerate(graph.ops):
        attrs = op.attrs
        if isinstance(attrs, VariableAttrs):
            if attrs.name in declared:
                problems.append(f"op {i}: variable '{attrs.name}' is declared twice")
            declared[attrs.name] = declared_type(attrs)
        elif isinstance(attrs, VariableRefAttrs):
            t = declared.get(attrs.name)
            if t is None:
                problems.append(f"op {i} {op.op.name}: variable '{attrs.name}' is not declared before it "
                                f"in this graph (variables are declared in the main graph)")
            elif not same_type(t, declared_type(attrs)):
                problems.append(f"op {i} {op.op.name}: variable '{attrs.name}' is declared as {t}, "
                                f"used as {declared_type(attrs)}")
    return problems
