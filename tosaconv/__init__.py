"""tosaconv: convert ONNX and TFLite models with dynamic dims to TOSA, and run them.

``__version__`` is the installed distribution's version, kept here as a constant so that
``tosaconv --version`` and the report need not import ``importlib.metadata`` (about 15 ms of
start-up, issue 13); tests/test_version.py checks it against the installed metadata and
pyproject.toml.
"""
__version__ = "0.1.0"
