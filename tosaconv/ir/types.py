"""Value types: ranked tensors with symbolic dims, and Index scalars.

A :class:`TensorType` has a fixed rank; each dim is an ``int`` or a symbolic
:class:`~tosaconv.symbolic.expr.Expr`. An :class:`IndexType` is the seed's
Dimension Value: an int64 scalar whose value is known as a dim expression
(a constant, a symbol, or arithmetic over symbols).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)

from ..symbolic.expr import Dim, Expr, dim_str, free_symbols, is_static, same, subs
from .dtypes import DType


@dataclass(frozen=True, eq=False)
class TensorType:
    dtype: DType
    shape: tuple[Dim, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(d if isinstance(d, Expr) else int(d) for d in self.shape))

    def __eq__(self, other: object) -> bool:
        """Structural identity (dims compared in normal form, never by deciding ``==``)."""
        return (isinstance(other, TensorType) and self.dtype == other.dtype and self.rank == other.rank
                and all(same(a, b) for a, b in zip(self.shape, other.shape)))

    def __hash__(self) -> int:
        return hash((self.dtype, tuple(str(d) for d in self.shape)))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        for d in self.shape:     # (a dim is an exact ``int`` or an Expr, see __post_init__: a loop, no calls)
            if type(d) is not int:
                return False
        return True

    def symbols(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for d in self.shape:
            out |= free_symbols(d)
        return out

    def subs(self, env: Mapping[str, Dim]) -> "TensorType":
        return TensorType(self.dtype, tuple(subs(d, env) for d in self.shape))

    def with_shape(self, shape: Iterable[Dim]) -> "TensorType":
        return TensorType(self.dtype, tuple(shape))

    def with_dtype(self, dtype: DType) -> "TensorType":
        return TensorType(dtype, self.shape)

    def static_shape(self) -> tuple[int, ...]:
        if not self.is_static:
            raise ValueError(f"shape {self} is not static")
        return self.shape      # type: ignore[return-value]  # (its dims are exact ints already)

    def __str__(self) -> str:
        dims = "x".join(_dim_text(d) for d in self.shape)
        return f"tensor<{dims + 'x' if dims else ''}{self.dtype.value}>"


def _dim_text(d: Dim) -> str:
    return str(d) if is_static(d) else "[" + dim_str(d) + "]"


@dataclass(frozen=True, eq=False)
class IndexType:
    value: Dim

    dtype = DType.INDEX

    def __post_init__(self) -> None:
        if not isinstance(self.value, Expr):
            object.__setattr__(self, "value", int(self.value))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IndexType) and same(self.value, other.value)

    def __hash__(self) -> int:
        return hash(str(self.value))

    @property
    def is_static(self) -> bool:
        return is_static(self.value)

    def symbols(self) -> frozenset[str]:
        return free_symbols(self.value)

    def subs(self, env: Mapping[str, Dim]) -> "IndexType":
        return IndexType(subs(self.value, env))

    def __str__(self) -> str:
        return f"index<{dim_str(self.value)}>"


ValueType = TensorType | IndexType
