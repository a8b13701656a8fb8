"""Collectives on Tensors: ``all_reduce``, ``all_gather``, ``broadcast``, ``reduce``, ``reduce_scatter``, ...

The model. In PyTorch every rank holds its own tensor; in torchish one program drives every device, and a Tensor
is one *global* array. A collective over a mesh of ``N`` devices (``group``: a DeviceMesh, default the
data-parallel mesh of all devices) therefore views a tensor of global shape ``(N * k, ...)`` as ``N`` rank-local
tensors of shape ``(k, ...)``: chunk ``r`` along dim 0 is rank ``r``'s tensor (it lives on device ``r`` when the
tensor is sharded over the mesh, which the collectives arrange). Results follow the same view:

=========================================  ==============================================================
``all_reduce(t, op)``                      every chunk of ``t`` becomes the reduction of all chunks
``broadcast(t, src)``                      every chunk becomes chunk ``src``
``reduce(t, dst, op)``                     chunk ``dst`` becomes the reduction; the others are kept
``all_gather(outs, t)``                    ``outs[i]`` (shaped like ``t``) gets chunk ``i`` in every chunk
``all_gather_into_tensor(out, t)``         ``out`` (``N * N * k`` rows) gets all of ``t`` in every chunk
``reduce_scatter_tensor(out, t, op)``      ``t`` has ``N * N * k`` rows (rank ``j``: ``N * k``); chunk ``r`` of
                                           ``out`` (``N * k`` rows) is the reduction over ranks of their block
                                           ``r``
``reduce_scatter(out, ts, op)``            the same with rank ``j``'s input being ``cat([ts[i] chunk j])``
=========================================  ==============================================================

So code written for PyTorch (``outs = [torch.empty_like(t) for _ in range(world)]``) keeps its shapes. Each
collective is a ``jax.shard_map`` over the mesh running ``lax.psum``/``pmax``/``all_gather``/``psum_scatter``:
eagerly it is one cached jitted program, inside ``torchish.compile`` it is traced into the step, so XLA
schedules the communication with the rest of the program. Collectives write their results in place, outside
autograd (as PyTorch's ``torch.distributed`` collectives do); ``async_op=True`` returns a work handle whose
``wait()`` blocks until the values are ready.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec

from .._tensor import Tensor
from . import _process_group as _pg
from ._process_group import ReduceOp, _Work
from .tensor import layout

_GATHERED = {ReduceOp.PRODUCT: jnp.prod, ReduceOp.BAND: jnp.bitwise_and.reduce, ReduceOp.BOR: jnp.bitwise_or.reduce,
             ReduceOp.BXOR: jnp.bitwise_xor.reduce}
_OPS = (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN, ReduceOp.MAX) + tuple(_GATHERED)


def _reduce(x, op, axis):
    """Reduce the local block ``x`` over the mesh axis (inside shard_map)."""
    if op == ReduceOp.SUM:
        return lax.psum(x, axis)
    if op == ReduceOp.AVG:
        return lax.pmean(x, axis)
    if op == ReduceOp.MAX:
        return lax.pmax(x, axis)
    if op == ReduceOp.MIN:
        return lax.pmin(x, axis)
    return _GATHERED[op](lax.all_gather(x, axis), axis=0)


def _reduce_scatter(x, op, axis, n):
    """Rank r's result: the reduction over ranks of block r of their ``x`` (``x`` has ``n * k`` rows)."""
    if op in (ReduceOp.SUM, ReduceOp.AVG):
        out = lax.psum_scatter(x, axis, scatter_dimension=0, tiled=True)
        return out / n if op == ReduceOp.AVG else out
    k = x.shape[0] // n
    full = _reduce(x, op, axis)
    return lax.dynamic_slice_in_dim(full, lax.axis_index(axis) * k, k, axis=0)


def _body(kind, op, axis, n, extra):
    if kind == "all_reduce":
        return lambda x: _reduce(x, op, axis)
    if kind == "reduce":
        return lambda x: jnp.where(lax.axis_index(axis) == extra, _reduce(x, op, axis), x)
    if kind == "broadcast":
        return lambda x: lax.all_gather(x, axis)[extra]
    if kind == "all_gather":
        return lambda x: tuple(jnp.unstack(lax.all_gather(x, axis)))
    if kind == "all_gather_into_tensor":
        return lambda x: lax.all_gather(x, axis, tiled=not extra)
    if kind == "reduce_scatter_tensor":
        return lambda x: _reduce_scatter(x, op, axis, n)
    if kind == "reduce_scatter":
        return lambda *xs: _reduce_scatter(jnp.concatenate(xs, axis=0), op, axis, n)
    raise ValueError(kind)


@functools.lru_cache(maxsize=256)
def _program(kind, op, jax_mesh, axis, n, extra, n_in):
    spec = PartitionSpec(axis)
    n_out = n if kind == "all_gather" else 1
    fn = jax.shard_map(_body(kind, op, axis, n, extra), mesh=jax_mesh, in_specs=(spec,) * n_in,
                       out_specs=(spec,) * n_out if n_out > 1 else spec)
    return jax.jit(fn)


def _run(kind, group, tensors, op=None, extra=None):
    """Run collective ``kind`` over ``group`` on the tensors' values; returns the result value(s)."""
    mesh = _pg.resolve_mesh(group)
    n = mesh.size()
    sharding = mesh.sharding((mesh.axis,))
    vals = []
    for t in tensors:
        if t.ndim == 0 or t.shape[0] % n:
            raise RuntimeError(f"torchish.distributed.{kind}: a collective over {n} devices views a tensor's dim 0 "
                             f"as {n} rank-local chunks, so dim 0 must be a multiple of {n}; got shape "
                             f"{tuple(t.shape)}")
        vals.append(layout(t._d, sharding))
    return _program(kind, op, mesh.jax_mesh, mesh.axis, n, extra, len(vals))(*vals)


def _check_tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_op(op):
    if not isinstance(op, str) or op not in _OPS:
        raise TypeError(f"unsupported reduce op {op!r}; use one of torchish.distributed.ReduceOp's members")


def _check_rank(r, n, what):
    if not isinstance(r, int) or not 0 <= r < n:
        raise RuntimeError(f"invalid {what} rank: {r} (the group has {n} ranks)")


def _write(t, value):
    t._set_value(value.astype(t._v.dtype))


def _done(async_op, tensors):
    return _Work(tensors) if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce every rank's chunk of ``tensor`` with ``op`` and write the result into every chunk, in place."""
    _check_tensor(tensor)
    _check_op(op)
    _write(tensor, _run("all_reduce", group, (tensor,), op))
    return _done(async_op, (tensor,))


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Like :func:`all_reduce`, but only rank ``dst``'s chunk receives the result."""
    _check_tensor(tensor)
    _check_op(op)
    dst = group_dst if group_dst is not None else dst
    _check_rank(dst, _pg.resolve_mesh(group).size(), "destination")
    _write(tensor, _run("reduce", group, (tensor,), op, dst))
    return _done(async_op, (tensor,))


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s chunk of ``tensor`` into every chunk, in place."""
    _check_tensor(tensor)
    src = group_src if group_src is not None else src
    _check_rank(src, _pg.resolve_mesh(group).size(), "source")
    _write(tensor, _run("broadcast", group, (tensor,), None, src))
    return _done(async_op, (tensor,))


def _check_per_rank_list(api, arg, tensors, n, like, kind, like_kind):
    """``tensors`` must be a list of ``n`` tensors (one per rank), each shaped like ``like``."""
    if not isinstance(tensors, (list, tuple)) or len(tensors) != n:
        raise RuntimeError(f"{api}: {arg} must be a list of {n} tensors (one per rank)")
    for t in tensors:
        _check_tensor(t, f"{arg} entries")
        if tuple(t.shape) != tuple(like.shape):
            raise RuntimeError(f"{api}: {kind} tensors must be shaped like the {like_kind} {tuple(like.shape)}, "
                               f"got {tuple(t.shape)}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list[i]`` (each shaped like ``tensor``) with rank ``i``'s chunk, on every rank."""
    _check_tensor(tensor)
    _check_per_rank_list("all_gather", "tensor_list", tensor_list, _pg.resolve_mesh(group).size(),
                         tensor, "output", "input")
    outs = _run("all_gather", group, (tensor,))
    for t, v in zip(tensor_list, outs):
        _write(t, v)
    return _done(async_op, tuple(tensor_list))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``output_tensor`` gets all ranks' inputs, concatenated (``N * k`` rows per rank) or stacked
    (shape ``(N, k, ...)`` per rank) along dim 0."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    n = _pg.resolve_mesh(group).size()
    shape = tuple(input_tensor.shape)
    k = shape[0] // n if shape else 0
    concat = (n * shape[0],) + shape[1:]
    stacked = (n * n, k) + shape[1:]
    if tuple(output_tensor.shape) not in (concat, stacked):
        raise RuntimeError(f"all_gather_into_tensor: output_tensor must have shape {concat} (concatenated) or "
                         f"{stacked} (stacked) for input {shape} over {n} ranks, got {tuple(output_tensor.shape)}")
    stack = tuple(output_tensor.shape) == stacked and concat != stacked
    value = _run("all_gather_into_tensor", group, (input_tensor,), None, stack)
    _write(output_tensor, value.reshape(output_tensor.shape))
    return _done(async_op, (output_tensor,))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank ``r``'s ``output`` gets the reduction over ranks of block ``r`` of their ``input``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    _check_op(op)
    n = _pg.resolve_mesh(group).size()
    if not input.shape or tuple(input.shape) != (n * output.shape[0],) + tuple(output.shape[1:]):
        raise RuntimeError(f"reduce_scatter_tensor: input must have {n} times the rows of output; got input "
                         f"{tuple(input.shape)} and output {tuple(output.shape)}")
    _write(output, _run("reduce_scatter_tensor", group, (input,), op))
    return _done(async_op, (output,))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank ``r``'s ``output`` gets the reduction over ranks of their ``input_list[r]``."""
    _check_tensor(output, "output")
    _check_op(op)
    _check_per_rank_list("reduce_scatter", "input_list", input_list, _pg.resolve_mesh(group).size(),
                         output, "input", "output")
    _write(output, _run("reduce_scatter", group, tuple(input_list), op))
    return _done(async_op, (output,))


all_gather_single = all_gather_into_tensor        # PyTorch 2.13's names for the two single-tensor collectives
reduce_scatter_single = reduce_scatter_tensor
