"""Where does tosaconv first part from onnxruntime on a quantized real model?

Every QuantizeLinear output of the quantized model (tests/real_models/quantized.py)
becomes an extra graph output; tosaconv converts that model and runs it
with the numpy interpreter, onnxruntime runs it with its graph
optimizations off (every Q/DQ as written, so each QuantizeLinear output is
the exact integer the ONNX semantics give), and the int8/uint8 tensors are
compared exactly, in the model's node order. The first QuantizeLinear that
differs, the node that feeds it and the size of the difference (in LSB) are
printed, with a count of all differing ones.

    python scripts/quantized_divergence.py MODEL-NAME RECIPE [--all]
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper  # noqa: E402

from tests.real_models.quantized import entry_named, quantized_path, recipe_named  # noqa: E402
from tests.real_models.quantized_check import onnxruntime_outputs  # noqa: E402
from tests.real_models.quantized_measure import feeds_for  # noqa: E402
from tosaconv import api  # noqa: E402


def exposed(model: onnx.ModelProto) -> tuple:
    """``model`` with every QuantizeLinear output as a graph output; the names, in node order."""
    outputs = {o.name for o in model.graph.output}
    names = [n.output[0] for n in model.graph.node if n.op_type == "QuantizeLinear" and n.output[0] not in outputs]
    model.graph.output.extend(helper.make_empty_tensor_value_info(name) for name in names)
    return model, names


def divergence(model_name: str, recipe: str) -> list:
    """``[(Q output, producer of its input, max |difference|, count differing)]`` for the differing ones."""
    entry = entry_named(model_name)
    model, names = exposed(onnx.load(str(quantized_path(entry, recipe_named(recipe)))))
    producer = {o: n for n in model.graph.node for o in n.output}
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "exposed.onnx"
        onnx.save(model, str(path))
        feeds = feeds_for(entry, model)
        theirs = onnxruntime_outputs(path, feeds, optimized=False)
        graph = api.load(str(path))
        static = api.specialize(graph, api.solve_bindings(graph, entry.shapes[0]))
        ours = api.run(static, {v.name: feeds[v.name].astype(v.type.dtype.numpy) for v in static.inputs})
    found = []
    for name in names:
        diff = np.abs(np.asarray(ours[name], np.int64) - np.asarray(theirs[name], np.int64))
        if diff.any():
            q = producer[name]
            feeding = producer.get(q.input[0])
            where = f"{feeding.op_type} '{feeding.name}'" if feeding is not None else "a graph input"
            found.append((f"{q.name} ({name})", where, int(diff.max()), int(np.count_nonzero(diff))))
    return found


def main(argv) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    found = divergence(argv[0], argv[1])
    if not found:
        print("every QuantizeLinear output agrees exactly with onnxruntime (optimizations off)")
        return 0
    print(f"{len(found)} QuantizeLinear outputs differ; {'all' if '--all' in argv else 'the first'}:")
    for q, where, most, count in found if "--all" in argv else found[:1]:
        print(f"- {q}, fed by {where}: up to {most} LSB, {count} elements")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
