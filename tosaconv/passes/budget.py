"""The size budget over a whole program: checked once the symbols are bound, before anything is built.

:func:`check_budget` substitutes the bindings into the type of every value
of the symbolic program (its regions included) and reports every tensor
that would break ``--max-tensor-bytes`` or TOSA's int32 dims (see
:mod:`tosaconv.limits`), naming the value, its shape, the symbols behind it
and the op that makes it. Index values and dims still symbolic under the
bindings (a region's own data-dependent symbols) are skipped: the
interpreter checks those before it allocates.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Optional

import numpy as np

from ..diagnostics import Diagnostic, ShapeError
from ..ir.graph import Graph, Value, describe_value, walk_graphs
from ..ir.location import Location
from ..ir.types import IndexType, TensorType
from ..limits import MAX_DIM, budget_diagnostic, max_tensor_bytes, nbytes
from ..symbolic.expr import Dim, Expr, dim_str, free_symbols, is_static, subs

_MAX_REPORTED = 3   # the first few say enough; the rest follow from the same bindings


def check_budget(graph: Graph, env: dict[str, int]) -> None:
    """Raise a ShapeError listing the values of ``graph`` too big under the bindings ``env``."""
    diags: list[Diagnostic] = []
    # (dtype, shape) of tensor types, (IndexType, value) of index types, already found within every limit
    # under ``env`` (the verdict is a function of these)
    fits: set[tuple[object, ...]] = set()
    dims: dict[Expr, Dim] = {}    # each symbolic dim under ``env`` (shapes share their dims: h/2, w/4...)
    fit_ids: set[int] = set()     # ids of type objects in ``fits`` (values share type objects: no key made)
    for g in walk_graphs(graph):
        for value, location in _values(g, fit_ids):
            t = value.type
            key = (t.dtype, t.shape) if type(t) is TensorType else (IndexType, t.value) if type(t) is IndexType \
                else None
            if key is not None and key in fits:
                fit_ids.add(id(t))
                continue
            diag = _value_diagnostic(value, location, env, dims)
            if diag is None and key is not None:
                fits.add(key)
                fit_ids.add(id(t))
            if diag is not None:
                diags.append(diag)
                if len(diags) >= _MAX_REPORTED:
                    raise ShapeError(diags)
    if diags:
        raise ShapeError(diags)


def _values(g: Graph, known: set[int]) -> Iterator[tuple[Value, Optional[Location]]]:
    """The inputs and op results of ``g`` with where they are made, but the op results whose type object
    is in ``known`` (found within every limit already; the graph holds its types, so their ids stay theirs)."""
    for v in g.inputs:
        yield v, None
    for op in g.ops:
        for v in op.results:
            if id(v.type) not in known:
                yield v, op.location


def _value_diagnostic(value: Value, location: Optional[Location], env: dict[str, int],
                      dims: dict[Expr, Dim]) -> Optional[Diagnostic]:
    """The diagnostic of a value too big under ``env``, or None; ``dims``: symbolic dims already substituted."""
    t = value.type
    if isinstance(t, IndexType):
        return _index_diagnostic(value, location, env)
    if not isinstance(t, TensorType):
        return None
    if all(type(d) is int for d in t.shape):
        concrete = t      # (``t.subs(env)`` is ``t``: no new type made)
    else:
        concrete = TensorType(t.dtype, tuple(_subs_dim(d, env, dims) for d in t.shape))   # ``t.subs(env)``
    if not concrete.is_static:
        return None
    itemsize = np.dtype(t.dtype.numpy).itemsize
    if all(0 <= d <= MAX_DIM for d in concrete.shape) and nbytes(concrete.shape, itemsize) <= max_tensor_bytes():
        return None    # within every limit: no need to spell out the diagnostic's words
    symbolic = "x".join(dim_str(d) for d in t.shape)
    behind = ", ".join(f"{s}={env[s]}" for s in sorted(t.symbols()) if s in env)
    return budget_diagnostic(f"tensor {describe_value(value)} (<{symbolic}>)", concrete.shape,
                             np.dtype(t.dtype.numpy).itemsize, behind, location)


def _subs_dim(d: Dim, env: dict[str, int], dims: dict[Expr, Dim]) -> Dim:
    """``subs(d, env)``, remembered in ``dims`` for a symbolic ``d``."""
    if not isinstance(d, Expr):
        return d
    known = dims.get(d)
    if known is None:
        known = dims[d] = subs(d, env)
    return known


def _index_diagnostic(value: Value, location: Optional[Location], env: dict[str, int]) -> Optional[Diagnostic]:
    """An index value (a size computed from dims, such as batch*seq) must fit TOSA's int32 shapes."""
    concrete = subs(value.index_type.value, env)
    if not is_static(concrete) or -MAX_DIM - 1 <= concrete <= MAX_DIM:
        return None
    behind = ", ".join(f"{s}={env[s]}" for s in sorted(free_symbols(value.index_type.value)) if s in env)
    return Diagnostic("E-TENSOR-DIM", f"index value {describe_value(value)} ({dim_str(value.index_type.value)}) is {concrete}, "
                      f"beyond TOSA's int32 shapes", location, (f"from the symbols {behind}",) if behind else (),
                      "bind the symbols to smaller sizes")
