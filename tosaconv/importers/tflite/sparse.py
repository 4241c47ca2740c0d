"""Densifying a sparse TFLite constant (the input of DENSIFY) at import.

TFLite stores a sparse tensor as a tree of levels (``dim_metadata``), one per
dim of the blocked shape in ``traversal_order``: the tensor's own dims (a
blocked dim counts ``size / block`` outer positions) followed by one level per
entry of ``block_map`` (the inner position inside a block). A DENSE level
enumerates ``dense_size`` children; a SPARSE_CSR level lists, for parent
``p``, the children ``array_indices[array_segments[p]:array_segments[p+1]]``.
The leaf positions number the stored values in order. This follows TFLite's
``FormatConverter`` (tensorflow/lite/kernels/internal/utils/sparsity_format_converter.cc).
:func:`encode` is the inverse (dense array in, levels and stored values out), for
the model builder: a sparse level keeps a child when its subtree holds a non-zero.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from .flat import AccessorTable, generated
from .schema import tflite

if TYPE_CHECKING:
    import flatbuffers.table


class SparseError(ValueError):
    """Sparsity parameters that do not describe the tensor."""


def _index_vector(kind: int, table: Optional[flatbuffers.table.Table]) -> np.ndarray:
    if table is None or kind == tflite.SparseIndexVector.NONE:
        return np.zeros((0,), np.int64)
    cls = {tflite.SparseIndexVector.Int32Vector: tflite.Int32Vector,
           tflite.SparseIndexVector.Uint16Vector: tflite.Uint16Vector,
           tflite.SparseIndexVector.Uint8Vector: tflite.Uint8Vector}[kind]
    values = _fast(cls, table).ValuesAsNumpy()
    return np.zeros((0,), np.int64) if isinstance(values, int) else values.astype(np.int64)


def _fast(cls: type, table: flatbuffers.table.Table) -> Any:
    """Generated class ``cls`` reading ``table`` through :class:`.flat.AccessorTable` (direct reads)."""
    return generated(cls, AccessorTable(table.Bytes, table.Pos))


def densify(values: np.ndarray, shape: tuple, sparsity: tflite.SparsityParameters, name: str) -> np.ndarray:
    rank = len(shape)
    order = [int(x) for x in np.atleast_1d(sparsity.TraversalOrderAsNumpy())] \
        if not sparsity.TraversalOrderIsNone() else list(range(rank))
    block_map = [int(x) for x in np.atleast_1d(sparsity.BlockMapAsNumpy())] \
        if not sparsity.BlockMapIsNone() else []
    levels = [_fast(tflite.DimensionMetadata, sparsity.DimMetadata(i)._tab)
              for i in range(sparsity.DimMetadataLength())]
    if len(levels) != rank + len(block_map) or sorted(order) != list(range(len(levels))):
        raise SparseError(f"sparse tensor '{name}': {len(levels)} dim metadata entries and traversal order "
                          f"{order} do not fit rank {rank} with block map {block_map}")
    if not block_map and order == list(range(rank)) and _rows_then_csr(levels, shape):
        rows = _densify_rows(values, shape, levels[-1], name)
        if rows is not None:
            return rows
    block_size = {block_map[j]: levels[order.index(rank + j)].DenseSize() for j in range(len(block_map))}
    positions, coords = _leaves(levels, order, name)
    if positions.size and positions.max() >= values.size:
        raise SparseError(f"sparse tensor '{name}' has fewer values than its indices need")
    dense = [coords[d] * block_size.get(d, 1) for d in range(rank)]
    for j, d in enumerate(block_map):
        dense[d] = dense[d] + coords[rank + j]
    if any(c.size and (c.min() < 0 or c.max() >= size) for c, size in zip(dense, shape)):
        raise SparseError(f"sparse tensor '{name}' has indices outside its shape {tuple(shape)}")
    out = np.zeros(shape, values.dtype)
    out[tuple(dense)] = values[positions]
    return out


def _rows_then_csr(levels: Sequence[tflite.DimensionMetadata], shape: tuple) -> bool:
    """Whether the levels are the tensor's own dims in order, every one DENSE at its full size but the last,
    which is SPARSE_CSR: the form TensorFlow's converter writes for a sparse weight (one CSR row per
    position of the leading dims), which :func:`_densify_rows` reads with a few whole-array steps."""
    if not levels:
        return False
    *outer, last = levels
    return (math.prod(shape[:-1]) > 0 and last.Format() == tflite.DimensionType.SPARSE_CSR
            and all(m.Format() == tflite.DimensionType.DENSE and m.DenseSize() == size
                    for m, size in zip(outer, shape)))


def _densify_rows(values: np.ndarray, shape: tuple, last: tflite.DimensionMetadata,
                  name: str) -> Optional[np.ndarray]:
    """:func:`densify` for the levels :func:`_rows_then_csr` accepts, when the rows' segments never step
    back (as a writer lays them out): row ``r`` then holds the stored values
    ``segments[r]:segments[r + 1]``, one contiguous run for all rows, at its columns in ``array_indices``.
    The checks and their order are :func:`_leaves`'s and :func:`densify`'s (the leading dims cannot leave
    the shape: each DENSE level has the dim's own size). None for other segments (the general walk reads them)."""
    rows, width = math.prod(shape[:-1]), shape[-1]
    segments = _index_vector(last.ArraySegmentsType(), last.ArraySegments())
    indices = _index_vector(last.ArrayIndicesType(), last.ArrayIndices())
    if rows >= segments.size or segments[-1] > indices.size:
        raise SparseError(f"sparse tensor '{name}': array segments do not cover the tree")
    counts = np.diff(segments[:rows + 1])
    first, end = int(segments[0]), int(segments[rows])
    if first < 0 or counts.min() < 0:
        return None
    if end > first and end > values.size:
        raise SparseError(f"sparse tensor '{name}' has fewer values than its indices need")
    column = indices[first:end]
    if column.size and (column.min() < 0 or column.max() >= width):
        raise SparseError(f"sparse tensor '{name}' has indices outside its shape {tuple(shape)}")
    out = np.zeros(rows * width, values.dtype)
    out[np.repeat(np.arange(0, rows * width, width), counts) + column] = values[first:end]
    return out.reshape(shape)


def _leaves(levels: Sequence[tflite.DimensionMetadata], order: Sequence[int], name: str) -> tuple:
    """Every leaf of the level tree, level by level in numpy: (its value position, its coordinate per
    blocked dim). A DENSE level numbers child ``i`` of parent ``p`` as ``p * size + i``, a SPARSE_CSR level
    as its position ``k`` in ``array_indices``."""
    nodes = np.zeros(1, np.int64)                      # the node numbers of the current level
    coords = [np.zeros(1, np.int64) for _ in levels]
    for meta, dim in zip(levels, order):
        if meta.Format() == tflite.DimensionType.DENSE:
            size = meta.DenseSize()
            parent = np.repeat(np.arange(nodes.size), size)
            child = np.tile(np.arange(size, dtype=np.int64), nodes.size)
            nodes = nodes[parent] * size + child
        else:
            segments = _index_vector(meta.ArraySegmentsType(), meta.ArraySegments())
            indices = _index_vector(meta.ArrayIndicesType(), meta.ArrayIndices())
            if nodes.size and (nodes.max() + 1 >= segments.size or segments[-1] > indices.size):
                raise SparseError(f"sparse tensor '{name}': array segments do not cover the tree")
            starts, ends = segments[nodes], segments[nodes + 1]
            counts = np.maximum(ends - starts, 0)
            parent = np.repeat(np.arange(nodes.size), counts)
            nodes = np.repeat(starts, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
            child = indices[nodes]
        coords = [c[parent] for c in coords]
        coords[dim] = child
    return nodes, coords


def encode(dense: np.ndarray, formats: Sequence[str], order: Optional[Sequence[int]] = None, blocks: Sequence[tuple[int, int]] = ()) -> tuple:
    """``dense`` in TFLite's sparse form: ``(values, levels)``, one level per entry of ``formats``
    ("DENSE" or "CSR") in traversal ``order``; ``blocks`` lists ``(dim, block size)``. A DENSE level is
    ``("DENSE", size)``, a CSR level ``("CSR", segments, indices)``."""
    rank = dense.ndim
    sizes = dict(blocks)
    split = []
    for d in range(rank):
        split += [dense.shape[d] // sizes[d], sizes[d]] if d in sizes else [dense.shape[d]]
    outer = [sum(2 if e in sizes else 1 for e in range(d)) for d in range(rank)]
    axes = outer + [outer[d] + 1 for d, _ in blocks]
    order = list(range(len(axes))) if order is None else list(order)
    tree = dense.reshape(split).transpose(axes).transpose(order)
    levels = [["DENSE", tree.shape[i]] if f == "DENSE" else ["CSR", [0], []] for i, f in enumerate(formats)]
    values: list = []

    def visit(level: int, sub: np.ndarray) -> None:
        if level == len(levels):
            values.append(sub)
            return
        for i in range(sub.shape[0]):
            if levels[level][0] == "DENSE" or np.any(sub[i] != 0):
                if levels[level][0] == "CSR":
                    levels[level][2].append(i)
                visit(level + 1, sub[i])
        if levels[level][0] == "CSR":
            levels[level][1].append(len(levels[level][2]))

    visit(0, tree)
    return np.array(values, dense.dtype), [tuple(lv) for lv in levels], order, [d for d, _ in blocks]
