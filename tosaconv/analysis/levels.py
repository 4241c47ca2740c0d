"""Whether a program fits a TOSA level (8K), naming every op that breaks one of its limits.

The limits come from the spec table (:mod:`.spec`): each operator argument lists the checks its
pseudocode makes with ``LEVEL_CHECK(value <= LIMIT)``, as expressions over the argument's shape and
the elements of array attributes (``rank(shape1) <= MAX_RANK``, ``dilation_y * KH <= MAX_KERNEL``,
``scale_y_n/scale_y_d <= MAX_SCALE``, ``tensor_list_shape(input_list) <= MAX_TENSOR_LIST_SIZE``).
:func:`violations` evaluates them for every op, regions included, and adds the two rules the spec
states outside the operator tables: every tensor's size in bytes must be a ``tensor_size_t``
(below ``2**MAX_LOG2_SIZE``) and its rank at most ``MAX_RANK``, and COND_IF/WHILE_LOOP may nest at most ``MAX_NESTING`` deep. A value
that is still symbolic cannot be checked; the result then says it is not exact.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import field
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING

from ..ir.graph import op_regions
from ..ir.location import Location
from ..ir.types import TensorType
from . import spec as S

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation, Value

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Violation:
    op: str              # TOSA op name
    location: Location
    limit: str           # "MAX_RANK"
    what: str            # the spec's expression, "rank(shape)"
    value: int
    maximum: int

    def text(self) -> str:
        return f"{self.op} at {self.location}: {self.what} = {self.value} > {self.limit} {self.maximum}"

    def to_json(self) -> dict:
        loc = self.location
        return {"op": self.op, "location": {"op_type": loc.op_type, "name": loc.name, "source": loc.source,
                                            "text": str(loc)},
                "limit": self.limit, "what": self.what, "value": self.value, "maximum": self.maximum}


@dataclass
class LevelCheck:
    level: str
    violations: list = field(default_factory=list)
    exact: bool = True          # False when some value was symbolic and could not be checked

    @property
    def fits(self) -> bool:
        return not self.violations


def violations(graph: Graph, level: str = "8K") -> LevelCheck:
    limits = S.level(level)
    check = LevelCheck(level)
    for v in graph.inputs:
        _check_size(check, limits, v, "input", Location("input", v.name, "graph"))
    _walk(check, limits, graph, depth=0)
    return check


def _walk(check: LevelCheck, limits: dict, graph: Graph, depth: int) -> None:
    for op in graph.ops:
        entry = S.op_spec(op.op.tosa) if op.op.tosa else None
        if entry is not None:
            _check_op(check, limits, op, entry)
        for r in op.results:
            _check_size(check, limits, r, op.op.name, op.location)
            if entry is not None and not any(limit == "MAX_RANK" for _, _, limit in entry["limits"]):
                _check_rank(check, limits, r, op.op.name, op.location)
        regions = op_regions(op)
        if regions and depth >= limits["MAX_NESTING"]:
            check.violations.append(Violation(op.op.name, op.location, "MAX_NESTING", "nesting depth",
                                              depth + 1, limits["MAX_NESTING"]))
        for _, region in regions:
            _walk(check, limits, region, depth + 1)


def _check_op(check: LevelCheck, limits: dict, op: Operation, entry: dict) -> None:
    env = _environment(op, entry)
    for _, expression, limit in entry["limits"]:
        value = _evaluate(expression, env)
        if value is None:
            check.exact = False
        elif value > limits[limit]:
            check.violations.append(Violation(op.op.name, op.location, limit, expression, value, limits[limit]))


def _check_rank(check: LevelCheck, limits: dict, value: Value, op_name: str, location: Location) -> None:
    """MAX_RANK bounds every tensor (the spec table lists it per argument, but not for the reductions)."""
    if isinstance(value.type, TensorType) and value.type.rank > limits["MAX_RANK"]:
        check.violations.append(Violation(op_name, location, "MAX_RANK", f"rank of '{value.name}'",
                                          value.type.rank, limits["MAX_RANK"]))


def _check_size(check: LevelCheck, limits: dict, value: Value, op_name: str, location: Location) -> None:
    """The spec's tensor_size_t rule: elements x element bytes must stay below 2**MAX_LOG2_SIZE."""
    if not isinstance(value.type, TensorType):
        return
    if not value.type.is_static:
        check.exact = False
        return
    size = math.prod(value.type.static_shape()) * max(1, value.type.dtype.bits // 8)
    maximum = (1 << limits["MAX_LOG2_SIZE"]) - 1
    if size > maximum:
        check.violations.append(Violation(op_name, location, "MAX_LOG2_SIZE", f"bytes of '{value.name}'",
                                          size, maximum))


def _environment(op: Operation, entry: dict) -> dict:
    """Names the limit expressions use: shapes and their dims, tensor lists, attribute elements."""
    env: dict = {}
    for arg in S.arguments(op, entry):
        if arg.is_list:
            env[arg.name] = arg.value
        else:
            _bind_shape(env, arg.shape, arg.value.type.shape)
    for _, _, _, shape in entry["typed_attributes"]:
        if getattr(op.attrs, "shape", None) is not None:
            _bind_shape(env, shape, tuple(op.attrs.shape))
    for attr, names in entry["components"].items():
        values = getattr(op.attrs, attr, None)
        if isinstance(values, (tuple, list)) and len(values) == len(names):
            env.update(zip(names, values))
    return env


def _bind_shape(env: dict, text: str, shape: tuple) -> None:
    if _IDENTIFIER.match(text):
        env.setdefault(text, shape)
        return
    names = text.strip("[]").split(",")
    if text.startswith("[") and len(names) == len(shape):
        env.update((n.strip(), d) for n, d in zip(names, shape) if _IDENTIFIER.match(n.strip()))


def _evaluate(expression: str, env: dict) -> int | None:
    """The integer value of a limit expression, or None when a name is unknown or symbolic."""
    try:
        value = _eval(ast.parse(expression, mode="eval").body, env)
    except (KeyError, TypeError, ZeroDivisionError):
        return None
    return value if isinstance(value, int) else None


def _eval(node: ast.expr, env: dict) -> object:
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _call(node.func.id, _eval(node.args[0], env))
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if not (isinstance(a, int) and isinstance(b, int)):
            raise TypeError("symbolic")
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):   # C integer division (toward zero), as the pseudocode computes it
            quotient = abs(a) // abs(b)
            return quotient if (a < 0) == (b < 0) else -quotient
    raise TypeError(f"unsupported expression {ast.dump(node)}")


def _call(name: str, argument: object) -> int:
    """``rank(shape)`` is a shape's length and ``tensor_list_shape(list)`` a list's: both are len()."""
    if name in ("rank", "tensor_list_shape"):
        return len(argument)
    raise TypeError(f"unknown function {name}")
