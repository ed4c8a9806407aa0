"""The Accountant under concurrency: check-and-record is atomic across threads of one process."""

from __future__ import annotations

import copy
import pickle
import sys
import threading

import pytest

from dpselect import Accountant, BudgetExceededError, Privacy


def _race(n_threads: int, share: float, budget: float) -> Accountant:
    acc = Accountant(budget)
    barrier = threading.Barrier(n_threads)

    def worker() -> None:
        barrier.wait()
        try:
            acc.spend(Privacy(share))
        except BudgetExceededError:
            pass

    threads = [threading.Thread(target=worker) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return acc


@pytest.fixture
def tiny_switch_interval():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def test_threads_never_overspend(tiny_switch_interval):
    # 8 threads each spend 0.6 against 1.0: exactly one may succeed, whatever the interleaving.
    for _ in range(300):
        acc = _race(8, 0.6, 1.0)
        assert len(acc.charges) == 1
        assert acc.spent.epsilon == pytest.approx(0.6)


def test_threads_fill_the_budget_exactly(tiny_switch_interval):
    # 16 threads each spend 0.25 against 1.0: exactly four fit.
    for _ in range(50):
        acc = _race(16, 0.25, 1.0)
        assert len(acc.charges) == 4
        assert acc.spent.epsilon <= 1.0 + 1e-12


def test_copies_get_their_own_lock_and_charges():
    acc = Accountant(1.0)
    acc.spend(Privacy(0.4))
    for clone in (copy.deepcopy(acc), pickle.loads(pickle.dumps(acc))):
        assert clone.charges == acc.charges
        clone.spend(Privacy(0.5))
        assert len(acc.charges) == 1  # the original does not see the copy's charge
        with pytest.raises(BudgetExceededError):
            clone.spend(Privacy(0.2))
