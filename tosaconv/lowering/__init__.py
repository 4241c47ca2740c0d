"""Format-neutral lowering: the TOSA builders both importers share.

The layer between :mod:`tosaconv.ir` and :mod:`tosaconv.importers`. Each
module builds TOSA IR from plain arguments (IR values, ints, tuples, dim
expressions) through a :class:`~.context.LoweringContext`, never from a
source format's node: the ONNX and TFLite converters read their own
attributes and call these functions. Nothing here imports an importer, and
the two importers never import each other (``tests/test_layering.py``).
"""
