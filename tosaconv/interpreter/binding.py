"""Bind dimension symbols from the shapes of concrete input arrays.

An input dim that is a bare symbol (``batch``) binds it to the array's size;
a second input that disagrees is an error naming both places. A dim that is
linear in one still-unbound symbol (``2*seq + 1``) is solved for it. Then
every input dim must evaluate to the actual size, static dims included; the
error names the input, the axis, the expected expression and value, and the
actual size. Symbols are >= 1 by the project's convention, so a size 0 can
never bind one. The CLI uses this to check shapes before a run.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

from ..symbolic.expr import Dim, Expr, dim_str, free_symbols, is_static, same, subs, sym
from .errors import InputError

if TYPE_CHECKING:
    from ..ir.graph import Graph, Value


def check_rank(value: Value, shape: tuple) -> None:
    """Raise InputError unless ``shape`` has the rank of graph input ``value``."""
    want = value.type.rank
    if len(shape) != want:
        raise InputError(f"input '{value.name}' must have rank {want} ({value.type}), but the given "
                         f"array has rank {len(shape)} (shape {list(shape)}); reshape it to match",
                         input_name=value.name)


def bind_from_shapes(graph: Graph, shapes: dict, bindings: Optional[dict] = None, require_all: bool = True) -> dict:
    """Symbol values implied by ``shapes`` (input name -> shape tuple), merged with ``bindings``.

    With ``require_all`` every graph input needs a shape (a run); without it only the given inputs
    are solved (``--input-shape`` for some inputs).
    """
    env = {name: int(v) for name, v in (bindings or {}).items()}
    origin = {name: "the given bindings" for name in env}
    inputs = [v for v in graph.inputs if require_all or v.name in shapes]
    for value in inputs:
        if value.name not in shapes:
            raise InputError(f"no shape given for input '{value.name}' ({value.type})", input_name=value.name)
        check_rank(value, tuple(shapes[value.name]))
    for value, axis, dim, size in _input_dims(graph, shapes):
        name = bare_symbol(dim)
        if name is not None:
            try:
                _bind(env, origin, name, size, value.name, axis)
            except InputError as e:
                raise InputError(str(e) + _alias_note(graph, value.name, axis, name),
                                 input_name=e.input_name, axis=e.axis) from None
    _solve_linear(graph, shapes, env, origin)
    for value, axis, dim, size in _input_dims(graph, shapes):
        _verify(dim, size, env, origin, value.name, axis)
    return env


def _alias_note(graph: Graph, input_name: str, axis: int, name: str) -> str:
    """Why an input dim the model names otherwise is symbol ``name``: a recorded equality made them one."""
    for s in graph.scope.symbols.values():
        if s.input_name == input_name and s.axis == axis and s.name != name:
            why = next((c for c in graph.ledger.entries if {s.name, name} <= c.symbols()), None)
            where = f" ({why.text()}, recorded by {why.provenance.where()}: {why.provenance.reason})" if why else ""
            return f" (the model calls this dim '{s.name}', which must equal '{name}'{where})"
    return ""


def _input_dims(graph: Graph, shapes: dict) -> Iterator[tuple[Value, int, Dim, int]]:
    for value in graph.inputs:
        if value.name not in shapes:
            continue
        for axis, (dim, size) in enumerate(zip(value.type.shape, shapes[value.name])):
            yield value, axis, dim, int(size)


def bare_symbol(dim: Dim) -> Optional[str]:
    names = free_symbols(dim)
    if len(names) == 1:
        (name,) = names
        if same(dim, sym(name)):
            return name
    return None


def _bind(env: dict, origin: dict, name: str, size: int, input_name: str, axis: int) -> None:
    where = f"input '{input_name}' axis {axis}"
    if size < 1:
        raise InputError(f"{where} has size {size}, but it is symbol '{name}', which must be >= 1",
                         input_name=input_name, axis=axis)
    if name in env and env[name] != size:
        raise InputError(f"{where} binds symbol '{name}' = {size}, but {origin[name]} bound it to "
                         f"{env[name]}; give arrays whose shapes agree", input_name=input_name, axis=axis)
    env.setdefault(name, size)
    origin.setdefault(name, where)


def _solve_linear(graph: Graph, shapes: dict, env: dict, origin: dict) -> None:
    """Bind symbols that appear only in dims like ``a*s + b``, until nothing new binds."""
    progress = True
    while progress:
        progress = False
        for value, axis, dim, size in _input_dims(graph, shapes):
            solved = _linear_solution(subs(dim, env), size)
            if solved is not None:
                _bind(env, origin, solved[0], solved[1], value.name, axis)
                progress = True


def _linear_solution(dim: Dim, size: int) -> Optional[tuple[str, int]]:
    """``(symbol, value)`` when ``dim`` is ``a*symbol + b`` with a whole positive solution."""
    if not isinstance(dim, Expr) or len(free_symbols(dim)) != 1:
        return None
    (name,) = free_symbols(dim)
    (monomial,) = sym(name).terms
    if not set(dim.terms) <= {(), monomial}:
        return None
    a, b = dim.terms.get(monomial, 0), dim.terms.get((), 0)
    if a == 0 or (size - b) % a or (size - b) // a < 1:
        return None
    return name, (size - b) // a


def _verify(dim: Dim, size: int, env: dict, origin: dict, input_name: str, axis: int) -> None:
    where = f"input '{input_name}' axis {axis}"
    value = subs(dim, env)
    if not is_static(value):
        missing = ", ".join(sorted(free_symbols(value)))
        raise InputError(f"{where} has size {dim_str(dim)}, and the input shapes do not determine "
                         f"{missing}; pass a binding for it", input_name=input_name, axis=axis)
    if value != size:
        raise InputError(f"{where} must have size {_explain(dim, value, env, origin)}, "
                         f"but the given array has {size}", input_name=input_name, axis=axis)


def _explain(dim: Dim, value: int, env: dict, origin: dict) -> str:
    if is_static(dim):
        return str(value)
    known = ", ".join(f"{n} = {env[n]} from {origin[n]}" for n in sorted(free_symbols(dim)))
    return f"{dim_str(dim)} = {value} ({known})"
