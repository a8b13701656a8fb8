"""``torchish.library.opcheck``: PyTorch's tests of an operator's registrations, on one set of inputs.

- ``test_schema``: the op writes only the arguments its schema marks mutable and returns no input (or view of one).
- ``test_autograd_registration``: with inputs that require grad, the op's gradient comes from an autograd
  registration (``register_autograd``, an ``Autograd`` kernel or a CompositeImplicitAutograd kernel), not from torch
  code that happened to record a graph inside a backend kernel.
- ``test_faketensor``: the fake implementation exists and gives the real outputs' shapes and dtypes.
- ``test_aot_dispatch_dynamic``: the op inside ``torchish.compile`` gives eager's outputs and gradients.

Returns ``{test name: "SUCCESS" or the exception}``; with ``raise_exception`` the first failure raises
:class:`OpCheckError`, as in PyTorch.
"""
from __future__ import annotations

from jax.tree_util import tree_flatten, tree_unflatten

from . import registry
from .dispatch import flat_tensors, no_fake_error

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    pass


def _copy(args, kwargs):
    from .._tensor import Tensor
    leaves, spec = tree_flatten((args, kwargs))
    leaves = [v.detach().clone().requires_grad_(v.requires_grad) if isinstance(v, Tensor) else v for v in leaves]
    return tree_unflatten(spec, leaves)


def _names(e, args, kwargs):
    """(argument schema, value) pairs of a call."""
    values = e.schema.bind(args, kwargs)
    return list(zip(e.schema.arguments, values))


def _roots(t):
    while t._view is not None:
        t = t._view[0]
    return id(t)


def check_schema(e, args, kwargs):
    from .. import no_grad
    args, kwargs = _copy(args, kwargs)
    pairs = _names(e, args, kwargs)
    with no_grad():
        before = [(a, v, [t.clone() for t in flat_tensors([v])]) for a, v in pairs if not a.is_write]
    out = e_call(e, args, kwargs)
    for a, v, old in before:
        for t, o in zip(flat_tensors([v]), old):
            if t.shape != o.shape or not _same_values(t.detach(), o):
                raise RuntimeError(f"Argument {a.name} is not defined as mutable but was mutated")
    outs = {_roots(o) for o in flat_tensors(out if isinstance(out, (list, tuple)) else [out])}
    for a, v in pairs:
        if a.alias is None and any(_roots(t) in outs for t in flat_tensors([v])):
            raise RuntimeError(f"Argument {a.name} is not defined to alias output but was aliasing")


def _same_values(a, b):
    """Unchanged by the op: equal values, NaN where there was NaN."""
    if a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool((a == b).all())


def e_call(e, args, kwargs):
    from .dispatch import call
    return call(e, args, kwargs)


def check_autograd_registration(e, args, kwargs):
    args, kwargs = _copy(args, kwargs)
    inputs = flat_tensors(list(args) + list(kwargs.values()))
    if not any(t.requires_grad for t in inputs):
        return
    if e.custom is not None or e.backward is not None or any(
            k in e.kernels for k in ("Autograd", "AutogradCPU", "AutogradCUDA", "CompositeImplicitAutograd")):
        return
    out = e_call(e, args, kwargs)
    ids = {id(t) for t in inputs}
    if any(t.requires_grad and id(t) not in ids for t in flat_tensors(out if isinstance(out, (list, tuple))
                                                                      else [out])):
        raise AssertionError(
            f"{e.qualname}: at least one output of this operator has requires_grad=True but the operator does not "
            "have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean that "
            "you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
            "silently incorrect results. If your operator consists of regular PyTorch operations, consider not using "
            "an operator at all or registering your operator as CompositeImplicitAutograd. If you have an "
            "autograd.Function registered to a backend (CPU/CUDA/XPU) key, the correct location for it is the "
            "Autograd key.")


def _need_fake(e):
    from .fake import fake_impl
    if fake_impl(e) is None and "CompositeImplicitAutograd" not in e.kernels:
        raise no_fake_error(e)


def check_fake(e, args, kwargs):
    from .. import empty
    from .._tensor import Tensor
    from .. import no_grad
    from .dispatch import kernel_args, split_args
    from .fake import fake_context, fake_impl
    _need_fake(e)
    args, kwargs = _copy(args, kwargs)
    real = e_call(e, args, kwargs)
    leaves, spec = tree_flatten((args, kwargs))
    leaves = [empty(tuple(v.shape), dtype=v.dtype, device="meta") if isinstance(v, Tensor) else v for v in leaves]
    margs, mkwargs = tree_unflatten(spec, leaves)
    if "CompositeImplicitAutograd" in e.kernels:
        fake, dynamic = e_call(e, margs, mkwargs), False
    else:
        pos, kw = kernel_args(e, *split_args(e, e.schema.bind(margs, mkwargs)))
        with no_grad(), fake_context(e, "check") as ctx:
            fake = fake_impl(e)(*pos, **kw)
        dynamic = ctx.used_dynamic_size
    r, f = tree_flatten(real)[0], tree_flatten(fake)[0]
    if len(r) != len(f):
        raise RuntimeError(f"When comparing the output of {e.dotted} on FakeTensor and concrete Tensors, found "
                           f"{len(f)} fake outputs and {len(r)} real ones")
    for a, b in zip(r, f):
        if not isinstance(a, Tensor):
            continue
        # (a data-dependent size is a placeholder here: such outputs compare by rank)
        shapes_differ = a.dim() != b.dim() if dynamic else tuple(a.shape) != tuple(b.shape)
        if shapes_differ or a.dtype != b.dtype:
            what = (f"Shapes {a.shape} and {b.shape} are not equal!" if shapes_differ
                    else f"Dtypes {a.dtype} and {b.dtype} are not equal!")
            raise RuntimeError(f"When comparing the output of {e.dotted} on FakeTensor and concrete Tensors, found "
                               f"mismatched tensor metadata: {what}")


def check_compiled(e, args, kwargs, rtol=None, atol=None):
    import torchish
    from .._tensor import Tensor
    _need_fake(e)

    def run(*args, **kwargs):
        """The op's outputs and the gradients of their sum (the program differentiates inside itself)."""
        out = e_call(e, args, kwargs)
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, Tensor)]
        leaves = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor) and t.requires_grad]
        diff = [o for o in outs if o.requires_grad]
        grads = []
        if leaves and diff:
            grads = [g for g in torchish.autograd.grad(sum(o.sum() for o in diff), leaves, allow_unused=True)
                     if g is not None]
        return outs, grads

    eager = run(*_copy(args, kwargs)[0], **_copy(args, kwargs)[1])
    compiled = torchish.compile(run, fullgraph=False)  # (an op with data-dependent output shapes runs eagerly)
    for _ in range(2):  # (torchish.compile runs a new signature's first call eagerly, and traces the second)
        c_args, c_kwargs = _copy(args, kwargs)
        got = compiled(*c_args, **c_kwargs)
    for x, y in zip(tree_flatten(eager)[0], tree_flatten(got)[0]):
        if isinstance(x, Tensor):
            try:  # (NaN outputs compare unequal, as in PyTorch's check)
                torchish.testing.assert_close(y.detach(), x.detach(), rtol=rtol, atol=atol)
            except AssertionError as err:
                raise AssertionError(
                    "Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher tracing. This means "
                    "the operator will have incorrect output underneath torch.compile. This could be because the "
                    "operator's implementation not traceable.") from err


TESTS = {"test_schema": check_schema, "test_autograd_registration": check_autograd_registration,
         "test_faketensor": check_fake, "test_aot_dispatch_static": check_compiled,
         "test_aot_dispatch_dynamic": check_compiled}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True, rtol=None, atol=None):
    """Run PyTorch's operator registration tests on ``op(*args, **kwargs)``."""
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    kwargs = {} if kwargs is None else kwargs
    if isinstance(op, registry.OpOverloadPacket):
        overloads = registry.defined(op._qualified_op_name)
        if len(overloads) != 1:
            raise RuntimeError(f"opcheck can only test operators without overloads. Got the following overloads for "
                               f"{op._qualified_op_name}: {[x.overload for x in overloads]}")
        op = registry.overload(overloads[0])
    if hasattr(op, "_opoverload"):
        op = op._opoverload
    if not isinstance(op, registry.OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
                         f"torch.ops.aten.sin.default, got {type(op)}")
    if test_utils == "ALL":
        test_utils = tuple(TESTS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils).issubset(TESTS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{tuple(TESTS)} but it was not")
    results = {}
    for name in test_utils:
        try:
            if name.startswith("test_aot"):
                TESTS[name](op._entry, args, kwargs, rtol=rtol, atol=atol)
            else:
                TESTS[name](op._entry, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as ex:  # noqa: BLE001  (the failure is the test's result)
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up for stack trace)") from ex
            results[name] = ex
    return results
