"""``torch.sparse.check_sparse_tensor_invariants``: the process-wide switch for checking the entries given to the
sparse constructors (``sparse_coo_tensor``, ``sparse_csr_tensor``), which their ``check_invariants=`` argument
overrides per call.

As PyTorch 2.13, checking is off by default, and the first constructor call that relies on that default (no
``check_invariants=``, the switch never set through ``enable``/``disable``/the context manager) warns once that the
checks are implicitly disabled. torchish holds sparse tensors densely, so entries it cannot place (an index out of
range, row offsets that do not describe the entries) still raise the check's error with checking off, where
PyTorch builds a tensor on which later ops are undefined.

Example:
    >>> with torchish.sparse.check_sparse_tensor_invariants():
    ...     torchish.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))
    Traceback (most recent call last):
    RuntimeError: size is inconsistent with indices: for dim 0, size is 3 but found index 5
"""
from __future__ import annotations

from ._global_flags import warn_once

_STATE = {"enabled": False, "explicit": False}  # (PyTorch's flag is global, not per thread)

_IMPLICIT = ("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) will occur when "
             "operating on a sparse tensor which violates the invariants, but checks incur performance overhead. To "
             "silence this warning, explicitly opt in or out. See "
             "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.")


def _set(enabled):
    _STATE["enabled"] = bool(enabled)
    _STATE["explicit"] = True


def checking(check_invariants):
    """Whether a constructor called with ``check_invariants`` checks its entries (the switch's state for None,
    warning once, at the caller's line, where that state was never chosen)."""
    if check_invariants is not None:
        return bool(check_invariants)
    if not _STATE["explicit"]:
        from .ops.stats import _user_stacklevel
        warn_once(_IMPLICIT, stacklevel=_user_stacklevel())
    return _STATE["enabled"]


class check_sparse_tensor_invariants:
    """A tool to control checking sparse tensor invariants: a context manager (``with
    check_sparse_tensor_invariants():``), a decorator (``@check_sparse_tensor_invariants()``), or the static
    ``enable()``/``disable()``/``is_enabled()``; ``check_invariants=`` of a constructor call overrides it."""

    @staticmethod
    def is_enabled():
        """Whether the sparse constructors check their entries."""
        return _STATE["enabled"]

    @staticmethod
    def enable():
        """Check the entries in sparse tensor constructors."""
        _set(True)

    @staticmethod
    def disable():
        """Do not check the entries in sparse tensor constructors."""
        _set(False)

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different context manager "
                               "instance for context nesting.")
        self.saved_state = self.is_enabled()
        _set(self.state)

    def __exit__(self, type, value, traceback):
        if self.saved_state is None:
            raise AssertionError("saved_state should not be None on exit")
        _set(self.saved_state)
        self.saved_state = None

    def __call__(self, mth):
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return test_mth
