"""Converter for ONNX Einsum: the equations that transposes, reductions,
outer products, matmuls and batched matmuls express.

The equation is parsed into one label list per operand (``...`` becomes
numbered labels, right-aligned as numpy does) and an output list (implicit
outputs are the ellipsis, then the labels used once, sorted). Operands are
contracted left to right, two at a time: labels no later operand or the
output needs are summed away first (REDUCE_SUM), then shared labels the
output keeps are batch dims, shared labels it drops are contracted, and the
rest are free. Float operands become one TOSA MATMUL ``[batch, free_a,
contracted] x [batch, contracted, free_b]``; integer operands (TOSA MATMUL
takes no int32) are aligned, multiplied (MUL) and summed (REDUCE_SUM). A
final TRANSPOSE gives the output order. Shared labels must have equal sizes
(recorded in the ledger). Repeated labels within one operand (diagonals,
``ii->i``) are refused.
"""
from __future__ import annotations

import string
from typing import TYPE_CHECKING, Optional, Sequence, Union

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import reshape
from ....lowering.index_math import transpose
from ....symbolic.constraints import Kind
from ....symbolic.expr import product
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

LETTERS = set(string.ascii_letters)


EINSUM_DIAGONAL = publish("Einsum", Limit(
    "diagonal", LimitKind.ATTRIBUTE, "equation", ("an index repeated within one operand or the output (a "
                                                  "diagonal, as in 'ii->i')",),
    "tosaconv lowers Einsum to transposes, reshapes, reductions and MATMUL, none of which takes a diagonal",
    "take the diagonal with a mask (Mul by EyeLike) and ReduceSum before the Einsum"))


@converter("Einsum", since=12)
def convert_einsum(ctx: ImportContext, node: NodeReader) -> Converted:
    equation = node.attr("equation")
    xs = [ctx.tensor(n) for n in node.inputs]
    terms, out = parse_equation(equation, [x.type.rank for x in xs])
    _check_sizes(ctx, xs, terms)
    acc, labels = xs[0], terms[0]
    for i in range(1, len(xs)):
        keep = set(out).union(*terms[i + 1:])
        acc, labels = _contract(ctx, acc, labels, xs[i], terms[i], keep)
    acc, labels = _sum_away(ctx, acc, labels, set(out))
    return transpose(ctx, acc, [labels.index(lbl) for lbl in out])


# -- parsing -----------------------------------------------------------------------

def parse_equation(equation: str, ranks: list) -> tuple:
    """(labels per operand, output labels) of an Einsum equation."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    parts = lhs.split(",")
    if len(parts) != len(ranks):
        raise ConvertError(f"Einsum '{equation}' names {len(parts)} operands, the node has {len(ranks)}")
    ell = max((r - _explicit(p) for p, r in zip(parts, ranks) if "..." in p), default=0)
    terms = [_labels(p, r, equation, i, ell) for i, (p, r) in enumerate(zip(parts, ranks))]
    out = _labels(rhs, None, equation, "output", ell) if arrow else _implicit(terms, ell)
    used = set().union(*terms) if terms else set()
    missing = [lbl for lbl in out if lbl not in used]
    if missing or len(set(out)) != len(out):
        raise ConvertError(f"Einsum '{equation}': each output index must appear once and in some operand")
    return terms, out


def _explicit(part: str) -> int:
    return len(part.replace("...", ""))


def _labels(part: str, rank: Optional[int], equation: str, which: Union[int, str], ell: int = 0) -> list:
    if part.count("...") > 1 or any(c not in LETTERS for c in part.replace("...", "")):
        raise ConvertError(f"Einsum '{equation}': '{part}' is not a valid subscript list")
    head, dots, tail = part.partition("...")
    n = (rank - _explicit(part)) if rank is not None else ell
    if rank is not None and (n < 0 or (not dots and n)):
        raise ConvertError(f"Einsum '{equation}': operand {which} has rank {rank}, its subscripts say otherwise")
    labels = list(head) + [f"...{ell - n + j}" for j in range(n if dots else 0)] + list(tail)
    repeated = sorted({c for c in labels if labels.count(c) > 1})
    if repeated:
        raise EINSUM_DIAGONAL.refuse(f"Einsum '{equation}': {which if which == 'output' else f'operand {which}'} "
                                     f"repeats index '{repeated[0]}'")
    return labels


def _implicit(terms: list, ell: int) -> list:
    counts = {}
    for t in terms:
        for lbl in t:
            counts[lbl] = counts.get(lbl, 0) + 1
    return [f"...{j}" for j in range(ell)] + sorted(c for c, k in counts.items() if k == 1 and c in LETTERS)


def _check_sizes(ctx: ImportContext, xs: Sequence[Value], terms: Sequence[list[str]]) -> None:
    sizes = {}
    for x, t in zip(xs, terms):
        for lbl, d in zip(t, x.type.shape):
            if lbl in sizes:
                ctx.require(Kind.EQ, sizes[lbl], d, f"Einsum index '{lbl}' has one size in every operand")
            else:
                sizes[lbl] = d


# -- building ----------------------------------------------------------------------

def _sum_away(ctx: ImportContext, x: Value, labels: list, keep: set) -> tuple:
    """REDUCE_SUM over the labels not in ``keep``, dropping their axes."""
    gone = [i for i, lbl in enumerate(labels) if lbl not in keep]
    if not gone:
        return x, labels
    for i in gone:
        x = ctx.b.emit(Op.REDUCE_SUM, x, attrs=A.AxisAttrs(i))
    x = ctx.b.emit(Op.COLLAPSE_DIMS, x, attrs=A.IndicesAttrs(tuple(gone)))
    return x, [lbl for lbl in labels if lbl in keep]


def _contract(ctx: ImportContext, a: Value, la: list[str], b: Value, lb: list[str], keep: set) -> tuple:
    a, la = _sum_away(ctx, a, la, keep | set(lb))
    b, lb = _sum_away(ctx, b, lb, keep | set(la))
    batch = [lbl for lbl in la if lbl in lb and lbl in keep]
    inner = [lbl for lbl in la if lbl in lb and lbl not in keep]
    free_a = [lbl for lbl in la if lbl not in lb]
    free_b = [lbl for lbl in lb if lbl not in la]
    out_labels = batch + free_a + free_b
    if a.type.dtype.is_float:
        y = _matmul(ctx, (a, la), (b, lb), batch, inner, free_a, free_b)
    else:
        y = _multiply_sum(ctx, (a, la), (b, lb), out_labels, inner)
    return y, out_labels


def _dims(x: Value, labels: Sequence[str], chosen: Sequence[str]) -> list:
    return [x.type.shape[labels.index(lbl)] for lbl in chosen]


def _arranged(ctx: ImportContext, x: Value, labels: Sequence[str], groups: Sequence[list[str]]) -> Value:
    """x transposed to the concatenated ``groups`` and reshaped to one dim per group."""
    order = [lbl for g in groups for lbl in g]
    x = transpose(ctx, x, [labels.index(lbl) for lbl in order])
    return reshape(ctx, x, [product(_dims(x, order, g)) for g in groups])


def _matmul(ctx: ImportContext, a: tuple[Value, list[str]], b: tuple[Value, list[str]], batch: list[str], inner: list[str], free_a: list[str], free_b: list[str]) -> Value:
    (xa, la), (xb, lb) = a, b
    y = ctx.b.emit(Op.MATMUL, _arranged(ctx, xa, la, [batch, free_a, inner]),
                   _arranged(ctx, xb, lb, [batch, inner, free_b]))
    return reshape(ctx, y, _dims(xa, la, batch + free_a) + _dims(xb, lb, free_b))


def _multiply_sum(ctx: ImportContext, a: tuple[Value, list[str]], b: tuple[Value, list[str]], out_labels: list[str], inner: list[str]) -> Value:
    """Integer contraction: both operands on the axes ``out_labels + inner`` (1 where absent), MUL, REDUCE_SUM."""
    axes = out_labels + inner
    aligned = [_aligned(ctx, x, labels, axes) for x, labels in (a, b)]
    y = ctx.b.emit(Op.MUL, *aligned, attrs=A.MulAttrs(0))
    y, _ = _sum_away(ctx, y, axes, set(out_labels))
    return y


def _aligned(ctx: ImportContext, x: Value, labels: Sequence[str], axes: Sequence[str]) -> Value:
    present = [lbl for lbl in axes if lbl in labels]
    x = transpose(ctx, x, [labels.index(lbl) for lbl in present])
    return reshape(ctx, x, [x.type.shape[present.index(lbl)] if lbl in labels else 1 for lbl in axes])
