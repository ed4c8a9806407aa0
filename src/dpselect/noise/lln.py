"""Laplace log-normal noise LLN(sigma) (Bun & Steinke 2019, §3.1.1; mathematics §2.5)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy import special

from dpselect._params import Rule, positive
from dpselect._validation import check_delta_positive, check_epsilon, check_positive

from .._docstrings import fill_doc
from ..accounting import dp_to_zcdp, lln_zcdp_rho
from ._special import _INF, LOG_HALF, Array, _lambertw_exp, _log1mexp
from ._symmetric import _Symmetric


@lru_cache(maxsize=16)
def _gh_rule(n: int) -> tuple[Array, Array]:
    """Probabilists' Gauss-Hermite nodes and log weights, with the N(0,1) density divided out.

    (So that int exp(G(y)) dy = logsumexp(logw + G(x))).  Underflowed weights are dropped.
    """
    x, w = special.roots_hermitenorm(n)
    keep = w > 0
    return x[keep], np.log(w[keep]) + 0.5 * x[keep] ** 2


def _q(t: Array) -> Array:
    """Return t / (e^t - 1), with its limits 1 (t = 0) and 0 (t = inf)."""
    return np.where(t == 0, 1.0, np.where(np.isinf(t), 0.0, t / np.expm1(t)))


@dataclass(frozen=True)
class LaplaceLogNormal(_Symmetric):
    """Laplace log-normal LLN(sigma): Z = X e^{sigma Y}, X ~ Laplace(1), Y ~ N(0,1) indep.

    Source: Bun-Steinke 2019 §3.1.1, mathematics §2.5.

    h(z) = E_Y[e^{-sigma Y} exp(-|z| e^{-sigma Y})]/2,  P[Z > z] = E_Y[exp(-z e^{-sigma Y})]/2 (z >= 0).
    The expectations are computed in log space by a Gauss-Hermite rule (~64 sigma^2 nodes,
    at least 32, at most 2048: accurate to ~1e-13 relative for sigma <= 5)
    re-centred at the maximiser y* of the log-integrand (y* = W(a sigma^2)/sigma for
    the sf, via Lambert W; bisection for the small-a cdf) and scaled by its
    curvature (Laplace-method centring), so the far tails stay accurate too and
    finite out to |z| = 1e300.  Inverses by vectorised safeguarded Newton.
    Sampler: random sign * Exp(1) * exp(sigma N(0,1)) with NumPy's generators.
    E|Z| = e^{sigma^2/2}, Var = 2 e^{2 sigma^2}.  Not pure: it gives zCDP (:meth:`zcdp_rho`).

    Parameters
    ----------
    sigma : float
        The log-normal shape sigma > 0.

    See Also
    --------
    GridLaplace : Exact discrete Laplace release on the grid lambda Z for a statistic of sensitivity Delta
    Laplace : Standard Laplace: h(z) = e^{-|z|}/2, F(z) = e^z/2 (z < 0), 1 - e^{-z}/2 (z >= 0)
    discrete_laplace : Exact discrete Laplace on the integers with rational ``scale`` > 0

    Examples
    --------
    >>> round(LaplaceLogNormal(0.5).mean_abs(), 6)
    1.133148
    """

    sigma: float
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"sigma": positive()}
    analytic_mode: ClassVar[bool] = False
    #: With t = e^{-sigma Y}: f(z) = E[t e^{-z t}]/2 and 1 - F(z) = E[e^{-z t}]/2 (z > 0) are
    #: Laplace transforms of a law with all moments, analytic on Re z > 0, where
    #: |E[e^{-z t}]| < 1, so F and the folded cdf 1 - E[e^{-z t}] have no zero there.
    right_sector: ClassVar[float] = math.pi / 2.0
    fold_sector: ClassVar[float] = math.pi / 2.0

    def _quad(self, a: Array, kind: str) -> Array:
        """Return log E_Y[f(Y)] for finite a >= 0; kind in sf / pdf / cdf (see class docstring)."""
        n = int(min(2048, max(32, 32 * math.ceil(2.0 * self.sigma**2))))  # ~64 sigma^2 nodes
        x, logw = _gh_rule(n)
        out, chunk = np.empty_like(a), max(1, 2**19 // n)
        for i in range(0, a.size, chunk):
            out[i : i + chunk] = self._quad_chunk(a[i : i + chunk], kind, x, logw)
        return out

    def _quad_chunk(self, a: Array, kind: str, x: Array, logw: Array) -> Array:
        s, la = self.sigma, np.log(a)
        if kind == "sf":  # maximise -y^2/2 - a e^{-s y}
            c = _lambertw_exp(la + 2 * math.log(s)) / s
            curv = 1.0 + s * c
        elif kind == "pdf":  # maximise -y^2/2 - s y - a e^{-s y}
            c = _lambertw_exp(la + 2 * math.log(s) + s * s) / s - s
            curv = 1.0 + s * (c + s)
        else:  # maximise -y^2/2 + log(1 - exp(-a e^{-s y})): root of -y - s q(t) in [-s, 0]
            lo, hi = np.full_like(a, -s), np.zeros_like(a)
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                pos = -mid - s * _q(np.exp(la - s * mid)) > 0
                lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
            c = 0.5 * (lo + hi)
            t = np.exp(la - s * c)
            q = _q(t)
            curv = 1.0 + s * s * q * np.maximum(t + q - 1.0, 0.0)
        scale = 1.0 / np.sqrt(curv)
        y = c[:, None] + scale[:, None] * x
        t = np.exp(la[:, None] - s * y)
        g = -t if kind == "sf" else (-s * y - t if kind == "pdf" else _log1mexp(t))
        g += logw - 0.5 * y * y - 0.5 * math.log(2.0 * math.pi)
        m = np.max(g, axis=1)
        m = np.where(np.isfinite(m), m, 0.0)
        return np.log(scale) + m + np.log(np.sum(np.exp(g - m[:, None]), axis=1))

    def _fold_eval(self, a: Array, kind: str, at_inf: float) -> Array:
        out = np.where(np.isnan(a), np.nan, at_inf)
        fin = np.isfinite(a)
        out[fin] = self._quad(a[fin], kind)
        return out

    def _fold_logpdf(self, a: Array) -> Array:
        return self._fold_eval(a, "pdf", -_INF)

    def _fold_logsf(self, a: Array) -> Array:
        return self._fold_eval(a, "sf", -_INF)

    def _fold_logcdf(self, a: Array) -> Array:
        ls = self._fold_logsf(a)
        out = _log1mexp(-ls)
        direct = ls > LOG_HALF  # cdf < 1/2: integrate 1 - exp(-a e^{-sigma y}) directly
        out[direct] = self._fold_eval(a[direct], "cdf", 0.0)
        return out

    def _fold_tail_guess(self, w: Array) -> Array:
        # Laplace method: log sf ~ -y*^2/2 - y*/sigma with a = (y*/sigma) e^{sigma y*}
        s = self.sigma
        y = -2.0 * w / (1.0 / s + np.sqrt(1.0 / s**2 - 2.0 * w))
        return np.log(np.maximum(y, 1e-300) / s) + s * y

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        out = rng.standard_normal(shape)
        out *= self.sigma
        np.exp(out, out=out)
        out *= rng.standard_exponential(shape)
        return out

    def mean_abs(self) -> float:
        """Return E|Z| = e^{sigma^2/2}.

        Returns
        -------
        float
            E|Z|.
        """
        return math.exp(self.sigma**2 / 2.0)

    def var(self) -> float:
        """Return Var Z = 2 e^{2 sigma^2}.

        Returns
        -------
        float
            Var Z.
        """
        return 2.0 * math.exp(2.0 * self.sigma**2)

    def zcdp_rho(self, alpha: float, beta: float) -> float:
        """Return rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2.

        Noise scale S(x)/alpha with S beta-smooth is rho-zCDP (BS19 §3.1.1, mathematics
        §2.5; one coordinate): :func:`dpselect.accounting.lln_zcdp_rho`.

        Parameters
        ----------
        alpha : float
            The noise scale is S(x)/alpha, alpha > 0.
        beta : float
            The smoothness of S, >= 0.

        Returns
        -------
        float
            rho.
        """
        return lln_zcdp_rho(self.sigma, alpha, beta)

    @fill_doc
    def admissible(self, epsilon: float, delta: float = 0.0) -> tuple[float, float]:
        """Return (alpha, beta) giving (epsilon, delta)-DP through zCDP (mathematics §2.5); delta > 0.

        rho = dp_to_zcdp(epsilon, delta), eps_c = sqrt(2 rho), split in halves between
        the t- and s-terms of eps_c = beta/sigma + e^{3 sigma^2/2} alpha:
        beta = sigma eps_c/2, alpha = e^{-3 sigma^2/2} eps_c/2 (so zcdp_rho(alpha, beta) = rho).

        %(smooth_target)s
            The target delta, in (0, 1): must be > 0.

        %(alpha_beta)s
        """
        eps = check_epsilon(epsilon)
        d = check_delta_positive(delta, "LaplaceLogNormal noise is not pure; it gives zCDP (mathematics §2.5)")
        eps_c = math.sqrt(2.0 * dp_to_zcdp(eps, d))
        return math.exp(-1.5 * self.sigma**2) * eps_c / 2.0, self.sigma * eps_c / 2.0

    @staticmethod
    def optimal_sigma(epsilon_c: float, beta: float) -> float:
        """Return the variance-optimal sigma for eps_c = t/sigma + e^{3 sigma^2/2} s with t = beta (mathematics §2.5).

        The root of 5 (eps/t) sigma^3 - 5 sigma^2 - 1 = 0 in (t/eps, max(2t/eps, 1/2)],
        solved as x^2 (x - 1) = k^2/5 with x = k sigma, k = eps/t (no cancellation).

        Parameters
        ----------
        epsilon_c : float
            The per-coordinate CDP level eps_c > 0.
        beta : float
            The smoothness t = beta > 0.

        Returns
        -------
        float
            sigma.
        """
        k = check_epsilon(epsilon_c, "epsilon_c") / check_positive(beta, "beta")
        from scipy.optimize import brentq  # imported here: scipy.optimize is slow to import

        x = brentq(
            lambda v: v * v * (v - 1.0) - k * k / 5.0, 1.0, max(2.0, k / 2.0), xtol=1e-300, rtol=4 * np.finfo(float).eps
        )
        return x / k
