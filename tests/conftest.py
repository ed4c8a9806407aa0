"""Shared test helpers."""

from __future__ import annotations

import numpy as np


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
