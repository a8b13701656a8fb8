"""PyTorch's own docstring examples (the ``>>>`` blocks of torch 2.13), written out here and run against torch:
each ``case_*`` is one docstring's example block (or the part of it that showed a difference), seeded with
``manual_seed(0)`` as the block would be, so ``randn`` examples compare values too (torchish draws PyTorch's CPU
stream). Found by running every docstring example of torch.*, Tensor.*, nn.functional, linalg, special, fft, func,
nn.utils and the nn modules with both libraries; the curated list keeps the ones that differed (now fixed) and a few
representative ones per family."""
from oracle import raised as _err, script_test


def _seeded(lib):
    lib.manual_seed(0)
    return lib


def case_randn_complex_imag(lib):
    """torch.imag / Tensor.real examples: ``randn(4, dtype=cfloat)`` is PyTorch's real view of 8 normals (its serial
    kernel below 16 reals), each part scaled by 1/sqrt(2); torchish drew the vectorised kernel's numbers."""
    torch = _seeded(lib)
    x = torch.randn(4, dtype=torch.cfloat)
    y = torch.randn(9, dtype=torch.cdouble)  # 18 reals: the vectorised kernel, though under 16 elements
    return x, x.imag, x.real, torch.view_as_real(x), y, torch.randn(3)


def case_hash_tensor(lib):
    """torch.hash_tensor (new in PyTorch 2.9; torchish had none): elements widened to 64 bits, xor of their bits."""
    torch = _seeded(lib)
    a = torch.randn(1, 3)
    b = torch.randn(2, 4)
    ints = torch.tensor([[1, 2, -3], [7, 0, 5]])
    return (torch.hash_tensor(a), torch.hash_tensor(b, 1), b.hash_tensor((0, 1), keepdim=True),
            torch.hash_tensor(ints, 0), torch.hash_tensor(torch.tensor([True, False, True])),
            torch.hash_tensor(torch.tensor([1, 200], dtype=torch.uint8)),
            torch.hash_tensor(torch.tensor([-0.0, float("nan"), 1.5], dtype=torch.float16)),
            _err(lambda: torch.hash_tensor(a, mode=1)), _err(lambda: torch.hash_tensor(torch.zeros(0))),
            _err(lambda: torch.hash_tensor(torch.zeros(0, 3), -2)),
            _err(lambda: torch.hash_tensor(torch.ones(2, dtype=torch.cfloat))))


test_doc_example_matches_torch = script_test(globals())
