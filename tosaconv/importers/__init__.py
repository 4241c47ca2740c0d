"""Model importers: source formats in, symbolic TOSA IR out.

Each importer turns a model file into a :class:`~tosaconv.ir.graph.Graph`
with dimension symbols, a symbol table and a constraint ledger. Converters
raise plain errors; the importer's driver adds where (node type and name).
"""
