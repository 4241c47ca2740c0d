"""The modules a fresh interpreter has loaded after running one tosaconv command (start-up tests, issue 13)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
from tosaconv.cli import main
try:
    main({args!r})
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_modules(args: list) -> set:
    """``sys.modules`` after ``tosaconv ARGS`` in a fresh interpreter started in the repository."""
    proc = subprocess.run([sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True,
                          cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=300)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))
