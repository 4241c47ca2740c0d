"""Passes over the IR: the default pipeline and specialization.

``run_pipeline`` runs the default pipeline (one visible list in
:mod:`~tosaconv.passes.manager`), verifying the IR after each pass;
``specialize`` binds symbols and decays the program to static TOSA.
"""
from .manager import DEFAULT_PIPELINE, PassError, run_pipeline  # noqa: F401
from .specialize import needed_symbols, specialize  # noqa: F401
