"""``tosaconv run`` on a model that computes on uint8 and uint32 inputs: the .npz keeps the model's types
(compared with onnxruntime), the .tosa takes INT32 true values, and the report's io section says so
(``source_dtype`` uint8/uint32, ``unsigned`` false: the int32 holds values, not bits)."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort

from tests.importers.onnx.test_unsigned_arith_io import arith_model
from tosaconv.emit import read_tosa


def test_run_uint8_and_uint32_arithmetic_keeps_model_dtypes(cli, tmp_path):
    rng = np.random.default_rng(5)
    for elem, np_type, high in [(onnx.TensorProto.UINT8, np.uint8, 256), (onnx.TensorProto.UINT32, np.uint32, 2**31)]:
        path = tmp_path / f"{np_type.__name__}.onnx"
        onnx.save(arith_model(elem), str(path))
        feed = {"a": rng.integers(high // 2, high, (2, 3)).astype(np_type),
                "b": rng.integers(1, high, (2, 3)).astype(np_type)}
        np.savez(tmp_path / "in.npz", **feed)
        r = cli("run", path, "--inputs", "in.npz", "-o", "out.npz", "--report", "r.json")
        assert r.exit_code == 0, r
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feed)
        with np.load(tmp_path / "out.npz") as out:
            for i, w in enumerate(want):
                assert out[f"y{i}"].dtype == w.dtype
                np.testing.assert_array_equal(out[f"y{i}"], w)
        io = json.loads((tmp_path / "r.json").read_text())["io"]
        a = next(e for e in io["inputs"] if e["name"] == "a")
        assert (a["dtype"], a["source_dtype"], a["unsigned"]) == ("int32", np_type.__name__, False)
        assert cli("convert", path, "--bind", "N=2", "-o", "m.tosa").exit_code == 0
        assert [v.type.dtype.name for v in read_tosa((tmp_path / "m.tosa").read_bytes()).inputs] == ["INT32"] * 2


def test_convert_run_random_unsigned_inputs_are_valid_model_data(cli, tmp_path):
    path = tmp_path / "u8.onnx"
    model = arith_model(onnx.TensorProto.UINT8)
    keep = ("y0", "y1", "y2", "y3", "y4")   # Div and Mod by a random 0 are undefined: dropped
    nodes = [n for n in model.graph.node if n.output[0] in keep]
    outputs = [o for o in model.graph.output if o.name in keep]
    del model.graph.node[:], model.graph.output[:]
    model.graph.node.extend(nodes)
    model.graph.output.extend(outputs)
    onnx.save(model, str(path))
    r = cli("convert", path, "--bind", "N=4", "-o", "m.tosa", "--run")
    assert r.exit_code == 0, r
    with np.load(tmp_path / "m.npz") as out:
        feed = {"a": out["a"], "b": out["b"]}
        assert feed["a"].dtype == np.uint8 and feed["a"].max() <= 127 and len(np.unique(feed["a"])) > 3
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feed)
        for i, w in enumerate(want):
            np.testing.assert_array_equal(out[f"y{i}"], w)
