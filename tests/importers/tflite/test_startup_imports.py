"""Start-up of a TFLite conversion (issue 13): what ``tosaconv convert m.tflite`` imports, and the lazily
loaded ``tflite`` package (:mod:`tosaconv.importers.tflite.schema`) against the real one.

Each check runs in a fresh interpreter, since this test process has imported the whole package already.
The time itself is measured by ``scripts/benchmark.py --goals tflite``, not here.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
MODEL = REPO / "sample_models" / "tflite" / "small_cnn.tflite"


def _fresh(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


CONVERT = """
import json, sys
from tosaconv.cli import main
code = None
try:
    main(["convert", {model!r}, "-o", {out!r}, "-q"])
except SystemExit as e:
    code = e.code
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def test_a_tflite_conversion_imports_only_what_it_uses(tmp_path):
    got = _fresh(CONVERT.format(model=str(MODEL), out=str(tmp_path / "m.tosa")))
    assert got["code"] == 0
    modules = set(got["modules"])
    # no ldconfig subprocess (ctypes.util.find_library), no other importer's runtime
    assert not modules & {"ctypes.util", "onnx", "onnxruntime", "scipy", "pkg_resources", "tensorflow"}
    assert "tosaconv.importers.onnx" not in modules
    generated = [m for m in modules if m.startswith("tflite.")]
    # the package has ~190 generated modules; this model needs the enums and the options tables of its ops
    # (the reader walks the model structure itself: tosaconv.importers.tflite.flat)
    assert 5 < len(generated) < 30, generated
    assert "tflite.Conv2DOptions" in modules and "tflite.Model" not in modules


def test_reshape_loads_no_fourier_transform(tmp_path):
    """RESHAPE's converter moves RFFT2D's complex pair too; a model without RFFT2D still loads no transform."""
    model = REPO / "sample_models" / "tflite" / "shape_reshape.tflite"
    got = _fresh(CONVERT.replace('"-q"', '"-q", "--bind", "x.0=2"').format(model=str(model), out=str(tmp_path / "m.tosa")))
    assert got["code"] == 0
    modules = set(got["modules"])
    assert "tosaconv.importers.tflite.ops.shape" in modules
    assert not modules & {"tosaconv.lowering.dft", "tosaconv.importers.tflite.ops.fft"}


SAME_AS_PACKAGE = """
import json, sys
from tosaconv.importers.tflite.schema import tflite
lazy = {name: getattr(tflite, name) for name in
        ("Model", "Conv2DOptions", "Conv2DOptionsStart", "Conv2DOptionsAddStrideW", "TensorType", "Padding",
         "BuiltinOptions", "SubGraph", "Pool2DOptionsEnd")}
opcodes = tflite.utils.BUILTIN_OPCODE2NAME
before = len([m for m in sys.modules if m.startswith("tflite.")])
version = tflite.__version__                     # not a generated name: the real __init__ runs once
after = len([m for m in sys.modules if m.startswith("tflite.")])
import tflite as imported
from tflite import opcode2name, Operator
module = sys.modules["tflite.Conv2DOptions"]
print(json.dumps({
    "before": before, "after": after, "version": version, "same_module": imported is tflite,
    "same_objects": [name for name, obj in lazy.items() if obj is not getattr(tflite, name)],
    "class_not_module": isinstance(tflite.Conv2DOptions, type) and tflite.Conv2DOptions is module.Conv2DOptions,
    "operator": Operator.__module__, "opcodes": opcodes is tflite.BUILTIN_OPCODE2NAME,
    "conv": opcode2name(3), "names": [n for n in dir(tflite) if not n.startswith("_")]}))
"""


def test_the_lazy_package_binds_what_the_real_init_binds():
    got = _fresh(SAME_AS_PACKAGE)
    assert got["before"] < 20 < 150 < got["after"]
    assert got["same_module"] and got["class_not_module"] and got["opcodes"]
    assert got["same_objects"] == []          # a name bound lazily is what the package's star import binds
    assert got["operator"] == "tflite.Operator" and got["conv"] == "CONV_2D"
    real = _fresh("import json, tflite; print(json.dumps({'version': tflite.__version__, "
                  "'names': [n for n in dir(tflite) if not n.startswith('_')]}))")
    assert (got["version"], got["names"]) == (real["version"], real["names"])

