"""Run one TOSA op on the official reference model (``tosa-tools``), for cross-checking kernels.

Tests build a one-op ``.tosa`` with the serializer that ships in tosa-tools
(operands in TOSA 1.0 form: zero points, shifts and shapes as CONST or
CONST_SHAPE inputs), run ``tosa_reference_model`` on it and read its output.
tosa-tools is a declared test extra: when it is missing the tests fail, saying how to install it.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import warnings
from importlib import metadata

import numpy as np
import pytest


def require_reference_model():
    """The serializer module that ships with tosa-tools (the test fails when it is missing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            ser = importlib.import_module("serializer.tosa_serializer")
        except ImportError:
            pytest.fail("tosa-tools is not installed: pip install '.[test]'")
    if not os.path.exists(_binary()):
        pytest.fail("tosa_reference_model binary not found: pip install '.[test]'")
    return ser


def _binary() -> str:
    try:
        return os.path.join(str(metadata.distribution("tosa-tools").locate_file("bin")), "tosa_reference_model")
    except metadata.PackageNotFoundError:
        return ""


class OneOp:
    """A one-op graph under construction: placeholders, constants, one output."""

    def __init__(self, tmp_path):
        ts = require_reference_model()
        self.ts, self.dir = ts, str(tmp_path)
        os.makedirs(self.dir, exist_ok=True)
        self.ser = ts.TosaSerializer(self.dir)
        self.operands: list = []

    @property
    def dtype(self):
        return self.ts.DType

    def input(self, array: np.ndarray, dtype) -> "OneOp":
        self.operands.append(self.ser.addPlaceholder(list(array.shape), dtype, array).name)
        return self

    def const(self, values, dtype, np_type) -> "OneOp":
        arr = np.asarray(values, dtype=np_type)
        self.operands.append(self.ser.addConst(list(arr.shape), dtype, arr).name)
        return self

    def shape(self, values) -> "OneOp":
        arr = np.asarray(values, dtype=np.int64)
        self.operands.append(self.ser.addConst([len(arr)], self.ts.DType.SHAPE, arr).name)
        return self

    def attribute(self):
        return self.ts.TosaSerializerAttribute()

    @staticmethod
    def enum(name: str):
        """A schema enum class, such as ``enum("Op").RESCALE`` or ``enum("RoundingMode")``."""
        return getattr(importlib.import_module(f"tosa.{name}"), name)

    def run(self, op_code, out_shape, out_dtype, attr=None) -> np.ndarray:
        out = self.ser.addOutput(list(out_shape), out_dtype)
        self.ser.addOperator(op_code, self.operands, [out.name], attr)
        with open(os.path.join(self.dir, "test.tosa"), "wb") as f:
            f.write(self.ser.serialize())
        desc = os.path.join(self.dir, "desc.json")
        with open(desc, "w") as f:
            f.write(self.ser.writeJson("test.tosa"))
        proc = subprocess.run([_binary(), "--test_desc", desc, "--flatbuffer_dir", self.dir,
                               "--output_dir", self.dir], capture_output=True, text=True,
                              env={**os.environ, "TOSA_MODEL_NO_BACKTRACE": "1"}, timeout=120)
        out_file = os.path.join(self.dir, json.load(open(desc))["ofm_file"][0])
        if proc.returncode != 0 or not os.path.exists(out_file):
            raise RuntimeError(f"reference model failed ({proc.returncode}): {proc.stdout[-800:]} {proc.stderr[-800:]}")
        return np.load(out_file)
