"""Shared test helpers, and the ``slow`` marker: slow tests run only with DPSELECT_SLOW=1.

The default run (``python -m pytest -q -n auto``) skips every test marked
``@pytest.mark.slow``; CI runs them in a separate step with
``DPSELECT_SLOW=1 python -m pytest -q -m slow``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest


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
