"""The TOSA block as plain records: the middle ground of writer and reader.

Writing goes IR graph → :class:`BlockRecord` (``writer.py`` lowers zero
points, shifts and shapes to constant operands and names every tensor) →
bytes (``serialize.py``). Reading runs the other way: bytes → records
(``deserialize.py``) → IR graph (``reader.py`` folds the constant operands
back into attributes). Records mirror the flatbuffer tables one to one, with
enum values already decoded to names and data kept as flat ``uint8`` arrays.
A program with control flow has more regions than ``main`` (one block each,
named by the COND_IF / WHILE_LOOP ops that use them); the main block record
holds them in ``regions``. A variable is a tensor record with a
``variable_name``, read and written by IDENTITY ops carrying the
VariableRead/VariableWrite attribute tables (:mod:`.variables`).
"""
from __future__ import annotations

from dataclasses import field
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Optional

import numpy as np

from ..ir.dtypes import DType


@dataclass
class TensorRecord:
    name: str
    shape: tuple
    dtype: Optional[DType]          # None: a type the IR has no counterpart for
    data: Optional[np.ndarray] = None  # little-endian elements, written in C order (read: flat uint8); constants
    type_code: int = 0
    variable_name: Optional[str] = None  # a variable's state tensor (its data is the initial value)


@dataclass
class ShapeRecord:
    name: str
    rank: int
    data: Optional[np.ndarray] = None  # flat uint8: ``rank`` int64 LE values

    def values(self) -> tuple:
        if self.data is None or self.data.size < 8 * self.rank:
            raise ValueError(f"shape {self.name!r} has no data for its {self.rank} values")
        return tuple(int(v) for v in self.data[:8 * self.rank].view("<i8"))


@dataclass
class OpRecord:
    op: str                 # TOSA op name, e.g. "CONV2D"
    fields: dict            # attribute table fields by name (raw: ints, bools, tuples, bytes)
    inputs: list
    outputs: list
    location: Optional[str] = None
    attribute: Optional[str] = None   # the attribute table's op when not ``op`` (see emit/variables.py)


@dataclass
class BlockRecord:
    name: str = "main"
    ops: list = field(default_factory=list)
    tensors: list = field(default_factory=list)
    shapes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    regions: dict = field(default_factory=dict)  # the main block only: the file's other regions, by name

    def data_bytes(self, below: "int | None" = None) -> int:
        """Total size of the constant data (to size the flatbuffer builder once); with ``below``, of the
        arrays smaller than that only (the others are streamed, not copied into the builder)."""
        own = sum(r.data.nbytes for r in self.tensors + self.shapes
                  if r.data is not None and (below is None or r.data.nbytes < below))
        return own + sum(b.data_bytes(below) for b in self.regions.values())

    def record_count(self) -> int:
        return len(self.ops) + len(self.tensors) + len(self.shapes) + \
            sum(b.record_count() for b in self.regions.values())
