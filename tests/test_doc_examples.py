"""PyTorch's own docstring examples (the ``>>>`` blocks of torch 2.13), written out here and run against torch:
each ``case_*`` is one docstring's example block (or the part of it that showed a difference), seeded with
``manual_seed(0)`` as the block would be, so ``randn`` examples compare values too (torchish draws PyTorch's CPU
stream). Found by running every docstring example of torch.*, Tensor.*, nn.functional, linalg, special, fft, func,
nn.utils and the nn modules with both libraries; the curated list keeps the ones that differed (now fixed) and a few
representative ones per family."""
from oracle import error_family, raised as _err, script_test


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


def case_matrix_rank_pinv_hermitian(lib):
    """linalg.matrix_rank's example with ``hermitian=True`` on a matrix that is not Hermitian: PyTorch reads the
    lower triangle only; torchish (jnp.linalg.eigvalsh/eigh) symmetrized the input first. pinv(hermitian=True) too."""
    torch = _seeded(lib)
    A = torch.randn(2, 4, 3, 3, dtype=torch.complex64)
    B = torch.randn(3, 3, dtype=torch.float64)
    return (torch.linalg.matrix_rank(A), torch.linalg.matrix_rank(A, hermitian=True),
            torch.linalg.matrix_rank(A, atol=1.0, rtol=0.0), torch.linalg.matrix_rank(A, atol=1.0, rtol=0.0,
                                                                                      hermitian=True),
            torch.linalg.matrix_rank(B, atol=0.5, hermitian=True), torch.linalg.pinv(B, hermitian=True))


def case_testing_assert_close(lib):
    """testing.assert_close's example: with ``allow_subclasses=False`` a Parameter against a Tensor is PyTorch's
    TypeError (torchish compared them); a Tensor against a number, array or list is that TypeError whatever
    check_dtype says (torchish raised AssertionError or compared), None against a value is 'None mismatch'."""
    torch = _seeded(lib)
    expected = torch.tensor([1.0, 2.0, 3.0])
    actual = expected.clone()
    def check(a, e, **kw):
        # (the exception's type, and its message up to the class names, which name each library's modules)
        r = _err(lambda: torch.testing.assert_close(a, e, **kw))
        return r and (r[0], r[1].split(" of type")[0])
    return (check(actual, expected), check(torch.nn.Parameter(actual), expected),
            check(torch.nn.Parameter(actual), expected, allow_subclasses=False),
            check([expected], [torch.nn.Parameter(actual)], allow_subclasses=False),
            check(torch.tensor(1.0), 1.0, check_dtype=False), check(actual, [1.0, 2.0, 3.0]),
            check(None, actual), check(actual, None), check(actual, "a"))


def case_testing_assert_allclose(lib):
    """The deprecated assert_allclose converts non-tensors (``expected`` to ``actual``'s dtype) and has its own
    default tolerances (float32: rtol 1e-4, atol 1e-5; torchish used assert_close's 1.3e-6)."""
    import warnings
    torch = _seeded(lib)
    t = torch.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return [_err(lambda: torch.testing.assert_allclose(a, e)) for a, e in (
            (t, [1, 2]), (1.0, torch.tensor(1.0)), (t, t + 5e-5), (t, t + 5e-4), (t.double(), t.double() + 1e-5),
            (t.half(), t.half() + 1e-3), (torch.tensor([1, 2]), torch.tensor([1, 3])))]


def case_testing_make_tensor(lib):
    """testing.make_tensor (torchish had none): PyTorch's draws (randint for bools and integers, uniform_ for floats,
    on the real view for complex), its defaults, clamping to the dtype's range, noncontiguous/exclude_zero, errors.
    The whole float64 range is drawn as uniform_(-max/2, max/2) * 2: torchish's fused multiply-add overflowed in
    Dekker's split there (NaN for any uniform_ range over ~1.3e300)."""
    torch = _seeded(lib)
    mt = lib.testing.make_tensor
    out = [mt((3,), device="cpu", dtype=torch.float32, low=-1, high=1)]
    out += [mt(2, 5, device="cpu", dtype=dt) for dt in (torch.bool, torch.uint8, torch.int32, torch.int64,
                                                         torch.float16, torch.float64, torch.complex64)]
    out += [mt((4, 3), dtype=torch.float32, device="cpu", noncontiguous=True),
            mt(4, 3, dtype=torch.int64, device="cpu", low=-3, high=3, exclude_zero=True),
            mt(3, dtype=torch.float64, device="cpu", low=-float("inf"), high=float("inf")),
            mt(3, dtype=torch.uint8, device="cpu", low=-5.5, high=300),
            mt(3, dtype=torch.float32, device="cpu", requires_grad=True).requires_grad,
            torch.empty(20, dtype=torch.float64).uniform_(-1.7e308 / 2, 1.7e308 / 2)]
    for kw in (dict(low=2, high=1), dict(low=float("nan")), dict(dtype=torch.int32, requires_grad=True),
               dict(dtype=torch.uint8, low=300, high=400)):
        out.append(_err(lambda: mt(3, device="cpu", **{"dtype": torch.float32, **kw})))
    return out + [torch.rand(2)]


def case_dim_order_ambiguity_check(lib):
    """Tensor.dim_order's example prints the TypeError for a bad ``ambiguity_check``: PyTorch's wording, and a list
    must hold memory formats only (torchish took any list)."""
    torch = _seeded(lib)
    x = torch.empty((1, 2, 3, 4))
    return (x.dim_order(), torch.empty(2, 3, 4).permute(2, 0, 1).dim_order(),
            x.dim_order(ambiguity_check=[torch.preserve_format]),
            *[_err(lambda: x.dim_order(ambiguity_check=a)) for a in ("ILLEGAL", [torch.contiguous_format, 3],
                                                                     (torch.channels_last,), None)])


def case_func_rearrange(lib):
    """torch.func.rearrange (einops' rearrange; torchish had none): the docstring's eight image patterns, ellipsis,
    unit axes, a list of tensors, and its errors (compared by family: PyTorch's size errors name its internal
    first-class dims d1, d2; torchish's name the pattern's axes)."""
    import importlib
    rearrange = importlib.import_module(lib.__name__ + ".func").rearrange
    torch = _seeded(lib)
    images = torch.randn((32, 30, 40, 3))
    out = [rearrange(images, p, **kw) for p, kw in (
        ("b h w c -> b h w c", {}), ("b h w c -> (b h) w c", {}), ("b h w c -> h (b w) c", {}),
        ("b h w c -> b c h w", {}), ("b h w c -> b (c h w)", {}),
        ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", dict(h1=2, w1=2)),
        ("b (h h1) (w w1) c -> b h w (c h1 w1)", dict(h1=2, w1=2)), ("b ... c -> c (b ...)", {}),
        ("b h w c -> b 1 h () w c", {}), ("... c -> c ...", {}))]
    x = torch.arange(24.0, requires_grad=True).reshape(2, 3, 4)
    y = rearrange(x, "a (b c) d -> (d b) (a c)", b=3)
    out += [y, torch.autograd.grad((y * torch.arange(24.0).reshape(y.shape)).sum(), x)[0],
            rearrange([x[0], x[1]], "n b c -> b (n c)")]
    for p, kw in (("a b -> b a", {}), ("a b c -> a b", {}), ("a b c -> a b a", {}), ("a b c", {}),
                  ("a (b1 b2) c -> a b1 b2 c", {}), ("a (b1 b2) c -> a b1 b2 c", dict(b1=2)),
                  ("a b c -> a b c", dict(b=4))):
        try:
            rearrange(x, p, **kw)
            out.append(None)
        except Exception as e:  # noqa: BLE001 - the family is the outcome
            out.append(error_family(e).__name__)
    return out


def case_conj_is_a_view(lib):
    """torch.conj / resolve_conj / resolve_neg examples: conj of a complex tensor is a view (is_conj True; writes
    through it reach the input and the input's writes show in it), the imaginary part of a conjugate view is a
    negated view (is_neg), view_as_real refuses an unresolved conjugate. torchish computed a new tensor (is_conj
    False, writes lost)."""
    torch = _seeded(lib)
    x = torch.tensor([-1 + 1j, -2 + 2j, 3 - 3j])
    y = x.conj()
    z = y.imag
    out = [y.is_conj(), y.conj().is_conj(), y[0:2].is_conj(), x[None].mH.is_conj(), torch.resolve_conj(y).is_conj(),
           (y * 1).is_conj(), z.is_neg(), z.resolve_neg().is_neg(), x.imag.is_neg(), y.real.is_neg(), z.clone()]
    y[0] = 5 + 5j
    x[1] = 0
    z.add_(1)
    out += [x, y, z, torch.resolve_conj(y), _err(lambda: torch.view_as_real(y)),
            torch.view_as_real(y.resolve_conj()), z.is_conj(), _err(lambda: y.view(torch.float32)),
            _err(lambda: y.view(torch.complex64)), _err(lambda: z.view(torch.int32)), y.real.view(torch.int32)]
    w = torch.randn(3, 2, dtype=torch.cfloat, requires_grad=True)
    c = w.conj()
    (c * torch.arange(6.0).reshape(3, 2)).imag.sum().backward()
    return out + [c.grad_fn.name(), w.grad]


def case_representative_seeded_examples(lib):
    """Examples that matched, kept as representatives: seeded draws feeding gumbel_softmax, lstsq with its drivers
    and a rank drop, and a complex FFT round trip."""
    torch = _seeded(lib)
    F = torch.nn.functional
    logits = torch.randn(20, 32)
    out = [F.gumbel_softmax(logits, tau=1, hard=False), F.gumbel_softmax(logits, tau=1, hard=True)]
    A, B = torch.randn(1, 3, 3), torch.randn(2, 3, 3)
    out += [torch.linalg.lstsq(A, B).solution, torch.linalg.lstsq(A, B, driver="gelsd").singular_values]
    A[:, 0].zero_()
    out.append(torch.linalg.lstsq(A, B).rank)
    x_uncentered = torch.fft.ifftshift(torch.arange(-5, 5))
    fft_centered = torch.fft.fftshift(torch.fft.fft(x_uncentered))
    return out + [fft_centered, torch.fft.fftshift(torch.fft.ifft(torch.fft.ifftshift(fft_centered)))]


def case_representative_plain_examples(lib):
    """searchsorted, index_add_, nanquantile, one_hot, unique_consecutive and fftfreq/fftshift as their docstrings
    show them."""
    torch = _seeded(lib)
    F = torch.nn.functional
    seq, values = torch.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]), torch.tensor([[3, 6, 9], [3, 6, 9]])
    out = [torch.searchsorted(seq, values), torch.searchsorted(seq, values, side="right"),
           torch.searchsorted(torch.tensor([1, 3, 5, 7, 9]), values)]
    x = torch.ones(5, 3)
    t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=torch.float)
    out += [x.index_add_(0, torch.tensor([0, 4, 2]), t).clone(), x.index_add_(0, torch.tensor([0, 4, 2]), t, alpha=-1)]
    q = torch.tensor([[float("nan"), float("nan")], [1, 2]])
    out += [torch.tensor([float("nan"), 1, 2]).quantile(0.5), q.nanquantile(0.5, dim=0), q.nanquantile(0.5, dim=1)]
    out += [F.one_hot(torch.arange(0, 5) % 3), F.one_hot(torch.arange(0, 5) % 3, num_classes=5),
            F.one_hot(torch.arange(0, 6).view(3, 2) % 3)]
    x = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    out += [torch.unique_consecutive(x), torch.unique_consecutive(x, return_inverse=True),
            torch.unique_consecutive(x, return_counts=True)]
    f = torch.fft.fftfreq(5, d=1 / 5) + 0.1 * torch.fft.fftfreq(5, d=1 / 5).unsqueeze(1)
    return out + [torch.fft.fftshift(torch.fft.fftfreq(4)), torch.fft.fftshift(f)]


test_doc_example_matches_torch = script_test(globals())
