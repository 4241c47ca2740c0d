"""Published limits: what a converter does not handle, declared as data and refused from that data.

A :class:`Limit` names one thing a source op's converter does not convert
although the op is claimed: an attribute value (Einsum's diagonal), an element
type, an input given in a form tosaconv cannot make static (an ``axes`` input
computed at run time), or an output it does not produce (BatchNormalization's
running statistics). Each importer publishes its ops' limits in its registry
(``tosaconv ops`` lists them) and its converters refuse with
``raise LIMIT.refuse(detail)``, so the published text and the refusal are the
same record and cannot drift. The refusal's diagnostic carries the note
``published limit: <key>`` (:func:`limit_note`), which is how a script (the
node-case scoreboard) matches a refusal with the op's published limits.

Sizes read from tensor data are refused after import, when specialization
finds a size that binding the symbols did not make static; that refusal
names the shared :data:`SIZE_FROM_DATA` limit, which the ops that can take a
size from data publish.
"""
from __future__ import annotations

import enum
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)

from .errors import ConvertError


class LimitKind(enum.Enum):
    ATTRIBUTE = "attribute"   # attribute values not handled
    DTYPE = "dtype"           # element types not handled
    INPUT = "input"           # input forms not handled (a value only known at run time)
    OUTPUT = "output"         # optional outputs not produced


@dataclass(frozen=True)
class Limit:
    """One published limit. ``key`` is stable and unique among an op's limits; ``subject`` names the
    attribute, input or output (empty for the op's data); ``values`` are the unsupported values, types
    or input forms as the source format spells them; ``reason`` says why, ``hint`` what to do."""

    key: str
    kind: LimitKind
    subject: str
    values: tuple
    reason: str
    hint: str = ""

    def summary(self) -> str:
        """The limit in one phrase, as ``tosaconv ops`` shows it and every refusal quotes it."""
        values = " or ".join(str(v) for v in self.values)
        if self.kind is LimitKind.ATTRIBUTE:
            return f"attribute {self.subject} = {values}"
        if self.kind is LimitKind.DTYPE:
            return f"{self.subject or 'data'} of type {values}"
        if self.kind is LimitKind.INPUT:
            return f"input {self.subject} {values}"
        return " ".join(part for part in ("output", self.subject, values) if part)

    def refuse(self, detail: str = "") -> "LimitError":
        """The error a converter raises for a case this limit excludes; ``detail`` says what the node has."""
        return LimitError(self, detail)

    def to_json(self) -> dict:
        return {"key": self.key, "kind": self.kind.value, "subject": self.subject,
                "values": [str(v) for v in self.values], "text": self.summary(),
                "reason": self.reason, "hint": self.hint}


class LimitError(ConvertError):
    """A converter's refusal of a case one of its op's published limits excludes."""

    def __init__(self, limit: Limit, detail: str = ""):
        self.limit = limit
        head = f"{detail}: " if detail else ""
        tail = f"; {limit.hint}" if limit.hint else ""
        super().__init__(f"{head}{limit.summary()} is not supported: {limit.reason}{tail}")


def limit_note(key: str) -> str:
    """The diagnostic note that names the published limit a refusal comes from."""
    return f"published limit: {key} (see `tosaconv ops`)"


SIZE_FROM_DATA = "size-from-data"

# Any op whose result would hold no elements: TOSA has no empty tensors.
EMPTY_RESULT = Limit("empty-result", LimitKind.OUTPUT, "", ("with a dim of size 0 (an empty tensor)",),
                     "TOSA requires every dim to be >= 1", "")


def size_from_data(subject: str) -> Limit:
    """The limit of an op that reads a size from input ``subject``: that input computed from tensor data.
    Specialization refuses it (the note names :data:`SIZE_FROM_DATA`); the converter accepts it, since
    the symbolic program runs in the interpreter."""
    return Limit(SIZE_FROM_DATA, LimitKind.INPUT, subject, ("computed from tensor data at run time",),
                 "the static TOSA program needs every size before the model runs",
                 "make it a constant or compute it from input shapes")


def must_be_known(key: str, subject: str, why: str) -> Limit:
    """The limit of an op that needs input ``subject`` at import: a constant, or computed from shapes."""
    return Limit(key, LimitKind.INPUT, subject, ("computed from tensor data at run time",), why,
                 "make it a constant (an initializer) or compute it from input shapes")
