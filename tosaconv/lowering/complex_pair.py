"""A complex tensor held as its two real parts (TOSA has no complex type), in a module of its own: the
TFLite converters that move such a pair part by part (RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, CAST) are
used by almost every model, which then need not import the transforms of :mod:`.dft` (start-up, issue 13).
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)


@dataclass(frozen=True)
class ComplexPair:
    """A complex tensor as its real and imaginary parts (TOSA has no complex type). Only the ops that
    take a part (TFLite REAL, IMAG, COMPLEX_ABS, CAST) or move both alike read one; :attr:`why_not_a_tensor` is the refusal any
    other reader gives."""

    real: object
    imag: object
    source: str

    @property
    def why_not_a_tensor(self) -> str:
        return (f"is the complex result of {self.source}; TOSA has no complex tensors, so only REAL, IMAG, "
                f"COMPLEX_ABS, CAST to a real type and the shape-only RESHAPE, SQUEEZE, EXPAND_DIMS and "
                f"TRANSPOSE can read it")
