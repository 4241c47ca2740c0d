"""Mutators: from a ``random.Random`` to a :class:`~tests.fuzz.harness.Case` of each input kind.

Byte-level damage (flips, interesting 32-bit values at aligned offsets,
truncation, cut and duplicated chunks) serves every binary kind; the cheap
structure-aware mutations go where the fuzzer would otherwise only hit the
parser: ONNX protobuf fields (dims, element types, opsets, node inputs,
attributes, external data), ``.tosair`` number tokens and lines, bindings
documents, and ``.npz`` archives (member headers, names, compression).
"""
from __future__ import annotations

import io
import json
import random
import re
import struct
import zipfile

import numpy as np
import onnx

from . import seeds
from .harness import Case

INTERESTING_INTS = (0, 1, -1, 2, 3, 7, 255, 256, 65535, 0x7FFFFFFF, -0x80000000, 0x40000000, 1 << 20, -2)
INTERESTING_TEXT = ("0", "-1", "1" * 5000, "inf", "-inf", "nan", "2147483648", "1e400", "9223372036854775808",
                    "4294967296", "1099511627776", "-2147483649", "0.5", "1_0")


def mutate_bytes(data: bytes, rnd: random.Random, rounds: int = 0) -> bytes:
    buf = bytearray(data)
    for _ in range(rounds or rnd.choice((1, 1, 2, 3, 8))):
        if not buf:
            break
        how = rnd.randrange(8)
        at = rnd.randrange(len(buf))
        if how == 0:
            buf[at] ^= 1 << rnd.randrange(8)
        elif how == 1:
            at -= at % 4
            value = rnd.choice(INTERESTING_INTS) & 0xFFFFFFFF
            buf[at:at + 4] = struct.pack("<I", value)[: len(buf) - at]
        elif how == 2:
            at -= at % 4
            buf[at:at + 4] = struct.pack("<f", rnd.choice((float("nan"), float("inf"), 0.0, -1.0, 1e30)))[: len(buf) - at]
        elif how == 3:
            del buf[at:]
        elif how == 4:
            del buf[at:at + rnd.randrange(1, 64)]
        else:
            buf[at:at] = buf[at:at + rnd.randrange(1, 64)]
    return bytes(buf)


def _command(seed: seeds.Seed, rnd: random.Random, name: str) -> list:
    return [a.replace("{in}", "{dir}/" + name) for a in rnd.choice(seed.commands)]


# ---------------------------------------------------------------- binary kinds


def _binary_case(kind: str, pool: tuple, rnd: random.Random) -> Case:
    seed = rnd.choice(pool)
    name = "model" + seed.suffix
    return Case(kind, {name: mutate_bytes(seed.data, rnd)}, _command(seed, rnd, name), f"bytes of {seed.name}")


def tflite_case(rnd: random.Random) -> Case:
    return _binary_case("tflite", seeds.tflite_seeds(), rnd)


def tosa_case(rnd: random.Random) -> Case:
    return _binary_case("tosa", seeds.tosa_seeds(), rnd)


# ---------------------------------------------------------------- ONNX


def _pick(rnd, items):
    items = list(items)
    return rnd.choice(items) if items else None


def _m_dims(m, rnd):
    t = _pick(rnd, m.graph.initializer)
    if t is not None and t.dims:
        t.dims[rnd.randrange(len(t.dims))] = rnd.choice((0, -1, 3, 1 << 40, 7))


def _m_elem_type(m, rnd):
    t = _pick(rnd, list(m.graph.initializer) + [v.type.tensor_type for v in m.graph.input])
    if t is not None:
        setattr(t, "data_type" if hasattr(t, "data_type") else "elem_type", rnd.choice((0, 8, 13, 21, 22, 99, 40)))


def _m_opset(m, rnd):
    m.opset_import[0].version = rnd.choice((0, 1, 5, 1 << 40, 30, -3))


def _m_node_input(m, rnd):
    n = _pick(rnd, m.graph.node)
    if n is not None and n.input:
        i = rnd.randrange(len(n.input))
        if rnd.random() < 0.5:
            n.input[i] = ""
        else:
            del n.input[i:]


def _m_op_type(m, rnd):
    n = _pick(rnd, m.graph.node)
    if n is not None:
        n.op_type = rnd.choice(("Add", "MatMul", "Reshape", "Unsqueeze", "ConstantOfShape", "Where", "Conv",
                                "Gather", "Relu", "Transpose", "Softmax", "Concat", "Slice", "Expand", "Tile"))


def _m_attribute(m, rnd):
    n = _pick(rnd, m.graph.node)
    a = _pick(rnd, n.attribute) if n is not None else None
    if a is None:
        return
    if a.ints:
        a.ints[rnd.randrange(len(a.ints))] = rnd.choice((0, -1, 1 << 40, -(1 << 40), 100))
    elif a.type == onnx.AttributeProto.INT:
        a.i = rnd.choice((0, -1, 1 << 40, 100))
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rnd.choice((float("nan"), float("inf"), -1.0))
    else:
        a.type = rnd.choice((0, onnx.AttributeProto.STRING, onnx.AttributeProto.INTS, onnx.AttributeProto.GRAPH))


def _m_input_dim(m, rnd):
    v = _pick(rnd, m.graph.input)
    dims = v.type.tensor_type.shape.dim if v is not None else []
    if dims:
        d = dims[rnd.randrange(len(dims))]
        if rnd.random() < 0.7:
            d.dim_value = rnd.choice((0, -1, 1 << 40, 1 << 31, 100000))
        else:
            d.dim_param = rnd.choice(("", "1", "a b", "x" * 300, "N"))


def _m_const_values(m, rnd):
    t = _pick(rnd, m.graph.initializer)
    if t is None:
        return
    if t.raw_data:
        t.raw_data = mutate_bytes(t.raw_data, rnd) if rnd.random() < 0.7 else t.raw_data[: len(t.raw_data) // 2]
    elif t.int64_data:
        t.int64_data[rnd.randrange(len(t.int64_data))] = rnd.choice((-1, 0, 2**63 - 1, -(2**63), 1 << 40))


def _m_external(m, rnd):
    t = _pick(rnd, m.graph.initializer)
    if t is None:
        return
    t.data_location = onnx.TensorProto.EXTERNAL
    del t.external_data[:]
    location = rnd.choice(("w.bin", "a\x00b", "../../etc/passwd", "/etc/passwd", "link.bin", "nope.bin", ""))
    for key, value in (("location", location), ("offset", rnd.choice(("0", "-8", "99999", "x"))),
                       ("length", rnd.choice(("4", "-1", "100000000000", "")))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value


def _m_const_of_shape(m, rnd):
    shape = [rnd.choice((-1, 0, 1 << 20, 1 << 40, 2, 3)) for _ in range(rnd.randrange(1, 4))]
    node = onnx.helper.make_node("ConstantOfShape", ["cos_shape"], ["cos_out"], name="cos_fuzz")
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array(shape, np.int64), "cos_shape"))
    m.graph.node.insert(0, node)
    out = m.graph.output.add()
    out.name = "cos_out"


def _m_rank0(m, rnd):
    v = _pick(rnd, m.graph.input)
    if v is not None:
        del v.type.tensor_type.shape.dim[:]
    t = _pick(rnd, m.graph.initializer)
    if t is not None and rnd.random() < 0.5:
        del t.dims[:]


def _m_name(m, rnd):
    n = _pick(rnd, m.graph.node)
    if n is not None:
        n.name = rnd.choice(("", "a" * 10000, "x\ny", "%0", "\u202e", "dup"))


ONNX_MUTATIONS = (_m_dims, _m_elem_type, _m_opset, _m_node_input, _m_op_type, _m_attribute, _m_input_dim,
                  _m_const_values, _m_external, _m_const_of_shape, _m_rank0, _m_name)


def onnx_case(rnd: random.Random) -> Case:
    seed = rnd.choice(seeds.onnx_seeds())
    files = {}
    if rnd.random() < 0.25:
        data = mutate_bytes(seed.data, rnd)
        note = f"bytes of {seed.name}"
    else:
        model = onnx.load_from_string(seed.data)
        chosen = [rnd.choice(ONNX_MUTATIONS) for _ in range(rnd.choice((1, 1, 2, 3)))]
        for mutation in chosen:
            try:
                mutation(model, rnd)
            except (ValueError, TypeError):   # protobuf refused the value: the mutation is a no-op
                pass
        data = model.SerializeToString()
        note = f"{seed.name}: " + ", ".join(f.__name__[3:] for f in chosen)
        if _m_external in chosen:
            files["w.bin"] = bytes(64)
        if rnd.random() < 0.1:
            data = _invalid_utf8_name(data)
    files["model.onnx"] = data
    return Case("onnx", files, _command(seed, rnd, "model.onnx"), note)


def _invalid_utf8_name(data: bytes) -> bytes:
    # a node name 'add' (or any 3-letter name) with one byte made invalid UTF-8
    return data.replace(b"add", b"a\xffd", 1)


# ---------------------------------------------------------------- .tosair


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")
_TYPE = re.compile(r"(?:tensor|index)<[^<>]*>")   # a value type: swapped for another type of the text
_ELEMENT = re.compile(r"x(?:f32|f16|bf16|i1|i4|i8|i16|i32|i48|i64)>")
_ELEMENTS = ("xf32>", "xf16>", "xbf16>", "xi1>", "xi8>", "xi16>", "xi32>", "xi48>", "xi64>")


def mutate_text(text: str, rnd: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rnd.choice((1, 1, 2, 4))):
        how = rnd.randrange(8)
        i = rnd.randrange(len(lines))
        if how <= 1:
            spans = [mt.span() for mt in _NUMBER.finditer(lines[i])]
            if spans:
                a, b = rnd.choice(spans)
                lines[i] = lines[i][:a] + rnd.choice(INTERESTING_TEXT) + lines[i][b:]
        elif how == 2:
            del lines[i]
        elif how == 3:
            lines.insert(i, lines[rnd.randrange(len(lines))])
        elif how == 4:
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif how >= 6:
            if rnd.random() < 0.5:   # half the time the signature: the types that enter the program
                i = next((k for k, line in enumerate(lines) if line.startswith("func ")), i)
            lines[i] = _swap_type(lines[i], text, rnd) if how == 6 else _swap_element(lines[i], rnd)
        else:
            words = re.findall(r"[A-Z][A-Z_0-9]+|%[\w.]+", lines[i])
            if words:
                w = rnd.choice(words)
                repl = rnd.choice(re.findall(r"[A-Z][A-Z_0-9]+|%[\w.]+", text) or ["X"])
                lines[i] = lines[i].replace(w, repl, 1)
        if not lines:
            lines = [""]
    return "\n".join(lines)


def _swap_type(line: str, text: str, rnd: random.Random) -> str:
    """One value type of ``line`` replaced by a type from anywhere in the program (a tensor for an index
    value, another shape or element type): types that parse but do not fit where they stand."""
    spans = [mt.span() for mt in _TYPE.finditer(line)]
    if not spans:
        return line
    a, b = rnd.choice(spans)
    others = [t for t in _TYPE.findall(text) if t[0] != line[a]]   # the other kind (index for tensor)
    pool = others if others and rnd.random() < 0.5 else _TYPE.findall(text) + ["index<4>", "tensor<f32>"]
    return line[:a] + rnd.choice(pool) + line[b:]


def _swap_element(line: str, rnd: random.Random) -> str:
    """One tensor element type of ``line`` changed (f32 -> i8, i48...)."""
    spans = [mt.span() for mt in _ELEMENT.finditer(line)]
    if not spans:
        return line
    a, b = rnd.choice(spans)
    return line[:a] + rnd.choice(_ELEMENTS) + line[b:]


def tosair_case(rnd: random.Random) -> Case:
    seed = rnd.choice(seeds.tosair_seeds())
    if rnd.random() < 0.15:
        data = mutate_bytes(seed.data, rnd)
    else:
        data = mutate_text(seed.data.decode(), rnd).encode()
    return Case("tosair", {"model.tosair": data}, _command(seed, rnd, "model.tosair"), f"text of {seed.name}")


# ---------------------------------------------------------------- bindings


def random_json(rnd: random.Random, depth: int = 0):
    r = rnd.random()
    if depth > 3 or r < 0.5:
        return rnd.choice((1, 2, 0, -1, 2**31, 2**40, 2**63, 1.0, 2.5, 1e400, float("nan"), True,
                           None, "2", [], {}, 1 << 20, 65536))
    if r < 0.75:
        return [random_json(rnd, depth + 1) for _ in range(rnd.randrange(3))]
    return {rnd.choice(("batch", "seq", "x", "")): random_json(rnd, depth + 1) for _ in range(rnd.randrange(3))}


def bindings_document(rnd: random.Random) -> bytes:
    how = rnd.randrange(5)
    if how == 0:
        depth = rnd.choice((50, 1000, 10000, 100000))
        return ("[" * depth + "]" * depth).encode() if rnd.random() < 0.5 else ('{"a":' * depth + "1" + "}" * depth).encode()
    if how == 1:
        values = ("1_0", "1E2", "2.0", "NaN", "Infinity", "-Infinity", "1e400", "1" * 5000, "true", "\"3\"",
                  "\u0663", "0x10", "+3", "-0", "2147483648", "4294967296", "9223372036854775808")
        return ('{"batch": %s, "seq": %s}' % (rnd.choice(values), rnd.choice(values + ("4",)))).encode()
    doc = {"batch": rnd.choice((1, 2, 2**31 - 1, 2**20)), "seq": rnd.choice((1, 3, 2**31, 2**40, 2**16))}
    if how == 2:
        doc = random_json(rnd)
    raw = json.dumps(doc, allow_nan=True, default=str).encode()
    return mutate_bytes(raw, rnd) if how == 4 else raw


BIND_TEXTS = ("batch=1_0", "batch=\u0663", "batch=1E2", "batch=2.0", "batch=nan", "batch=" + "9" * 5000,
              "batch=2147483648", "seq=1099511627776", "batch=0", "batch=-1", "=3", "batch", "batch= 2",
              "batch=+2", "seq=65536", "batch=65536", "batch=2", "seq=3", "bat\x00ch=2")


def bindings_case(rnd: random.Random) -> Case:
    args = ["run", "{dir}/model.onnx", "-o", "{dir}/out.npz"]
    files = {"model.onnx": seeds.SYMBOLIC_MODEL}
    if rnd.random() < 0.6:
        files["b.json"] = bindings_document(rnd)
        args += ["--bindings", "{dir}/b.json"]
    for _ in range(rnd.randrange(3)):
        args += ["--bind", rnd.choice(BIND_TEXTS)]
    if rnd.random() < 0.3:
        args[0] = "convert"
        args[3] = "{dir}/out.tosa"
    return Case("bindings", files, args, "bindings")


# ---------------------------------------------------------------- --inputs archives


def _npy(array, fortran=False) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asfortranarray(array) if fortran else array, allow_pickle=True)
    return buffer.getvalue()


def _zip(members: dict, method: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def _header_claim(npy: bytes, rnd: random.Random) -> bytes:
    shape = rnd.choice(("(100000, 100000)", "(1099511627776,)", "(-1, 3)", "(2, 3, 4, 5, 6, 7, 8)", "(3,)",
                        "(0, 3)", "(2,)", "()"))
    text = npy[10:10 + struct.unpack("<H", npy[8:10])[0]].decode("latin1")
    text = re.sub(r"'shape': \([^)]*\)", f"'shape': {shape}", text)
    if rnd.random() < 0.3:
        text = text.replace("'<f4'", rnd.choice(("'|O'", "'<c8'", "'>f4'", "'<U3'", "'V8'", "'zz'")))
    if rnd.random() < 0.2:
        text = text.replace("False", "True")
    return npy[:8] + struct.pack("<H", len(text)) + text.encode("latin1") + npy[10 + len(text):]


def inputs_archive(rnd: random.Random) -> bytes:
    x = np.ones((2, 3), np.float32)
    b = np.ones((3,), np.float32)
    members = {"x.npy": _npy(x), "b.npy": _npy(b)}
    how = rnd.randrange(9)
    if how == 0:
        return _npy(x)                                   # a plain .npy named .npz
    if how == 1:
        members["notes.txt"] = b"hello"
    elif how == 2:
        members["x.npy"] = _header_claim(members["x.npy"], rnd)
    elif how == 3:
        members["x.npy"] = _npy(rnd.choice((x.astype(np.float64), x.astype(np.int64), x > 0,
                                            np.array([object()] * 3), np.ones((2, 3, 1), np.float32),
                                            np.ones((4, 5), np.float32))), fortran=rnd.random() < 0.5)
    elif how == 4:
        members["x.npy"] = _npy(np.zeros((4096, 4096), np.float32))    # small compressed, 64 MiB expanded
        return _zip(members, zipfile.ZIP_DEFLATED)
    elif how == 5:
        return mutate_bytes(_zip(members, zipfile.ZIP_DEFLATED), rnd, rounds=rnd.choice((1, 3)))
    elif how == 6:
        data = bytearray(_zip(members))
        for m in re.finditer(rb"PK\x03\x04|PK\x01\x02", bytes(data)):
            offset = m.start() + (8 if data[m.start() + 2] == 3 else 10)
            data[offset:offset + 2] = struct.pack("<H", rnd.choice((99, 12, 14, 1)))
        return bytes(data)
    elif how == 7:
        members = {rnd.choice(("y.npy", "x", "../x.npy", "x.npy.npy")): _npy(x), "b.npy": _npy(b)}
    else:
        return mutate_bytes(_zip(members), rnd)
    return _zip(members)


def inputs_case(rnd: random.Random) -> Case:
    args = ["run", "{dir}/model.onnx", "-o", "{dir}/out.npz", "--inputs", "{dir}/in.npz"]
    return Case("inputs", {"model.onnx": seeds.SYMBOLIC_MODEL, "in.npz": inputs_archive(rnd)}, args, "inputs")


KINDS = {"onnx": onnx_case, "tflite": tflite_case, "tosa": tosa_case, "tosair": tosair_case,
         "bindings": bindings_case, "inputs": inputs_case}
