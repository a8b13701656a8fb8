"""The module paths PyTorch programs import from (``torch.nn.common_types``, ``torch.utils.data._utils.collate``,
``torch.functional``, ``torch.storage``, ``torch.utils.weak``, ``torch.utils.model_zoo``,
``torch.nn.modules.activation.MultiheadAttention``, ``torch._C._get_tracing_state``): each name is there, is the object
torchish uses elsewhere, and behaves as PyTorch's."""
import gc
import importlib

import numpy as np
import pytest

import torchish

try:
    import torch
except ImportError:  # the identity and behaviour checks below need no torch; the comparisons skip
    torch = None

PATHS = {
    "nn.common_types": ["_size_1_t", "_size_2_t", "_size_3_t", "_size_any_t", "_size_2_opt_t", "_ratio_2_t",
                        "_ratio_any_t", "_tensor_list_t", "_maybe_indices_t", "_scalar_or_tuple_2_t"],
    "utils.data._utils.collate": ["default_collate", "default_convert", "collate", "default_collate_fn_map",
                                  "collate_tensor_fn", "default_collate_err_msg_format"],
    "functional": ["einsum", "split", "stft", "istft", "norm", "meshgrid", "tensordot", "unique", "cdist",
                   "atleast_1d", "broadcast_tensors", "block_diag", "cartesian_prod", "unravel_index"],
    "storage": ["TypedStorage", "UntypedStorage"],
    "utils.weak": ["WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary", "TensorWeakRef"],
    "utils.model_zoo": ["load_url"],
    "nn.modules.activation": ["MultiheadAttention", "ReLU", "Softmax"],
    "_C": ["_get_tracing_state", "_log_api_usage_once", "DisableTorchFunctionSubclass"],
    "nn.modules.batchnorm": ["SyncBatchNorm", "BatchNorm2d", "_BatchNorm"],
    "nn.modules.normalization": ["CrossMapLRN2d", "LayerNorm"],
    "nn.modules.loss": ["LinearCrossEntropyLoss", "CrossEntropyLoss"],
    "utils.data.dataloader": ["get_worker_info", "DataLoader", "default_collate"],
    **{f"optim.{m}": [c] for m, c in (("adadelta", "Adadelta"), ("adagrad", "Adagrad"), ("adamax", "Adamax"),
                                       ("adamw", "AdamW"), ("asgd", "ASGD"), ("nadam", "NAdam"), ("radam", "RAdam"),
                                       ("rmsprop", "RMSprop"), ("rprop", "Rprop"), ("sparse_adam", "SparseAdam"),
                                       ("adam", "Adam"), ("sgd", "SGD"))},
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_module_path_has_pytorchs_names(path):
    mod = importlib.import_module("torchish." + path)
    missing = [n for n in PATHS[path] if not hasattr(mod, n)]
    assert not missing, f"torchish.{path} lacks {missing}"
    if torch is not None:  # (the list is PyTorch's: a name that is not there is a mistake in this test)
        tmod = importlib.import_module("torch." + path)
        assert all(hasattr(tmod, n) for n in PATHS[path])


def test_reexports_are_torchishs_own_objects():
    from torchish.functional import __all__ as functional_all
    import torchish.functional as functional
    assert all(getattr(functional, n) is getattr(torchish, n) for n in functional_all)
    if torch is not None:
        assert sorted(functional_all) == sorted(importlib.import_module("torch.functional").__all__)
    from torchish.nn.modules.activation import MultiheadAttention
    assert MultiheadAttention is torchish.nn.MultiheadAttention
    from torchish.utils.data._utils.collate import default_collate
    assert default_collate is torchish.utils.data.default_collate
    from torchish.storage import TypedStorage, UntypedStorage
    assert (TypedStorage, UntypedStorage) == (torchish.TypedStorage, torchish.UntypedStorage)
    from torchish.optim.adamw import AdamW
    assert AdamW is torchish.optim.AdamW and torchish.optim.rmsprop.RMSprop is torchish.optim.RMSprop
    from torchish.utils.model_zoo import load_url
    assert load_url is torchish.hub.load_state_dict_from_url


def test_collate_from_its_old_path_matches_torch():
    pytest.importorskip("torch")
    from torch.utils.data._utils.collate import default_collate as t_collate
    from torchish.utils.data._utils.collate import default_collate as i_collate
    batch = [{"x": np.arange(3, dtype=np.float32) + i, "y": i, "name": f"s{i}"} for i in range(2)]
    a, b = t_collate(batch), i_collate(batch)
    assert a["name"] == b["name"]
    for k in ("x", "y"):
        assert str(a[k].dtype).split(".")[-1] == str(b[k].dtype).split(".")[-1]
        np.testing.assert_array_equal(a[k].numpy(), np.asarray(b[k].numpy()))


def _weak_dict_trace(lib, weak):
    d = weak.WeakTensorKeyDictionary()
    a, b = lib.ones(2), lib.ones(2)
    d[a], d[b] = 1, 2
    trace = [len(d), d[a], d[b], b in d, lib.ones(2) in d, "x" in d]
    del a
    gc.collect()
    trace += [len(d), list(d.values()), len(d.copy()), d.get(b), d.pop(b), len(d)]
    r = weak.WeakIdRef(b)
    trace += [r() is b, r == weak.WeakIdRef(b), hash(r) == id(b), weak.TensorWeakRef(b)() is b]
    with pytest.raises(AssertionError):
        weak.TensorWeakRef(3)
    return trace


def test_weak_tensor_key_dictionary_matches_torch():
    import torchish.utils.weak as iweak
    trace = _weak_dict_trace(torchish, iweak)
    assert trace == [2, 1, 2, True, False, False, 1, [2], 1, 2, 2, 0, True, True, True, True]
    if torch is not None:
        import torch.utils.weak as tweak
        assert trace == _weak_dict_trace(torch, tweak)


def test_tracing_state_and_api_usage_log():
    assert torchish._C._get_tracing_state() is None
    assert torchish._C._log_api_usage_once("torchish.test") is None
    with pytest.raises(TypeError, match="bad argument type"):
        torchish._C._log_api_usage_once(3)
    if torch is not None:
        assert torch._C._get_tracing_state() is None
        with pytest.raises(TypeError, match="bad argument type"):
            torch._C._log_api_usage_once(3)


def test_layer_code_annotated_with_common_types():
    from torchish.nn.common_types import _size_2_t
    nn = torchish.nn

    class Conv(nn.Module):  # (third-party layer code annotates with these aliases)
        def __init__(self, k: _size_2_t = 3):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, k)

        def forward(self, x):
            return self.conv(x)
    assert tuple(Conv((3, 3))(torchish.ones(1, 1, 4, 4)).shape) == (1, 2, 2, 2)


def test_symbolic_number_types_and_torch_function_guards_at_the_top_level():
    """``torch.SymInt``/``SymFloat``/``SymBool`` exist for ``isinstance`` tests (concrete numbers are no instances,
    as under PyTorch eager); ``torch.DisableTorchFunction(Subclass)`` are ``torch._C``'s."""
    for name in ("SymInt", "SymFloat", "SymBool"):
        cls = getattr(torchish, name)
        assert not isinstance(3, cls) and not isinstance(3.0, cls) and not isinstance(True, cls)
        if torch is not None:
            tcls = getattr(torch, name)
            assert not isinstance(3, tcls) and not isinstance(3.0, tcls) and not isinstance(True, tcls)
    assert isinstance(torchish.ones(3).shape[0], int)
    assert torchish.DisableTorchFunctionSubclass is torchish._C.DisableTorchFunctionSubclass
    assert torchish.DisableTorchFunction is torchish._C.DisableTorchFunction
    for lib in (torchish,) if torch is None else (torchish, torch):
        flags = [(lib._C._is_torch_function_enabled(), lib._C._is_torch_function_all_disabled())]
        with lib.DisableTorchFunctionSubclass():
            flags.append((lib._C._is_torch_function_enabled(), lib._C._is_torch_function_all_disabled()))
        with lib.DisableTorchFunction():
            flags.append((lib._C._is_torch_function_enabled(), lib._C._is_torch_function_all_disabled()))
        assert flags == [(True, False), (False, False), (False, True)], lib.__name__


@pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")
def test_torch_assert_raises_as_pytorchs():
    """``torch._assert`` (torchvision's models check input shapes with it)."""
    def outcomes(lib):
        out = []
        for c in (True, lib.tensor(True), lib.tensor([True, False]), lib.tensor(0.0), 0, lib.tensor(False)):
            try:
                lib._assert(c, "Wrong image height!")
                out.append("ok")
            except Exception as e:  # noqa: BLE001 - the error is the outcome
                out.append((type(e).__name__, str(e)))
        return out
    assert outcomes(torchish) == outcomes(torch)
