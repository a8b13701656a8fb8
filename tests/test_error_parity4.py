"""User mistakes compared with PyTorch, continued from tests/test_error_parity3.py: the argument positions and op
names of a Tensor method's TypeErrors, var/std's overloads for a bool dim, and the views PyTorch's sparse tensors
refuse. Each case is ``fn(lib)`` run with PyTorch and with torchish: the same results (``same``), the same builtin
exception type (``check_raises``), or that and the same message (``same_error``).
"""
import warnings

import pytest

from oracle import check_raises, needs_torch, same, same_error, torchish

pytestmark = [needs_torch]


def _F(lib):
    return lib.nn.functional


def _x(lib):
    return lib.arange(6.0).reshape(2, 3)


# A Tensor method's parser counts argument positions after self (x.add("a"): position 1; torch.add(x, "a"): 2),
# an in-place method names itself, and a dim that is no int is named with its op, argument and position (none
# for a keyword). torchish worded every method's error as its function's (position 2), and a bool or str dim as
# "argument 'dim' must be int, not bool" / "dim must be an int, got str" without the op.
METHOD_ERRORS = {
    "add": lambda lib: _x(lib).add("a"),
    "add_": lambda lib: _x(lib).add_("a"),
    "mul_": lambda lib: _x(lib).mul_("a"),
    "div": lambda lib: _x(lib).div("a"),
    "atan2": lambda lib: _x(lib).atan2("a"),
    "topk": lambda lib: _x(lib).topk("a"),
    "matmul": lambda lib: _x(lib).matmul("a"),
    "mm": lambda lib: _x(lib).mm("a"),
    "select_float": lambda lib: _x(lib).select(0, 1.0),
    "softmax_bool": lambda lib: _x(lib).softmax(True),
    "softmax_bool_kw": lambda lib: _x(lib).softmax(dim=True),
    "log_softmax_bool": lambda lib: _x(lib).log_softmax(True),
    "argmax_bool": lambda lib: _x(lib).argmax(True),
    "argmax_float": lambda lib: _x(lib).argmax(1.0),
    "cumsum_str": lambda lib: _x(lib).cumsum("a"),
    "cumsum_str_kw": lambda lib: _x(lib).cumsum(dim="a"),
    "cumprod_bool": lambda lib: _x(lib).cumprod(True),
    "transpose_bool": lambda lib: _x(lib).transpose(0, True),
    "transpose_str": lambda lib: _x(lib).transpose(0, "a"),
    "unsqueeze_bool_kw": lambda lib: _x(lib).unsqueeze(dim=True),
    "unsqueeze_str": lambda lib: _x(lib).unsqueeze("a"),
    "flatten_str": lambda lib: _x(lib).flatten("a"),
    "index_select_str": lambda lib: _x(lib).index_select("a", lib.tensor([0])),
    "median_bool": lambda lib: _x(lib).median(True),
    "cummax_bool": lambda lib: _x(lib).cummax(True),
}


@pytest.mark.parametrize("name", sorted(METHOD_ERRORS))
def test_method_type_errors_are_worded_for_the_method(name):
    same_error(METHOD_ERRORS[name])


def test_function_type_errors_keep_the_function_positions():
    same_error(lambda lib: lib.add(_x(lib), "a"))
    same_error(lambda lib: lib.topk(_x(lib), "a"))
    same_error(lambda lib: lib.select(_x(lib), 0, 1.0))


# var/std/var_mean/std_mean: PyTorch's (Tensor input, bool unbiased) overload takes a bool first argument only
# alone; a bool dim with anything else, or by keyword, matches no overload. torchish took it as unbiased.
SPREAD_REFUSED = {
    "var_dim_kw": lambda lib: _x(lib).var(dim=True),
    "std_dim_kw": lambda lib: _x(lib).std(dim=True),
    "var_two_bools": lambda lib: _x(lib).var(True, True),
    "var_keepdim": lambda lib: _x(lib).var(True, keepdim=True),
    "var_correction": lambda lib: _x(lib).var(True, correction=0),
    "std_int": lambda lib: _x(lib).std(True, 1),
    "var_unbiased_twice": lambda lib: _x(lib).var(True, unbiased=True),
    "var_bool_then_dim": lambda lib: _x(lib).var(False, dim=1),
    "var_kws": lambda lib: _x(lib).var(dim=True, keepdim=True),
    "fn_var_kws": lambda lib: lib.var(_x(lib), dim=True, keepdim=True),
    "fn_std_mean_kw": lambda lib: lib.std_mean(_x(lib), dim=False),
    "fn_var_mean_two": lambda lib: lib.var_mean(_x(lib), True, True),
}


def _head(message):
    """The message without the lines that say why each overload did not match (which torchish leaves out)."""
    return "\n".join(line for line in message.split("\n") if "didn't match" not in line)


@pytest.mark.parametrize("name", sorted(SPREAD_REFUSED))
def test_var_std_with_a_bool_dim_match_no_overload(name):
    err = check_raises(SPREAD_REFUSED[name])
    with pytest.raises(TypeError) as got:
        SPREAD_REFUSED[name](torchish)
    assert _head(str(got.value)) == _head(str(err))


def test_var_std_take_a_lone_bool_as_unbiased():
    same(lambda lib: [_x(lib).var(True), _x(lib).var(False), lib.var(_x(lib), True), _x(lib).std(False),
                      lib.var_mean(_x(lib), True), lib.std_mean(_x(lib), False), _x(lib).var(1, True),
                      _x(lib).var(None, True), _x(lib).var(1, False, True), _x(lib).var(unbiased=False),
                      _x(lib).std(axis=1), _x(lib).std(1, keepdims=True)])


# Sparse tensors: .data keeps the layout and entries; the strided views PyTorch's sparse kernels lack raise
# (parameters_to_vector of a sparse embedding gradient fails at its view(-1)). torchish viewed the dense value.
def _coo(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.sparse_coo_tensor([[0, 1, 1], [2, 0, 0]], [1.0, 2.0, 3.0], (2, 3))


def _sparse_grad(lib):
    emb = lib.nn.Embedding(5, 3, sparse=True)
    (emb(lib.tensor([0, 2, 2])).sum() + (emb(lib.tensor([4, 0])) * 2).sum()).backward()
    return emb.weight.grad


def test_data_of_a_sparse_tensor_is_sparse():
    def fn(lib):
        out = []
        for t in (_coo(lib), _sparse_grad(lib)):
            d = t.data
            out += [str(d.layout), d._indices(), d._values(), d.is_coalesced(), d.requires_grad]
        return out
    same(fn)


def test_data_of_a_csr_tensor_is_csr():
    def fn(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = lib.sparse_csr_tensor([0, 1, 2], [0, 1], [1.0, 2.0], (2, 2)).data
        return [str(d.layout), d.crow_indices(), d.col_indices(), d.values()]
    same(fn)


SPARSE_REFUSED = {
    "view": lambda lib: _coo(lib).view(-1),
    "view_as": lambda lib: _coo(lib).view_as(_coo(lib)),
    "narrow": lambda lib: _coo(lib).narrow(0, 0, 1),
    "squeeze": lambda lib: _coo(lib).squeeze(),
    "reshape": lambda lib: _coo(lib).reshape(-1),
    "flatten": lambda lib: _coo(lib).flatten(),
    "expand": lambda lib: _coo(lib).expand(2, 3),
    "contiguous": lambda lib: _coo(lib).contiguous(),
    "parameters_to_vector": lambda lib: lib.nn.utils.parameters_to_vector([_sparse_grad(lib)]),
}


@pytest.mark.parametrize("name", sorted(SPARSE_REFUSED))
def test_views_a_sparse_tensor_has_no_kernel_for(name):
    err = check_raises(SPARSE_REFUSED[name])
    with pytest.raises(Exception) as got:
        SPARSE_REFUSED[name](torchish)
    assert str(err).startswith(str(got.value))  # (PyTorch's goes on to list its backends)
