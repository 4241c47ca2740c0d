"""Where does a float TFLite model's output drift from LiteRT's? Per-op and end-to-end measurements.

Three measurements, on one random input (uniform in [low, high), seed 0):

1. **Local error per TFLite op**: tosaconv's interpreter runs the converted
   program op by op, but every TFLite op is fed LiteRT's own input tensors
   (each TFLite op's output is replaced by LiteRT's after its error is
   recorded), so an op's error is its own kernel's, not inherited.
2. **Propagated error**: the same run without the replacement.
3. **Conditioning**: one output compared across LiteRT's own kernel sets
   (XNNPACK, optimized builtin, reference builtin), tosaconv, and LiteRT's
   optimized kernels on the input perturbed by one float32 rounding
   (relative 2^-24 per element).

LiteRT keeps every intermediate (``experimental_preserve_all_tensors``) only
for ops that no delegate took, so the per-op runs use the builtin kernels
without XNNPACK.

    python scripts/float_fidelity.py MODEL.tflite --output Identity_2 --low 0 --high 1
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tosaconv import api  # noqa: E402
from tosaconv.interpreter import evaluate  # noqa: E402
import tosaconv.interpreter.evaluator as evaluator  # noqa: E402

NO_DELEGATE = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"


def litert(model: str, x: np.ndarray, kind: str = NO_DELEGATE, keep_all: bool = False):
    """A LiteRT interpreter of ``kind`` (an OpResolverType name) that has run on ``x``."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        it = Interpreter(model, experimental_preserve_all_tensors=keep_all,
                         experimental_op_resolver_type=getattr(OpResolverType, kind))
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it


def all_tensors(it) -> dict:
    found = {}
    for d in it.get_tensor_details():
        try:
            found[d["name"]] = it.get_tensor(d["index"])
        except ValueError:   # a tensor LiteRT did not keep
            pass
    return found


def outputs(it) -> dict:
    return {o["name"]: it.get_tensor(o["index"]).astype(np.float64) for o in it.get_output_details()}


def op_errors(graph, x: np.ndarray, reference: dict, local: bool) -> list:
    """``(step, TFLite op, shape, max |error|, max |reference|, tensor)`` at the end of every TFLite op whose
    output LiteRT kept; with ``local``, that output is then replaced by LiteRT's."""
    ends = _op_ends(graph, reference)
    rows = []

    def run_ops(g, values, ctx):
        for step, op in enumerate(g.ops):
            results = evaluator._run(op, [values[v.name] for v in op.operands], ctx)
            for value, result in zip(op.results, results):
                values[value.name] = result
            if g is graph and step in ends:
                _record(rows, step, op, values, reference[ends[step]], local)

    saved = evaluator._run_ops
    evaluator._run_ops = run_ops
    try:
        evaluate(graph, {graph.inputs[0].name: x})
    finally:
        evaluator._run_ops = saved
    return rows


def _op_ends(graph, reference: dict) -> dict:
    """Op index -> TFLite tensor name, for the last IR op of every TFLite op (named after its output)."""
    last = {op.location.name: i for i, op in enumerate(graph.ops) if op.location is not None}
    return {i: name for name, i in last.items() if name in reference}


def _record(rows: list, step: int, op, values: dict, ref: np.ndarray, local: bool):
    v = op.results[0]
    ours = np.asarray(values[v.name])
    if ours.size != ref.size or ours.size == 0:
        return
    ref = ref.reshape(ours.shape)
    err = float(np.max(np.abs(ours.astype(np.float64) - ref)))
    rows.append((step, op.location.op_type, ours.shape, err, float(np.max(np.abs(ref))), op.location.name))
    if local:
        values[v.name] = ref.astype(ours.dtype)


def conditioning(model: str, graph, x: np.ndarray, output: str) -> list:
    """``(run a, run b, max |diff|)`` of ``output`` between every pair of runs."""
    bumped = x * (1 + np.random.default_rng(1).choice([-1, 1], x.shape) * 2.0 ** -24)
    runs = {"LiteRT XNNPACK": outputs(litert(model, x, "AUTO")),
            "LiteRT optimized": outputs(litert(model, x)),
            "LiteRT reference": outputs(litert(model, x, "BUILTIN_REF")),
            "tosaconv": {k: np.asarray(v, np.float64) for k, v in evaluate(graph, {graph.inputs[0].name: x}).items()},
            "LiteRT optimized, input +-1 ulp": outputs(litert(model, bumped.astype(np.float32)))}
    names = list(runs)
    return [(a, b, float(np.max(np.abs(runs[a][output] - runs[b][output].reshape(runs[a][output].shape)))))
            for i, a in enumerate(names) for b in names[i + 1:]]


def _print_rows(title: str, rows: list, top: int):
    print(f"\n{title}\n  step  max|err|  err/max|ref|  TFLite op  shape  tensor")
    chosen = sorted(rows, key=lambda r: -r[3] / max(r[4], 1e-30))[:top] if top else rows
    for step, op, shape, err, scale, name in chosen:
        print(f"  {step:4d}  {err:9.2e}  {err / max(scale, 1e-30):9.2e}  {op}  {list(shape)}  {name[:60]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--output", required=True, help="the output tensor to study")
    parser.add_argument("--low", type=float, default=-1.0)
    parser.add_argument("--high", type=float, default=1.0)
    parser.add_argument("--top", type=int, default=15, help="how many ops with the largest local error to list")
    args = parser.parse_args(argv)
    graph = api.load(args.model)
    shape = tuple(graph.inputs[0].type.shape)
    x = np.random.default_rng(0).uniform(args.low, args.high, shape).astype(np.float32)
    reference = all_tensors(litert(args.model, x, keep_all=True))
    _print_rows("Local error (every TFLite op fed LiteRT's inputs), largest first:",
                op_errors(graph, x, reference, local=True), args.top)
    _print_rows("Propagated error, in program order:", op_errors(graph, x, reference, local=False), 0)
    print(f"\n{args.output} across runs:")
    for a, b, d in conditioning(args.model, graph, x, args.output):
        print(f"  {a:32s} vs {b:32s} max |diff| {d:.3g}")


if __name__ == "__main__":
    main()
