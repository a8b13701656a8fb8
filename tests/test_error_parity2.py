"""User mistakes found by scanning nn construction and calls, losses, optim/lr_scheduler, data utilities,
distributions, torch.func and seeding against PyTorch: each case raises PyTorch's builtin exception type, with
PyTorch's message where that is what users search for (``same_error``), or is accepted where PyTorch accepts it.
Each case is ``fn(lib)`` doing one wrong thing, run with PyTorch and with torchish.
"""
import numpy as np
import pytest

from oracle import needs_torch, same, same_error

pytestmark = [needs_torch]


# Generator.manual_seed takes a Python int only (PyTorch's C++ binding): floats, strings, bools, None and tensors
# are a RuntimeError naming the type, numpy integers a TypeError; torch.manual_seed converts with int() first and
# so accepts all of those that int() takes.
GENERATOR_SEEDS = {
    "str": "a", "float": 1.5, "bool": True, "none": None, "numpy_int": np.int64(3), "numpy_float": np.float64(2.0),
    "tensor": "tensor", "too_big": 2 ** 64,
}


def _seed_value(lib, v):
    return lib.tensor(3) if v == "tensor" else v


@pytest.mark.parametrize("name", sorted(GENERATOR_SEEDS))
def test_generator_manual_seed_refuses_what_pytorch_refuses(name):
    same_error(lambda lib: lib.Generator().manual_seed(_seed_value(lib, GENERATOR_SEEDS[name])))


def test_module_manual_seed_converts_with_int():
    same(lambda lib: [lib.manual_seed(v).initial_seed()
                      for v in (1.5, True, np.int64(3), np.float64(2.0), lib.tensor(7), "12")])


@pytest.mark.parametrize("zip_format", [True, False])
def test_save_to_a_directory(tmp_path, zip_format):
    """PyTorch's zip writer cannot open a directory (RuntimeError); its legacy writer raises open()'s
    IsADirectoryError. torchish raised IsADirectoryError from os.replace after writing a temporary file beside the
    directory, for both formats."""
    same_error(lambda lib: lib.save(lib.ones(2), tmp_path, _use_new_zipfile_serialization=zip_format))
    assert [p.name for p in tmp_path.parent.iterdir() if p.name.endswith(".tmp")] == []
