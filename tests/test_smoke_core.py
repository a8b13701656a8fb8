"""A first slice of the core checks; op families have their own files."""
import numpy as np
import pytest

from oracle import arr, check, check_raises, check_fd, torchish


def test_mul_sum_grad():
    check(lambda T, a, b: (a * b).sum(), [arr(3, 4), arr(3, 4, seed=1)])


def test_broadcast_error():
    check_raises(lambda T: T.ones(3) + T.ones(4))


def test_fd_tanh_mul():
    check_fd(lambda a, b: torchish.tanh(a) * b, arr(5), arr(5, seed=2))
