"""How every importer turns a converter's failure into a diagnostic that says where.

Converters raise plain errors (ConvertError, a shape rule's error, a failed
constraint, an ordering of symbolic dims that the bounds cannot decide);
``converting(loc)`` wraps one op's conversion and re-raises them as
ConversionError (exit 3) or ShapeError (exit 4) naming the op; a refusal
raised from a published limit keeps that limit's note. Any other
exception is a bug: it propagates with a note naming the op.

:class:`Refusals` lets an importer keep walking after a refused op, so one run
lists every refusal: the refused op's results are marked missing, and a later
op that reads one of them is skipped (and counted) rather than tried.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable, Union

from ..diagnostics import ConversionError, ShapeError
from ..ir.shape_rules import ShapeRuleError
from ..lowering.limits import LimitError, limit_note
from ..symbolic.constraints import ConstraintFailed
from ..symbolic.expr import InconclusiveDimension

if TYPE_CHECKING:
    from ..ir.location import Location


class converting:
    """Translate the errors of converting the op at ``loc``; ``convert_error`` is the importer's ConvertError.

    (A class, not a generator context manager: importers enter one per op, and a generator costs several
    calls more.)"""

    __slots__ = ("loc", "convert_error")

    def __init__(self, loc: Location, convert_error: type) -> None:
        self.loc, self.convert_error = loc, convert_error

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: "type | None", e: "BaseException | None", tb: object) -> bool:
        if e is None:
            return False
        loc = self.loc
        if isinstance(e, LimitError):
            raise ConversionError.one("E-CONVERT", f"cannot convert {loc}: {e}", loc,
                                      notes=(limit_note(e.limit.key),)) from None
        if isinstance(e, self.convert_error):
            raise ConversionError.one("E-CONVERT", f"cannot convert {loc}: {e}", loc) from None
        if isinstance(e, ShapeRuleError):
            raise ShapeError.one("E-SHAPE", f"shape error at {loc}: {e}", loc) from None
        if isinstance(e, ConstraintFailed):
            raise ShapeError.one("E-CONSTRAINT", f"shape error at {loc}: {e}", loc,
                                 notes=(e.constraint.provenance.reason,)) from None
        if isinstance(e, InconclusiveDimension):
            raise ShapeError.one("E-UNDECIDED-DIM", f"shape error at {loc}: {e}", loc,
                                 hint="bind the symbols (--bind NAME=VALUE or --input-shape) so that the "
                                      "comparison is decided, or report the model") from None
        if isinstance(e, Exception):
            e.add_note(f"while converting {loc}")
        return False


class Refusals:
    """The refusals (exit 3) collected over one walk of a graph's ops, and the results they leave missing."""

    def __init__(self):
        self.diagnostics: list = []
        self.missing: set = set()
        self.skipped = 0

    def blocks(self, inputs: Iterable[Union[str, int]], outputs: Iterable[Union[str, int]], captures: bool = False) -> bool:
        """True (and ``outputs`` become missing) when an op reads a missing result, or may capture one."""
        if self.missing and (captures or any(i in self.missing for i in inputs)):
            self.missing.update(outputs)
            self.skipped += 1
            return True
        return False

    def add(self, error: ConversionError, outputs: Iterable[Union[str, int]]) -> None:
        self.diagnostics.extend(error.diagnostics)
        self.missing.update(outputs)

    def raise_any(self) -> None:
        """Raise every refusal at once; the last notes how many later ops were not tried."""
        if not self.diagnostics:
            return
        diags = list(self.diagnostics)
        if self.skipped:
            note = f"{self.skipped} later op(s) that read the refused ops' results were not tried"
            diags[-1] = dataclasses.replace(diags[-1], notes=tuple(diags[-1].notes) + (note,))
        raise ConversionError(diags)
