"""Measure one quantized real model the way the int8-to-NPU work is judged.

``convert_case`` loads, specializes at the first catalog shape and emits
through ``tosaconv.api``, and classifies the outcome as the command line
would: ``ok``, a ``refused`` TosaconvError with its exit code, or an
``internal`` error (exit 1) with the last frames of its traceback.
``float_ops`` counts the TOSA ops of the static program that touch a
floating-point value, keeping apart the graph's own I/O edges (the
QuantizeLinear of a graph input, the DequantizeLinear of a graph output),
which ``--int-io`` is meant to remove. ``lsb_errors`` compares outputs with
onnxruntime running the same quantized model, in units of the output's
DequantizeLinear scale.
"""
from __future__ import annotations

import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from tosaconv import api
from tosaconv.diagnostics import TosaconvError

EXIT_INTERNAL = 1
LAYOUT_OPS = frozenset({"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"})


@dataclass
class Conversion:
    status: str                     # "ok", "refused" (a TosaconvError) or "internal" (any other exception)
    exit_code: int = 0
    message: str = ""
    where: list = field(default_factory=list)   # internal errors: the traceback's last frames, innermost last
    static: object = None
    tosa: bytes = b""
    seconds: float = 0.0


def convert_case(path, shapes: dict) -> Conversion:
    """Load, specialize at ``shapes`` and emit, catching every failure."""
    start = time.perf_counter()
    try:
        graph = api.load(str(path))
        static = api.specialize(graph, api.solve_bindings(graph, shapes))
        tosa = api.emit(static)
    except TosaconvError as e:
        text = "; ".join(f"{d.code}: {d.message}" for d in e.diagnostics)
        return Conversion("refused", e.exit_code, text, seconds=time.perf_counter() - start)
    except Exception as e:  # noqa: BLE001 - measuring the crash class is the point
        frames = [f"{f.filename.split('tosaconv/')[-1]}:{f.lineno} {f.name}"
                  for f in traceback.extract_tb(e.__traceback__)[-4:]]
        return Conversion("internal", EXIT_INTERNAL, f"{type(e).__name__}: {' '.join(str(e).split())}", frames,
                          seconds=time.perf_counter() - start)
    return Conversion("ok", static=static, tosa=tosa, seconds=time.perf_counter() - start)


def io_edge_nodes(model: onnx.ModelProto) -> set:
    """Names of the QuantizeLinear nodes reading a graph input and DequantizeLinear nodes writing an output."""
    inputs = {i.name for i in model.graph.input}
    outputs = {o.name for o in model.graph.output}
    return {n.name for n in model.graph.node
            if (n.op_type == "QuantizeLinear" and n.input[0] in inputs)
            or (n.op_type == "DequantizeLinear" and n.output[0] in outputs)}


def _touches_float(op) -> bool:
    return any(getattr(v.type.dtype, "is_float", False) for v in (*op.operands, *op.results))


def float_ops(static, edges: set) -> dict:
    """Float ops of ``static``: body count, histograms by TOSA op and by source op type (TOSA ops, and
    distinct source nodes), and the I/O edge count."""
    body, edge = [], 0
    for op in static.ops:
        if not _touches_float(op):
            continue
        if all(p.name in edges for p in op.location.parts()):
            edge += 1
        else:
            body.append(op)
    sources = Counter(p.op_type for op in body for p in op.location.parts())
    nodes = Counter(p.op_type for p in {p for op in body for p in op.location.parts()})
    return {"float_ops": len(body), "io_edge_float_ops": edge, "ops": len(static.ops),
            "tosa_kinds": dict(Counter(op.op.name for op in body).most_common()),
            "source_kinds": dict(sources.most_common()), "source_nodes": dict(nodes.most_common())}


def output_scales(model: onnx.ModelProto) -> dict:
    """Each graph output's DequantizeLinear scale (found back through layout ops), or None if it has none."""
    producer = {o: n for n in model.graph.node for o in n.output}
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    out = {}
    for o in model.graph.output:
        node = producer.get(o.name)
        while node is not None and node.op_type in LAYOUT_OPS:
            node = producer.get(node.input[0])
        scale = inits.get(node.input[1]) if node is not None and node.op_type == "DequantizeLinear" else None
        out[o.name] = None if scale is None else scale.astype(np.float64)
    return out


def onnxruntime_outputs(path, feeds: dict, optimized: bool = True) -> dict:
    """onnxruntime's outputs, with its graph optimizations (what users run: Q/DQ fused into integer
    kernels) or without them (each QuantizeLinear and DequantizeLinear run as written)."""
    options = ort.SessionOptions()
    if not optimized:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {k: v for k, v in feeds.items() if k in wanted})))


def lsb_errors(ours: dict, theirs: dict, scales: dict) -> dict:
    """Per output: the largest |ours - theirs| in LSB of its DQ scale (absolute if it has no DQ)."""
    out = {}
    for name, want in theirs.items():
        got, want = np.asarray(ours[name], np.float64), np.asarray(want, np.float64)
        if got.shape != want.shape:
            raise AssertionError(f"output {name}: shape {got.shape} != onnxruntime's {want.shape}")
        diff = np.abs(got - want)
        scale = scales.get(name)
        if scale is not None:
            diff = diff / _broadcast_scale(scale, diff.shape)
        out[name] = {"max": float(diff.max()) if diff.size else 0.0, "unit": "LSB" if scale is not None else "abs"}
    return out


def _broadcast_scale(scale: np.ndarray, shape: tuple) -> np.ndarray:
    """A per-tensor scale as is; a per-axis scale along the one axis of matching length."""
    if scale.size == 1:
        return scale.reshape(())
    axis = next(i for i, n in enumerate(shape) if n == scale.size)
    return scale.reshape([-1 if i == axis else 1 for i in range(len(shape))])


def reference_agreement(ref: dict, ours: dict) -> dict:
    """Per output: bit-exact or not, and the largest |difference|."""
    out = {}
    for name, want in ours.items():
        got = np.asarray(ref[name])
        want = np.ascontiguousarray(want)
        exact = got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
        diff = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size and got.shape == want.shape else 0.0
        out[name] = {"exact": bool(exact), "max_abs": diff}
    return out
