"""The ``tflite`` package (the TFLite schema's generated Python code), one generated module at a time.

The package's ``__init__`` star-imports all of its ~190 generated modules, which costs a conversion
about 0.05 s of CPU at start-up (issue 13), while a model touches a dozen of them: Model, SubGraph,
Tensor, Buffer, Operator, OperatorCode and the options tables of its ops. :data:`tflite` is that
package, registered in ``sys.modules`` without running its ``__init__``; a name is looked up the first
time it is asked for:

- ``tflite.Conv2DOptions`` (a generated module's own name) imports ``tflite/Conv2DOptions.py`` and binds
  what the package's ``from tflite.Conv2DOptions import *`` binds under that module's names: the class
  ``Conv2DOptions`` and the functions ``Conv2DOptionsStart``, ``Conv2DOptionsAddStrideW``... (the
  generated code's own ``from tflite.X import X`` inside accessors goes through the same binding);
- ``tflite.Conv2DOptionsStart`` finds its module by the longest module name it starts with;
- ``tflite.utils`` binds the module and its ``BUILTIN_OPCODE2NAME`` and ``opcode2name``, as ``__init__``
  does;
- any other name (``__version__``, the unprefixed ``Start``/``End`` that every module defines and only the
  last star import decides, ``dir()``) runs the real ``__init__`` once, after which the module is the
  package exactly as ``import tflite`` makes it.

When ``tflite`` is already imported (a test, LiteRT tooling), that module is used as it is.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from typing import Any, Optional

PACKAGE = "tflite"


class LazySchemaPackage(types.ModuleType):
    """The ``tflite`` package module whose generated modules are imported on first use."""

    _modules: frozenset = frozenset()   # the generated modules' names (file stems)
    _complete: bool = False              # the real __init__ has run

    def __setattr__(self, name: str, value: object) -> None:
        # the import system binds every imported submodule to its package: bind its names as __init__ would
        super().__setattr__(name, value)
        if isinstance(value, types.ModuleType) and value.__name__ == f"{PACKAGE}.{name}" and not self._complete:
            self._bind_names(name, value)

    def _bind_names(self, name: str, module: types.ModuleType) -> None:
        for key, item in vars(module).items():
            if not key.startswith("_") and (key.startswith(name) or name == "utils"):
                super().__setattr__(key, item)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self._complete:
            return self._complete_package(name)
        stem = name if name in self._modules else _longest_prefix(name, self._modules)
        if stem is not None:
            importlib.import_module(f"{PACKAGE}.{stem}")
            if name in vars(self):
                return vars(self)[name]
        return self._complete_package(name)

    def __dir__(self) -> list:
        if not self._complete:
            self._run_init()
        return super().__dir__()

    def _complete_package(self, name: str) -> Any:
        if not self._complete:
            self._run_init()
        try:
            return vars(self)[name]
        except KeyError:
            raise AttributeError(f"module '{PACKAGE}' has no attribute '{name}'") from None

    def _run_init(self) -> None:
        super().__setattr__("_complete", True)
        self.__spec__.loader.exec_module(self)


def _longest_prefix(name: str, stems: frozenset) -> Optional[str]:
    best = None
    for stem in stems:
        if name.startswith(stem) and (best is None or len(stem) > len(best)):
            best = stem
    return best


def _load() -> types.ModuleType:
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the 'tflite' package (the TFLite schema's generated code) is not installed: "
                          "pip install tflite")
    module = importlib.util.module_from_spec(spec)   # sets __path__, __spec__...; does not run __init__
    folder = next(iter(spec.submodule_search_locations))
    stems = frozenset(f[:-3] for f in os.listdir(folder) if f.endswith(".py") and f != "__init__.py")
    module.__class__ = LazySchemaPackage
    object.__setattr__(module, "_modules", stems)
    sys.modules[PACKAGE] = module
    return module


tflite = _load()
