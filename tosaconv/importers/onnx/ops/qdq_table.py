"""Elementwise float chains of one quantized tensor, as one int8 TOSA TABLE.

``DequantizeLinear -> Sigmoid -> QuantizeLinear`` and every other chain of
elementwise float ops whose only non-constant input is one dequantized 8-bit
tensor (HardSwish ``x * HardSigmoid(x)``, SiLU, Gelu's erf form, Clip,
LeakyRelu, ``x + 3``...) is a function of that tensor's 256 possible values.
The *cone* of the QuantizeLinear operand is walked back to its leaves: the
dequantized tensor (through layout ops, which commute with elementwise ops)
and constants whose elements are all equal. The float ops of the cone are then
evaluated with the interpreter's own kernels on all 256 dequantized values, so
the table computes exactly what the float program computes, and quantized as
ONNX's QuantizeLinear does (round half to even, saturate). Entries where the
function is NaN (Sqrt, Log of a negative value) are allowed only when the input
provably never takes them (:mod:`tosaconv.lowering.int_range`); they hold the
zero point, which nothing reads. onnxruntime's
QLinear lookup tables are built the same way, so results agree up to the last
bit of each float function.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....interpreter.registry import KernelContext, kernel_for
from ....ir import attrs as A
from ....ir.graph import Value
from ....ir.ops import Op, Trait
from ....symbolic.expr import same
from ....lowering.int_range import value_range
from .qdq_core import Activation, NoFold, NotMine, activation, const_real, emit_activation, trace

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ..context import ImportContext

MAX_CONE_OPS = 64        # a longer chain is not a single source op's lowering; leave it float


def table_lower(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    """The signed-form int8 result of QuantizeLinear(x) as one TABLE, or :class:`NoFold`."""
    ops, leaf, consts = _cone(ctx, x)
    if leaf is None or not ops:
        raise NotMine("no elementwise op of a dequantized tensor")
    y = emit_activation(ctx, leaf[1])
    if not _same_shape(y, x):
        raise NoFold("a constant broadcasts the quantized tensor to a larger shape")
    real = _evaluate(ops, x, leaf, consts, _dequantized_range(leaf[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        q = np.rint(real.astype(np.float32) / np.float32(y_scale)).astype(np.float64)
    q = _unreachable_nan(q, value_range(y))
    table = np.clip(q + y_zp, -128, 127).astype(np.int8)
    return ctx.b.emit(Op.TABLE, y, attrs=A.TableAttrs(table))


def _unreachable_nan(q: np.ndarray, reach: tuple) -> np.ndarray:
    """``q`` with its NaN entries set to 0 (the output zero point) when the input never takes those values
    (``reach``: the interval :func:`value_range` proves, e.g. a Sqrt of a sum of squares on a symmetric
    scale, whose negative half no input reaches), else :class:`NoFold`."""
    nan = np.isnan(q)
    if not nan.any():
        return q
    lo, hi = reach
    stored = np.arange(-128, 128)
    hit = stored[nan & (stored >= lo) & (stored <= hi)]
    if hit.size:
        raise NoFold(f"the function is NaN for some input value that the input can take (stored {int(hit[0])}; "
                     f"tosaconv proves only that the input lies in [{lo}, {hi}])")
    return np.where(nan, 0.0, q)


def cone_values(ctx: ImportContext, x: Value) -> tuple:
    """(the Activation of the one quantized tensor an elementwise float chain ``x`` is computed from,
    ``x``'s float values for its 256 values in TABLE order), for rules that need more than 8 bits."""
    ops, leaf, consts = _cone(ctx, x)
    if leaf is None or not ops:
        raise NotMine("no elementwise op of a dequantized tensor")
    if not _same_shape(leaf[0], x):
        raise NoFold("a constant broadcasts the quantized tensor to a larger shape")
    return leaf[1], _evaluate(ops, x, leaf, consts, _dequantized_range(leaf[1]))


def _cone(ctx: ImportContext, x: Value) -> tuple[list[Operation], Optional[tuple[Value, Activation]], dict]:
    """(ops in program order, (leaf value, Activation), {constant value: its one element})."""
    ops, leaf, consts, seen, stack = [], None, {}, set(), [x]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        c = _uniform_constant(ctx, v)
        if c is not None:
            consts[v] = c
            continue
        found = _leaf(ctx, v)
        if found is not None:
            leaf = _one_leaf(leaf, (v, found))
            continue
        p = v.producer
        if p is None or not p.op.has(Trait.ELEMENTWISE) or p.op in (Op.TABLE, Op.RESCALE) or len(p.results) != 1:
            raise NotMine(_not_elementwise(p))
        ops.append(p)
        if len(ops) > MAX_CONE_OPS:
            raise NoFold(f"more than {MAX_CONE_OPS} float ops between dequantization and quantization")
        stack.extend(p.operands)
    order = {id(op): i for i, op in enumerate(ctx.graph.ops)}
    return sorted(ops, key=lambda op: order.get(id(op), -1)), leaf, consts


def _not_elementwise(p: Optional[Operation]) -> str:
    if p is None:
        return "the operand depends on a graph input that is not quantized"
    return f"{p.op.name} (from {p.location}) has no integer lowering in tosaconv"


def _leaf(ctx: ImportContext, v: Value) -> Optional[Activation]:
    try:
        return activation(trace(ctx, v))
    except NoFold:
        return None


def _one_leaf(leaf: Optional[tuple[Value, Activation]], found: tuple[Value, Activation]) -> tuple[Value, Activation]:
    if leaf is None:
        return found
    a, b = leaf[1].operand, found[1].operand
    if a.record is not b.record or [id(op) for op in a.ops] != [id(op) for op in b.ops]:
        raise NoFold("the float ops combine two different quantized tensors")
    return leaf


def _uniform_constant(ctx: ImportContext, v: Value) -> Optional[float]:
    """The one value of a constant (plain or dequantized) whose elements are all equal, else None."""
    try:
        real = const_real(ctx, v)
    except NoFold:
        return None
    flat = real.reshape(-1)
    if flat.size == 0 or not np.all(flat == flat[0]):
        raise NoFold("a constant operand is not the same for every element (per-channel)")
    return float(flat[0])


def _dequantized_range(act: Activation) -> np.ndarray:
    """The 256 values of the int8 tensor in TABLE order, dequantized in float32 as DequantizeLinear does."""
    q = np.arange(-128, 128, dtype=np.int64)
    return (q - act.zp).astype(np.float32) * np.float32(act.scale)


def _evaluate(ops: Sequence[Operation], x: Value, leaf: tuple[Value, Activation], consts: dict, values: np.ndarray) -> np.ndarray:
    """Run the cone's float ops on ``values`` (as a 256-element tensor) with the interpreter's kernels;
    each constant is its one element."""
    env = {leaf[0]: values}
    env.update({v: np.full((1,), c, dtype=v.type.dtype.numpy) for v, c in consts.items()})
    kctx = KernelContext()
    with np.errstate(all="ignore"):
        for op in ops:
            env[op.result] = np.asarray(kernel_for(op.op)(op, [env[v] for v in op.operands], kctx)[0])
    return np.broadcast_to(env[x], values.shape).reshape(-1)


def _same_shape(y: Value, x: Value) -> bool:
    a, b = y.type.shape, x.type.shape
    return len(a) == len(b) and all(same(p, q) for p, q in zip(a, b))
