"""Issue 13's output-size goal: the ``.tosa`` holds at most 1.05x the source model's weight bytes.

For every real model of the test catalogs (ONNX, the onnxruntime-quantized
QDQ/QOperator ONNX models already in the cache, float and int8 TFLite) and
every sample model: the source's weight bytes (ONNX initializers and Constant
tensors, every graph; TFLite buffers), the ``.tosa``'s constant bytes and
file bytes at the catalog's first binding, their ratios to the source's weight
bytes, and the file ratio with ``--fp32-weights`` (every weight widened to a
float32 constant, as before issue 13). Then the median and maximum of each
ratio column, over every model and over those with at least 0.1 MB of weights
(in smaller ones the op records, not the weights, make the file). Sizes are
exact, so one run is enough.

    python scripts/benchmark.py --goals size
"""
from __future__ import annotations

import glob
import os
import statistics
import sys
from typing import Optional

import numpy as np

LARGE_MB = 0.1   # below this the file is mostly op and tensor records (about 200 bytes an op), not weights
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def onnx_weight_bytes(path: str) -> int:
    """Bytes of every initializer and Constant tensor of an ONNX model, subgraphs included."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    total = 0
    for graph in _onnx_graphs(model.graph):
        total += sum(numpy_helper.to_array(t).nbytes for t in graph.initializer)
        for node in graph.node:
            if node.op_type == "Constant":
                total += sum(numpy_helper.to_array(a.t).nbytes for a in node.attribute if a.name == "value")
    return total


def _onnx_graphs(graph):
    yield graph
    for node in graph.node:
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _onnx_graphs(g)


def tflite_weight_bytes(path: str) -> int:
    """Bytes of every buffer of a TFLite model (inline or, in files over 2 GB, at an offset)."""
    import tflite
    with open(path, "rb") as f:
        model = tflite.Model.GetRootAsModel(f.read(), 0)
    total = 0
    for i in range(model.BuffersLength()):
        buf = model.Buffers(i)
        total += buf.DataLength() or (buf.Size() if buf.Offset() > 1 else 0)
    return total


def constant_bytes(graph) -> int:
    """Bytes of every CONST's values in a static program (regions included)."""
    from tosaconv.ir.graph import walk_graphs
    from tosaconv.ir.ops import Op
    return sum(np.asarray(op.attrs.values).nbytes for g in walk_graphs(graph) for op in g.ops if op.op is Op.CONST)


def convert(path: str, bindings_of, fp32: bool) -> tuple:
    """(.tosa file bytes, constant bytes) of ``path`` specialized at ``bindings_of(graph)``."""
    from tosaconv import api
    from tosaconv.lowering.weight_casts import fp32_weights
    with fp32_weights(fp32):
        graph = api.load(path)
        static = api.specialize(graph, bindings_of(graph))
        return len(api.emit(static)), constant_bytes(static)


def cases() -> list:
    """(name, path, bindings_of, source weight bytes) of every model measured."""
    from tests.real_models.catalog import MODELS
    from tests.real_models.fetch import model_path
    from tests.real_models.tflite_catalog import MODELS as TFLITE
    from tests.real_models.tflite_int8_catalog import MODELS as INT8
    from tosaconv import api
    out = []
    for e in (e for e in MODELS if not e.refused):
        p = str(model_path(e))
        out.append((e.name, p, lambda g, s=e.shapes[0]: api.solve_bindings(g, s), onnx_weight_bytes))
    out += _quantized(api)
    for e in (e for e in TFLITE if not e.refused):
        out.append((e.name, str(model_path(e)), lambda g, b=e.runs[0]: b, tflite_weight_bytes))
    for e in (e for e in INT8 if str(model_path(e)) not in {c[1] for c in out}):   # some are in both catalogs
        out.append((e.name, str(model_path(e)), _batch_one, tflite_weight_bytes))
    for p in sorted(glob.glob(os.path.join(ROOT, "sample_models", "**", "*.*"), recursive=True)):
        if p.endswith((".onnx", ".tflite")):
            weights = onnx_weight_bytes if p.endswith(".onnx") else tflite_weight_bytes
            out.append(("sample " + os.path.relpath(p, os.path.join(ROOT, "sample_models")), p, _batch_one, weights))
    return out


def _quantized(api) -> list:
    """The onnxruntime-quantized models already in the cache (none is made here: quantizing takes minutes)."""
    from tests.real_models.fetch import cache_dir
    from tests.real_models.quantized import MODEL_NAMES, RECIPES, entry_named
    found = []
    for name in MODEL_NAMES:
        entry = entry_named(name)
        for recipe in RECIPES:
            hits = sorted(glob.glob(str(cache_dir() / "quantized" / f"{name.replace(' ', '_')}-{recipe.name}-*.onnx")))
            if hits:
                found.append((f"{name} {recipe.name}", hits[0],
                              lambda g, s=entry.shapes[0]: api.solve_bindings(g, s), onnx_weight_bytes))
    return found


def _batch_one(graph) -> dict:
    """The inputs' open dims bound through their shapes: a leading (batch) dim to 1, any other to 32."""
    from tosaconv import api
    from tosaconv.symbolic.expr import free_symbols
    if not any(free_symbols(d) for v in graph.inputs for d in v.type.shape):
        return {}
    return api.solve_bindings(graph, {v.name: tuple(d if isinstance(d, int) else (32 if i else 1)
                                                    for i, d in enumerate(v.type.shape)) for v in graph.inputs})


def measure(case) -> Optional[list]:
    name, path, bindings_of, weights_of = case
    source = weights_of(path)
    if not source:
        return None
    try:
        file_bytes, const_bytes = convert(path, bindings_of, fp32=False)
        wide_bytes, _ = convert(path, bindings_of, fp32=True)
    except Exception as e:   # a model the catalog converts only with other options: say so, keep going
        return [name, f"{source / 1e6:.2f}", f"failed: {type(e).__name__}", "", "", ""]
    return [name, f"{source / 1e6:.2f}", f"{file_bytes / 1e6:.2f}", f"{const_bytes / source:.3f}",
            f"{file_bytes / source:.3f}", f"{wide_bytes / source:.3f}"]


def size(table) -> None:
    """Print the size table (``table(header, rows)`` renders it) and the median and maximum ratios."""
    rows = [r for r in (measure(c) for c in cases()) if r is not None]
    header = ["model", "source weights MB", ".tosa MB", "constants / weights", ".tosa / weights (goal 1.05x)",
              "with --fp32-weights"]
    table(header, rows)
    done = [r for r in rows if not r[2].startswith("failed")]
    for label, chosen in (("every model", done),
                          (f"models with at least {LARGE_MB} MB of weights", [r for r in done
                                                                             if float(r[1]) >= LARGE_MB])):
        print(f"{label} ({len(chosen)}):")
        for col, what in ((3, "constants / weights"), (4, ".tosa / weights"), (5, "with --fp32-weights")):
            values = [float(r[col]) for r in chosen]
            print(f"  {what}: median {statistics.median(values):.3f}x, max {max(values):.3f}x")
