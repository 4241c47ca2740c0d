"""The op table's completeness: every op has a shape rule, a kernel and an encoder.

Each row's ``kernel`` and ``decay`` pointers must name a function defined
where they say (the interpreter and the decay pass find them only through the
table; a decay rule's ``@decays`` mark must name the same op); its ``codec``
pointer must name a codec class defined where it says, the emitter's registry
(read off the table) must resolve the op to an instance of exactly that class,
and every codec class the emitter defines must be named by some row, so no
codec is left unused.

The one op table (``tosaconv.ir.ops.OPS``) drives everything else. Each op
must have a shape rule and an interpreter kernel; each op that reaches a
``.tosa`` (``op.tosa`` set) must have an encoder; helper and data-dependent
ops must have none (they never reach a file) and must decay when bound. Every
op of the official TOSA schema is either produced by us or listed in
``UNSUPPORTED_TOSA`` with a reason.
"""
from __future__ import annotations

import inspect

import pytest

from tosaconv.emit import codec_base, codecs, layout_codecs
from tosaconv.emit.codecs import CODECS, MULTI_RESULT_OPS
from tosaconv.emit.schema import OP_CODE
from tosaconv.interpreter.registry import kernel_for
from tosaconv.ir.dtypes import DType
from tosaconv.ir.error_if import operand_kinds
from tosaconv.ir.ops import OPS, UNSUPPORTED_TOSA, Op, OperandKind, Trait, parse_signature, resolve
from tosaconv.ir.types import IndexType, TensorType
from tosaconv.passes.decay import decays, rule_for
from tosaconv.symbolic.scope import ExtentKind


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_shape_rule_and_kernel(name):
    op = OPS[name]
    assert callable(op.shape_rule)
    assert kernel_for(op) is not None, f"{name} has no interpreter kernel"


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.tosa))
def test_every_emitted_op_has_an_encoder(name):
    # CONST carries no attribute table: the writer stores its values as the tensor's data.
    assert OPS[name].tosa in CODECS or name == "CONST", f"{name} has no flatbuffer encoder"
    assert OPS[name].tosa in OP_CODE


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.tosa is None))
def test_helper_ops_never_reach_a_file_and_decay(name):
    op = OPS[name]
    assert op.has(Trait.SHAPE_HELPER) or op.has(Trait.DATA_DEPENDENT)
    index_result = op.has(Trait.INDEX_ARITH) or name in ("INDEX_CONST", "GET_DIM")
    assert index_result or rule_for(op) is not None, f"{name} has no decay rule"


def test_every_official_op_is_produced_or_listed_unsupported():
    produced = {op.tosa for op in OPS.values() if op.tosa}
    shape_ops = {n for n in OP_CODE if n.endswith("_SHAPE") or n == "DIM"}
    block_scaled = {n for n in OP_CODE if "BLOCK_SCALED" in n or n.endswith("_ADAPTIVE")
                    or n in ("ROW_GATHER", "MATMUL_T", "UNKNOWN")}
    missing = set(OP_CODE) - produced - set(UNSUPPORTED_TOSA) - shape_ops - block_scaled
    assert not missing, f"official ops neither produced nor listed as unsupported: {sorted(missing)}"
    assert not produced & set(UNSUPPORTED_TOSA)


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_kernel_pointer_names_a_kernel_defined_there(name):
    op = OPS[name]
    module, _, function = op.kernel.partition(":")
    assert module.startswith("tosaconv.interpreter."), op.kernel
    fn = resolve(op.kernel)
    assert (fn.__module__, fn.__name__) == (module, function), f"{name}: {op.kernel} is an alias"
    assert list(inspect.signature(fn).parameters) == ["op", "args", "ctx"], f"{name}: not a kernel"
    assert kernel_for(op) is fn


def test_no_two_ops_share_a_kernel():
    kernels = [op.kernel for op in OPS.values()]
    assert len(kernels) == len(set(kernels))


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.decay))
def test_the_decay_pointer_names_a_rule_marked_for_that_op(name):
    op = OPS[name]
    module, _, function = op.decay.partition(":")
    assert module.startswith("tosaconv.passes."), op.decay
    fn = resolve(op.decay)
    assert (fn.__module__, fn.__name__) == (module, function), f"{name}: {op.decay} is an alias"
    # @decays(Op.X, needs=...) sets needs only when the table names this very function for X
    assert isinstance(getattr(fn, "needs", None), ExtentKind), f"{name}: {op.decay} is not marked @decays"
    assert list(inspect.signature(fn).parameters) == ["op", "operands", "b", "env"]
    assert rule_for(op) is fn


def test_a_rule_marked_for_an_op_the_table_does_not_point_to_it_fails():
    with pytest.raises(ValueError, match="the op table names tosaconv.passes.decay:decay_reshape"):
        @decays(Op.RESHAPE, needs=ExtentKind.EXACT)
        def decay_reshape_again(op, operands, b, env):
            return []
    with pytest.raises(ValueError, match="the op table names None"):
        @decays(Op.ADD, needs=ExtentKind.EXACT)
        def decay_add(op, operands, b, env):
            return []


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_codec_pointer_names_the_registered_codec(name):
    op = OPS[name]
    if op.codec is None:
        assert op.tosa not in CODECS, f"{name} has a codec the table does not point to"
        return
    assert op.tosa, f"{name} is never written to a .tosa, so it needs no codec"
    module, _, cls_name = op.codec.partition(":")
    assert module.startswith("tosaconv.emit."), op.codec
    cls = resolve(op.codec)
    assert isinstance(cls, type) and issubclass(cls, codec_base.Codec), f"{name}: {op.codec} is not a codec"
    assert (cls.__module__, cls.__name__) == (module, cls_name), f"{name}: {op.codec} is an alias"
    assert type(CODECS[op.tosa]) is cls, f"{name}: table says {op.codec}"


def test_every_codec_class_is_named_by_the_table():
    defined = {f"{m.__name__}:{n}" for m in (codec_base, codecs, layout_codecs)
               for n, c in vars(m).items()
               if isinstance(c, type) and issubclass(c, codec_base.Codec) and c.__module__ == m.__name__}
    named = {op.codec for op in OPS.values() if op.codec}
    assert defined == named


def test_ops_of_one_codec_class_share_one_codec():
    by_class: dict = {}
    for op in OPS.values():
        if op.codec:
            by_class.setdefault(op.codec, set()).add(id(CODECS[op.tosa]))
    assert all(len(ids) == 1 for ids in by_class.values())


def test_only_the_fft_ops_have_several_outputs():
    # TOSA 1.0 EXT-FFT: FFT2D gives output_real and output_imag, RFFT2D likewise
    assert MULTI_RESULT_OPS == {"FFT2D", "RFFT2D"}


def test_the_codec_registry_holds_only_ops_of_the_table():
    assert set(CODECS) == {op.tosa for op in OPS.values() if op.codec}


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items()
                                        if op.has(Trait.DATA_DEPENDENT) or op.has(Trait.SHAPE_HELPER)))
def test_helper_and_data_dependent_ops_decay_or_fold(name):
    # INDEX_CONST, GET_DIM and the INDEX_* arithmetic fold to INDEX_CONST once their dims are known
    op = OPS[name]
    folds = op.has(Trait.INDEX_ARITH) or name in ("INDEX_CONST", "GET_DIM")
    assert folds or op.decay is not None, f"{name} neither folds nor has a decay rule"
    assert folds != (op.decay is not None), f"{name} both folds and decays"


def test_index_arithmetic_takes_index_operands_only():
    for op in OPS.values():
        if op.has(Trait.INDEX_ARITH):
            assert all(o.kind is OperandKind.INDEX for o in op.operands), op.name


def test_only_stateful_ops_are_impure():
    impure = {n for n, op in OPS.items() if not op.has(Trait.PURE)}
    assert impure == {"VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE"}


def test_a_signature_declares_names_kinds_and_variadics():
    start, size = parse_signature("input: tensor, start: index*, size: index*")[1:]
    assert (start.name, start.kind, start.variadic) == ("start", OperandKind.INDEX, True)
    assert str(size) == "size*" and parse_signature("") == ()
    with pytest.raises(ValueError):
        parse_signature("input: shape")


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items()
                                        if any(o.kind is OperandKind.INDEX for o in op.operands)))
def test_the_error_if_kind_check_follows_the_declared_kinds(name):
    # every op with Index operands, DYN_PAD's padding included: a tensor in an Index place is refused by name
    op = OPS[name]
    position = next(i for i, o in enumerate(op.operands) if o.kind is OperandKind.INDEX)
    right = [IndexType(2) if o.kind is OperandKind.INDEX else TensorType(DType.INT8, (2,)) for o in op.operands]
    assert operand_kinds(name, right) is None
    wrong = right[:position] + [TensorType(DType.INT8, (2,))] + right[position + 1:]
    reason = operand_kinds(name, wrong)
    assert reason == f"operand {position} ({op.operands[position].name}) must be an Index value, " \
                     f"got {wrong[position]}"
