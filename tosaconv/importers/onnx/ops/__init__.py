"""ONNX op converters, one small function per source op, grouped by family.

Importing this package registers nothing: :mod:`..converters` lists (and
imports) every family module, so a helper here (``qtypes``) can be imported
on its own without pulling every converter in.
"""
