"""Shared test helpers, and the ``slow`` marker: slow tests run only with DPSELECT_SLOW=1.

The default run (``python -m pytest -q -n auto``) skips every test marked
``@pytest.mark.slow``; CI runs them in a separate step with
``DPSELECT_SLOW=1 python -m pytest -q -m slow``.
"""

from __future__ import annotations

import math
import os

import mpmath
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """mpmath's precision is global: a test that raises it must not change the next test's."""
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec


def slow_enabled() -> bool:
    """Whether the environment asks for the slow tests (DPSELECT_SLOW set to anything but "", "0")."""
    return os.environ.get("DPSELECT_SLOW", "") not in ("", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if slow_enabled():
        return
    skip = pytest.mark.skip(reason="slow; set DPSELECT_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def assert_frequencies_match(draws: np.ndarray, probs: np.ndarray, n_se: float = 5.0) -> None:
    """Empirical frequencies within n_se binomial standard errors of exact probabilities.

    The standard error uses max(p(1-p), 1/n) so that outputs of probability ~0
    (which should essentially never occur) get a tolerance of a few draws.
    """
    n = draws.size
    freq = np.bincount(draws, minlength=probs.size) / n
    se = np.sqrt(np.maximum(probs * (1 - probs), 1.0 / n) / n)
    bad = np.abs(freq - probs) > n_se * se
    assert not bad.any(), f"frequencies {freq[bad]} vs exact {probs[bad]} (se {se[bad]})"


def on_grid(y, lam) -> bool:
    """Whether every entry of ``y`` is an exact multiple of ``lam``."""
    k = np.asarray(y, dtype=np.float64) / lam
    return bool(np.all(k == np.round(k)))


def assert_neighbour_frequencies(yx, yy, eps, n) -> None:
    """On every output, freq_x <= e^eps freq_y + 5 standard errors of the difference, both ways."""
    pts = np.union1d(yx, yy)
    fx = np.array([np.sum(yx == p) for p in pts]) / n
    fy = np.array([np.sum(yy == p) for p in pts]) / n
    for a, b in ((fx, fy), (fy, fx)):
        se = np.sqrt((a * (1 - a) + math.exp(2 * eps) * b * (1 - b)) / n + 1 / n**2)
        assert np.all(a <= math.exp(eps) * b + 5 * se)


# The red team's reconstruction of NumPy's float samplers: U = k 2^-53, k in {0, ..., 2^53 - 1}.
TWO53 = 2**53


def numpy_laplace(k: int) -> float:
    """NumPy's Generator.laplace for the 53-bit uniform U = k 2^-53 (distributions.c, random_laplace)."""
    u = k / TWO53
    if u >= 0.5:
        return -math.log(2.0 - u - u)
    return math.log(u + u)


def first_reaching(f, y) -> int:
    """The smallest k in [0, 2^53) with f(k) >= y, for a nondecreasing f (bisection)."""
    lo, hi = 0, TWO53 - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if f(mid) < y:
            lo = mid + 1
        else:
            hi = mid
    return lo


def possible_laplace(y: float, value: float, scale: float) -> bool:
    """Is there a 53-bit uniform U with value + scale * laplace(U) == y (NumPy's float arithmetic)?"""
    f = lambda k: value + scale * numpy_laplace(k) if k > 0 else -math.inf
    k = first_reaching(f, y)
    return any(f(j) == y for j in (k - 1, k, k + 1) if 0 < j < TWO53)


def possible_uniform(y: float, lo: float, hi: float) -> bool:
    """Is there a 53-bit U = k 2^-53 with min(lo + U (hi - lo), hi) == y (a float uniform draw in a piece)?"""
    f = lambda k: min(lo + (k / TWO53) * (hi - lo), hi)
    k = first_reaching(f, y)
    return any(f(j) == y for j in (k - 1, k, k + 1) if 0 <= j < TWO53)


class CachedMechanism:
    """Audit proxy that computes a mechanism's log-probabilities once per distinct problem ``key``.

    The default key is the score vector, which determines the output law of the
    classic mechanisms; instance-based mechanisms need a key that includes the
    sensitivity profile (see :func:`scores_and_profile`).
    """

    def __init__(self, mech, key=None):
        self.mech, self.epsilon, self._cache = mech, getattr(mech, "epsilon", None), {}
        self._key = key if key is not None else (lambda problem: problem.scores.tobytes())

    def log_probabilities(self, problem):
        key = self._key(problem)
        if key not in self._cache:
            self._cache[key] = self.mech.log_probabilities(problem)
        return self._cache[key]

    def privacy(self, problem):
        return self.mech.privacy(problem)


def scores_and_profile(problem):
    """Key for :class:`CachedMechanism`: scores plus the per-candidate local-sensitivity profile."""
    return problem.scores.tobytes(), problem.candidate_local_sensitivity_matrix().tobytes()
