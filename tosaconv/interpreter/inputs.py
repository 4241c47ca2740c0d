"""Check the caller's input arrays against the graph inputs and convert them to the IR's numpy types.

Every graph input must be given, by name, and no unknown name may be; all
problems of that kind are reported together. Each array must have the
input's rank. Element types convert when no value changes meaning: floats to
any float type; integers to a wider or narrower integer type if every value
fits (int64 data for an INT32 input is the common case); unsigned data of the
same width to INT8/INT16 keeps its bit pattern, which is how TOSA carries
unsigned tensors; 0/1 integers to bool. Anything else (floats for an integer
input, say) is an :class:`InputError` that says what to do.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.dtypes import DType
from .binding import check_rank
from .errors import InputError
from .numeric import round_bf16

if TYPE_CHECKING:
    from ..ir.graph import Graph, Value


def prepare_inputs(graph: Graph, inputs: dict) -> dict:
    """Input arrays by graph input name, in the IR's numpy types."""
    names = [v.name for v in graph.inputs]
    missing = [n for n in names if n not in inputs]
    unknown = sorted(set(inputs) - set(names))
    if missing or unknown:
        raise InputError(_name_problems(missing, unknown, names),
                         input_name=(missing or unknown)[0])
    arrays = {}
    for value in graph.inputs:
        array = np.asarray(inputs[value.name])
        check_rank(value, array.shape)
        arrays[value.name] = convert(value, array)
    return arrays


def _name_problems(missing: list, unknown: list, names: list) -> str:
    parts = []
    if missing:
        parts.append("missing input" + ("s " if len(missing) > 1 else " ") + ", ".join(repr(n) for n in missing))
    if unknown:
        parts.append("unknown input" + ("s " if len(unknown) > 1 else " ") + ", ".join(repr(n) for n in unknown))
    return "; ".join(parts) + f"; the graph's inputs are {', '.join(repr(n) for n in names) or '(none)'}"


def convert(value: Value, array: np.ndarray) -> np.ndarray:
    """``array`` in the numpy type of graph input ``value``, or an InputError."""
    target: DType = value.type.dtype
    kind = array.dtype.kind
    if target == DType.BOOL:
        if kind == "b" or (kind in "iu" and np.isin(array, (0, 1)).all()):
            return array.astype(np.bool_, copy=False)
    elif target.is_float and kind in "fiu":
        converted = array.astype(target.numpy, copy=False)
        return round_bf16(converted) if target == DType.BF16 else converted
    elif target.is_int and kind in "iu":
        return _convert_int(value, array, target)
    raise InputError(f"input '{value.name}' is {target.value}, but the given array holds {array.dtype}; "
                     f"convert it (for example with .astype) before running", input_name=value.name)


def _convert_int(value: Value, array: np.ndarray, target: DType) -> np.ndarray:
    storage = target.numpy
    if array.dtype.kind == "u" and array.dtype.itemsize == storage.itemsize and target != DType.INT48:
        return array.view(storage)          # unsigned data keeps its bits (TOSA has no uint types)
    lo, hi = -(1 << (target.bits - 1)), (1 << (target.bits - 1)) - 1
    if array.size and (array.min() < lo or array.max() > hi):
        raise InputError(f"input '{value.name}' is {target.value}, but the given {array.dtype} array has "
                         f"values from {array.min()} to {array.max()}, outside [{lo}, {hi}]",
                         input_name=value.name)
    return array.astype(storage, copy=False)
