"""The two errors of the TOSA flatbuffer layer.

:class:`EmitError` says why a graph cannot become a ``.tosa`` (a symbolic dim,
a helper op that should have decayed, a parameter TOSA cannot hold) and
where: it carries the IR op's source location. :class:`ReadError` says why a
file cannot become an IR graph (not a TOSA flatbuffer, truncated, a version or
an op we do not map). Neither is ever replaced by a raw ``IndexError`` or
``struct.error`` escaping from the byte-level code.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from ..ir.location import Location


class EmitError(Exception):
    """A graph that cannot be written as a static TOSA 1.0 flatbuffer."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        text = message if location is None else f"{message} (at {location})"
        super().__init__(text)
        self.message = message
        self.location = location


class ReadError(Exception):
    """A byte string that cannot be read as a TOSA flatbuffer we understand."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
