"""Every module of the package can be imported first, in a fresh interpreter (issue 15: no import cycles).

Importing one module per fresh interpreter for every module of the package
would take minutes, so the check is made on the module-level import graph
instead: the imports a module runs when it is loaded (those of its body,
including ``try`` and ``if`` blocks, but not ``if TYPE_CHECKING`` ones or
those inside functions), each also loading the packages above it (importing
``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first). If that graph has
no cycle, no module can meet a partially initialized one, whichever is
imported first. A few modules that once failed when imported first are also
imported in a fresh interpreter, so the graph check is seen to agree with Python.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import tosaconv

ROOT = Path(tosaconv.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _absolute(node: ast.ImportFrom, package: str) -> list[str]:
    if node.level:
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - node.level + 1])
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    return [base] + [f"{base}.{a.name}" for a in node.names]


def load_time_imports(body: list[ast.stmt], package: str) -> list[str]:
    """The dotted names the statements ``body`` import when they run at load time (function bodies never run
    then; ``if TYPE_CHECKING`` blocks never run at all); ``from X import y`` gives X and X.y."""
    out: list[str] = []
    for node in body:
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out += _absolute(node, package)
        elif isinstance(node, ast.If):
            out += load_time_imports(node.orelse if _is_type_checking(node.test) else node.body + node.orelse,
                                     package)
        elif isinstance(node, ast.Try):
            handlers = [s for h in node.handlers for s in h.body]
            out += load_time_imports(node.body + handlers + node.orelse + node.finalbody, package)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package that loading it loads directly (with their parent packages)."""
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for target in load_time_imports(ast.parse(path.read_text()).body, package):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                dep = ".".join(parts[:i])
                if dep in paths and dep != name and not name.startswith(dep + "."):
                    deps.add(dep)
        graph[name] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as a list of modules (first == last), or [] when it has none."""
    state: dict[str, int] = {}          # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


def test_the_module_level_import_graph_has_no_cycle():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_imports_that_run_at_load_time():
    source = ("import x\nfrom .y import z\nif TYPE_CHECKING:\n    import hidden\nelse:\n    import shown\n"
              "try:\n    import t\nexcept ImportError:\n    import u\ndef f():\n    import lazy\n")
    assert load_time_imports(ast.parse(source).body, "p.q") == ["x", "p.q.y", "p.q.y.z", "shown", "t", "u"]


# Modules that used to fail when imported first (each closed a cycle), imported in a fresh interpreter.
@pytest.mark.parametrize("module", [
    "tosaconv.importers.onnx.int_io",
    "tosaconv.importers.onnx.unsigned_io",
    "tosaconv.ir.error_if_windows",
    "tosaconv.lowering.recurrent_unroll",
    "tosaconv.lowering.int_lstm",
])
def test_a_module_imports_first_in_a_fresh_interpreter(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT.parent, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
