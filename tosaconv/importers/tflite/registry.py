"""The TFLite converter registry: ``@converter("CONV_2D", options="Conv2DOptions")``.

TFLite ops are named by their builtin code (``tflite.BuiltinOperator``); one
converter handles every version of an op (versions add operand types, which
the converter checks itself). ``options`` names the op's builtin options
table in the schema, so :class:`OpReader.opt` can read fields with the
schema's defaults even when the model leaves the table out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

_REGISTRY: dict = {}   # op name -> Entry


@dataclass(frozen=True)
class Entry:
    fn: Callable
    options: Optional[str]


def converter(*op_types: str, options: Optional[str] = None) -> Callable:
    def register(fn: Callable) -> Callable:
        for op_type in op_types:
            if op_type in _REGISTRY:
                raise ValueError(f"two TFLite converters for {op_type}")
            _REGISTRY[op_type] = Entry(fn, options)
        return fn
    return register


def resolve(op_type: str) -> Optional[Entry]:
    return _REGISTRY.get(op_type)


def supported_ops() -> list:
    """The names of the TFLite builtin ops that have a converter, sorted."""
    return sorted(_REGISTRY)
