"""External data: weights in side files load from the model's directory and nowhere else.

A model whose tensor locations escape its directory (``../``, an absolute
path, a symlink out), name a missing file, or ask for more bytes than the
file holds is refused with E-EXTERNAL-DATA (exit 3) naming the tensor.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest

from tosaconv import api
from tosaconv.diagnostics import ConversionError

from .harness import F32, const, info, make_model, rand, run_graph, run_onnxruntime

WEIGHTS = np.arange(12, dtype=np.float32).reshape(3, 4) / 7


def _save(directory, name="model.onnx") -> str:
    node = onnx.helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    model = make_model([node], [info("x", F32, ["n", 3])], [info("y", F32, ["n", 4])], [const("w", WEIGHTS)])
    path = os.path.join(directory, name)
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
              size_threshold=0)
    return path


def _relocate(path, **fields) -> str:
    """A copy of the model at ``path`` whose external-data fields are changed."""
    model = onnx.load(path, load_external_data=False)
    for entry in model.graph.initializer[0].external_data:
        if entry.key in fields:
            entry.value = fields[entry.key]
    out = path.replace(".onnx", "_changed.onnx")
    onnx.save(model, out)
    return out


def test_external_weights_load_and_match_onnxruntime(tmp_path):
    path = _save(str(tmp_path))
    graph = api.load(path)
    full = onnx.load(path)
    for n in (1, 5):
        feeds = {"x": rand(n, 3, seed=n)}
        np.testing.assert_allclose(run_graph(graph, feeds)[0], run_onnxruntime(full, feeds)[0], rtol=1e-5)


@pytest.mark.parametrize("location, why", [
    ("../outside.bin", "outside the model's directory"),
    ("sub/../../outside.bin", "outside the model's directory"),
    ("/etc/passwd", "not a path relative to the model's directory"),
    ("missing.bin", "does not exist or is not a regular file"),
    ("link.bin", "outside the model's directory"),
])
def test_locations_outside_the_model_directory_are_refused(tmp_path, location, why):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    path = _save(str(model_dir))
    (tmp_path / "outside.bin").write_bytes((model_dir / "weights.bin").read_bytes())
    os.symlink(tmp_path / "outside.bin", model_dir / "link.bin")
    with pytest.raises(ConversionError) as e:
        api.load(_relocate(path, location=location))
    d = e.value.diagnostics[0]
    assert d.code == "E-EXTERNAL-DATA" and "tensor 'w'" in d.message and why in d.message
    assert e.value.exit_code == 3


def test_data_beyond_the_end_of_the_file_is_refused(tmp_path):
    path = _relocate(_save(str(tmp_path)), length=str(10**6))
    with pytest.raises(ConversionError, match=r"has only 48 bytes \(truncated\?\)"):
        api.load(path)
