"""The TFLite importer: .tflite flatbuffers (read with the ``tflite`` package) to the symbolic IR.

It mirrors the ONNX importer: :mod:`.reader` reads the file, :mod:`.registry`
holds ``@converter`` functions (in :mod:`.ops`), :mod:`.context` is the ONNX
import context keyed by TFLite tensor, and :mod:`.driver` lists unsupported
ops, declares inputs and converts op by op.
"""
