"""Resource limits: the tensor size budget (``--max-tensor-bytes``) and TOSA's int32 dims.

Every tensor tosaconv would hold (an input read from an ``.npz`` or made at
random, a constant, an intermediate of the interpreter or of constant
folding) is checked against the budget *before* it is allocated, so a huge
binding, a header that claims gigabytes or a ConstantOfShape of 2^40 is a
clear error (exit 4) instead of a MemoryError. The budget is a context
variable: the command line sets it from ``--max-tensor-bytes`` for one run;
library users call :func:`tensor_budget`. TOSA shapes are int32, so no dim
may exceed ``MAX_DIM``.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from typing import TYPE_CHECKING, Any, Iterable, Iterator, SupportsInt

import numpy as np

from .diagnostics import Diagnostic, ShapeError

if TYPE_CHECKING:
    from .ir.location import Location

DEFAULT_MAX_TENSOR_BYTES = 2 << 30          # 2 GiB
MAX_DIM = (1 << 31) - 1                     # TOSA shapes are int32
_BUDGET = contextvars.ContextVar("max_tensor_bytes", default=DEFAULT_MAX_TENSOR_BYTES)


@contextlib.contextmanager
def tensor_budget(max_bytes: int) -> Iterator[None]:
    """Within the block, no tensor may take more than ``max_bytes`` bytes."""
    token = _BUDGET.set(int(max_bytes))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def max_tensor_bytes() -> int:
    return _BUDGET.get()


def nbytes(shape: Iterable[SupportsInt], itemsize: int) -> int:
    """The exact byte size of a tensor (Python ints: no overflow)."""
    return math.prod(int(d) for d in shape) * int(itemsize)


def budget_diagnostic(what: str, shape: Iterable[SupportsInt], itemsize: int, symbols: str = "",
                      location: Location | None = None) -> Diagnostic | None:
    """A diagnostic if ``what`` (shape, itemsize) breaks the budget or TOSA's int32 dims, else None."""
    dims = tuple(map(int, shape))
    if (not dims or min(dims) >= 0 and max(dims) <= MAX_DIM) and math.prod(dims) * int(itemsize) <= _BUDGET.get():
        return None   # the common case (checked per tensor: few calls): no words to spell out
    shown = "x".join(map(str, dims)) or "scalar"
    notes = (f"from the symbols {symbols}",) if symbols else ()
    if any(d < 0 for d in dims):
        return Diagnostic("E-TENSOR-SHAPE", f"{what} has a negative dim: <{shown}>", location, notes,
                          "check the bindings and the model's shapes")
    big = [d for d in dims if d > MAX_DIM]
    if big:
        return Diagnostic("E-TENSOR-DIM", f"{what} <{shown}> has a dim of {big[0]}, above TOSA's int32 limit "
                          f"{MAX_DIM}", location, notes, "bind the symbols to smaller sizes")
    size, budget = nbytes(dims, itemsize), max_tensor_bytes()
    if size > budget:
        return Diagnostic("E-TENSOR-BUDGET", f"{what} <{shown}> would take {_human(size)}, more than "
                          f"--max-tensor-bytes {budget} ({_human(budget)})", location, notes,
                          "bind the symbols to smaller sizes, or raise --max-tensor-bytes")
    return None


def check_tensor(what: str, shape: Iterable[SupportsInt], dtype: np.dtype[Any] | type, symbols: str = "",
                 location: Location | None = None) -> None:
    """Raise a ShapeError (exit 4) if a tensor of ``shape`` and ``dtype`` may not be allocated."""
    diag = budget_diagnostic(what, shape, np.dtype(dtype).itemsize, symbols, location)
    if diag is not None:
        raise ShapeError([diag])


def _human(size: int) -> str:
    if size >= 1 << 60:
        return f"about 2^{size.bit_length() - 1} bytes"
    scaled = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if scaled < 1024 or unit == "PiB":
            return f"{scaled:.0f} {unit}" if unit == "bytes" else f"{scaled:.1f} {unit}"
        scaled /= 1024
    return f"{size} bytes"
