"""Every ONNX op converter, registered by importing this module.

The family modules and the ops each converts are listed in :mod:`.ops` (there is no scanning);
the driver imports only the families a model's ops need (through the registry, start-up: issue
13), while ``tosaconv info`` and the test scoreboard import this module to register them all.
The tables live in ``ops/__init__.py`` and import nothing, so importing a helper module of
``ops`` (``ops.qtypes``) registers nothing: ``int_io`` and ``unsigned_io`` use those helpers while
converters import them, and a package ``__init__`` that imported every converter closed that loop
into an import cycle.
"""
from .ops import load_all

load_all()
