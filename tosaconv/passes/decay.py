"""Decay rules: how each helper and data-dependent op becomes static TOSA.

Once every Index operand is a constant, GET_DIM/INDEX_*/EXTRACT_DIM become
INDEX_CONST, DIMS_TO_TENSOR and IOTA become CONST, EXPAND_DIMS/COLLAPSE_DIMS
and RESHAPE with shape_symbols become a static RESHAPE, DYN_SLICE becomes
SLICE, DYN_TILE becomes TILE and COUNT_RESCALE becomes RESCALE. A rule returns the replacement values, or
raises :class:`DataDependentDim` when an operand still is not constant.

Each rule states the extent guarantee it needs from the op's dims (``needs=``,
seed 003; see :mod:`.contracts`): one that turns dims into a shape or data
needs Exact ones, and the rebuild checks that before running it.

The op table's row names each rule (``decay="decay:decay_reshape"``), so the
rules of :mod:`.decay_control`, :mod:`.decay_data`, :mod:`.decay_pad` and
:mod:`.decay_recurrent` are found the same way, without this module importing
them; ``@decays`` only records ``needs`` and checks that the table agrees.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Optional, Protocol, TypeVar, cast

import numpy as np

from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.graph import Assumption, Operation, Value, describe_value
from ..ir.ops import Op, OpDef, resolve
from ..ir.types import TensorType
from ..lowering.limits import SIZE_FROM_DATA
from ..symbolic.scope import ExtentKind

EXACT, ANY = ExtentKind.EXACT, ExtentKind.UNKNOWN



class DecayRule(Protocol):
    """A decay rule: ``rule(op, operands, b, env)`` emits the static replacement of ``op`` through ``b``
    (``operands`` already rebuilt, ``env`` the bindings, which EXTRACT_DIM extends) and returns its values;
    ``needs`` is the extent guarantee it needs of the op's dims (set by :func:`decays`)."""

    needs: ExtentKind

    def __call__(self, op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]: ...


_Fn = TypeVar("_Fn", bound=Callable[[Operation, list[Value], Builder, dict[str, int]], list[Value]])
_RESOLVED: dict[str, DecayRule] = {}   # op name -> decay rule, filled on first use


class DataDependentDim(Exception):
    """An Index operand that binding the symbols did not make constant; ``limit`` is the key of the
    published limit (:mod:`tosaconv.lowering.limits`) the refusal comes from, if any."""

    def __init__(self, op: Operation, message: str, limit: str = "") -> None:
        self.op = op
        self.limit = limit
        super().__init__(message)


def decays(op_def: OpDef, *, needs: ExtentKind) -> Callable[[_Fn], _Fn]:
    """Mark the decorated function as the decay rule of ``op_def``; ``needs``: the extent guarantee it needs
    of the op's dims. The op table's ``decay`` pointer is what finds the rule; this checks the two agree."""
    def mark(fn: _Fn) -> _Fn:
        where = f"{fn.__module__}:{fn.__name__}"
        if op_def.decay != where:
            raise ValueError(f"{where} is marked as the decay rule of {op_def.name}, "
                             f"but the op table names {op_def.decay}")
        fn.needs = needs  # type: ignore[attr-defined]  # makes it a DecayRule; mypy cannot type attributes set on functions
        return fn
    return mark


def rule_for(op_def: OpDef) -> Optional[DecayRule]:
    """The decay rule the op table names for ``op_def`` (None when it names none)."""
    fn = _RESOLVED.get(op_def.name)
    if fn is None and op_def.decay:
        fn = _RESOLVED[op_def.name] = cast(DecayRule, resolve(op_def.decay))   # marked by @decays
    return fn


def index_value(op: Operation, v: Value) -> int:
    value = v.index_type.value
    if not isinstance(value, int):
        raise DataDependentDim(op, f"{op.op.name} at {op.location} needs dim value '{value}', "
                                   "which the bindings do not determine")
    return value


@decays(Op.RESHAPE, needs=EXACT)
def decay_reshape(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    values = iter(index_value(op, v) for v in operands[1:])
    shape = tuple(next(values) if d == -1 else d for d in op.attrs_as(A.ReshapeAttrs).new_shape)
    return [b.emit(Op.RESHAPE, operands[0], attrs=A.ReshapeAttrs(shape))]


@decays(Op.EXPAND_DIMS, needs=EXACT)
def decay_expand_dims(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    return [_static_reshape(b, op, operands[0])]


@decays(Op.COLLAPSE_DIMS, needs=EXACT)
def decay_collapse_dims(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    return [_static_reshape(b, op, operands[0])]


def _static_reshape(b: Builder, op: Operation, x: Value) -> Value:
    result = op.op.shape_rule([x.type], op.attrs)[0]
    assert isinstance(result, TensorType)   # EXPAND_DIMS and COLLAPSE_DIMS make tensors
    return b.emit(Op.RESHAPE, x, attrs=A.ReshapeAttrs(tuple(result.shape)))


@decays(Op.DYN_SLICE, needs=EXACT)
def decay_dyn_slice(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    x = operands[0]
    r = x.tensor_type.rank
    idx = [index_value(op, v) for v in operands[1:]]
    return [b.emit(Op.SLICE, x, attrs=A.SliceAttrs(tuple(idx[:r]), tuple(idx[r:])))]


@decays(Op.DYN_TILE, needs=EXACT)
def decay_dyn_tile(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    multiples = tuple(index_value(op, v) for v in operands[1:])
    if all(m == 1 for m in multiples):
        return [operands[0]]
    return [b.emit(Op.TILE, operands[0], attrs=A.TileAttrs(multiples))]


@decays(Op.IOTA, needs=EXACT)
def decay_iota(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    n = index_value(op, operands[0])
    return [b.const(np.arange(n, dtype=op.attrs_as(A.IotaAttrs).dtype.numpy))]


@decays(Op.DIMS_TO_TENSOR, needs=EXACT)
def decay_dims_to_tensor(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    values = [index_value(op, v) for v in operands]
    return [b.const(np.array(values, dtype=op.attrs_as(A.DimsToTensorAttrs).dtype.numpy))]


@decays(Op.EXTRACT_DIM, needs=ANY)   # it reads its value from data
def decay_extract_dim(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    src, name = operands[0], next(iter(op.result.type.symbols()))
    dim_index = op.attrs_as(A.DimIndexAttrs).dim_index
    if src.producer is None or src.producer.op is not Op.CONST:
        if name in env:   # bound by the user: an assumption, which the numpy run checks
            b.graph.assumptions.append(Assumption(name, env[name], src.name, op.location, dim_index,
                                                  describe_value(_data_origin(op.operands[0]))))
            return [b.index(env[name])]
        raise DataDependentDim(op, f"EXTRACT_DIM at {op.location} reads a size from tensor data "
                                   f"({describe_value(_data_origin(src))}) that is only known when the model runs; "
                                   f"assume it with --bind {name}=N (checked when tosaconv runs the program)",
                               SIZE_FROM_DATA)
    value = int(np.asarray(src.producer.attrs_as(A.ConstAttrs).values).reshape(-1)[dim_index])
    if name in env and env[name] != value:
        from ..diagnostics.assumption import assumption_error   # only for this refusal (start-up, issue 13)
        raise assumption_error(name, env[name], value, op.location, describe_value(_data_origin(op.operands[0])),
                               dim_index)
    env[name] = value
    return [b.index(value)]


def _data_origin(v: Value) -> Value:
    """The value whose data ``v`` reshapes (the name a user knows), through RESHAPEs."""
    while v.producer is not None and v.producer.op is Op.RESHAPE:
        v = v.producer.operands[0]
    return v


@decays(Op.COUNT_RESCALE, needs=EXACT)
def decay_count_rescale(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    from ..ir.count_rescale import mean_multiplier, rescale_for   # a rare op: not on every convert (issue 13)
    a = op.attrs_as(A.CountRescaleAttrs)
    m, e = mean_multiplier(a.multiplier, a.exponent, index_value(op, operands[1]))
    rescale, bounds = rescale_for(m, e, a.output_zp, a.output_dtype)
    x = operands[0]
    if bounds is not None:
        nan = A.NanModeAttrs()
        x = b.emit(Op.MINIMUM, b.emit(Op.MAXIMUM, x, b.scalar_like(bounds[0], x.tensor_type), attrs=nan),
                   b.scalar_like(bounds[1], x.tensor_type), attrs=nan)
    return [b.emit(Op.RESCALE, x, attrs=rescale)]


@decays(Op.INTERP_MATRIX, needs=EXACT)
def decay_interp_matrix(op: Operation, operands: list[Value], b: Builder, env: dict[str, int]) -> list[Value]:
    from ..interpreter.interpolation import interp_matrix   # a rare op: not on every convert (issue 13)
    sizes = [index_value(op, v) for v in operands]
    return [b.const(interp_matrix(op, sizes, None)[0])]
