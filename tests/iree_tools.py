"""Test helper: compile TOSA MLIR with IREE and run it (``iree-base-compiler``/``-runtime`` 3.13, test extras).

The tools are found through the installed packages, not PATH:
``iree.compiler.tools.binaries.find_tool("iree-compile")`` and the
``iree-run-module`` binary beside ``iree._runtime``'s libraries. Both run as
subprocesses (a crash must not take pytest down), with the commands the
README gives: ``iree-compile --iree-input-type=tosa`` for the local llvm-cpu
device (generic CPU, so the result does not depend on the machine), then
``iree-run-module --device=local-task --function=main`` with one ``.npy`` per
input and per output. Like ``tests/tosa_tools.py`` it trusts nothing: a
non-zero exit or a missing output file raises :class:`IreeError` with the
tool's output.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np

COMPILE_FLAGS = ["--iree-input-type=tosa", "--iree-hal-target-device=local",
                 "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic"]


class IreeError(RuntimeError):
    """iree-compile or iree-run-module failed."""


_MISSING = "IREE is a test extra: pip install '.[test]' (iree-base-compiler and iree-base-runtime 3.13.0)"


def compiler() -> str:
    try:
        from iree.compiler.tools.binaries import find_tool
    except ImportError as e:
        raise IreeError(f"{_MISSING}: {e}") from None
    return find_tool("iree-compile")


def runner() -> str:
    try:
        from iree._runtime import libs
    except ImportError as e:
        raise IreeError(f"{_MISSING}: {e}") from None
    path = os.path.join(libs.library_path, "iree-run-module")
    if not os.path.exists(path):
        raise FileNotFoundError(f"iree-base-runtime has no iree-run-module in {libs.library_path}")
    return path


def _check(proc: subprocess.CompletedProcess, what: str, missing=()):
    if proc.returncode != 0 or missing:
        raise IreeError(f"{what} exited {proc.returncode}{'; missing ' + ', '.join(missing) if missing else ''}\n"
                        f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")


def compile_mlir(mlir: Path, vmfb: Path, timeout: float = 600) -> Path:
    proc = subprocess.run([compiler(), *COMPILE_FLAGS, str(mlir), "-o", str(vmfb)], check=False, capture_output=True,
                          text=True, timeout=timeout)
    _check(proc, "iree-compile", [] if vmfb.exists() else [str(vmfb)])
    return vmfb


def run_module(vmfb: Path, inputs: list, n_outputs: int, workdir: Path, timeout: float = 300) -> list:
    """The outputs of ``main`` on ``inputs`` (arrays in the program's element types, in argument order)."""
    args = []
    for i, value in enumerate(inputs):
        args.append(_input_arg(np.asarray(value), workdir / f"in{i}.npy"))
    outs = [workdir / f"out{i}.npy" for i in range(n_outputs)]
    for out in outs:
        out.unlink(missing_ok=True)
        args.append(f"--output=@{out}")
    proc = subprocess.run([runner(), f"--module={vmfb}", "--device=local-task", "--function=main", *args],
                          check=False, capture_output=True, text=True, timeout=timeout)
    _check(proc, "iree-run-module", [str(o) for o in outs if not o.exists()])
    return [np.load(o) for o in outs]


def _input_arg(value: np.ndarray, path: Path) -> str:
    """``--input=@in.npy``; a 0-d array as text (``f32=1.5``): iree-run-module reads a 0-d .npy as shape [1]."""
    if value.ndim == 0:
        kind = value.dtype.kind
        if kind == "f" and value.dtype == np.float32:
            return f"--input=f32={float(value)!r}"
        if kind in "iu":
            return f"--input=i{value.dtype.itemsize * 8}={int(value)}"
        if kind == "b":
            return f"--input=i1={int(value)}"
        raise ValueError(f"no scalar input form for {value.dtype}")
    np.save(path, np.ascontiguousarray(value))
    return f"--input=@{path}"


def run_mlir(mlir_text: bytes, inputs: list, n_outputs: int, workdir) -> list:
    """Write ``mlir_text``, compile it and run ``main`` once."""
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    (work / "model.mlir").write_bytes(mlir_text)
    vmfb = compile_mlir(work / "model.mlir", work / "model.vmfb")
    return run_module(vmfb, inputs, n_outputs, work)
