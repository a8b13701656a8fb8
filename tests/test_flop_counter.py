"""``torchish.utils.flop_counter.FlopCounterMode`` against PyTorch's: the same program gives the same counts per
ATen packet and per module (forward, and forward + backward), and the same ``get_table()`` text.

Each case builds its inputs with ``lib`` (``torch`` or ``torchish``) and returns the function to count; PyTorch's
numbers come from its own mode over the same function. PyTorch counts after its ATen decomposition (a 3-d
``F.linear`` with a bias is one flattened ``addmm``, a non-foldable ``matmul`` a ``bmm``, the CPU's fused attention
kernel nothing), which is what these cases pin down.
"""

import contextlib
import importlib

import pytest

import torchish

torch = pytest.importorskip("torch")


def _counts(fc):
    return {mod: {str(p): n for p, n in ops.items()} for mod, ops in fc.get_flop_counts().items()}


def _run(lib, build, device):
    mod = importlib.import_module(lib.__name__ + ".utils.flop_counter")
    lib.manual_seed(0)
    # (no device block for the CPU: PyTorch's is a TorchFunctionMode, which turns its MultiheadAttention and
    # TransformerEncoderLayer fast paths off)
    with lib.device(device) if device != "cpu" else contextlib.nullcontext():
        fn = build(lib)
        with mod.FlopCounterMode(display=False) as fc:
            fn()
    return fc


def _tables(ref, got, depths=(None,)):
    try:
        return [(ref.get_table(d), got.get_table(d)) for d in depths]
    except ImportError:  # (PyTorch's table needs tabulate)
        return []


def _check(build, depths=(None,), device="meta"):
    """Counts of ``build``'s function under both libraries. On the meta device by default: the same counts (the
    same decompositions) without computing anything, so no kernel compiles; "cpu" where the choice of kernel
    depends on the device (the CPU's flash attention)."""
    ref, got = _run(torch, build, device), _run(torchish, build, device)
    assert _counts(got) == _counts(ref)
    assert got.get_total_flops() == ref.get_total_flops()
    for want, have in _tables(ref, got, depths):
        assert have == want


def _r(lib, *shape, grad=True):
    return lib.randn(*shape, requires_grad=grad)


def _backward(fn):
    return lambda: fn().sum().backward()


OPS = {
    "mm": lambda L: (lambda a=_r(L, 4, 3), b=_r(L, 3, 5): L.mm(a, b)),
    "linear 3-d": lambda L: (lambda x=_r(L, 2, 4, 3), w=_r(L, 5, 3), b=_r(L, 5): L.nn.functional.linear(x, w, b)),
    "linear 1-d": lambda L: (lambda x=_r(L, 3), w=_r(L, 5, 3), b=_r(L, 5): L.nn.functional.linear(x, w, b)),
    "linear non-contiguous": lambda L: (
        lambda x=_r(L, 2, 4, 3), w=_r(L, 5, 3), b=_r(L, 5): L.nn.functional.linear(x.transpose(0, 1), w, b)),
    "linear non-contiguous frozen": lambda L: (  # (no fold without a copy: a bmm)
        lambda x=_r(L, 2, 4, 3), w=_r(L, 5, 3, grad=False): L.nn.functional.linear(x.transpose(0, 1), w)),
    "matmul 3-d @ 2-d": lambda L: (lambda a=_r(L, 2, 4, 3), b=_r(L, 3, 5): a @ b),
    "matmul 2-d @ 3-d": lambda L: (lambda a=_r(L, 4, 3), b=_r(L, 2, 3, 5): a @ b),
    "matmul 2-d @ 3-d frozen": lambda L: (lambda a=_r(L, 4, 3, grad=False), b=_r(L, 2, 3, 5): a @ b),
    "matmul 4-d @ 3-d": lambda L: (lambda a=_r(L, 2, 2, 4, 3), b=_r(L, 2, 3, 5): a @ b),
    "matmul 1-d @ 2-d": lambda L: (lambda a=_r(L, 3), b=_r(L, 3, 5): a @ b),
    "matmul 3-d @ 1-d": lambda L: (lambda a=_r(L, 2, 4, 3), b=_r(L, 3): a @ b),
    "bmm": lambda L: (lambda a=_r(L, 2, 4, 3), b=_r(L, 2, 3, 5): L.bmm(a, b)),
    "baddbmm": lambda L: (lambda c=_r(L, 2, 4, 5), a=_r(L, 2, 4, 3), b=_r(L, 2, 3, 5): L.baddbmm(c, a, b)),
    "addbmm": lambda L: (lambda c=_r(L, 4, 5), a=_r(L, 2, 4, 3), b=_r(L, 2, 3, 5): L.addbmm(c, a, b)),
    "addmm": lambda L: (lambda c=_r(L, 5), a=_r(L, 4, 3), b=_r(L, 3, 5): L.addmm(c, a, b)),
    "einsum batched": lambda L: (lambda a=_r(L, 2, 4, 3), b=_r(L, 2, 3, 5): L.einsum("bij,bjk->bik", a, b)),
    "einsum three operands": lambda L: (
        lambda a=_r(L, 2, 3), b=_r(L, 3, 4), c=_r(L, 4, 5): L.einsum("ij,jk,kl->il", a, b, c)),
    "einsum summed label": lambda L: (lambda a=_r(L, 2, 3, 7), b=_r(L, 3, 4): L.einsum("ijx,jk->ik", a, b)),
    "einsum outer": lambda L: (lambda a=_r(L, 2), b=_r(L, 3): L.einsum("i,j->ij", a, b)),
    "einsum ellipsis": lambda L: (lambda a=_r(L, 2, 4, 3), b=_r(L, 3, 5): L.einsum("...j,jk->...k", a, b)),
    "multi_dot": lambda L: (lambda a=_r(L, 7), b=_r(L, 7, 3), c=_r(L, 3, 9, grad=False), d=_r(L, 9, 2), e=_r(L, 2, 4):
                            L.linalg.multi_dot([a, b, c, d, e])),
    "addmm_ in place": lambda L: (lambda c=L.randn(4, 5), a=_r(L, 4, 3), b=_r(L, 3, 5): c.addmm_(a, b)),
    "cdist by matrix products": lambda L: (lambda a=_r(L, 30, 3), b=_r(L, 2, 4, 3): L.cdist(a, b)),
    "tensordot": lambda L: (lambda a=_r(L, 2, 3, 4), b=_r(L, 3, 4, 5): L.tensordot(a, b, dims=2)),
    "sdpa math": lambda L: (lambda q=_r(L, 2, 3, 4, 8), k=_r(L, 2, 3, 5, 8), v=_r(L, 2, 3, 5, 6):
                            L.nn.functional.scaled_dot_product_attention(q, k, v)),
    "sdpa flash (CPU)": lambda L: (lambda q=_r(L, 2, 3, 4, 8), k=_r(L, 2, 3, 5, 8), v=_r(L, 2, 3, 5, 8):
                                   L.nn.functional.scaled_dot_product_attention(q, k, v)),
    "sdpa query frozen": lambda L: (lambda q=_r(L, 2, 3, 4, 8, grad=False), k=_r(L, 2, 3, 5, 8), v=_r(L, 2, 3, 5, 6):
                                    L.nn.functional.scaled_dot_product_attention(q, k, v)),
    "sdpa grouped query": lambda L: (lambda q=_r(L, 2, 4, 4, 8), k=_r(L, 2, 2, 5, 8), v=_r(L, 2, 2, 5, 8):
                                     L.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
    "conv_transpose2d grouped": lambda L: (
        lambda c=L.nn.ConvTranspose2d(4, 4, 3, stride=2, groups=2, output_padding=1), x=_r(L, 2, 4, 5, 5): c(x)),
    "conv1d unbatched": lambda L: (lambda c=L.nn.Conv1d(3, 4, 3, bias=False), x=_r(L, 3, 8): c(x)),
    "conv3d strided": lambda L: (lambda c=L.nn.Conv3d(2, 3, 2, stride=2), x=_r(L, 1, 2, 4, 4, 4): c(x)),
}


@pytest.mark.parametrize("name", list(OPS))
def test_op_counts_match_pytorch_forward_and_backward(name):
    _check(lambda L: _backward(OPS[name](L)))


@pytest.mark.parametrize("name", ["sdpa flash (CPU)", "sdpa math", "linear non-contiguous frozen", "conv3d strided"])
def test_op_counts_on_cpu_tensors(name):
    _check(lambda L: _backward(OPS[name](L)), device="cpu")


@pytest.mark.parametrize("name", ["linear 3-d", "matmul 2-d @ 3-d", "sdpa math", "conv1d unbatched"])
def test_op_counts_match_pytorch_forward_only(name):
    def build(L):
        fn = OPS[name](L)

        def run():
            with L.no_grad():
                fn()
        return run
    _check(build)


def _mlp(L, bias):
    nn = L.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8, bias=bias)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8, bias=bias)
            self.blocks = nn.Sequential(Block(), Block())
            self.fc2 = nn.Linear(8, 2, bias=bias)

        def forward(self, x):
            return self.fc2(self.blocks(L.relu(self.fc1(x))))
    return Net()


@pytest.mark.parametrize("bias, shape, backward, device", [
    (True, (3, 4), True, "cpu"), (False, (2, 3, 4), True, "meta"), (True, (2, 3, 4), False, "meta"),
    (False, (3, 4), False, "meta")])
def test_nested_mlp_per_module_counts_and_tables_at_each_depth(bias, shape, backward, device):
    def build(L):
        net, x = _mlp(L, bias), _r(L, *shape, grad=False)
        return (lambda: net(x).sum().backward()) if backward else (lambda: net(x))
    _check(build, depths=(None, 1, 3), device=device)


def _cnn(L):
    nn = L.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 4, 3, padding=1)
            self.up = nn.ConvTranspose2d(4, 2, 2, stride=2)
            self.c1 = nn.Conv1d(2, 3, 3)

        def forward(self, x):
            return self.c1(self.up(L.relu(self.conv(x))).flatten(2))
    return CNN()


def test_cnn_of_conv2d_conv_transpose2d_conv1d():
    _check(lambda L: (lambda m=_cnn(L), x=_r(L, 2, 2, 4, 4, grad=False): m(x).sum().backward()))


def _no_grad(L, fn):
    def run():
        with L.no_grad():
            fn()
    return run


ATTENTION = {
    # need_weights=True: the explicit bmm / softmax / bmm (a baddbmm with a mask)
    "mha weights masked": lambda L: (lambda m=L.nn.MultiheadAttention(8, 2), x=_r(L, 4, 2, 8): m(
        x, x, x, attn_mask=L.ones(4, 4, dtype=L.bool).triu(1))[0].sum().backward()),
    "mha cross attention": lambda L: (lambda m=L.nn.MultiheadAttention(8, 2), x=_r(L, 4, 2, 8),
                                      y=_r(L, 3, 2, 8, grad=False): m(x, y, y)[0].sum().backward()),
    # need_weights=False: scaled_dot_product_attention (the CPU flash kernel: not counted; with dropout the math path)
    "mha batch_first no weights": lambda L: (lambda m=L.nn.MultiheadAttention(8, 2, batch_first=True),
                                             x=_r(L, 4, 2, 8): m(x, x, x, need_weights=False)[0].sum().backward()),
    "mha inference fast path": lambda L: _no_grad(L, lambda m=L.nn.MultiheadAttention(8, 2, batch_first=True).eval(),
                                                  x=_r(L, 2, 4, 8, grad=False): m(x, x, x)),
    "encoder layer": lambda L: (lambda m=L.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0),
                                x=_r(L, 4, 2, 8): m(x).sum().backward()),
    "encoder layer inference fast path": lambda L: _no_grad(
        L, lambda m=L.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True).eval(),
        x=_r(L, 2, 4, 8, grad=False): m(x)),
}


ON_CPU = {"mha batch_first no weights", "mha inference fast path", "encoder layer",
          "encoder layer inference fast path"}  # (the CPU's flash kernel and fused fast paths)


@pytest.mark.parametrize("name", list(ATTENTION))
def test_attention_modules(name):
    _check(ATTENTION[name], device="cpu" if name in ON_CPU else "meta")


RECURRENT = {
    "rnn batch_first": lambda L: (lambda m=L.nn.RNN(3, 4, batch_first=True), x=_r(L, 2, 3, 3): m(x)[0]),
    "gru": lambda L: (lambda m=L.nn.GRU(3, 4), x=_r(L, 3, 2, 3): m(x)[0]),
    "rnn 2 layers bidirectional, no bias, frozen input": lambda L: (
        lambda m=L.nn.RNN(3, 4, num_layers=2, bidirectional=True, bias=False), x=_r(L, 3, 2, 3, grad=False): m(x)[0]),
    "rnn relu with h0": lambda L: (lambda m=L.nn.RNN(3, 4, nonlinearity="relu"), x=_r(L, 3, 2, 3), h=_r(L, 1, 2, 4):
                                   m(x, h)[0]),
    "lstm float64 with projection": lambda L: (lambda m=L.nn.LSTM(3, 4, proj_size=2).double(),
                                               x=_r(L, 3, 2, 3).double(): m(x)[0]),
    "lstm float32 (oneDNN: not counted)": lambda L: (lambda m=L.nn.LSTM(3, 4), x=_r(L, 3, 2, 3): m(x)[0]),
    "gru cell": lambda L: (lambda m=L.nn.GRUCell(3, 4), x=_r(L, 2, 3): m(x)),
}


@pytest.mark.parametrize("name", list(RECURRENT))
def test_recurrent_layers_and_cells(name):
    # (on the meta device PyTorch runs its Python decomposition of the layers, which projects a batch_first input
    # after a copy: the CPU's kernels are the reference)
    _check(lambda L: _backward(RECURRENT[name](L)), device="cpu" if "batch_first" in name else "meta")


def test_compiled_function_is_counted_on_every_call():
    """PyTorch's mode counts every call of a torch.compile'd function as the eager calls would count."""
    def build(L):
        lin = L.nn.Linear(3, 5)
        x = L.randn(4, 3)
        if L is torch:
            return lambda: [lin(x).sum().backward() for _ in range(2)]
        f = L.compile(lambda x: lin(x).sum())
        f(x).backward()
        f(x).backward()  # (compiled before the mode)
        return lambda: [f(x).backward() for _ in range(2)]
    _check(build, device="cpu")


def test_backward_counted_when_the_forward_ran_outside_the_mode():
    def build(L):
        m = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.ReLU(), L.nn.Conv1d(2, 3, 3))
        q, v = _r(L, 2, 3, 4, 8), _r(L, 2, 3, 4, 6)
        a = _r(L, 2, 4, 3)
        loss = (m(_r(L, 2, 2, 4)).sum() + L.nn.functional.scaled_dot_product_attention(q, q, v).sum()
                + (a @ L.randn(3, 5)).sum() + L.einsum("bij,bjk->bik", a, L.randn(2, 3, 2)).sum())
        return loss.backward
    _check(build)


def test_backward_with_inputs_counts_only_the_gradients_it_computes():
    def build(L):
        a, b, w = _r(L, 4, 3), _r(L, 3, 5), _r(L, 2, 5, 3)
        return lambda: (L.mm(a, b).sum().backward(inputs=[b]), L.autograd.grad((w @ b).sum(), [w]))
    _check(build)


def test_aten_packets_print_and_compare_as_pytorchs():
    mm = torchish.ops.aten.mm
    assert (str(mm), repr(mm)) == (str(torch.ops.aten.mm), repr(torch.ops.aten.mm))
    assert mm is torchish.ops.aten.mm and {mm: 1}[torchish.ops.aten.mm] == 1 and mm != torchish.ops.aten.bmm
    assert torchish.ops.aten.mm(torchish.ones(2, 3), torchish.ones(3, 1)).tolist() == [[3.0], [3.0]]
    with pytest.raises(AttributeError):
        torchish.ops.aten.no_such_operator
    with pytest.raises(RuntimeError):
        torchish.ops.aten.convolution_backward()
    from torchish.utils.flop_counter import FlopCounterMode
    with FlopCounterMode(display=False) as fc:
        torchish.mm(torchish.ones(2, 3), torchish.ones(3, 4))
    assert fc.get_flop_counts() == {"Global": {torchish.ops.aten.mm: 48}} and fc.get_total_flops() == 48


def _custom_op_counts(L, ns):
    """A custom op whose kernel multiplies (unseen by the mode: the op counts by its formula only) and whose
    registered backward runs two mm (counted)."""
    fcmod = importlib.import_module(L.__name__ + ".utils.flop_counter")

    @L.library.custom_op(f"{ns}::mymm", mutates_args=())
    def mymm(a: L.Tensor, b: L.Tensor) -> L.Tensor:
        return L.mm(a, b)

    def setup(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def bw(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.t(), a.t() @ g

    mymm.register_autograd(bw, setup_context=setup)
    packet = getattr(getattr(L.ops, ns), "mymm")
    a, b = L.randn(4, 3, requires_grad=True), L.randn(3, 5, requires_grad=True)
    got = []
    for mapping in (None, {packet: lambda a, b, out_shape=None, **kw: 7 * a[0]}):
        with fcmod.FlopCounterMode(display=False, custom_mapping=mapping) as fc:
            packet(a, b).sum().backward()
        got.append(_counts(fc))
    fcmod.register_flop_formula(packet)(lambda a, b, out_shape=None, **kw: 3 * out_shape[0])
    try:
        with fcmod.FlopCounterMode(display=False) as fc:
            packet(a, b)
        got.append(_counts(fc))
        with pytest.raises(RuntimeError) as dup:
            fcmod.register_flop_formula(packet)(lambda *a, **k: 0)
        with pytest.raises(ValueError) as bad:
            fcmod.register_flop_formula("mymm")(lambda *a, **k: 0)
        got += [str(dup.value), str(bad.value)]
    finally:
        fcmod.flop_registry.pop(packet, None)
    return got


def test_custom_op_counts_by_its_registered_formula():
    assert _custom_op_counts(torchish, "h166_flops") == _custom_op_counts(torch, "h166_flops")


def test_display_mods_warning_nesting_and_exit():
    from torchish.ops import registry
    from torchish.utils.flop_counter import FlopCounterMode
    lin = torchish.nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="mods argument is not needed anymore"):
        FlopCounterMode(lin, display=False)
    with FlopCounterMode(display=False) as outer:
        with FlopCounterMode(display=False) as inner:
            lin(torchish.ones(1, 3))
        lin(torchish.ones(1, 3))
    assert (inner.get_total_flops(), outer.get_total_flops()) == (12, 24)
    with pytest.raises(ZeroDivisionError):
        with FlopCounterMode(display=False):
            1 / 0
    assert registry.flop_hook is None


def test_display_prints_the_table(capsys):
    def build(L):
        lin = L.nn.Linear(3, 2)
        return lambda: lin(L.ones(2, 3)).sum().backward()
    printed = []
    for lib in (torch, torchish):
        mod = importlib.import_module(lib.__name__ + ".utils.flop_counter")
        fn = build(lib)
        try:
            with mod.FlopCounterMode(depth=1):
                fn()
        except ImportError:  # (PyTorch's table needs tabulate)
            pytest.skip("tabulate is not installed")
        printed.append(capsys.readouterr().out)
    assert printed[1] == printed[0] and "Linear" in printed[1]
