"""The package's layering rules, checked on every import statement of every module (lazy ones included).

DESIGN.md §3: the two importers never import each other (what both need lives
in ``lowering/``); ``lowering/``, ``ir/`` and ``symbolic/`` never import an
importer; ``symbolic/`` imports nothing else of ours. Issue 15's layering holds too:
symbolic <- ir <- (importers, passes, interpreter, emit) <- api <- cli, with
no breach (``KNOWN`` would list one, checked to still exist so the list
cannot go stale). Imports are read with
``ast`` (relative ones resolved against the module's package), so the check
sees what the code says, not what happens to be loaded.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tosaconv

ROOT = Path(tosaconv.__file__).parent

# (modules under this prefix, may not import modules under this prefix)
_BELOW_API = ("tosaconv.symbolic", "tosaconv.ir", "tosaconv.lowering", "tosaconv.importers", "tosaconv.passes",
              "tosaconv.interpreter", "tosaconv.emit", "tosaconv.analysis", "tosaconv.diagnostics")
FORBIDDEN = [
    ("tosaconv.importers.onnx", "tosaconv.importers.tflite"),
    ("tosaconv.importers.tflite", "tosaconv.importers.onnx"),
    ("tosaconv.lowering", "tosaconv.importers"),
    ("tosaconv.ir", "tosaconv.importers"),
    ("tosaconv.symbolic", "tosaconv.importers"),
    # symbolic <- ir <- (importers, passes, interpreter, emit) <- api <- cli
    *[("tosaconv.ir", upper) for upper in ("tosaconv.lowering", "tosaconv.passes", "tosaconv.interpreter",
                                           "tosaconv.emit", "tosaconv.analysis")],
    *[(lower, upper) for lower in _BELOW_API for upper in ("tosaconv.api", "tosaconv.cli")],
    ("tosaconv.api", "tosaconv.cli"),
    # the conversion server runs the command line it is given (tosaconv.cli.server passes it in)
    ("tosaconv.serve", "tosaconv.cli"), ("tosaconv.serve", "tosaconv.api"),
    *[(lower, "tosaconv.serve") for lower in (*_BELOW_API, "tosaconv.api")],
    ("tosaconv.emit", "tosaconv.importers"), ("tosaconv.emit", "tosaconv.passes"),
    ("tosaconv.emit", "tosaconv.interpreter"),
    ("tosaconv.passes", "tosaconv.importers"), ("tosaconv.passes", "tosaconv.emit"),
    ("tosaconv.interpreter", "tosaconv.importers"), ("tosaconv.interpreter", "tosaconv.emit"),
    ("tosaconv.interpreter", "tosaconv.passes"),
]
# Breaches allowed for now, each with its reason (checked to still exist, so the list cannot go stale).
# None today: the RECURRENT kernel's unrolling moved from passes/ to lowering/ (issue 15).
KNOWN: set[tuple[str, str]] = set()
SELF_CONTAINED = ["tosaconv.symbolic"]   # imports nothing of ours outside itself but the LEAVES
# Modules (not packages) of ours that import nothing of ours (checked below): a self-contained layer may use them.
# tosaconv.records builds dataclasses without their start-up cost (issue 13).
LEAVES = ("tosaconv.records",)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(name: str, is_package: bool, source: str) -> list:
    """The dotted names every import statement of module ``name`` refers to (``from X import y``
    gives X and X.y, since y may be a submodule)."""
    package = name if is_package else name.rpartition(".")[0]
    targets = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module
            targets += ([base] if node.module else []) + [f"{base}.{a.name}" for a in node.names]
    return targets


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(name: str, targets) -> list:
    found = [(name, t, f"{src} must not import {dst}") for src, dst in FORBIDDEN if under(name, src)
             for t in targets if under(t, dst) and (name, t) not in KNOWN]
    found += [(name, t, f"{src} imports nothing else of ours") for src in SELF_CONTAINED if under(name, src)
              for t in targets if under(t, "tosaconv") and not under(t, src)
              and not any(under(t, leaf) for leaf in LEAVES)]
    return found


def all_modules() -> list:
    return sorted(ROOT.rglob("*.py"))


def test_the_package_keeps_its_layers():
    found = []
    for path in all_modules():
        name = module_name(path)
        found += violations(name, imported(name, path.name == "__init__.py", path.read_text()))
    assert not found, "\n".join(f"{m} imports {t}: {why}" for m, t, why in found)


def test_the_leaves_import_nothing_of_ours():
    for leaf in LEAVES:
        path = ROOT.parent.joinpath(*leaf.split(".")).with_suffix(".py")
        found = [t for t in imported(leaf, False, path.read_text()) if under(t, "tosaconv")]
        assert not found, f"{leaf} imports {found}"


def test_every_layer_exists():
    names = {module_name(p) for p in all_modules()}
    for prefix in {p for rule in FORBIDDEN for p in rule} | set(SELF_CONTAINED):
        assert any(under(n, prefix) for n in names), prefix


@pytest.mark.parametrize("name, source, bad", [
    ("tosaconv.importers.tflite.ops.nn", "from ...onnx.ops import pool", True),
    ("tosaconv.importers.tflite.ops.nn", "from ....importers.onnx.ops.pool import x", True),
    ("tosaconv.importers.onnx.ops.conv", "def f():\n    from ...tflite import quant\n", True),
    ("tosaconv.importers.onnx.reader", "import tosaconv.importers.tflite.reader", True),
    ("tosaconv.lowering.window", "from ..importers.errors import converting", True),
    ("tosaconv.ir.graph", "from .. import importers", True),
    ("tosaconv.symbolic.expr", "from ..ir import dtypes", True),
    ("tosaconv.symbolic.expr", "from .scope import prove", False),
    ("tosaconv.symbolic.scope", "from ..records import dataclass", False),
    ("tosaconv.symbolic.scope", "from ..recordsx import y", True),
    ("tosaconv.importers.tflite.ops.nn", "from ....lowering.window import fit_window", False),
    ("tosaconv.importers.onnx.ops.pool", "from ..reader import ConvertError", False),
])
def test_the_check_sees_each_kind_of_import(name, source, bad):
    """Relative, absolute and lazy imports of a forbidden layer are all found; allowed ones are not."""
    assert bool(violations(name, imported(name, False, source))) is bad


def test_every_known_breach_still_exists():
    """A breach fixed in the code must leave ``KNOWN`` too."""
    seen = set()
    for path in all_modules():
        name = module_name(path)
        seen |= {(name, t) for t in imported(name, path.name == "__init__.py", path.read_text())}
    assert KNOWN <= seen, KNOWN - seen
