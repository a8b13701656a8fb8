"""``torchish.func.functional_call`` (a module called with other parameters and buffers) and
``stack_module_state`` (the stacked state of an ensemble, for ``vmap`` over ``functional_call``).

``functional_call`` swaps the given Tensors into the modules' ``_parameters``/``_buffers`` (or attributes) for the
call and swaps the originals back afterwards, also when the call raises, exactly as PyTorch's
``_reparametrize_module``: in-place updates (BatchNorm's running statistics) land in the passed Tensors, and a
Tensor the module rebinds during the call is written back into the passed dict.

Example::

    >>> from torchish.func import functional_call
    >>> lin = torchish.nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": torchish.ones(1, 2), "bias": torchish.zeros(1)}, torchish.ones(2))
    tensor([2.])
"""
from __future__ import annotations

from .._tensor import Tensor

_MISSING = object()


def _untie(module, given):
    """PyTorch's ``tie_weights``: a value given for one of several tied names is used for all of them."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    groups = {}
    for name, t in named.items():
        groups.setdefault(id(t), []).append(name)
    tied = {n: names for names in groups.values() if len(names) > 1 for n in names}
    out = dict(given)
    for name in [n for n in given if n in tied]:
        names = tied[name]
        values = {id(given[n]) for n in names if n in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in names:
            out[n] = given[name]
    return out


def _check_strict(module, given):
    valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    missing, unexpected = sorted(valid - set(given)), sorted(set(given) - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(msgs)))


def _swap(module, name, value):
    """Put ``value`` (a Tensor, None or _MISSING) at dotted ``name``; return what was there."""
    prefix, _, attr = name.rpartition(".")
    mod = module.get_submodule(prefix)
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    for registry in (mod._parameters, mod._buffers):
        if attr in registry:
            orig = registry[attr]
            if value is _MISSING:
                del registry[attr]
            else:
                registry[attr] = value
            return orig
    orig = getattr(mod, attr, _MISSING)
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of torch.Tensor")
    if value is not _MISSING:
        setattr(mod, attr, value)
    elif hasattr(mod, attr):
        delattr(mod, attr)
    return orig


def _swap_all(module, values):
    """Swap every entry in (undoing the ones done if one fails); the originals, by name."""
    done = {}
    try:
        for name, value in values.items():
            done[name] = _swap(module, name, value)
    except Exception:
        for name, orig in done.items():
            _swap(module, name, orig)
        raise
    return done


def _merge(dicts):
    if isinstance(dicts, dict):
        return dicts
    if not isinstance(dicts, (list, tuple)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts)}")
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts = {}
    for d in dicts:
        for k in d:
            counts[k] = counts.get(k, 0) + 1
    repeated = [k for k, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given ones (restored afterwards).

    Args:
        module: the ``nn.Module`` to call.
        parameter_and_buffer_dicts: ``{name: Tensor}`` (names as in ``state_dict``), or a tuple of such dicts with
            distinct keys.
        args: the positional arguments (a non-tuple is one argument).
        kwargs: keyword arguments for the call.
        tie_weights: a value given for one of several tied parameters/buffers is used for all of them.
        strict: the names must be exactly the module's parameters and buffers.

    Returns:
        What ``module(*args, **kwargs)`` returns.
    """
    given = _merge(parameter_and_buffer_dicts)
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    values = _untie(module, given) if tie_weights else given
    if strict:
        _check_strict(module, values)
    originals = {}
    try:
        originals = _swap_all(module, values)
        return module(*args, **kwargs)
    finally:
        current = _swap_all(module, originals)
        given.update({k: current[k] for k in given if k in current})


def _stacked_leaf(tensors, name):
    from ..ops.join import stack
    rg = [t.requires_grad for t in tensors]
    if any(rg) and not all(rg):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if all(rg) else out


def stack_module_state(models):
    """``(params, buffers)``: each model's parameters and buffers stacked along a new leading dimension, by name.

    The stacked parameters are new leaves (requiring grad when the models' do), ready for an optimizer and for
    ``vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))``.

    Example:
        >>> models = [torchish.nn.Linear(3, 2) for _ in range(4)]
        >>> params, buffers = stack_module_state(models)
        >>> params["weight"].shape
        torch.Size([4, 2, 3])
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every BatchNorm module in ``root`` (and ``root`` itself) stop tracking running statistics, in place
    (``vmap`` over a model in training mode cannot update one set of running statistics per sample): running
    mean/var and the batch count become None and ``track_running_stats`` False. Returns ``root``."""
    from ..nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
