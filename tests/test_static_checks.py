"""Static checks that run inside the test command, so CI enforces them: mypy on the typed core
(``[tool.mypy]`` in pyproject.toml says which files, and how strictly) and ruff on the package, the
tests and the scripts (``[tool.ruff]``: which rules)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_typed_core_passes_mypy():
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--config-file",
                           str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_code_passes_ruff():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "tosaconv", "tests", "scripts"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
