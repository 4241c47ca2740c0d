"""Diagnostics as data, and the error types that carry them to the CLI.

A :class:`Diagnostic` says what went wrong (``message``), where (a source
location: op type and node name), why (``notes``) and what to do (``hint``),
with a stable ``code`` that scripts can match. Library code raises a
:class:`TosaconvError` subclass holding one or more diagnostics; the CLI maps
the subclass to a documented exit code and hands the diagnostics to a
renderer (rich for people, JSON for scripts). Only renderers import rich.
"""
from __future__ import annotations

import enum
from dataclasses import field
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Any, Iterable, Optional, TypeVar

if TYPE_CHECKING:
    from ..ir.location import Location


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    location: Optional[Location] = None   # (imported for type checking only: diagnostics sit below ir)
    notes: tuple[str, ...] = ()
    hint: Optional[str] = None
    severity: Severity = Severity.ERROR

    def to_json(self) -> dict[str, Any]:
        loc = self.location
        return {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "location": None if loc is None else {
                "op_type": loc.op_type, "name": loc.name, "source": loc.source, "text": str(loc)},
            "notes": list(self.notes),
            "hint": self.hint,
        }


EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_CONVERSION = 3
EXIT_SHAPE = 4


_E = TypeVar("_E", bound="TosaconvError")


@dataclass
class TosaconvError(Exception):
    """Base of every error the CLI reports without a traceback."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    exit_code = EXIT_INTERNAL

    def __post_init__(self) -> None:
        super().__init__(self.summary())

    def summary(self) -> str:
        return "; ".join(d.message for d in self.diagnostics)

    @classmethod
    def one(cls: type[_E], code: str, message: str, location: Location | None = None, notes: Iterable[str] = (),
            hint: str | None = None) -> _E:
        return cls([Diagnostic(code, message, location, tuple(notes), hint)])


class UsageError(TosaconvError):
    """Bad command-line arguments or option files (exit 2)."""

    exit_code = EXIT_USAGE


class ConversionError(TosaconvError):
    """The model cannot be read or converted (exit 3)."""

    exit_code = EXIT_CONVERSION


class ShapeError(TosaconvError):
    """A shape problem: unbound symbol, violated constraint, data-dependent dim (exit 4)."""

    exit_code = EXIT_SHAPE
