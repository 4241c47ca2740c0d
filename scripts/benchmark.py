"""Benchmark: conversion time and peak memory against model size.

Builds a family of synthetic ONNX models (a stack of N transformer-style
blocks with symbolic ``batch`` and ``seq``, each block MatMul + Add + Erf-GELU
+ residual + LayerNormalization, with 256x256 weights) for growing N, then
times import + passes, specialization and emission separately, and reports
peak traced memory relative to the weight bytes. Conversion should grow
linearly with N; the ratio column makes that visible.

    python scripts/benchmark.py            # N = 8, 16, 32, 64
    python scripts/benchmark.py 10 20 40   # your own sizes
    python scripts/benchmark.py --tflite   # int8 TFLite: N blocks of CONV_2D 3x3 (64 channels, per-channel
                                           # weights, fused RELU) + residual ADD, dynamic batch

The goals of issue 13, each measured against its floor side by side (ratios
from interleaved runs, best of several, since the machine may be shared):

    python scripts/benchmark.py --goals                  # all five tables below
    python scripts/benchmark.py --goals startup run      # or some of: startup run scaling onnx tflite

- startup: ``tosaconv --help``/``--version`` wall time, and the time until a conversion reaches its
  load stage, against the bare interpreter (``python -c pass``); goals 0.15 s and 0.3 s.
- run: ``tosaconv``'s numpy reference run of the static program against onnxruntime with one
  thread, on the conv nets of tests/real_models/catalog.py (wheels cached as the tests do); goal 3x.
- scaling: a synthetic chain of N elementwise nodes on ``[batch, 16]`` (symbolic batch), load,
  specialize and emit at 10k, 30k and 100k nodes, wall and CPU; goal 100k nodes in 20 s, linear.
- onnx: ``tosaconv convert`` of the six largest real ONNX models against ``onnx.load`` of the same
  file, wall time and peak RSS (both as fresh processes); goals 2x and 1.3x.
- tflite: ``python -m tosaconv convert`` (and the ``tosaconv`` console script) of every distinct real
  TFLite model of tests/real_models/tflite_catalog.py and tflite_int8_catalog.py (35; 23 of them the peer
  converts, the rest are left out with its error) against Arm's ``tosa-converter-for-tflite`` followed by
  ``tosa-opt --tosa-serialize``, wall and CPU (children's rusage), plus tosaconv's in-process
  load + specialize + emit; goal 1.0x the peer's wall time (median). ``--models "A,B"`` picks catalog names.
- size (only when named): ``.tosa`` bytes against the source's weight bytes for every real model and sample
  (scripts/benchmark_size.py); goal 1.05x.
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


CHANNELS = 64


def build_tflite(n_blocks: int) -> bytes:
    """An int8 model: ``n_blocks`` of CONV_2D 3x3 + RELU and a residual ADD on [batch, 16, 16, 64]."""
    from tosaconv.importers.tflite.builder import ModelBuilder
    rng = np.random.default_rng(0)
    m = ModelBuilder("tosaconv benchmark")
    act = ([0.05], [-3], 0)
    shape, sig = [1, 16, 16, CHANNELS], [-1, 16, 16, CHANNELS]
    x = m.input("x", shape, "INT8", sig, quant=act)
    for i in range(n_blocks):
        ws = [float(v) for v in rng.uniform(0.001, 0.01, CHANNELS).astype(np.float32)]
        w = m.const(f"w{i}", rng.integers(-127, 128, (CHANNELS, 3, 3, CHANNELS)).astype(np.int8),
                    quant=(ws, [0] * CHANNELS, 0))
        b = m.const(f"b{i}", rng.integers(-500, 500, CHANNELS).astype(np.int32),
                    quant=([0.05 * v for v in ws], [0] * CHANNELS, 0))
        c = m.tensor(f"conv{i}", shape, "INT8", sig, quant=act)
        m.op("CONV_2D", [x, w, b], [c], "Conv2DOptions", version=3, Padding=0, StrideH=1, StrideW=1,
             FusedActivationFunction=1)
        y = m.tensor(f"res{i}", shape, "INT8", sig, quant=act)
        m.op("ADD", [x, c], [y], "AddOptions")
        x = y
    m.output(x)
    return m.finish()


def measure(n_blocks: int, workdir: str, tflite: bool = False) -> dict:
    path = os.path.join(workdir, f"bench_{n_blocks}.{'tflite' if tflite else 'onnx'}")
    if tflite:
        with open(path, "wb") as f:
            f.write(build_tflite(n_blocks))
    else:
        onnx.save(build(n_blocks), path)
    weight_bytes = n_blocks * (CHANNELS * 9 * CHANNELS if tflite else WIDTH * WIDTH * 4)
    tracemalloc.start()
    t0 = time.perf_counter()
    graph = api.load(path)
    t1 = time.perf_counter()
    static = api.specialize(graph, {"x.0": 1} if tflite else {"batch": 1, "seq": 128})
    t2 = time.perf_counter()
    data = api.emit(static)
    t3 = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"blocks": n_blocks, "nodes": n_blocks * (2 if tflite else 5) + 1, "import_s": t1 - t0, "specialize_s": t2 - t1,
            "emit_s": t3 - t2, "total_s": t3 - t0, "tosa_mb": len(data) / 1e6,
            "peak_over_weights": peak / weight_bytes}


def main(argv):
    if "--goals" in argv:
        import benchmark_goals
        return benchmark_goals.main([a for a in argv if a != "--goals"])
    tflite = "--tflite" in argv
    sizes = [int(a) for a in argv if a != "--tflite"] or [8, 16, 32, 64]
    print(f"{'blocks':>6} {'nodes':>6} {'import s':>9} {'special. s':>10} {'emit s':>7} {'total s':>8} "
          f"{'ms/node':>8} {'.tosa MB':>9} {'peak/weights':>12}")
    with tempfile.TemporaryDirectory() as workdir:
        for n in sizes:
            r = measure(n, workdir, tflite)
            print(f"{r['blocks']:>6} {r['nodes']:>6} {r['import_s']:>9.3f} {r['specialize_s']:>10.3f} "
                  f"{r['emit_s']:>7.3f} {r['total_s']:>8.3f} {1000 * r['total_s'] / r['nodes']:>8.2f} "
                  f"{r['tosa_mb']:>9.1f} {r['peak_over_weights']:>12.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
