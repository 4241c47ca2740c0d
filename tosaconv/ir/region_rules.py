"""Shape rules of the control-flow ops, whose result types come from their regions.

COND_IF returns what both branches return (they must agree exactly, as TOSA
requires); the IF helper, whose condition is an Index value ``c`` in {0, 1},
may merge branches of different sizes into ``c*then + (1-c)*else``, which is
exact for either value and folds once ``c`` is bound. WHILE_LOOP keeps its
operands' types. LOOP (ONNX Loop/Scan before the trip count is bound) returns
its final state and each scan output stacked ``iterations`` times along its
axis. Every rule also checks each region's inputs against the operands.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..symbolic.expr import Dim, add, is_static, mul, same, sub, sym
from .dtypes import DType
from .shape_rules import ShapeRuleError
from .types import IndexType, TensorType, ValueType

if TYPE_CHECKING:   # attrs.py imports graph.py at run time; these are for the annotations only
    from .attrs import CondIfAttrs, LoopAttrs, WhileLoopAttrs
    from .graph import Graph

_T = TypeVar("_T")


def same_type(a: object, b: object) -> bool:
    """Structural type identity (same dtype, rank and normal-form dims)."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.dtype == b.dtype and a.rank == b.rank and _same_dims(a.shape, b.shape)
    return isinstance(a, IndexType) and isinstance(b, IndexType) and same(a.value, b.value)


def _same_dims(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    """Each pair of dims is the same normal form (two ints compared inline: most dims are)."""
    for x, y in zip(a, b):
        if type(x) is int and type(y) is int:
            if x != y:
                return False
        elif not same(x, y):
            return False
    return True


def check_region_inputs(region: Graph, types: Sequence[ValueType], what: str) -> None:
    got = [v.type for v in region.inputs]
    if len(got) != len(types):
        raise ShapeRuleError(f"{what} takes {len(got)} inputs, the op passes {len(types)}")
    for i, (g, t) in enumerate(zip(got, types)):
        if not same_type(g, t):
            raise ShapeRuleError(f"{what} input {i} has type {g}, the op passes {t}")


def outputs_of(region: Graph) -> list[ValueType]:
    return [v.type for v in region.outputs]


def _check_condition(t: ValueType) -> None:
    if not isinstance(t, TensorType) or t.dtype is not DType.BOOL or not all(same(d, 1) for d in t.shape):
        raise ShapeRuleError(f"the condition must be a one-element bool tensor, got {t}")


def cond_if(types: Sequence[ValueType], attrs: CondIfAttrs) -> list[ValueType]:
    _check_condition(types[0])
    check_region_inputs(attrs.then_graph, types[1:], "then_graph")
    check_region_inputs(attrs.else_graph, types[1:], "else_graph")
    then_t, else_t = outputs_of(attrs.then_graph), outputs_of(attrs.else_graph)
    if len(then_t) != len(else_t) or not all(same_type(a, b) for a, b in zip(then_t, else_t)):
        raise ShapeRuleError(f"the branches return different types: {_list(then_t)} and {_list(else_t)}")
    return then_t


def index_if(types: Sequence[ValueType], attrs: CondIfAttrs) -> list[ValueType]:
    c = types[0]
    if not isinstance(c, IndexType):
        raise ShapeRuleError(f"IF takes an Index condition, got {c}")
    check_region_inputs(attrs.then_graph, types[1:], "then_graph")
    check_region_inputs(attrs.else_graph, types[1:], "else_graph")
    then_t, else_t = outputs_of(attrs.then_graph), outputs_of(attrs.else_graph)
    if len(then_t) != len(else_t):
        raise ShapeRuleError(f"the branches return {len(then_t)} and {len(else_t)} values")
    return [merge_types(a, b, c.value) for a, b in zip(then_t, else_t)]


def merge_types(a: ValueType, b: ValueType, c: Dim) -> ValueType:
    """The type of ``c ? a : b`` for an Index ``c`` in {0, 1}."""
    if isinstance(a, IndexType) and isinstance(b, IndexType):
        return IndexType(merge_dim(a.value, b.value, c))
    if not (isinstance(a, TensorType) and isinstance(b, TensorType)) or a.dtype != b.dtype or a.rank != b.rank:
        raise ShapeRuleError(f"the branches return {a} and {b}, which no shape can merge")
    return a.with_shape([merge_dim(x, y, c) for x, y in zip(a.shape, b.shape)])


def merge_dim(x: Dim, y: Dim, c: Dim) -> Dim:
    if same(x, y):
        return x
    if is_static(c):
        return x if c else y
    return add(mul(c, x), mul(sub(1, c), y))


def while_loop(types: Sequence[ValueType], attrs: WhileLoopAttrs) -> list[ValueType]:
    check_region_inputs(attrs.cond_graph, types, "cond_graph")
    check_region_inputs(attrs.body_graph, types, "body_graph")
    cond = outputs_of(attrs.cond_graph)
    if len(cond) != 1:
        raise ShapeRuleError(f"cond_graph must return one condition, it returns {len(cond)} values")
    _check_condition(cond[0])
    body = outputs_of(attrs.body_graph)
    if len(body) != len(types) or not all(same_type(a, b) for a, b in zip(body, types)):
        raise ShapeRuleError(f"body_graph returns {_list(body)}, the loop carries {_list(types)}")
    return list(types)


def loop(types: Sequence[ValueType], attrs: LoopAttrs) -> list[ValueType]:
    trip = types[0]
    if not isinstance(trip, IndexType):
        raise ShapeRuleError(f"LOOP takes an Index trip count, got {trip}")
    if len(attrs.iterations) != 1:
        raise ShapeRuleError("LOOP iterations must hold one dim")
    groups = loop_groups(types[1:], attrs)
    body_in = [v.type for v in attrs.body.inputs]
    if not body_in or not isinstance(body_in[0], IndexType):
        raise ShapeRuleError("the LOOP body's first input must be the Index iteration number")
    slices = [_drop_axis(t, a) for t, a in zip(groups["scan"], attrs.scan_input_axes)]
    check_region_inputs(attrs.body, body_in[:1] + groups["cond"] + groups["state"] + slices + groups["captured"],
                        "body")
    return _loop_results(attrs, groups)


def loop_groups(types: Sequence[_T], attrs: LoopAttrs) -> dict[str, list[_T]]:
    """The operands after the trip count (their types, values or arrays), split into cond, state, scan and
    captured ones."""
    n_cond, n_state, n_scan = int(attrs.has_cond), attrs.num_state, len(attrs.scan_input_axes)
    if len(types) < n_cond + n_state + n_scan or len(attrs.scan_input_reverse) != n_scan:
        raise ShapeRuleError("LOOP has fewer operands than its condition, state and scan inputs need")
    ends = (n_cond, n_cond + n_state, n_cond + n_state + n_scan)
    return {"cond": list(types[:ends[0]]), "state": list(types[ends[0]:ends[1]]),
            "scan": list(types[ends[1]:ends[2]]), "captured": list(types[ends[2]:])}


def iteration_symbol(body: Graph) -> str:
    """The symbol of a LOOP body's first input: the 1-based number of the running iteration."""
    t = body.inputs[0].type if body.inputs else None
    names = sorted(t.symbols()) if isinstance(t, IndexType) else []
    if len(names) != 1 or not isinstance(t, IndexType) or not same(t.value, sym(names[0])):
        raise ShapeRuleError("a LOOP body's first input must be a bare iteration symbol")
    return names[0]


def _loop_results(attrs: LoopAttrs, groups: dict[str, list[ValueType]]) -> list[ValueType]:
    outs = outputs_of(attrs.body)
    n_cond, n_state = int(attrs.has_cond), attrs.num_state
    scan_out = outs[n_cond + n_state:]
    if len(scan_out) != len(attrs.scan_output_axes) or len(attrs.scan_output_reverse) != len(scan_out):
        raise ShapeRuleError(f"the body returns {len(scan_out)} scan outputs, the attributes describe "
                             f"{len(attrs.scan_output_axes)}")
    if attrs.has_cond:
        _check_condition(outs[0])
    state_out = outs[n_cond:n_cond + n_state]
    if not all(same_type(a, b) for a, b in zip(state_out, groups["state"])):
        raise ShapeRuleError(f"the body returns state {_list(state_out)}, the loop carries {_list(groups['state'])}")
    n = attrs.iterations[0]
    return list(groups["state"]) + [_insert_axis(t, a, n) for t, a in zip(scan_out, attrs.scan_output_axes)]


def _drop_axis(t: ValueType, axis: int) -> TensorType:
    if not isinstance(t, TensorType) or not 0 <= axis < t.rank:
        raise ShapeRuleError(f"scan axis {axis} is out of range for {t}")
    return t.with_shape(t.shape[:axis] + t.shape[axis + 1:])


def _insert_axis(t: ValueType, axis: int, n: Dim) -> TensorType:
    if not isinstance(t, TensorType) or not 0 <= axis <= t.rank:
        raise ShapeRuleError(f"scan output axis {axis} is out of range for {t}")
    return t.with_shape(t.shape[:axis] + (n,) + t.shape[axis:])


def _list(types: Iterable[ValueType]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"
