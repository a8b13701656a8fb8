"""The element orders of PyTorch's CPU selection kernels, on the host.

Among equal values, which index ``sort``, ``topk``, ``kthvalue`` and ``mode`` return is decided by the algorithm
PyTorch's CPU kernel runs: ``sort`` (unless ``stable=True``) calls the C++ library's ``std::sort`` on (value, index)
pairs; ``topk`` calls ``std::partial_sort`` (when ``k * 64 <= n``) or ``std::nth_element`` (then ``std::sort`` of
the first ``k - 1`` when ``sorted``), which also fixes the order of an unsorted result; ``kthvalue`` runs its own
quickselect (``quick_select_template``, Sedgewick's partitioning); ``mode`` takes the last element of the most
frequent run after ``std::sort``. None of them is stable (``std::sort`` only up to :data:`THRESHOLD` elements, which
it insertion-sorts), so a stable sort does not give their indices. This module replays those algorithms step by step
(libstdc++'s introsort, introselect and heap selection, whose element moves are part of their specification as
implemented) on one row of ``(value, index)`` pairs.

The ops call it only for rows whose answer depends on it (ties, or ``topk(sorted=False)``'s arrangement), only on
concrete CPU values (PyTorch's CUDA kernels order differently) and within :data:`MAX_ELEMENTS`.
"""
from __future__ import annotations

import numpy as np

MAX_ELEMENTS = 1 << 16  # elements replayed per call (at most ~0.3 s of Python: mode, the slowest)
# ``sort``'s budget: a whole introsort in Python costs ~10 us per element (0.5-1.8 s for 65,536 floats, which almost
# always hold a tie or two), where a sort of that size is a ~1 ms kernel; beyond it ties keep the stable order
SORT_MAX_ELEMENTS = 1 << 12
THRESHOLD = 16  # libstdc++'s _S_threshold: introsort leaves runs this short to the final insertion sort


def greater(x, y):
    """``topk(largest=True)``'s comparator on pairs (PyTorch's ``gt_or_nan``): NaN above everything, so first."""
    return (x[0] != x[0] and y[0] == y[0]) or x[0] > y[0]


def less(x, y):
    """``topk(largest=False)``'s comparator on pairs: NaN above everything, so last."""
    return (x[0] == x[0] and y[0] != y[0]) or x[0] < y[0]


def value_less(x, y):
    """``mode``'s comparator: the values' ``<`` (NaN compares false both ways)."""
    return x[0] < y[0]


# ----------------------------------------------------------------------------------------------------------------
# libstdc++ (bits/stl_algo.h, bits/stl_heap.h), on a Python list ``a`` of pairs, half-open ranges [first, last)


def _push_heap(a, first, hole, top, value, comp):
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a, first, hole, length, value, comp):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    _push_heap(a, first, hole, top, value, comp)


def _make_heap(a, first, last, comp):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(a, first, parent, length, a[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(a, first, last, result, comp):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _heap_select(a, first, middle, last, comp):
    _make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap(a, first, middle, i, comp)


def _sort_heap(a, first, last, comp):
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, comp)


def partial_sort(a, first, middle, last, comp):
    """``std::partial_sort``: the ``middle - first`` smallest (by ``comp``) in order at the front."""
    _heap_select(a, first, middle, last, comp)
    _sort_heap(a, first, middle, comp)


def _move_median_to_first(a, result, x, y, z, comp):
    if comp(a[x], a[y]):
        if comp(a[y], a[z]):
            m = y
        elif comp(a[x], a[z]):
            m = z
        else:
            m = x
    elif comp(a[x], a[z]):
        m = x
    elif comp(a[y], a[z]):
        m = z
    else:
        m = y
    a[result], a[m] = a[m], a[result]


def _unguarded_partition(a, first, last, pivot, comp):
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _unguarded_partition_pivot(a, first, last, comp):
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _unguarded_linear_insert(a, last, comp):
    value = a[last]
    nxt = last - 1
    while comp(value, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = value


def _insertion_sort(a, first, last, comp):
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            value = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = value
        else:
            _unguarded_linear_insert(a, i, comp)


def _lg(n):
    return n.bit_length() - 1


def _introsort_loop(a, first, last, depth, comp):
    while last - first > THRESHOLD:
        if depth == 0:
            partial_sort(a, first, last, last, comp)
            return
        depth -= 1
        cut = _unguarded_partition_pivot(a, first, last, comp)
        _introsort_loop(a, cut, last, depth, comp)
        last = cut


def std_sort(a, first, last, comp):
    """``std::sort`` (introsort, then insertion sort)."""
    if first == last:
        return
    _introsort_loop(a, first, last, 2 * _lg(last - first), comp)
    if last - first > THRESHOLD:
        _insertion_sort(a, first, first + THRESHOLD, comp)
        for i in range(first + THRESHOLD, last):
            _unguarded_linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def nth_element(a, first, nth, last, comp):
    """``std::nth_element`` (introselect)."""
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _unguarded_partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


# ----------------------------------------------------------------------------------------------------------------
# PyTorch's kernels, one row each: ``row`` a 1-d numpy array; results are positions in it


def sort_row(row, comp):
    """The indices ``sort(stable=False)`` returns for this row (``std::sort`` of (value, index) pairs)."""
    a = list(zip(row.tolist(), range(len(row))))
    std_sort(a, 0, len(a), comp)
    return [i for _, i in a]


def topk_row(row, k, largest, sorted_):
    """The indices ``topk`` returns for this row, in its order (PyTorch's ``topk_impl_loop``)."""
    a = list(zip(row.tolist(), range(len(row))))
    comp = greater if largest else less
    n = len(a)
    if k * 64 <= n:
        partial_sort(a, 0, k, n, comp)
    else:
        nth_element(a, 0, k - 1, n, comp)
        if sorted_:
            std_sort(a, 0, k - 1, comp)
    return [i for _, i in a[:k]]


def kthvalue_row(row, k):
    """The index ``kthvalue`` returns (``quick_select_template`` for the ``k``-th smallest, 1-based)."""
    vals, idx = row.tolist(), list(range(len(row)))

    def gt(x, y):
        return (x != x and y == y) or x > y

    def swap(i, j):
        vals[i], vals[j] = vals[j], vals[i]
        idx[i], idx[j] = idx[j], idx[i]

    k -= 1
    lo, hi = 0, len(vals) - 1
    while True:
        if hi <= lo:
            break
        if hi == lo + 1:
            if gt(vals[lo], vals[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)
        if gt(vals[lo + 1], vals[hi]):
            swap(lo + 1, hi)
        if gt(vals[lo], vals[hi]):
            swap(lo, hi)
        if gt(vals[lo + 1], vals[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, vals[lo]
        while True:
            i += 1
            while gt(piv, vals[i]):
                i += 1
            j -= 1
            while gt(vals[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def mode_row(row):
    """The index ``mode`` returns: the last element of the first most frequent run after ``std::sort``."""
    a = list(zip(row.tolist(), range(len(row))))
    std_sort(a, 0, len(a), value_less)
    best, best_i, run = 0, 0, 0
    for i in range(len(a)):
        run += 1
        if i == len(a) - 1 or a[i][0] != a[i + 1][0]:
            if run > best:
                best, best_i = run, a[i][1]
            run = 0
    return best_i


def ties(sorted_rows, upto):
    """Rows (of values sorted along the last axis) with two equal values among the first ``upto`` (NaNs equal)."""
    head = sorted_rows[..., :upto]
    same = head[..., 1:] == head[..., :-1]
    if np.issubdtype(head.dtype, np.floating):
        same |= np.isnan(head[..., 1:]) & np.isnan(head[..., :-1])
    return same.any(axis=-1)
