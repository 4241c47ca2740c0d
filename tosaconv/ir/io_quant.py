"""How a program's inputs and outputs are quantized: what a deployer's pre- and post-processing needs.

A device feeds an int8 program int8 tensors. To make them from real data it
needs each input's scale and zero point (``q = round(x / scale) + zero_point``),
and to read the results each output's (``x = scale * (q - zero_point)``). The
importers record them here, per input and output name, whenever they know
them: always for quantized edges of a TFLite model, and for every edge that
``--int-io`` turned into an integer one (the float QUANTIZE / QuantizeLinear
at an input and the DEQUANTIZE / DequantizeLinear at an output are then gone).

:class:`EdgeQuant` says what the edge holds: ``source_dtype`` is the model's
own type there (``float32`` where a float edge was made integer, ``uint8``
where uint8 data is now carried in signed form), and ``unsigned`` is true
only when an int8 tensor holds uint8 *bits* (its zero point is then in
0..255): what tosaconv does with a uint8 model edge without ``--int-io``.
With ``--int-io`` every edge is signed: uint8 quantization becomes int8 with
the zero point minus 128, which is exact.

The record travels with the program: :class:`~.graph.Graph` holds it, the
passes and ``specialize`` keep it, and ``.tosair`` text prints it as ``io``
lines. :func:`describe_io` turns it into the report's ``io`` section.
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from .dtypes import DType

if TYPE_CHECKING:
    from .graph import Graph, Value


@dataclass(frozen=True)
class EdgeQuant:
    """The quantization of one program input or output (per tensor)."""

    scale: float
    zero_point: int
    source_dtype: str          # the model's type at this edge: "float32", "uint8", "int8", "int16"
    unsigned: bool = False     # an int8 tensor holding uint8 bits (zero point in 0..255)


def numpy_name(dtype: DType) -> str:
    """``int8``, ``int16``, ``float32``...: how a deployer names an IR element type."""
    try:
        return np.dtype(dtype.numpy).name
    except (AttributeError, TypeError):
        return str(dtype.value)


def _edge(name: str, value: Value, quant: Optional[EdgeQuant], own: Optional[str] = None) -> dict[str, Any]:
    """``own``: the model's type at an unquantized edge stored in another IR type (graph.*_dtypes)."""
    t = value.type
    dtype = numpy_name(t.dtype)
    return {"name": name, "dtype": dtype,
            "scale": None if quant is None else quant.scale,
            "zero_point": None if quant is None else quant.zero_point,
            "source_dtype": (own or dtype) if quant is None else quant.source_dtype,
            "unsigned": (own in UNSIGNED and dtype in ("int8", "int16")) if quant is None else quant.unsigned}


UNSIGNED = ("uint8", "uint16")


def describe_io(graph: Graph) -> dict[str, Any]:
    """The report's ``io`` section: whether ``--int-io`` made the edges, and every input and output."""
    return {"int_io": graph.int_io,
            "inputs": [_edge(v.name, v, graph.input_quant.get(v.name), graph.input_dtypes.get(v.name))
                       for v in graph.inputs],
            "outputs": [_edge(n, v, graph.output_quant.get(n), graph.output_dtypes.get(n))
                        for n, v in zip(graph.output_names, graph.outputs)]}


def dtype_text(kind: str, name: str, dtype: str) -> str:
    """One ``.tosair`` line for an edge's own model type (``io input "x" from uint8``)."""
    import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
    return f"io {kind} {json.dumps(name, ensure_ascii=False)} from {dtype}"


def edge_text(kind: str, name: str, q: EdgeQuant) -> str:
    """One ``.tosair`` line (``kind``: input or output); the scale as Python's shortest exact repr."""
    import json   # here: a conversion that prints no JSON need not load it (start-up, issue 13)
    unsigned = " unsigned" if q.unsigned else ""
    return (f"io {kind} {json.dumps(name, ensure_ascii=False)} scale {q.scale!r} zero_point {q.zero_point} "
            f"from {q.source_dtype}{unsigned}")
