"""torchish.library against torch.library: custom_op with fake impls, autograd formulas, mutation and multiple
outputs, torch.ops access, Library/define/impl, opcheck, inside torchish.compile, and the errors for the usual
mistakes (type family always; PyTorch's message where it names no framework type).

The two libraries keep separate registries with the same operator names; every case takes fresh namespaces from
``_ns`` (a per-library counter), so re-running a case never defines a name twice, and both libraries see the same
names (messages that quote them compare equal). No ``from __future__ import annotations`` here: custom_op reads
the annotations, and string ones would have to name module-level types.
"""
import collections
import typing

import numpy as np
import pytest

import torchish
from oracle import assert_same, error_family, needs_torch, raised, script_test

try:
    import torch
except ImportError:
    torch = None

_COUNTS = collections.Counter()


def _ns(lib, tag):
    _COUNTS[lib.__name__, tag] += 1
    return f"ts_lib_{tag}_{_COUNTS[lib.__name__, tag]}"


def _x(lib, requires_grad=False):
    return lib.tensor([0.3, -1.2, 2.0], requires_grad=requires_grad)


def _numpy_sin(lib, ns, fake=True, autograd=True):
    """The tutorial's numpy-backed sin, with its fake impl and its autograd formula."""
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:
        return lib.from_numpy(np.sin(x.numpy()))

    if fake:
        @numpy_sin.register_fake
        def _(x):
            return lib.empty_like(x)

    if autograd:
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def case_numpy_sin_values_and_grad(lib):
    op = _numpy_sin(lib, _ns(lib, "sin"))
    x = _x(lib, True)
    y = op(x)
    (g,) = lib.autograd.grad(y, x, lib.tensor([1.0, 2.0, 3.0]))
    return y, g, type(y.grad_fn).__name__, y.requires_grad


def case_numpy_sin_through_torch_ops(lib):
    ns = _ns(lib, "sin")
    _numpy_sin(lib, ns)
    x = _x(lib, True)
    packet = getattr(lib.ops, ns).numpy_sin
    y = packet(x) + packet.default(x)
    y.sum().backward()
    return y, x.grad, str(packet), str(packet.default), packet.overloads(), packet.default.name()


def case_needs_input_grad_extra_nones_and_op_identity(lib):
    ns = _ns(lib, "ctx")
    seen = []

    @lib.library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: lib.Tensor, y: lib.Tensor, n: int) -> lib.Tensor:
        return x * y * n

    def backward(ctx, g):
        seen.append(ctx.needs_input_grad)
        return g * 2, g * 3, None, None  # (a trailing extra None is allowed)

    f.register_autograd(backward, setup_context=lambda ctx, inputs, output: None)
    x, y = _x(lib, True), _x(lib)
    f(x, y, 2).sum().backward()
    ops = getattr(lib.ops, ns)
    same = (ops.f is getattr(lib.ops, ns).f, ops.f.default is ops.f.default, f._opoverload is ops.f.default,
            ops.f.default.overloadpacket is ops.f)
    return x.grad, y.grad, seen, same


def case_backward_with_too_few_gradients_raises(lib):
    @lib.library.custom_op(f"{_ns(lib, 'ctx')}::g", mutates_args=())
    def g(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
        return x * y

    g.register_autograd(lambda ctx, grad: grad)
    g(_x(lib, True), _x(lib)).sum().backward()


def case_backward_without_formula_raises(lib):
    op = _numpy_sin(lib, _ns(lib, "nograd"), autograd=False)
    y = op(_x(lib, True))
    assert y.requires_grad
    y.sum().backward()


def case_no_grad_inputs_give_no_graph(lib):
    op = _numpy_sin(lib, _ns(lib, "sin"))
    y = op(_x(lib))
    with lib.no_grad():
        z = op(_x(lib, True))
    return y, y.requires_grad, z.requires_grad


def case_meta_tensors_use_the_fake_impl(lib):
    op = _numpy_sin(lib, _ns(lib, "sin"))
    y = op(lib.empty(4, 2, device="meta"))
    return tuple(y.shape), str(y.dtype), y.device.type


def case_meta_without_fake_impl_raises(lib):
    lib_ = lib.library.Library(_ns(lib, "nofake"), "FRAGMENT")
    lib_.define("f(Tensor x) -> Tensor")
    lib_.impl("f", lambda x: x * 2, "CPU")
    getattr(lib.ops, lib_.ns).f(lib.empty(3, device="meta"))


def case_mutating_op_updates_the_callers_tensor(lib):
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{_ns(lib, 'mut')}::add_into", mutates_args=("out",))
    def add_into(x: Tensor, out: Tensor) -> None:
        out.add_(x)
        out[0] = 7.0

    out = lib.zeros(3)
    v = out._version
    res = add_into(_x(lib), out)
    return res, out, out._version - v


def case_numpy_inplace_tutorial_example(lib, jit):
    """The tutorial's numpy_sin_inplace writes its argument through x.numpy() (memory PyTorch shares with x)."""
    @lib.library.custom_op(f"{_ns(lib, 'npinpl')}::numpy_sin_inplace", mutates_args={"x"}, device_types="cpu")
    def numpy_sin_inplace(x: lib.Tensor) -> None:
        x_np = x.numpy()
        np.sin(x_np, out=x_np)

    x = _x(lib)
    v = x._version
    numpy_sin_inplace(x)
    numpy_sin_inplace.register_fake(lambda x: None)
    acc = _x(lib)
    step = jit(lambda: numpy_sin_inplace(acc))
    for _ in range(3):
        step()
    schema = getattr(lib.ops, numpy_sin_inplace._namespace).numpy_sin_inplace.default._schema
    return x, x._version - v, acc, schema.arguments[0].alias_info.is_write


def case_vmap_runs_the_op_per_sample(lib):
    x = lib.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    op = _numpy_sin(lib, _ns(lib, "vmap"))

    @lib.library.custom_op(f"{_ns(lib, 'vmap')}::traceable", mutates_args=())
    def traceable(x: lib.Tensor) -> lib.Tensor:
        return x.sin() * 2

    return lib.vmap(op)(x), lib.vmap(traceable)(x)


def case_register_vmap_rule(lib):
    calls = []

    @lib.library.custom_op(f"{_ns(lib, 'vrule')}::nmul", mutates_args=())
    def nmul(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
        calls.append(tuple(x.shape))
        return lib.from_numpy(x.numpy() * y.numpy())

    nmul.register_fake(lambda x, y: lib.empty_like(x))
    x, y = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), lib.tensor([10.0, 20.0, 30.0])
    fallback = lib.vmap(nmul, in_dims=(0, None))(x, y)

    @nmul.register_vmap
    def _(info, in_dims, x, y):
        calls.append(("rule", info.batch_size, in_dims))
        x = x.movedim(in_dims[0], -1) if in_dims[0] is not None else x.unsqueeze(-1)
        y = y.movedim(in_dims[1], -1) if in_dims[1] is not None else y.unsqueeze(-1)
        return (x * y).movedim(-1, 0) * 1000, 0

    return fallback, lib.vmap(nmul, in_dims=(0, None))(x, y), nmul(x[0], y), calls


def case_register_autocast(lib):
    seen = []

    @lib.library.custom_op(f"{_ns(lib, 'amp')}::mm", mutates_args=())
    def mm(x: lib.Tensor, y: lib.Tensor, z: lib.Tensor) -> lib.Tensor:
        seen.append((str(x.dtype), str(y.dtype), str(z.dtype), lib.is_autocast_enabled("cpu")))
        return (x @ y).float() + z

    x, y, z = lib.ones(2, 2), lib.ones(2, 2), lib.ones(2, dtype=lib.float64)
    with lib.autocast("cpu", dtype=lib.bfloat16):
        a = mm(x, y, z)
    mm.register_autocast("cpu", lib.bfloat16)
    with lib.autocast("cpu", dtype=lib.bfloat16):
        b = mm(x, y, z)
        still_on = lib.is_autocast_enabled("cpu")
    return a, b, still_on, [tuple(s.split(".")[-1] if isinstance(s, str) else s for s in row) for row in seen]


def case_func_grad_of_a_custom_op_raises(lib):
    op = _numpy_sin(lib, _ns(lib, "fgrad"))
    return lib.func.grad(lambda v: op(v).sum())(_x(lib))


def case_func_grad_of_a_traceable_custom_op_raises(lib):
    @lib.library.custom_op(f"{_ns(lib, 'fgrad')}::traceable", mutates_args=())
    def traceable(x: lib.Tensor) -> lib.Tensor:
        return x.sin()

    return lib.func.grad(lambda v: traceable(v).sum())(_x(lib))


def case_numpy_write_into_views_and_grad_tensors(lib):
    @lib.library.custom_op(f"{_ns(lib, 'npview')}::fill", mutates_args=("out",))
    def fill(x: lib.Tensor, out: lib.Tensor) -> None:
        o = out.numpy()
        o[:] = x.numpy() * 2

    buf, buf2 = lib.zeros(5), lib.zeros(2, 3)
    fill(lib.ones(2), buf[1:3])
    fill(lib.ones(2), buf2[:, 1])
    w = lib.zeros(3, requires_grad=True)
    fill(lib.ones(3), w)
    y = lib.ones(3, requires_grad=True) * 1
    fill(lib.ones(3), y)
    return buf, buf._version, buf2, w, y, type(y.grad_fn).__name__


def case_pep604_and_string_annotations(lib):
    def f(x: lib.Tensor, y: lib.Tensor | None = None, n: list[int] | None = None, s: lib.types.Number = 1,
          d: lib.device | None = None) -> lib.Tensor:
        pass

    def g(x: lib.Tensor, ks: list["int"], w: "float" = 0.5) -> lib.Tensor:
        pass

    return lib.library.infer_schema(f, mutates_args=()), lib.library.infer_schema(g, mutates_args=())


def case_inplace_and_out_tags(lib, jit):
    """custom_op's docstring examples tagged torch.Tag.inplace and torch.Tag.out: the written arguments are the
    results, the fake impls come generated, and out= variants refuse autograd."""
    ns = _ns(lib, "tags")

    @lib.library.custom_op(f"{ns}::numpy_sin_", mutates_args={"x"}, device_types="cpu", tags=lib.Tag.inplace)
    def numpy_sin_(x: lib.Tensor) -> lib.Tensor:
        x_np = x.numpy()
        np.sin(x_np, out=x_np)
        return x

    @lib.library.custom_op(f"{ns}::numpy_sin_out", mutates_args={"out"}, device_types="cpu", tags=lib.Tag.out)
    def numpy_sin_out(x: lib.Tensor, *, out: lib.Tensor) -> lib.Tensor:
        out_np = out.numpy()
        np.sin(x.numpy(), out=out_np)
        return out

    x = _x(lib)
    v = x._version
    same = numpy_sin_(x) is x
    out = lib.empty(3)
    same_out = numpy_sin_out(_x(lib), out=out) is out
    meta = numpy_sin_(lib.empty(4, device="meta"))
    acc, buf = _x(lib), lib.zeros(3)
    step = jit(lambda: (numpy_sin_(acc), numpy_sin_out(acc, out=buf)))
    for _ in range(2):
        step()
    ops = getattr(lib.ops, ns)
    schemas = [str(ops.numpy_sin_.default._schema), str(ops.numpy_sin_out.default._schema)]
    tags = [t.name for t in ops.numpy_sin_.default.tags]
    checks = _results(lib.library.opcheck(numpy_sin_out, (_x(lib),), {"out": lib.empty(3)}))
    return x, x._version - v, same, out, same_out, tuple(meta.shape), acc, buf, schemas, tags, checks


def case_mutates_unknown_marks_every_tensor(lib):
    def f(x: lib.Tensor, y: typing.Optional[lib.Tensor], n: int) -> lib.Tensor:
        return x

    return lib.library.infer_schema(f, mutates_args="unknown")


def case_infer_schema_types_and_defaults(lib):
    def f(x: lib.Tensor, y: typing.Optional[lib.Tensor], z: list[lib.Tensor], a: int = 2, b: float = 1.5,
          c: bool = True, s: str = "hi", d: lib.dtype = lib.float64, e: typing.Optional[int] = None,
          w: typing.Sequence[float] = None, *, kw: float = 3.0) -> tuple[lib.Tensor, lib.Tensor]:
        pass

    return lib.library.infer_schema(f, mutates_args=(), op_name="k")


def case_multiple_outputs_kwarg_only_and_grads(lib):
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{_ns(lib, 'two')}::scale_shift", mutates_args=())
    def scale_shift(x: Tensor, n: int, *, shift: float = 0.5) -> tuple[Tensor, Tensor]:
        return x * n, x + shift

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.n = inputs[1]
        ctx.shift = keyword_only_inputs["shift"]

    def backward(ctx, ga, gb):
        return ga * ctx.n + gb, None

    scale_shift.register_autograd(backward, setup_context=setup_context)
    x = _x(lib, True)
    a, b = scale_shift(x, 3, shift=2.0)
    (a.sum() * 2 + b.sum()).backward()
    return a, b, x.grad, scale_shift(x, n=2)


def case_tensor_list_in_and_out(lib):
    Tensor = lib.Tensor

    @lib.library.custom_op(f"{_ns(lib, 'lst')}::weighted", mutates_args=())
    def weighted(xs: list[Tensor], w: list[float]) -> list[Tensor]:
        return [x * v for x, v in zip(xs, w)]

    def setup_context(ctx, inputs, output):
        ctx.w = inputs[1]

    def backward(ctx, grads):
        return [g * v for g, v in zip(grads, ctx.w)], None

    weighted.register_autograd(backward, setup_context=setup_context)
    p, q = _x(lib, True), lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    outs = weighted([p, q], [2.0, -3.0])
    (outs[0].sum() + (outs[1] * outs[1]).sum()).backward()
    return outs, p.grad, q.grad


def case_returning_an_input_raises(lib):
    @lib.library.custom_op(f"{_ns(lib, 'alias')}::ident", mutates_args=())
    def ident(x: lib.Tensor) -> lib.Tensor:
        return x

    ident(_x(lib))


def case_redefining_a_custom_op_replaces_it(lib):
    ns = _ns(lib, "redef")

    @lib.library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: lib.Tensor) -> lib.Tensor:
        return x + 1

    @lib.library.custom_op(f"{ns}::f", mutates_args=())
    def f2(x: lib.Tensor) -> lib.Tensor:
        return x * 10

    # (only through torch.ops: calling the replaced CustomOpDef reads freed dispatcher state in PyTorch, which
    # then raises MemoryError now and then)
    return getattr(lib.ops, ns).f(_x(lib)), f2(_x(lib))


def case_register_kernel_and_set_kernel_enabled(lib):
    @lib.library.custom_op(f"{_ns(lib, 'kern')}::f", mutates_args=())
    def f(x: lib.Tensor) -> lib.Tensor:
        return x + 1

    @f.register_kernel("cpu")
    def _(x):
        return x * 5

    a = f(_x(lib))
    with f.set_kernel_enabled("cpu", enabled=False):
        b = f(_x(lib))
    return a, b, f(_x(lib))


def case_library_define_impl_and_overloads(lib):
    m = lib.library.Library(_ns(lib, "libdef"), "DEF")
    name = m.define("scale(Tensor x, float a=2.0) -> Tensor")
    m.define("scale.twice(Tensor x, Tensor y) -> Tensor")
    m.impl("scale", lambda x, a=2.0: x * a, "CPU")
    m.impl("scale.twice", lambda x, y: x * y * 2, "CompositeExplicitAutograd")
    ops = getattr(lib.ops, m.ns)
    return (name, ops.scale(_x(lib)), ops.scale(_x(lib), a=3.0), ops.scale.default(_x(lib), 4.0),
            ops.scale.twice(_x(lib), _x(lib)), sorted(ops.scale.overloads()))


def case_library_op_autograd_goes_through_its_kernel(lib):
    m = lib.library.Library(_ns(lib, "libgrad"), "FRAGMENT")
    m.define("cea(Tensor x) -> Tensor")
    m.impl("cea", lambda x: x.sin() * x, "CompositeImplicitAutograd")
    x = _x(lib, True)
    y = getattr(lib.ops, m.ns).cea(x)
    y.sum().backward()
    return y, x.grad


def case_define_impl_functions_and_register_autograd(lib):
    ns = _ns(lib, "deffn")
    lib.library.define(f"{ns}::plus", "(Tensor x, int k) -> Tensor")

    @lib.library.impl(f"{ns}::plus", "default")
    def _(x, k):
        return x + k

    lib.library.register_fake(f"{ns}::plus", lambda x, k: lib.empty_like(x))
    lib.library.register_autograd(f"{ns}::plus", lambda ctx, g: (g * 10, None))
    x = _x(lib, True)
    y = getattr(lib.ops, ns).plus(x, 2)
    y.sum().backward()
    meta = getattr(lib.ops, ns).plus(lib.empty(5, device="meta"), 1)
    return y, x.grad, tuple(meta.shape)


def case_custom_op_with_explicit_schema_and_dispatch_key_impl(lib):
    ns = _ns(lib, "schema")

    @lib.library.custom_op(f"{ns}::axpy", mutates_args=(), schema="(Tensor x, Tensor y, float a) -> Tensor")
    def axpy(x, y, a):
        return x * a + y

    lib.library.define(f"{ns}::twice", "(Tensor x) -> Tensor")
    lib.library.impl(f"{ns}::twice", "CompositeImplicitAutograd", lambda x: x * x * 2)
    x = _x(lib, True)
    y = getattr(lib.ops, ns).twice(x)
    y.sum().backward()
    return axpy(_x(lib), _x(lib), 0.5), str(axpy._opoverload._schema), y, x.grad


def case_cpp_extension_tutorial_python_half(lib, jit):
    """The 'Custom C++ and CUDA Operators' tutorial's Python registrations for mymuladd and myadd_out (their
    kernels, C++ there, registered from Python here)."""
    ns = _ns(lib, "extension_cpp")
    lib.library.define(f"{ns}::mymuladd", "(Tensor a, Tensor b, float c) -> Tensor")
    lib.library.define(f"{ns}::myadd_out", "(Tensor a, Tensor b, Tensor(a!) out) -> ()")
    lib.library.impl(f"{ns}::mymuladd", "cpu", lambda a, b, c: a * b + c)

    def myadd_out(a, b, out):
        out.copy_(a + b)

    lib.library.impl(f"{ns}::myadd_out", "cpu", myadd_out)

    @lib.library.register_fake(f"{ns}::mymuladd")
    def _(a, b, c):
        lib._check(a.shape == b.shape)
        lib._check(a.dtype == lib.float)
        return lib.empty_like(a)

    def _backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a, grad_b = None, None
        if ctx.needs_input_grad[0]:
            grad_a = grad * b
        if ctx.needs_input_grad[1]:
            grad_b = grad * a
        return grad_a, grad_b, None

    def _setup_context(ctx, inputs, output):
        a, b, c = inputs
        saved_a, saved_b = None, None
        if ctx.needs_input_grad[0]:
            saved_b = b
        if ctx.needs_input_grad[1]:
            saved_a = a
        ctx.save_for_backward(saved_a, saved_b)

    lib.library.register_autograd(f"{ns}::mymuladd", _backward, setup_context=_setup_context)
    ops = getattr(lib.ops, ns)
    a, b = _x(lib, True), lib.tensor([1.0, 2.0, 3.0])
    y = ops.mymuladd(a, b, 0.5)
    y.sum().backward()
    out = lib.zeros(3)
    ops.myadd_out(a.detach(), b, out)
    step = jit(lambda a, b: ops.mymuladd(a, b, 2.0) * 2)
    compiled = [step(_x(lib), b) for _ in range(2)][-1]
    return y, a.grad, out, compiled, _results(lib.library.opcheck(ops.mymuladd, (_x(lib, True), b, 1.5)))


def case_argument_conversion_and_dropped_defaults(lib):
    """What kernels receive: ints, floats and bools converted as PyTorch's dispatcher converts them (NumPy and
    0-dim tensor values, ints for floats and bools, ScalarType codes), and trailing arguments equal to their
    defaults left out."""
    seen = []

    def kernel(*args, **kwargs):
        seen.append(([(type(v).__name__, v if not isinstance(v, lib.Tensor) else "T") for v in args],
                     sorted(kwargs.items())))
        return args[0].clone()

    m = lib.library.Library(_ns(lib, "conv"), "FRAGMENT")
    m.define("f(Tensor x, int n, float a, bool b, int[] dims, Scalar s, ScalarType? dt=None, int[2] k=1, "
             "float w=2, *, float eps=0.5) -> Tensor")
    m.impl("f", kernel, "CPU")
    f = getattr(lib.ops, m.ns).f
    x = lib.ones(2)
    f(x, np.int64(2), 2, 1, (0, 1), 1.5, 3)
    f(x, lib.tensor(2), lib.tensor(1.5), True, [0], 2, lib.float64, [3, 4], 2.0, eps=0.5)
    f(x, 2, 1.5, False, [], 1, None, [1, 1], 3, eps=0.25)
    return seen


def case_autograd_function_registered_to_the_autograd_key(lib):
    """The older pattern: an autograd.Function as the op's Autograd kernel, its forward calling the op again below
    autograd (PyTorch: torch._C._AutoDispatchBelowAutograd; grad mode is off in a Function's forward)."""
    m = lib.library.Library(_ns(lib, "akey"), "FRAGMENT")
    m.define("sq(Tensor x) -> Tensor")
    m.impl("sq", lambda x: x * x, "CPU")
    op = getattr(lib.ops, m.ns).sq

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            if lib is torch:
                with torch._C._AutoDispatchBelowAutograd():
                    return op(x)
            return op(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    m.impl("sq", Square.apply, "Autograd")
    x = _x(lib, True)
    y = op(x)
    y.sum().backward()
    return y, x.grad, type(y.grad_fn).__name__


def case_schema_objects(lib):
    m = lib.library.Library(_ns(lib, "schema"), "FRAGMENT")
    m.define("f.ov(Tensor(a!) x, Tensor? y, Tensor[] z, SymInt n, int[2] k=1, float a=2, bool b=True, "
             "str m=\"x\", Scalar s=1, ScalarType? dt=None, Device? d=None, *, float eps=1e-5) -> (Tensor, Tensor b)")
    schema = getattr(getattr(lib.ops, m.ns).f, "ov")._schema
    args = [(a.name, str(a.type), a.kwarg_only, a.default_value, bool(a.alias_info and a.alias_info.is_write), a.N)
            for a in schema.arguments]
    return schema.name, schema.overload_name, schema.is_mutable, args, [(r.name, str(r.type)) for r in schema.returns]


def case_library_mutation_schema(lib):
    m = lib.library.Library(_ns(lib, "libmut"), "FRAGMENT")
    m.define("acc(Tensor(a!) x, Tensor y) -> ()")
    def acc(x, y):
        x.add_(y)

    m.impl("acc", acc, "CPU")
    a = lib.zeros(3)
    v = a._version
    r = getattr(lib.ops, m.ns).acc(a, _x(lib))
    return r, a, a._version - v


def _results(d):
    """opcheck's results with each failure as its builtin exception family."""
    return {k: v if v == "SUCCESS" else error_family(v).__name__ for k, v in d.items()}


def case_opcheck_results(lib):
    good = _numpy_sin(lib, _ns(lib, "opc"))
    no_fake = _numpy_sin(lib, _ns(lib, "opc"), fake=False)
    no_grad = _numpy_sin(lib, _ns(lib, "opc"), autograd=False)
    x = _x(lib, True)
    return (_results(lib.library.opcheck(good, (x,))),
            _results(lib.library.opcheck(no_fake, (x,), raise_exception=False)),
            _results(lib.library.opcheck(no_grad, (x,), raise_exception=False)),
            _results(lib.library.opcheck(no_grad, (x.detach(),), test_utils="test_faketensor")))


def case_data_dependent_output_shape(lib, jit):
    """PyTorch's nonzero example: the fake impl asks get_ctx() for a dynamic size (torchish.compile runs it
    eagerly: one XLA program has static shapes)."""
    @lib.library.custom_op(f"{_ns(lib, 'dyn')}::nonzero", mutates_args=())
    def nonzero(x: lib.Tensor) -> lib.Tensor:
        return lib.tensor(np.stack(np.nonzero(x.numpy()), axis=1))

    @nonzero.register_fake
    def _(x):
        nnz = lib.library.get_ctx().new_dynamic_size()
        return x.new_empty([nnz, x.dim()], dtype=lib.int64)

    x = lib.tensor([0, 1, 2, 0, 0, 1])
    g = jit(lambda x: nonzero(x) + 1)
    return (nonzero(x), [g(x) for _ in range(3)][-1], _results(lib.library.opcheck(nonzero, (x,))),
            lib.library.get_ctx())


def case_data_dependent_output_shape_on_meta_raises(lib):
    @lib.library.custom_op(f"{_ns(lib, 'dynmeta')}::nonzero", mutates_args=())
    def nonzero(x: lib.Tensor) -> lib.Tensor:
        return lib.tensor(np.stack(np.nonzero(x.numpy()), axis=1))

    nonzero.register_fake(lambda x: x.new_empty([lib.library.get_ctx().new_dynamic_size(), 1], dtype=lib.int64))
    nonzero(lib.empty(6, device="meta"))


def case_opcheck_with_nan_values(lib):
    @lib.library.custom_op(f"{_ns(lib, 'opcnan')}::f", mutates_args=())
    def f(x: lib.Tensor) -> lib.Tensor:
        return x.clone()

    f.register_fake(lambda x: lib.empty_like(x))
    r = lib.library.opcheck(f, (lib.tensor([float("nan"), 1.0]),), raise_exception=False)
    return _results(r), str(r["test_aot_dispatch_dynamic"])


def case_opcheck_wrong_fake_shape_raises(lib):
    op = _numpy_sin(lib, _ns(lib, "opc"), fake=False)
    op.register_fake(lambda x: lib.empty(7))
    lib.library.opcheck(op, (_x(lib),))


def case_opcheck_library_op_without_autograd_kernel(lib):
    m = lib.library.Library(_ns(lib, "opclib"), "FRAGMENT")
    m.define("f(Tensor x) -> Tensor")
    m.impl("f", lambda x: x * 2, "CPU")
    return _results(lib.library.opcheck(getattr(lib.ops, m.ns).f, (_x(lib, True),), raise_exception=False))


def case_compiled_step_with_numpy_op_mutation_and_grad(lib, jit):
    op = _numpy_sin(lib, _ns(lib, "cmp"))

    @lib.library.custom_op(f"{_ns(lib, 'cmpmut')}::add_into", mutates_args=("out",))
    def add_into(x: lib.Tensor, out: lib.Tensor) -> None:
        out.copy_(lib.from_numpy(out.numpy() + x.numpy()))

    add_into.register_fake(lambda x, out: None)
    w = lib.nn.Parameter(lib.tensor([0.5, 1.0, 1.5]))
    opt = lib.optim.SGD([w], lr=0.1)
    acc = lib.zeros(3)

    def step(x):
        opt.zero_grad()
        y = op(w * x)
        loss = (y * y).sum()
        loss.backward()
        opt.step()
        add_into(y.detach(), acc)
        return loss

    step = jit(step)
    losses = [step(lib.tensor([1.0, 2.0, 3.0])) for _ in range(3)]
    return losses, w.detach(), acc


def case_compiled_list_output_with_kwarg_only_and_grad(lib, jit):
    @lib.library.custom_op(f"{_ns(lib, 'cmplst')}::split2", mutates_args=())
    def split2(x: lib.Tensor, *, scale: float = 1.0) -> list[lib.Tensor]:
        a = x.numpy()
        return [lib.from_numpy(a[: len(a) // 2] * scale), lib.from_numpy(a[len(a) // 2:] * scale)]

    split2.register_fake(lambda x, *, scale=1.0: [x.new_empty(x.shape[0] // 2),
                                                  x.new_empty(x.shape[0] - x.shape[0] // 2)])

    def setup_context(ctx, inputs, keyword_only_inputs, output):
        ctx.scale = keyword_only_inputs["scale"]

    split2.register_autograd(lambda ctx, grads: lib.cat(grads) * ctx.scale, setup_context=setup_context)
    w = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)

    def f(w):
        a, b = split2(w * 1, scale=3.0)
        loss = a.sum() * 2 + (b * b).sum()
        (g,) = lib.autograd.grad(loss, w)
        return loss.detach(), g

    f = jit(f)
    return [f(w) for _ in range(3)][-1]


def case_compiled_traceable_op_without_fake(lib, jit):
    @lib.library.custom_op(f"{_ns(lib, 'cmptr')}::f", mutates_args=())
    def f(x: lib.Tensor) -> lib.Tensor:
        return x.sin() * 2

    g = jit(lambda x: f(x) + 1)
    return g(_x(lib)), g(_x(lib) * 2)


def case_opcheck_mutation_declared_and_undeclared(lib):
    @lib.library.custom_op(f"{_ns(lib, 'opcmut')}::good", mutates_args=("out",))
    def good(x: lib.Tensor, out: lib.Tensor) -> None:
        out.copy_(x * 2)

    good.register_fake(lambda x, out: None)

    @lib.library.custom_op(f"{_ns(lib, 'opcmut')}::bad", mutates_args=())
    def bad(x: lib.Tensor, out: lib.Tensor) -> lib.Tensor:
        out.copy_(x * 2)
        return x + 1

    bad.register_fake(lambda x, out: lib.empty_like(x))
    args = (_x(lib), lib.zeros(3))
    return (_results(lib.library.opcheck(good, args)),
            _results(lib.library.opcheck(bad, args, raise_exception=False)), args[1])


def case_optional_and_default_arguments(lib):
    @lib.library.custom_op(f"{_ns(lib, 'optarg')}::f", mutates_args=())
    def f(x: lib.Tensor, y: typing.Optional[lib.Tensor] = None, n: int = 2) -> lib.Tensor:
        return x * n if y is None else x * y * n

    return f(_x(lib)), f(_x(lib), _x(lib)), f(_x(lib), None, 5), str(f._opoverload._schema)


test_script_matches_torch = script_test(globals())


@needs_torch
@pytest.mark.parametrize("name", sorted(n[5:] for n in dir() if n.startswith("case_") and not n.endswith("_raises")))
def test_cases_run_without_error_in_torch(name):
    """A case that both libraries fail in the same way would pass test_script_matches_torch: the ones not named
    ``*_raises`` must run in PyTorch."""
    fn = globals()["case_" + name]
    before = {k: v for k, v in _COUNTS.items() if k[0] == "torch"}
    fn(torch, lambda f: f) if fn.__code__.co_argcount == 2 else fn(torch)
    for (name_, tag), n in list(_COUNTS.items()):  # (torchish's names stay in step with torch's for later tests)
        if name_ == "torch":
            _COUNTS["torchish", tag] += n - before.get(("torch", tag), 0)


def _define_twice(lib):
    m = lib.library.Library(_ns(lib, "twice"), "FRAGMENT")
    m.define("f(Tensor x) -> Tensor")
    m.define("f(Tensor x) -> Tensor")


def _custom_op_over_library_op(lib):
    m = lib.library.Library(_ns(lib, "twice"), "FRAGMENT")
    m.define("g(Tensor x) -> Tensor")
    lib.library.custom_op(f"{m.ns}::g", mutates_args=())(lambda x: x)


def _second_def_library(lib):
    ns = _ns(lib, "twodef")
    first = lib.library.Library(ns, "DEF")  # noqa: F841  (kept alive: its namespace stays taken)
    lib.library.Library(ns, "DEF")


def _define_after_destroy(lib):
    m = lib.library.Library(_ns(lib, "gone"), "FRAGMENT")
    m._destroy()
    m.define("f(Tensor x) -> Tensor")


def _op_of_a_destroyed_library(lib):
    m = lib.library.Library(_ns(lib, "gone"), "FRAGMENT")
    m.define("f(Tensor x) -> Tensor")
    m.impl("f", lambda x: x + 1, "CPU")
    ns = getattr(lib.ops, m.ns)
    assert ns.f(lib.ones(1)).item() == 2
    m._destroy()
    ns.f


def _call(lib, schema, arg):
    m, op = _bad_calls(lib, schema)  # (the library must outlive the call: PyTorch crashes otherwise)
    try:
        return op(lib.ones(1), arg)
    finally:
        del m


def _out_op(lib):
    @lib.library.custom_op(f"{_ns(lib, 'outop')}::f", mutates_args={"out"}, tags=lib.Tag.out)
    def f(x: lib.Tensor, *, out: lib.Tensor) -> lib.Tensor:
        out.copy_(x)
        return out
    return f


def _inplace_returning_a_copy(lib):
    @lib.library.custom_op(f"{_ns(lib, 'inpl')}::bad_", mutates_args={"x"}, tags=lib.Tag.inplace)
    def bad_(x: lib.Tensor) -> lib.Tensor:
        return x.clone()
    bad_(lib.ones(2))


def _two_tensors(lib):
    def f(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
        return x
    return f


def _annotated(lib, ann, ret=None):
    def f(x):
        return x
    f.__annotations__ = {"x": ann, "return": lib.Tensor if ret is None else ret}
    return f


MISTAKES = {
    "no_mutates_args": lambda lib: lib.library.custom_op("ts_lib_m::f")(lambda x: x),
    "no_namespace": lambda lib: lib.library.custom_op("ts_lib_m_f", mutates_args=())(_annotated(lib, lib.Tensor)),
    "two_namespaces": lambda lib: lib.library.custom_op("a::b::c", mutates_args=())(_annotated(lib, lib.Tensor)),
    "unannotated": lambda lib: lib.library.custom_op(f"{_ns(lib, 'm')}::f", mutates_args=())(lambda x: x),
    "tuple_input": lambda lib: lib.library.infer_schema(_annotated(lib, tuple[int]), mutates_args=()),
    "undefined_string_annotation": lambda lib: lib.library.infer_schema(_annotated(lib, "Undefined"), mutates_args=()),
    "dict_input": lambda lib: lib.library.infer_schema(_annotated(lib, dict), mutates_args=()),
    "no_return": lambda lib: lib.library.infer_schema(_annotated(lib, lib.Tensor, inspect_empty()), mutates_args=()),
    "mutates_a_number": lambda lib: lib.library.infer_schema(_annotated(lib, int), mutates_args=("x",)),
    "mutates_unknown_name": lambda lib: lib.library.infer_schema(_annotated(lib, lib.Tensor), mutates_args=("y",)),
    "mutates_args_string": lambda lib: lib.library.infer_schema(_annotated(lib, lib.Tensor), mutates_args="all"),
    "define_twice": _define_twice,
    "custom_op_over_library_op": _custom_op_over_library_op,
    "second_def_library": _second_def_library,
    "bad_library_kind": lambda lib: lib.library.Library("ts_lib_kind", "BAD"),
    "bad_alias_analysis": lambda lib: lib.library.Library(_ns(lib, "m"), "FRAGMENT").define("f(Tensor x) -> Tensor",
                                                                                             alias_analysis="X"),
    "backward_without_formula": case_backward_without_formula_raises,
    "returning_an_input": case_returning_an_input_raises,
    "register_autograd_unknown_op": lambda lib: lib.library.register_autograd(f"{_ns(lib, 'm')}::nothere",
                                                                              lambda ctx, g: g),
    "define_without_namespace": lambda lib: lib.library.define("ts_lib_nons", "(Tensor x) -> Tensor"),
    "opcheck_of_a_function": lambda lib: lib.library.opcheck(lambda x: x, (lib.ones(1),)),
    "opcheck_unknown_test": lambda lib: lib.library.opcheck(_numpy_sin(lib, _ns(lib, "m")), (lib.ones(1),),
                                                            test_utils=("nope",)),
    "opcheck_rtol_only": lambda lib: lib.library.opcheck(_numpy_sin(lib, _ns(lib, "m")), (lib.ones(1),), rtol=1e-3),
    "kwarg_only_tensor": lambda lib: lib.library.custom_op(f"{_ns(lib, 'm')}::f", mutates_args=())(_kwarg_tensor(lib)),
    "func_grad": case_func_grad_of_a_traceable_custom_op_raises,
    "schema_disagrees_with_mutates_args": lambda lib: lib.library.custom_op(
        f"{_ns(lib, 'm')}::f", mutates_args=(), schema="(Tensor(a!) x) -> ()")(lambda x: None),
    "too_few_gradients": case_backward_with_too_few_gradients_raises,
    "autocast_device_not_a_string": lambda lib: _numpy_sin(lib, _ns(lib, "m")).register_autocast(1, lib.float16),
    "autocast_device_without_autocast": lambda lib: _numpy_sin(lib, _ns(lib, "m")).register_autocast("meta",
                                                                                                      lib.float16),
    "data_dependent_shape_on_meta": case_data_dependent_output_shape_on_meta_raises,
    "define_in_impl_library": lambda lib: lib.library.Library(_ns(lib, "m"), "IMPL").define("f(Tensor x) -> Tensor"),
    "define_after_destroy": _define_after_destroy,
    "op_of_a_destroyed_library": _op_of_a_destroyed_library,
    "int_list_given_an_int": lambda lib: _call(lib, "g(Tensor x, int[] dims) -> Tensor", 0),
    "str_given_an_int": lambda lib: _call(lib, "g(Tensor x, str mode='a') -> Tensor", 3),
    "scalar_given_a_tensor": lambda lib: _call(lib, "g(Tensor x, Scalar s) -> Tensor", lib.tensor(2.0)),
    "out_variant_with_grad": lambda lib: _out_op(lib)(lib.ones(2, requires_grad=True), out=lib.empty(2)),
    "out_variant_autograd": lambda lib: _out_op(lib).register_autograd(lambda ctx, g: g),
    "inplace_returning_a_copy": _inplace_returning_a_copy,
    "inplace_mutating_another_arg": lambda lib: lib.library.custom_op(f"{_ns(lib, 'm')}::f", mutates_args={"y"},
                                                                     tags=lib.Tag.inplace)(_two_tensors(lib)),
    "inplace_and_out": lambda lib: lib.library.custom_op(f"{_ns(lib, 'm')}::f", mutates_args={"x"},
                                                        tags=(lib.Tag.inplace, lib.Tag.out))(_two_tensors(lib)),
    "autograd_for_mutating_op": lambda lib: lib.library.custom_op(
        f"{_ns(lib, 'm')}::f", mutates_args=("x",))(_annotated(lib, lib.Tensor, type(None))).register_autograd(
        lambda ctx, g: g),
}


def _kwarg_tensor(lib):
    def f(x: lib.Tensor, *, y: lib.Tensor) -> lib.Tensor:
        return x + y
    return f


def inspect_empty():
    import inspect
    return inspect.Parameter.empty


def _bad_calls(lib, schema="foo(Tensor x, float a=2.0) -> Tensor"):
    m = lib.library.Library(_ns(lib, "calls"), "FRAGMENT")
    m.define(schema)
    name = schema.split("(")[0]
    m.impl(name, lambda x, *args: x * 2, "CPU")
    return m, getattr(getattr(lib.ops, m.ns), name)


# messages that quote framework types (torch.Tensor, the schema's float printing) differ in those words only
SAME_MESSAGE = {"no_mutates_args", "no_namespace", "two_namespaces", "mutates_args_string", "bad_library_kind",
                "bad_alias_analysis", "backward_without_formula", "second_def_library", "define_without_namespace",
                "register_autograd_unknown_op", "opcheck_of_a_function", "opcheck_unknown_test", "opcheck_rtol_only",
                "kwarg_only_tensor", "func_grad", "too_few_gradients", "autocast_device_not_a_string",
                "autocast_device_without_autocast", "data_dependent_shape_on_meta", "define_in_impl_library",
                "define_after_destroy", "op_of_a_destroyed_library", "out_variant_with_grad", "out_variant_autograd",
                "inplace_and_out"}


def _exception(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return e
    return None


@needs_torch
@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_mistakes_raise_pytorchs_errors(name):
    ref, got = _exception(lambda: MISTAKES[name](torch)), _exception(lambda: MISTAKES[name](torchish))
    assert ref is not None and got is not None, (ref, got)
    assert isinstance(got, error_family(ref)), (got, ref)
    if name in SAME_MESSAGE:  # (some of PyTorch's C++ messages go on with the source locations of the call)
        located = name in ("second_def_library", "define_in_impl_library")
        assert str(got) == str(ref) or located and str(ref).startswith(str(got)[:-1]), (got, ref)


@needs_torch
@pytest.mark.parametrize("call", ["too_many", "unknown_kw", "wrong_type", "missing"])
def test_bad_calls_raise_runtime_error(call):
    for lib in (torch, torchish):
        _, foo = _bad_calls(lib)
        x = lib.ones(2)
        fn = {"too_many": lambda: foo(x, 3.0, 4.0), "unknown_kw": lambda: foo(x, b=3.0),
              "wrong_type": lambda: foo(1.0), "missing": lambda: foo()}[call]
        err = raised(fn)
        assert err is not None and err[0] == "RuntimeError", (lib.__name__, err)


@needs_torch
def test_compiled_op_stays_in_the_program():
    """The numpy-backed op runs through a host callback inside one compiled program: no eager fallback."""
    op = _numpy_sin(torchish, _ns(torchish, "prog"))
    f = torchish.compile(lambda x: op(x * 2) * 3, fullgraph=True)
    for _ in range(3):
        got = f(_x(torchish))
    ref = torch.sin(_x(torch) * 2) * 3
    assert_same(ref, got)
    assert f.stats["eager_calls"] <= 1


@needs_torch
def test_compiled_numpy_op_without_fake_impl_raises_pytorchs_error():
    """torch.compile of an op whose kernel reads values needs its fake impl; torchish.compile (whose first call runs
    eagerly) raises PyTorch's error when it traces the op, the one opcheck's test_faketensor reports in PyTorch."""
    ns = _ns(torch, "cmpnf")
    _ns(torchish, "cmpnf")
    ref = torch.library.opcheck(_numpy_sin(torch, ns, fake=False), (_x(torch),), raise_exception=False)
    g = torchish.compile(lambda x: op(x) * 2)
    op = _numpy_sin(torchish, ns, fake=False)
    with pytest.raises(RuntimeError) as got:
        for _ in range(3):
            g(_x(torchish))
    assert str(got.value) == str(ref["test_faketensor"])


@needs_torch
def test_backward_through_an_op_without_autograd_kernel_warns():
    """PyTorch's autograd fallback: the graph the kernel recorded gives the gradient, with its UserWarning."""
    import warnings
    seen = {}
    for lib in (torch, torchish):
        m = lib.library.Library(_ns(lib, "fallback"), "FRAGMENT")
        m.define("f(Tensor x) -> Tensor")
        m.impl("f", lambda x: x * x, "CPU")
        x = _x(lib, True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = getattr(lib.ops, m.ns).f(x)
            n_forward = len(w)
            y.sum().backward()
        # (PyTorch's C++ warnings end with " (Triggered internally at <file>:<line>.)")
        texts = [str(i.message).split(" (Triggered internally")[0] for i in w if i.category is UserWarning]
        seen[lib.__name__] = (n_forward, texts, x.grad)
    assert seen["torchish"][:2] == seen["torch"][:2]
    assert_same(seen["torch"][2], seen["torchish"][2])


CHECKS = {
    "false": lambda lib: lib._check(False),
    "message": lambda lib: lib._check(1 > 2, lambda: "one is not above two"),
    "value": lambda lib: lib._check_value(False, lambda: "bad value"),
    "index": lambda lib: lib._check_index(False),
    "type": lambda lib: lib._check_type(False),
    "not_implemented": lambda lib: lib._check_not_implemented(False),
    "tensor_cond": lambda lib: lib._check(lib.tensor(True)),
    "int_cond": lambda lib: lib._check(1),
    "message_not_callable": lambda lib: lib._check(False, "text"),
    "tensor_all": lambda lib: lib._check_tensor_all(lib.tensor([True, False])),
    "tensor_all_not_bool": lambda lib: lib._check_tensor_all(lib.tensor([1, 0])),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_check_functions_raise_pytorchs_errors(name):
    """torch._check and its siblings, which the tutorials' fake impls use."""
    ref, got = _exception(lambda: CHECKS[name](torch)), _exception(lambda: CHECKS[name](torchish))
    assert type(got) is type(ref) and str(got) == str(ref), (got, ref)
    assert torchish._check(True) is None and torchish._check_tensor_all(torchish.tensor([True, True])) is None
