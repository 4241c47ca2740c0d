"""``tosaconv.__version__`` (what ``--version`` and the report print, a constant for start-up: issue 13)
is the version pyproject.toml declares and the installed distribution's metadata reports."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import tosaconv
from tosaconv.report import tool_version

REPO = Path(__file__).resolve().parents[1]


def test_the_version_constant_is_the_declared_and_installed_version():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert tosaconv.__version__ == declared == metadata.version("tosaconv")
    assert tool_version() == tosaconv.__version__


def test_version_option_prints_it():
    out = subprocess.run([sys.executable, "-m", "tosaconv", "--version"], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=120).stdout
    assert out == f"tosaconv, version {tosaconv.__version__}\n"
