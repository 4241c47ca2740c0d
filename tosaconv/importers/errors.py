"""How every importer turns a converter's failure into a diagnostic that says where.

Converters raise plain errors (ConvertError, a shape rule's error, a failed
constraint, an ordering of symbolic dims that the bounds cannot decide);
``converting(loc)`` wraps one op's conversion and re-raises them as
ConversionError (exit 3) or ShapeError (exit 4) naming the op; a refusal
raised from a published limit keeps that limit's note. Any other
exception is a bug: it propagates with a note naming the op.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..diagnostics import ConversionError, ShapeError
from ..ir.shape_rules import ShapeRuleError
from ..lowering.limits import LimitError, limit_note
from ..symbolic.constraints import ConstraintFailed
from ..symbolic.expr import InconclusiveDimension


@contextmanager
def converting(loc, convert_error: type):
    """Translate the errors of converting the op at ``loc``; ``convert_error`` is the importer's ConvertError."""
    try:
        yield
    except LimitError as e:
        raise ConversionError.one("E-CONVERT", f"cannot convert {loc}: {e}", loc,
                                  notes=(limit_note(e.limit.key),)) from None
    except convert_error as e:
        raise ConversionError.one("E-CONVERT", f"cannot convert {loc}: {e}", loc) from None
    except ShapeRuleError as e:
        raise ShapeError.one("E-SHAPE", f"shape error at {loc}: {e}", loc) from None
    except ConstraintFailed as e:
        raise ShapeError.one("E-CONSTRAINT", f"shape error at {loc}: {e}", loc,
                             notes=(e.constraint.provenance.reason,)) from None
    except InconclusiveDimension as e:
        raise ShapeError.one("E-UNDECIDED-DIM", f"shape error at {loc}: {e}", loc,
                             hint="bind the symbols (--bind NAME=VALUE or --input-shape) so that the "
                                  "comparison is decided, or report the model") from None
    except Exception as e:
        e.add_note(f"while converting {loc}")
        raise
