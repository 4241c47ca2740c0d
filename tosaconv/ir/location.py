"""Source locations stamped on every op.

A :class:`Location` names the source node (op type and node name, as the
model spells them) that an IR op came from. Ops made by fusing several source
nodes keep all of their locations. Diagnostics use the location to say where.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)

# A location read back from a .tosa file holds the text we wrote there, "MatMul 'm'" (or several joined
# by " + "): it is shown as it is, not quoted again inside the TOSA op's own name. (Patterns, compiled by
# ``re`` when a read-back location first needs them: a conversion from a model never does, issue 13.)
_WRITTEN = r"\S+ '.*'"
# Its first part's node name: "MatMul 'm'" or "MatMul 'm' + Add 'a'" -> m.
_FIRST_NAME = r"\S+ '(.*?)'(?: \+ \S+ '.*')?"


@dataclass(frozen=True)
class Location:
    """``source`` says what the op type and name come from, so nothing is taken for ONNX by default:
    "onnx" or "tflite" (a source model's node), "tosa" (a location read back from a .tosa file),
    "graph" (a graph input), "ledger" (a constraint's provenance,
    as the ledger recorded it) or "internal"."""

    op_type: str
    name: str
    source: str
    fused: tuple["Location", ...] = ()

    def __str__(self) -> str:
        if self.fused:
            return " + ".join(str(f) for f in self.fused)
        if self.source == "tosa" and re.fullmatch(_WRITTEN, self.name):
            return self.name
        return f"{self.op_type} '{self.name}'"

    @property
    def value_name(self) -> str:
        """The base name of values made at this location: the node's name. A read-back location's name is
        the text we wrote, so its values take the node name inside it, as they did before writing."""
        if self.source == "tosa":
            m = re.fullmatch(_FIRST_NAME, self.name)
            if m:
                return m.group(1)
        return self.name

    def parts(self) -> tuple["Location", ...]:
        """The plain locations this one stands for."""
        return self.fused or (self,)

    @staticmethod
    def fuse(locations: Iterable["Location"]) -> "Location":
        parts: list[Location] = []
        for loc in locations:
            for p in loc.parts():
                if p not in parts:
                    parts.append(p)
        if len(parts) == 1:
            return parts[0]
        return Location(parts[0].op_type, parts[0].name, parts[0].source, tuple(parts))


UNKNOWN_LOCATION = Location("?", "?", "internal")
