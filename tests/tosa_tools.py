"""Test helper: find the official TOSA tools and run the reference model.

The ``tosa-tools`` wheel puts its real binaries (``tosa_reference_model``,
``tosa-opt``, ``flatc``, ``tosa.fbs``) in ``site-packages/bin``; the console
scripts on PATH are Python shims. :func:`run_reference_model` runs a
``.tosa`` through a descriptor JSON with ``TOSA_MODEL_NO_BACKTRACE=1`` and
trusts nothing: it checks the exit code *and* that every output file was
written (the model exits 0 even when it failed to save outputs). Inputs are
saved with the numpy type of the graph input's TOSA element type, read from
the file itself (FP32 must be exactly float32, BOOL bool, INT8 int8...).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import numpy as np

from tosaconv.emit.deserialize import deserialize
from tosaconv.ir.dtypes import DType

_INPUT_NUMPY = {DType.BOOL: np.bool_, DType.INT8: np.int8, DType.INT16: np.int16, DType.INT32: np.int32,
                DType.INT48: np.int64, DType.FP16: np.float16, DType.FP32: np.float32}


class ReferenceModelError(RuntimeError):
    """The reference model failed, or did not write every output."""


def tools_bin() -> Path:
    """The directory holding the official binaries and ``tosa.fbs``."""
    return Path(str(metadata.distribution("tosa-tools").locate_file("bin")))


def tool(name: str) -> Path:
    path = tools_bin() / name
    if not path.exists():
        raise FileNotFoundError(f"tosa-tools has no {name} in {tools_bin()}")
    return path


def run_tool(name: str, args: list, cwd=None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, TOSA_MODEL_NO_BACKTRACE="1")
    return subprocess.run([str(tool(name)), *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def run_reference_model(tosa, inputs: dict, output_names, workdir, timeout: float = 300) -> dict:
    """Run ``tosa`` (bytes or a path) on ``inputs`` and return ``{output name: array}``."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    model = _place_model(tosa, work)
    in_files = _save_inputs(model.read_bytes(), inputs, work)
    out_files = [f"out{i}.npy" for i in range(len(output_names))]
    for f in out_files:
        (work / f).unlink(missing_ok=True)  # a stale file must not pass for a fresh output
    desc = {"tosa_file": model.name, "ifm_name": list(inputs), "ifm_file": in_files,
            "ofm_name": list(output_names), "ofm_file": out_files, "expected_failure": False}
    (work / "desc.json").write_text(json.dumps(desc, indent=1))
    proc = run_tool("tosa_reference_model", ["--test_desc", work / "desc.json", "--flatbuffer_dir", work,
                                             "--output_dir", work], timeout=timeout)
    _check_run(proc, [f for f in out_files if not (work / f).exists()])
    return {name: np.load(work / f) for name, f in zip(output_names, out_files)}


def _place_model(tosa, work: Path) -> Path:
    model = work / "model.tosa"
    if isinstance(tosa, (bytes, bytearray)):
        model.write_bytes(bytes(tosa))
    elif Path(tosa).resolve() != model.resolve():
        shutil.copyfile(tosa, model)
    return model


def _check_run(proc: subprocess.CompletedProcess, missing: list):
    if proc.returncode != 0 or missing:
        raise ReferenceModelError(
            f"tosa_reference_model exited {proc.returncode}"
            f"{'; missing outputs ' + ', '.join(missing) if missing else ''}\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")


def _save_inputs(tosa_bytes: bytes, inputs: dict, work: Path) -> list:
    block = deserialize(tosa_bytes)
    types = {t.name: t.dtype for t in block.tensors}
    missing = [n for n in block.inputs if n not in inputs]
    if missing:
        raise ValueError(f"no value given for graph inputs {missing}")
    files = []
    for i, (name, value) in enumerate(inputs.items()):
        if name not in block.inputs:
            raise ValueError(f"'{name}' is not a graph input (inputs: {block.inputs})")
        files.append(f"in{i}.npy")
        np.save(work / files[-1], _as_input(np.asarray(value), types[name], name))
    return files


def _as_input(value: np.ndarray, dtype: DType, name: str) -> np.ndarray:
    if dtype not in _INPUT_NUMPY:
        raise ValueError(f"input '{name}' has element type {dtype}, which this helper cannot feed")
    target = np.dtype(_INPUT_NUMPY[dtype])
    converted = value.astype(target)
    if target.kind in "iu" and not np.array_equal(converted, value):
        raise ValueError(f"input '{name}' holds values that do not fit {dtype.name}")
    return converted
