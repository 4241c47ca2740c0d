"""Edits of the ops and values a plan was built from, counted, so that a later run knows without looking at
every op that nobody changed them.

A plan (plan.py) depends on each op's kind, attributes, operand and result lists and on each result's type
and name. Comparing all of them before every run cost 70 us on a 600-op program, and about 0.3 ms when
another program (onnxruntime, in the benchmark) had pushed those objects out of the caches in between.

:func:`watch` turns the graph's :class:`~tosaconv.ir.graph.Operation` and :class:`~tosaconv.ir.graph.Value`
objects into instances of subclasses with the same fields and slots (so the same memory layout; ``isinstance``
still holds) whose only difference is that assigning any attribute first adds one to a process-wide count,
then assigns it as before. Every way Python code changes such a field goes through that ``__setattr__``, so
an unchanged count proves that no watched op or value had a field assigned: the plan may skip its full check.
A changed count (any edit of any watched object, in any graph, even one undone later) only sends the plan
back to its full comparison, which decides. What the count cannot see (an op's operand list or an attribute
object edited in place, ``object.__setattr__``) the full comparison does not see either: it compares those
objects by identity first. Objects of other classes are left alone, and their plan keeps the full check.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..ir.graph import Operation, Value

_EDITS = [0]      # how many attribute assignments watched objects have seen (only ever grows)


def edits() -> int:
    """The number of attribute assignments to watched ops and values so far in this process."""
    return _EDITS[0]


class WatchedOperation(Operation):
    """An :class:`Operation` whose attribute assignments are counted (:func:`edits`); otherwise the same."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        _EDITS[0] += 1
        object.__setattr__(self, name, value)


class WatchedValue(Value):
    """A :class:`Value` whose attribute assignments are counted (:func:`edits`); otherwise the same."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        _EDITS[0] += 1
        object.__setattr__(self, name, value)


_WATCHED = {Operation: WatchedOperation, Value: WatchedValue, WatchedOperation: None, WatchedValue: None}


def watch(objects: Iterable[Any]) -> bool:
    """Make each of ``objects`` (ops and values) count its edits; False when one of them is of a class this
    cannot watch (a subclass of its own), whose edits then go uncounted."""
    complete = True
    for obj in objects:
        kind = obj.__class__
        if kind not in _WATCHED:
            complete = False
        elif _WATCHED[kind] is not None:
            object.__setattr__(obj, "__class__", _WATCHED[kind])
    return complete
