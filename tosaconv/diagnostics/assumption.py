"""The error of a binding assumed for a data-dependent symbol that the data contradicts (seed 003).

Binding a NonZero count or a value EXTRACT_DIM reads is an assumption: the
program decays under it, and every run checks it where the value appears
(the interpreter, the decay of a constant source). Each of those places
raises this one error, so it lives below all of them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from . import ShapeError

if TYPE_CHECKING:
    from ..ir.location import Location


def assumption_error(symbol: str, assumed: int, actual: int, location: Location | None, data: str,
                     element: "int | None" = None) -> ShapeError:
    """The E-ASSUMPTION error (exit 4): a bound data-dependent symbol (a NonZero count, or the value
    EXTRACT_DIM reads from ``element`` of ``data``) that the data contradicts; ``data`` names the tensor
    as a user knows it (:func:`tosaconv.ir.graph.describe_value`: an input's quoted name, or the op making it)."""
    found = (f"finds {actual} non-zero element(s) in {data}" if element is None
             else f"reads {actual} from element {element} of {data}")
    return ShapeError.one(
        "E-ASSUMPTION", f"the assumption {symbol}={assumed} does not hold: {location} {found}", location,
        hint=f"bind '{symbol}' to the value these inputs give ({actual}), or leave it unbound and run the "
             "symbolic program")
