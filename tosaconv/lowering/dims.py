"""Index values, reshapes, slices and axes: the helpers every converter of both importers builds on.

``index_for(ctx, expr)`` turns a symbolic dim expression into IR Index values
(GET_DIM of the input that defines each symbol, then INDEX_* arithmetic), so
a converter can compute an output size with the dim algebra and still hand
RESHAPE or DYN_SLICE a real Dimension Value. ``reshape`` builds a RESHAPE that
spells every output dim: literal ints stay in ``new_shape`` and each symbolic
dim becomes a ``-1`` with its Index value in ``shape_symbols``. A symbol that
no input defines (made by an op: a loop's data-dependent iteration count)
gets its value from a computed value that carries it as a dim.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

from ..ir import attrs as A
from ..ir.graph import Value
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import Dim, Expr, floordiv, free_symbols, product, same, sym
from .errors import ConvertError
from .limits import EMPTY_RESULT

if TYPE_CHECKING:
    from ..ir.graph import Graph
    from ..ir.ops import OpDef
    from ..symbolic.expr import Atom
    from .context import LoweringContext

_ATOM_OPS = {"floordiv": Op.INDEX_FLOORDIV, "mod": Op.INDEX_MOD, "min": Op.INDEX_MIN, "max": Op.INDEX_MAX}


def norm_axis(axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise ConvertError(f"axis {axis} is out of range for rank {rank}")
    return a


def index_op(ctx: LoweringContext, op: OpDef, a: Value, b: Value) -> Value:
    """An INDEX_* op, or an INDEX_CONST when the result is already a constant."""
    value = op.index_fn(a.type.value, b.type.value)
    if isinstance(value, int):
        return ctx.b.index(value)
    return ctx.b.emit(op, a, b)


def index_for(ctx: LoweringContext, d: Dim) -> Value:
    """IR Index value(s) computing the dim expression ``d`` (each expression is built once per import)."""
    if isinstance(d, int):
        return ctx.b.index(d)
    if d.key not in ctx.index_cache:
        ctx.index_cache[d.key] = _build_index(ctx, d)
    return ctx.index_cache[d.key]


def _build_index(ctx: LoweringContext, d: Expr) -> Value:
    total = None
    for mono, coeff in d.terms.items():
        term = ctx.b.index(coeff) if (coeff != 1 or not mono) else None
        for atom, power in mono:
            for _ in range(power):
                v = _atom_value(ctx, atom)
                term = v if term is None else index_op(ctx, Op.INDEX_MUL, term, v)
        total = term if total is None else index_op(ctx, Op.INDEX_ADD, total, term)
    return total


def _atom_value(ctx: LoweringContext, atom: Atom) -> Value:
    if atom.kind == "sym":
        return symbol_value(ctx, atom.args[0])
    a, b = (index_for(ctx, x) for x in atom.args)
    return index_op(ctx, _ATOM_OPS[atom.kind], a, b)


def symbol_value(ctx: LoweringContext, name: str) -> Value:
    """The Index value of a symbol: GET_DIM of the input it names, or its EXTRACT_DIM."""
    if name in ctx.symbol_values:
        return ctx.symbol_values[name]
    info = ctx.graph.scope.symbols.get(name)
    if info is None or info.input_name is None:
        carrier = _carrier(ctx.graph, name)
        if carrier is None:
            origin = f" ({info.origin})" if info is not None else ""
            raise ConvertError(f"symbol '{name}'{origin} has no value in the program to compute sizes from: it is "
                               "not a dim of an input, and no value computed so far has it as a dim")
        ctx.symbol_values[name] = ctx.b.get_dim(*carrier)
        return ctx.symbol_values[name]
    source = next(v for v in ctx.graph.inputs if v.name == info.input_name)
    ctx.symbol_values[name] = ctx.b.get_dim(source, info.axis)
    return ctx.symbol_values[name]


def _carrier(graph: Graph, name: str) -> Optional[tuple[Value, int]]:
    """``(value, axis)`` of the latest result in ``graph`` whose dim ``axis`` is exactly the symbol ``name``
    (an op that made the symbol, such as a loop stopped by its condition, defines it), or None."""
    for op in reversed(graph.ops):
        for v in op.results:
            for axis, d in enumerate(getattr(v.type, "shape", ())):
                if isinstance(d, Expr) and free_symbols(d) == {name} and same(d, sym(name)):
                    return v, axis
    return None


def reshape(ctx: LoweringContext, x: Value, dims: Sequence[Union[Dim, Value]]) -> Value:
    """RESHAPE ``x`` to ``dims`` (ints, Exprs, or Index Values), recording the element-count fact."""
    values = [d.type.value if isinstance(d, Value) else d for d in dims]
    if len(values) == x.type.rank and all(same(a, b) for a, b in zip(values, x.type.shape)):
        return x
    ctx.require(Kind.EQ, product(x.type.shape), product(values), "reshape keeps the number of elements")
    new_shape, symbols = [], []
    for d, v in zip(dims, values):
        if isinstance(v, int):
            new_shape.append(v)
        else:
            new_shape.append(-1)
            symbols.append(d if isinstance(d, Value) else index_for(ctx, v))
    return ctx.b.emit(Op.RESHAPE, x, *symbols, attrs=A.ReshapeAttrs(tuple(new_shape)))


def expand_leading(ctx: LoweringContext, x: Value, rank: int) -> Value:
    """Prepend 1s to ``x`` until it has ``rank`` dims (EXPAND_DIMS)."""
    extra = rank - x.type.rank
    if extra <= 0:
        return x
    return ctx.b.emit(Op.EXPAND_DIMS, x, attrs=A.IndicesAttrs(tuple(range(extra))))


def slice_(ctx: LoweringContext, x: Value, starts: Sequence[Dim], sizes: Sequence[Dim]) -> Value:
    """SLICE when every start and size is static, else DYN_SLICE with Index operands (never empty)."""
    for axis, size in enumerate(sizes):
        if isinstance(size, int) and size <= 0:
            raise EMPTY_RESULT.refuse(f"the slice is empty on axis {axis}")
        if isinstance(size, Expr):
            ctx.require(Kind.GE, size, 1, f"slice on axis {axis} must not be empty (TOSA dims are >= 1)")
    if all(same(s, 0) for s in starts) and all(same(a, b) for a, b in zip(sizes, x.type.shape)):
        return x
    if all(isinstance(v, int) for v in list(starts) + list(sizes)):
        return ctx.b.emit(Op.SLICE, x, attrs=A.SliceAttrs(tuple(starts), tuple(sizes)))
    operands = [index_for(ctx, v) for v in list(starts) + list(sizes)]
    return ctx.b.emit(Op.DYN_SLICE, x, *operands)


def split_along(ctx: LoweringContext, x: Value, axis: int, sizes: Sequence[Dim]) -> list:
    """Consecutive slices of ``x`` along ``axis`` with the given (possibly symbolic) sizes."""
    outs, offset = [], 0
    for size in sizes:
        starts = [0] * x.type.rank
        starts[axis] = offset
        shape = list(x.type.shape)
        shape[axis] = size
        outs.append(slice_(ctx, x, starts, shape))
        offset = offset + size
    return outs


def exact_quotient(ctx: LoweringContext, d: Dim, b: int, what: str) -> Dim:
    """``d // b``, which must be exact (ledger for symbols, an error for static dims)."""
    ctx.require(Kind.DIVISIBLE, d, b, f"{what} must be divisible by {b}")
    return floordiv(d, b)
