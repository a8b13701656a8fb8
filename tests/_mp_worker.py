"""Process entry points for the torchish.multiprocessing tests of tests/test_script_modules.py.

``spawn`` pickles the function by reference: the child imports this module (numpy-free, torchish imported
inside the worker that needs it).
"""
from __future__ import annotations


def square_rank(rank, queue, base):
    """Put ``(rank, [base + rank] ** 2)`` on ``queue``, computed with torchish."""
    import torchish
    t = torchish.tensor([float(base + rank)])
    queue.put((rank, (t * t).tolist()))


def fail(rank, message):
    raise ValueError(f"{message} in rank {rank}")
