"""Fresh names: one rule for symbol names (the scope) and value names (the IR graph).

A name is ``base`` when that is free, else ``base`` + separator + 2, 3, ... The
separator is the caller's: symbols use ``#`` (``x.0#2``), IR values ``_`` (``gt_2``);
both show in printed IR and reports, so each keeps its own.
"""
from __future__ import annotations

from typing import Container


def unused_name(base: str, taken: Container[str], sep: str) -> str:
    """``base``, or ``base{sep}2``, ``base{sep}3``... whichever is not in ``taken``."""
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{sep}{n}"
    return name
