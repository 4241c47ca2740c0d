"""Benchmark: conversion time and peak memory against model size.

Builds a family of synthetic ONNX models (a stack of N transformer-style
blocks with symbolic ``batch`` and ``seq``, each block MatMul + Add + Erf-GELU
+ residual + LayerNormalization, with 256x256 weights) for growing N, then
times import + passes, specialization and emission separately, and reports
peak traced memory relative to the weight bytes. Conversion should grow
linearly with N; the ratio column makes that visible.

    python scripts/benchmark.py            # N = 8, 16, 32, 64
    python scripts/benchmark.py 10 20 40   # your own sizes
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tosaconv.api as api  # noqa: E402

WIDTH = 256


def _block(i: int, x: str, rng, inits: list) -> tuple:
    w = numpy_helper.from_array((rng.standard_normal((WIDTH, WIDTH)) * 0.05).astype(np.float32), f"w{i}")
    b = numpy_helper.from_array(np.zeros(WIDTH, np.float32), f"b{i}")
    inits += [w, b]
    p = f"blk{i}"
    nodes = [h.make_node("MatMul", [x, f"w{i}"], [f"{p}_mm"], name=f"{p}/MatMul"),
             h.make_node("Add", [f"{p}_mm", f"b{i}"], [f"{p}_lin"], name=f"{p}/Add"),
             h.make_node("Erf", [f"{p}_lin"], [f"{p}_erf"], name=f"{p}/Erf"),
             h.make_node("Add", [x, f"{p}_erf"], [f"{p}_res"], name=f"{p}/Residual"),
             h.make_node("LayerNormalization", [f"{p}_res", "scale", "bias"], [f"{p}_out"], axis=-1,
                         name=f"{p}/LayerNorm")]
    return nodes, f"{p}_out"


def build(n_blocks: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.ones(WIDTH, np.float32), "scale"),
             numpy_helper.from_array(np.zeros(WIDTH, np.float32), "bias")]
    nodes, x = [], "x"
    for i in range(n_blocks):
        more, x = _block(i, x, rng, inits)
        nodes += more
    nodes.append(h.make_node("Identity", [x], ["y"], name="out"))
    graph = h.make_graph(nodes, "bench", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", WIDTH])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", WIDTH])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 10
    return model


def measure(n_blocks: int, workdir: str) -> dict:
    path = os.path.join(workdir, f"bench_{n_blocks}.onnx")
    onnx.save(build(n_blocks), path)
    weight_bytes = n_blocks * WIDTH * WIDTH * 4
    tracemalloc.start()
    t0 = time.perf_counter()
    graph = api.load(path)
    t1 = time.perf_counter()
    static = api.specialize(graph, {"batch": 1, "seq": 128})
    t2 = time.perf_counter()
    data = api.emit(static)
    t3 = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"blocks": n_blocks, "nodes": n_blocks * 5 + 1, "import_s": t1 - t0, "specialize_s": t2 - t1,
            "emit_s": t3 - t2, "total_s": t3 - t0, "tosa_mb": len(data) / 1e6,
            "peak_over_weights": peak / weight_bytes}


def main(argv):
    sizes = [int(a) for a in argv] or [8, 16, 32, 64]
    print(f"{'blocks':>6} {'nodes':>6} {'import s':>9} {'special. s':>10} {'emit s':>7} {'total s':>8} "
          f"{'ms/node':>8} {'.tosa MB':>9} {'peak/weights':>12}")
    with tempfile.TemporaryDirectory() as workdir:
        for n in sizes:
            r = measure(n, workdir)
            print(f"{r['blocks']:>6} {r['nodes']:>6} {r['import_s']:>9.3f} {r['specialize_s']:>10.3f} "
                  f"{r['emit_s']:>7.3f} {r['total_s']:>8.3f} {1000 * r['total_s'] / r['nodes']:>8.2f} "
                  f"{r['tosa_mb']:>9.1f} {r['peak_over_weights']:>12.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
