"""The autograd graph of ``x[...]`` as PyTorch records it: one view node per part of the index, left to right
(``x[1:3, 0]`` is ``SelectBackward0`` over ``SliceBackward0``; full slices are skipped), the index arrays' node on
top of the basic parts (``IndexBackward0`` over ``SliceBackward0``), and the numbers each node saves as the user
wrote them (``_saved_start``/``_saved_end``/``_saved_index``: an omitted end is INT64_MAX, a negative number shows
as its unsigned 64-bit wrap; ``_saved_indices``: the index tensors, a boolean mask as given). Compared with torch: node names down the graph, saved numbers, values, gradients,
and a hook on a node below the top one."""
import pytest

from oracle import arr, assert_same, graph_walk, needs_torch, torch, torchish

INDEXES = ["[1:3, 0]", "[0, 1:3]", "[None, 1]", "[..., 1]", "[1:3, 1:2]", "[:, None, 2:]", "[-1, -2:]",
           "[[0, 1], 1:]", "[1:, [0, 2]]", "[:, ::2]", "[0]", "[:]", "[...]", "[None]", "[2:100]", "[-100:3]",
           "[1:4:2, -1]", "[:, 1][1:]", "[1, None, :2]", "[[0], :]", "[[1, 2], :, None]", "[x[:, 0] > 0]", "[x[:, 0] > 0, 1:]",
           "[[0, 1], None, [1, 2]]", "[0, [1, 2]]", "[None, [1]]", "[..., [0]]", "[[[0], [1]], [1, 2]]",
           "[True]", "[False]", "[0, True]", "[1:, True, ::2]", "[True, [0, 1]]"]


def _saved(fn):
    return {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved_")}


def _run(lib, index):
    x = lib.tensor(arr(4, 5), requires_grad=True)
    y = eval("x" + index)  # noqa: S307  (the index expressions above)
    graph, nodes = graph_walk(y.grad_fn), []
    f = y.grad_fn
    while f is not None and type(f).__name__ != "AccumulateGrad":
        nodes.append((type(f).__name__, _saved(f)))
        f = f.next_functions[0][0]
    (y * lib.tensor(arr(*y.shape, seed=1))).sum().backward()
    return graph, nodes, y.detach(), x.grad


@needs_torch
@pytest.mark.parametrize("index", INDEXES)
def test_index_records_pytorchs_nodes_and_numbers(index):
    ref, got = _run(torch, index), _run(torchish, index)
    assert got[0] == ref[0]
    assert [n for n, _ in got[1]] == [n for n, _ in ref[1]]
    for (_, r), (_, g) in zip(ref[1], got[1]):
        assert sorted(g) == sorted(r)
        assert_same(r, g)  # (the numbers, and the index tensors of _saved_indices)
    assert_same(ref[2:], got[2:])


@needs_torch
def test_hook_on_the_node_below_the_top_sees_the_intermediate_gradient():
    def run(lib):
        x = lib.tensor(arr(4, 5), requires_grad=True)
        y = x[1:3, 0]
        seen = []
        below = y.grad_fn.next_functions[0][0]  # SliceBackward0 of x[1:3]
        below.register_hook(lambda gi, go: seen.append((gi[0].clone(), go[0].clone())))
        y.sum().backward()
        return seen, x.grad
    assert_same(run(torch), run(torchish))


@needs_torch
def test_no_grad_indexing_is_one_view_of_the_base():
    def run(lib):
        x = lib.tensor(arr(4, 5))
        y = x[1:3, 0]
        y.mul_(2)  # (writes through to x)
        return y._base is x, y.is_contiguous(), y.stride(), x
    assert_same(run(torch), run(torchish))
