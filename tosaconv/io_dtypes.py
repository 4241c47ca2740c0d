"""Arrays in the model's own element types at the program's edges, and back.

TOSA has no unsigned or 64-bit tensors, so a program stores a model's uint8
(uint16) edge as the same bits in INT8 (INT16) or as its true values in INT32
(when ops compute on them), a uint32, uint64 or int64 edge in INT32 and a
float64 edge in FP32. The importer records the model's type of every such
edge in ``graph.input_dtypes`` / ``graph.output_dtypes`` (a quantized edge
holding unsigned bits is in ``graph.input_quant`` / ``output_quant``). A run
(``tosaconv run``, ``convert --run``) takes and saves arrays in the model's
types: :func:`to_program` turns a model-typed input array into the stored
form (bits reinterpreted; wider integers checked to fit int32; float64
rounded), and :func:`to_model` turns program arrays back (uint8 bits as uint8,
int32 as uint8...uint64 or int64, modulo the model type's range as the model's
own integer arithmetic wraps; float32 as float64). An array of any other type is left as it is, for
the interpreter to check. A ``.tosa`` file does not carry these records, so
its edges stay in their TOSA types.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from .diagnostics import ShapeError

if TYPE_CHECKING:
    from .ir.graph import Graph

_STORED = {"uint8": np.int8, "uint16": np.int16, "uint32": np.int32, "uint64": np.int32, "int64": np.int32,
           "float64": np.float32}
_WIDENED = {"uint8": np.int32, "uint16": np.int32}   # the other IR type a model type's edge may have
# 4- and 2-bit integers (ml_dtypes, as onnx gives them), stored as INT8 true values
_NARROW_NAMES = ("int4", "uint4", "int2", "uint2")
_STORED.update({name: np.int8 for name in _NARROW_NAMES})


@functools.cache
def _narrow() -> dict:
    """The ml_dtypes types of :data:`_NARROW_NAMES`, imported when a model has such an edge (start-up, issue 13)."""
    try:
        import ml_dtypes   # installed with onnx, which gives these types as ml_dtypes arrays
        return {name: getattr(ml_dtypes, name) for name in _NARROW_NAMES}
    except ImportError:   # pragma: no cover (no ml_dtypes: such arrays stay in their INT8 storage)
        return {name: np.int8 for name in _NARROW_NAMES}


def _np_dtype(model_dtype: str) -> np.dtype:
    return np.dtype(_narrow()[model_dtype] if model_dtype in _NARROW_NAMES else model_dtype)


def model_dtypes(graph: Graph, kind: str) -> dict:
    """The model's type of each recorded input (``kind="input"``) or output edge: ``graph.input_dtypes`` /
    ``output_dtypes``, plus the quantized edges whose int8/int16 tensor holds uint8/uint16 bits (a TFLite
    model's uint8 I/O without --int-io)."""
    quant = graph.input_quant if kind == "input" else graph.output_quant
    out = {name: q.source_dtype for name, q in quant.items() if q.unsigned and q.source_dtype in ("uint8", "uint16")}
    out.update(graph.input_dtypes if kind == "input" else graph.output_dtypes)
    return out


def to_program(graph: Graph, arrays: dict) -> dict:
    """``arrays`` by input name with each model-typed array of a recorded input in its stored type."""
    out = dict(arrays)
    program = {v.name: v.type.dtype.numpy for v in graph.inputs}
    for name, model_dtype in model_dtypes(graph, "input").items():
        a = out.get(name)
        if a is None or np.asarray(a).dtype != _np_dtype(model_dtype):
            continue
        out[name] = _stored(name, np.asarray(a), model_dtype, np.dtype(program.get(name, _STORED[model_dtype])))
    return out


def _stored(name: str, a: np.ndarray, model_dtype: str, stored: np.dtype) -> np.ndarray:
    if model_dtype in _WIDENED and a.dtype.itemsize == stored.itemsize:
        return a.view(stored)   # uint8/uint16 as the same bits
    if stored.kind == "i" and a.size:
        info = np.iinfo(stored)
        if a.max() > info.max or a.min() < info.min:
            raise ShapeError.one("E-INPUT", f"input '{name}' has {model_dtype} values outside the {stored} range "
                                 "the TOSA program stores it in", hint="give values that fit 32 bits")
    return a.astype(stored)


def to_model(graph: Graph, arrays: dict, kind: str = "output") -> dict:
    """Program ``arrays`` (outputs by output name, or inputs with ``kind="input"``) in the model's types."""
    out = dict(arrays)
    for name, model_dtype in model_dtypes(graph, kind).items():
        a = out.get(name)
        if a is None or np.asarray(a).dtype not in (np.dtype(_STORED[model_dtype]),
                                                        np.dtype(_WIDENED.get(model_dtype, _STORED[model_dtype]))):
            continue
        a = np.asarray(a)
        bits = model_dtype in _WIDENED and a.dtype.itemsize == np.dtype(model_dtype).itemsize
        out[name] = a.view(np.dtype(model_dtype)) if bits else a.astype(_np_dtype(model_dtype))
    return out


_RANGES = {"uint8": (0, 255), "uint16": (0, 65535), "uint32": (0, 2**31 - 1), "uint64": (0, 2**31 - 1),
           "int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}


def fit_random(graph: Graph, arrays: dict) -> dict:
    """Random program inputs (small integers of the stored type) folded into each recorded input's model range
    where the program holds true values (a widened uint8, a uint32, an int4), so they are valid model data."""
    out = dict(arrays)
    for name, model_dtype in model_dtypes(graph, "input").items():
        a = out.get(name)
        if a is None or model_dtype not in _RANGES or (model_dtype in _WIDENED and np.asarray(a).dtype.itemsize
                                                       == np.dtype(model_dtype).itemsize):
            continue
        lo, hi = _RANGES[model_dtype]
        span = min(hi, 127) - lo + 1
        out[name] = (lo + np.mod(np.asarray(a).astype(np.int64) - lo, span)).astype(np.asarray(a).dtype)
    return out
