"""Datasets: synthetic generators and loaders for the reproduced papers' data.

This module holds everything that *produces data* for the applications and
experiments (see the documentation's Architecture page):

* synthetic generators that follow a paper's simulation protocol exactly
  (:func:`simulate_tdt`);
* small examples regenerated from published summary statistics
  (:func:`tdt_real_example`);
* loaders of the real datasets (CSV / Parquet / NumPy, from a directory the
  caller names, e.g. the CLI's ``--data-dir``) belong here as well (none yet).

The generators and examples never read files: the package needs no data
directory at runtime (the real-data TDT tables are regenerated from the
constants quoted below).  They take ``rng`` = None, an int seed or a
``numpy.random.Generator`` and are reproducible for a fixed seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .._docstrings import fill_doc
from .._validation import check_int, check_random_state
from ..typing import SeedLike

__all__ = ["JUSTICE2020_CHI2", "JUSTICE2020_N_FAMILIES", "TDTExample", "TDTPanel", "simulate_tdt", "tdt_real_example"]


@dataclass(frozen=True)
class TDTPanel:
    """TDT tables of m SNPs: transmissions of each allele (iterable: ``b, c = panel``).

    Parameters
    ----------
    b : numpy.ndarray
        Transmissions of the first allele, shape (m,).
    c : numpy.ndarray
        Transmissions of the second allele, shape (m,).
    """

    b: np.ndarray
    c: np.ndarray

    def __iter__(self) -> Iterator[np.ndarray]:
        """``b`` then ``c`` (so that ``b, c = simulate_tdt(...)`` unpacks).

        Returns
        -------
        iterator of numpy.ndarray
            The two arrays.
        """
        return iter((self.b, self.c))


@dataclass(frozen=True)
@fill_doc
class TDTExample:
    """TDT tables of a real-data example with its number of families (iterable: ``b, c, n = example``).

    %(tdt_tables)s
    n_families : int
        N, the number of trios.
    """

    b: np.ndarray
    c: np.ndarray
    n_families: int

    def __iter__(self) -> Iterator[np.ndarray | int]:
        """``b``, ``c`` then ``n_families`` (so that ``b, c, n = tdt_real_example(...)`` unpacks).

        Returns
        -------
        iterator of numpy.ndarray or int
            The three fields.
        """
        return iter((self.b, self.c, self.n_families))


# ---------------------------------------------------------------------------
# TDT (Yamamoto & Shibuya, IPCCC 2024, §V; EnhancedSPS real-data example)
# ---------------------------------------------------------------------------


def simulate_tdt(m: int, n_families: int = 150, rng: SeedLike = None) -> TDTPanel:
    r"""Simulated TDT tables of ``m`` SNPs, exactly Yamamoto & Shibuya's protocol (§V).

    For each SNP r independently (under the null of no association):

    .. math::

        s_r \sim \mathrm{Binomial}(2N, 2/3), \quad
        b_r \mid s_r \sim \mathrm{Binomial}(s_r, 1/2), \quad c_r = s_r - b_r,

    so ``b + c <= 2N``.  Vectorised: one draw of each binomial array.

    Parameters
    ----------
    m : int
        The number of SNPs (>= 1).
    n_families : int, default=150
        N (>= 1); 2N parents.
    rng : SeedLike, default=None
        The randomness: None, an int seed or a ``numpy.random.Generator``.

    Returns
    -------
    TDTPanel
        ``b`` and ``c``, int64 arrays of shape (m,): transmissions of the first and the
        second allele (unpacks as ``b, c``).

    References
    ----------
    Yamamoto & Shibuya, private top-SNP selection by the TDT statistic with
    smooth sensitivity, IPCCC 2024, Section V (simulation protocol and the
    real-data example).

    Examples
    --------
    >>> from dpselect.experiments.datasets import simulate_tdt
    >>> b, c = simulate_tdt(4, n_families=10, rng=0)
    >>> b.shape, bool(((b + c) <= 20).all())
    ((4,), True)
    """
    m = check_int(m, "m", minimum=1)
    n = check_int(n_families, "n_families", minimum=1)
    gen = check_random_state(rng)
    s = gen.binomial(2 * n, 2.0 / 3.0, size=m).astype(np.int64)
    b = gen.binomial(s, 0.5).astype(np.int64)
    return TDTPanel(b, s - b)


#: The six genome-wide significant TDT statistics of Justice et al. (2020),
#: nonsyndromic metopic craniosynostosis, as used by Yamamoto & Shibuya's
#: EnhancedSPS real-data example.
JUSTICE2020_CHI2: tuple[float, ...] = (29.83, 29.96, 33.76, 31.74, 30.52, 32.67)

#: Number of trios (families) in Justice et al. (2020): 2N = 430 transmissions.
JUSTICE2020_N_FAMILIES: int = 215


def _b_for_chi2(c: int, chi2: float) -> int:
    """Smallest integer b strictly above the root b* >= c of (b - c)^2/(b + c) = chi2.

    b* = (2c + chi2 + sqrt(chi2 (chi2 + 8c))) / 2, and b = floor(b*) + 1.
    """
    return math.floor((2.0 * c + chi2 + math.sqrt(chi2 * (chi2 + 8.0 * c))) / 2.0) + 1


def tdt_real_example(rng: SeedLike = None) -> TDTExample:
    r"""(b, c, N) tables reproducing the six significant SNPs of Justice et al. (2020).

    Only the TDT statistics are published, not the transmission counts, so
    (as in the EnhancedSPS example notebooks) each SNP's table is regenerated
    from its statistic chi2 (:data:`JUSTICE2020_CHI2`) with N = 215 families:
    draw ``c`` uniformly from {0, ..., 215}, set
    ``b = floor((2c + chi2 + sqrt(chi2 (chi2 + 8c))) / 2) + 1`` (one above the
    exact root of (b - c)^2/(b + c) = chi2, so the realised statistic is just
    above the target), and redraw c until ``b + c <= 2N = 430``.  The tables
    therefore differ per seed; each target lies in
    ``[chi2(b - 1, c), chi2(b, c))``, i.e. the realised statistic ``chi2(b, c)``
    exceeds its target by less than one unit step of b.

    .. math::

        b = \operatorname{floor}\left(\frac{2c + \chi^2 + \sqrt{\chi^2(\chi^2 + 8c)}}{2}\right) + 1

    Parameters
    ----------
    rng : SeedLike, default=None
        The randomness: None, an int seed or a ``numpy.random.Generator``.

    Returns
    -------
    TDTExample
        ``b`` and ``c``, int64 arrays of shape (6,) in the order of :data:`JUSTICE2020_CHI2`
        (transmissions of the first and the second allele), and ``n_families`` = 215
        (unpacks as ``b, c, n``).

    References
    ----------
    Yamamoto & Shibuya, private top-SNP selection by the TDT statistic with
    smooth sensitivity, IPCCC 2024, Section V (simulation protocol and the
    real-data example).
    Justice et al., genome-wide association study of metopic
    craniosynostosis, 2020 (the six published TDT statistics).

    Examples
    --------
    >>> from dpselect.experiments.datasets import tdt_real_example
    >>> b, c, n = tdt_real_example(rng=0)
    >>> n, b.shape, bool(((b + c) <= 2 * n).all())
    (215, (6,), True)
    """
    gen = check_random_state(rng)
    n = JUSTICE2020_N_FAMILIES
    b = np.zeros(len(JUSTICE2020_CHI2), dtype=np.int64)
    c = np.zeros(len(JUSTICE2020_CHI2), dtype=np.int64)
    for i, chi2 in enumerate(JUSTICE2020_CHI2):
        while True:  # rejection: about 3/4 of the c draws are accepted
            ci = int(gen.integers(0, n + 1))
            bi = _b_for_chi2(ci, chi2)
            if bi + ci <= 2 * n:
                break
        b[i], c[i] = bi, ci
    return TDTExample(b, c, n)
