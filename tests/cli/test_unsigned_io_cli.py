"""``tosaconv run`` and ``convert --run`` keep the model's own dtypes in the .npz (issue 11, class 9):
uint8 inputs and outputs come back uint8 and int64 outputs int64 (compared with onnxruntime), while
the .tosa stays INT8/INT32; the report's io section says so; a .tosair keeps the record."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort

from tests.importers.onnx.test_unsigned_io import image_model, pixels
from tosaconv.emit import read_tosa


def _save(tmp_path):
    path = tmp_path / "u8.onnx"
    onnx.save(image_model(), str(path))
    return path


def test_run_npz_has_model_dtypes_and_matches_onnxruntime(cli, tmp_path):
    model = _save(tmp_path)
    image = pixels(1, 3, 5, 6, seed=3)
    np.savez(tmp_path / "in.npz", image=image)
    r = cli("run", model, "--inputs", "in.npz", "-o", "out.npz", "--report", "r.json")
    assert r.exit_code == 0, r
    with np.load(tmp_path / "out.npz") as out:
        assert out["image"].dtype == np.uint8 and np.array_equal(out["image"], image)
        assert out["mask"].dtype == np.uint8 and out["best"].dtype == np.int64
        want = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"image": image})
        np.testing.assert_allclose(out["features"], want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(out["mask"], want[1])
        np.testing.assert_array_equal(out["best"], want[2])
    io = json.loads((tmp_path / "r.json").read_text())["io"]
    edges = {e["name"]: e for e in io["inputs"] + io["outputs"]}
    assert edges["image"]["dtype"] == "int8" and edges["image"]["source_dtype"] == "uint8"
    assert edges["image"]["unsigned"] is True
    assert edges["mask"]["source_dtype"] == "uint8" and edges["mask"]["unsigned"] is True
    assert edges["best"]["dtype"] == "int32" and edges["best"]["source_dtype"] == "int64"


def test_convert_run_random_inputs_and_tosa_types(cli, tmp_path):
    model = _save(tmp_path)
    r = cli("convert", model, "--bind", "N=1", "--bind", "H=4", "--bind", "W=4", "-o", "m.tosa", "--run",
            "--ir", "m.tosair")
    assert r.exit_code == 0, r
    with np.load(tmp_path / "m.npz") as out:
        assert out["image"].dtype == np.uint8 and out["mask"].dtype == np.uint8 and out["best"].dtype == np.int64
    program = read_tosa((tmp_path / "m.tosa").read_bytes())
    assert [v.type.dtype.name for v in program.inputs] == ["INT8"]
    text = (tmp_path / "m.tosair").read_text()
    assert 'io input "image" from uint8' in text and 'io output "best" from int64' in text
    r = cli("run", "m.tosair", "--inputs", "m.npz", "-o", "again.npz")
    assert r.exit_code == 0, r
    with np.load(tmp_path / "again.npz") as again, np.load(tmp_path / "m.npz") as first:
        assert again["mask"].dtype == np.uint8 and np.array_equal(again["mask"], first["mask"])


def test_tflite_uint8_model_npz_is_uint8_and_matches_litert(cli, tmp_path):
    """A TFLite model with uint8 I/O (no --int-io): its quantized edges hold uint8 bits, and the .npz gives
    them as uint8, equal to LiteRT's reference kernels on the same pixels."""
    from tests.importers.tflite.test_int_io import litert_tensors, sample
    image = pixels(1, 16, 16, 3, seed=4)
    np.savez(tmp_path / "in.npz", image=image)
    r = cli("run", sample("uint8_io.tflite"), "--inputs", "in.npz", "-o", "out.npz")
    assert r.exit_code == 0, r
    with np.load(tmp_path / "out.npz") as out:
        assert out["probs/uint8"].dtype == np.uint8 and out["image"].dtype == np.uint8
        want = litert_tensors(sample("uint8_io.tflite"), {"image": image})["probs/uint8"]
        np.testing.assert_array_equal(out["probs/uint8"], want)


def test_inspect_names_the_model_dtypes(cli, tmp_path):
    r = cli("inspect", _save(tmp_path), "--json")
    assert r.exit_code == 0, r
    doc = json.loads(r.stdout)
    (image,) = doc["inputs"]
    assert image["source_dtype"] == "uint8" and image["unsigned"] is True
    outputs = {o["name"]: o for o in doc["outputs"]}
    assert outputs["best"]["source_dtype"] == "int64" and "source_dtype" not in outputs["features"]
