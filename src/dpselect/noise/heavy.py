"""Heavy-tailed noise: Student's t and the polynomial-tail family P_gamma (mathematics §2.3, §2.4)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from dpselect._params import Rule, positive
from dpselect._validation import check_epsilon, check_finite_float, check_tail_exponent

from .._docstrings import fill_doc
from ._special import _INF, LOG2, Array, _beta_args, _ibeta_tail_logx, _log1mexp, _log_ibeta, _require_pure
from ._symmetric import _Symmetric


@dataclass(frozen=True)
class StudentT(_Symmetric):
    """Student's t with ``df`` = d degrees of freedom (mathematics §2.4, Bun-Steinke 2019).

    h(z) = (1 + z^2/d)^{-(d+1)/2} / (sqrt(d) B(d/2, 1/2));
    P[|Z| > a] = I_{d/(d+a^2)}(d/2, 1/2) (so F(z) = 1 - I/2 for z >= 0), evaluated
    in log space (accurate far in the tails, e.g. logsf(1e8)).  Sampler
    ``rng.standard_t``; Var = d/(d-2) (d > 2).
    Constants: L_s = (d+1)/(2 sqrt d); L_d = d+1 (Bun-Steinke's constant, used by
    ``admissible``; the tight derived value is max(d, 1), mathematics §2.4/§2.7).

    Parameters
    ----------
    df : float
        The degrees of freedom d > 0 (``admissible`` needs d >= 0.1).

    See Also
    --------
    PolynomialTail : Polynomial-tail law P_gamma: h(z) = c_gamma / (1 + |z|^gamma), gamma > 1 (mathematics §2.3)

    Examples
    --------
    >>> StudentT(3).var()
    3.0
    """

    df: float
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"df": positive()}

    def _args(self, a: Array) -> tuple[Array, Array, Array, Array]:
        return _beta_args(a / math.sqrt(self.df), 2.0)

    def _fold_logpdf(self, a: Array) -> Array:
        d = self.df
        logx = self._args(a)[2]
        return LOG2 - 0.5 * math.log(d) - special.betaln(d / 2, 0.5) + 0.5 * (d + 1) * logx

    def _fold_logsf(self, a: Array) -> Array:
        x, y, lx, ly = self._args(a)
        return _log_ibeta(self.df / 2, 0.5, x, y, lx, ly)

    def _fold_logcdf(self, a: Array) -> Array:
        x, y, lx, ly = self._args(a)
        return _log_ibeta(0.5, self.df / 2, y, x, ly, lx)

    def _logpdf(self, z: Array) -> Array:
        """-(d+1)/2 log(1 + z^2/d) - log(sqrt(d) B(d/2, 1/2)), without forming z^2 for huge z."""
        d, a = self.df, np.abs(z)
        big = a > 1e150
        r = np.where(big, 0.0, a * a / d)
        lt = np.where(big, 2.0 * np.log(a) - math.log(d), np.log1p(r))
        return -0.5 * (d + 1.0) * lt - 0.5 * math.log(d) - special.betaln(d / 2, 0.5)

    def _fold_tail_guess(self, w: Array) -> Array:
        lx = _ibeta_tail_logx(w, self.df / 2, 0.5)
        return 0.5 * (math.log(self.df) + _log1mexp(-lx) - lx)

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return np.abs(rng.standard_t(self.df, size=shape))

    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return rng.standard_t(self.df, size=shape)

    def mean_abs(self) -> float:
        """Return E|Z|.

        Returns
        -------
        float
            2 sqrt(d) / ((d - 1) B(d/2, 1/2)) for d > 1 (``inf`` when infinite).
        """
        d = self.df
        if d <= 1:
            return _INF
        return float(2.0 * math.sqrt(d) / (d - 1) * math.exp(-special.betaln(d / 2, 0.5)))

    def var(self) -> float:
        """Return Var Z.

        Returns
        -------
        float
            d / (d - 2) for d > 2 (``inf`` when infinite).
        """
        return self.df / (self.df - 2) if self.df > 2 else _INF

    @property
    def tail_exponent(self) -> float:  # type: ignore[override]
        """The kappa with P[|Z| > z] ~ z^-kappa: df."""
        return self.df

    @property
    def analytic_strip(self) -> float:  # type: ignore[override]
        """The density's poles and the CDF's branch points are at z = +-i sqrt(df)."""
        return math.sqrt(self.df)

    @property
    def fold_sector(self) -> float:  # type: ignore[override]
        """The sector of the folded law: min(pi/4, pi/(2(d+1))).

        For |arg z| < pi/4, Re(1 + z^2/d) > 0, so h is analytic, and
        |arg h(u z)| < (d+1)|arg z| < pi/2 for u in [0, 1], so the folded cdf
        2 z int_0^1 h(u z) du has no zero but z = 0 (mathematics §13).
        """
        return min(math.pi / 4.0, math.pi / (2.0 * (self.df + 1.0)))

    @property
    def shift_constant(self) -> float:  # type: ignore[override]
        """L_s = (d+1)/(2 sqrt d) (mathematics §2.4)."""
        return (self.df + 1) / (2.0 * math.sqrt(self.df))

    @property
    def dilation_constant(self) -> float:  # type: ignore[override]
        """L_d = d + 1 (Bun-Steinke's constant, mathematics §2.4)."""
        return self.df + 1.0

    @fill_doc
    def admissible(self, epsilon: float, delta: float = 0.0) -> tuple[float, float]:
        """Return alpha = eps sqrt(d)/(d+1), beta = eps/(2(d+1)) (pure, mathematics §2.4).

        BS19 Theorem 31: eps = (d+1)/(2 sqrt d) |s| + (d+1)|t|.  delta must be 0.

        Requires df >= 0.1 (:data:`MIN_TAIL_EXPONENT`, checked again by the engine):
        heavier tails put mass beyond the largest double (P[|Z| > 1.8e308] ~
        1.8e308^-df), which the sampler cannot draw and the exact law cannot integrate.

        %(smooth_target)s
            Must be 0 (the law is pure).

        %(alpha_beta)s
        """
        check_tail_exponent(self.df, "df", self.df)
        return self._lipschitz_admissible(epsilon, delta)


# ----------------------------------------------------------------------------- polynomial tail
def _gamma(value: Any, name: str) -> float:
    g = check_finite_float(value, name)
    if not g > 1.0:
        raise ValueError(f"{name} must be > 1, got {g!r}")
    return g


@dataclass(frozen=True)
class PolynomialTail(_Symmetric):
    """Polynomial-tail law P_gamma: h(z) = c_gamma / (1 + |z|^gamma), gamma > 1 (mathematics §2.3).

    c_gamma = gamma sin(pi/gamma)/(2 pi) (gamma = 2: 1/pi, 4: sqrt2/pi).
    F(z) = 1/2 + sgn(z)/2 I_{u}(1/gamma, 1 - 1/gamma), u = |z|^gamma/(1+|z|^gamma); the
    upper tail uses P[|Z| > a] = I_{1/(1+a^gamma)}(1 - 1/gamma, 1/gamma) in log space.
    Exact sampler: |Z| = (G1/G2)^{1/gamma}, G1 ~ Gamma(1/gamma), G2 ~ Gamma(1 - 1/gamma),
    random sign (mathematics §2.3 (b)); the small-shape gammas are drawn in log space as
    log Gamma(k+1) - E/k (E ~ Exp(1)), so nothing underflows.
    E|Z| = 1/(2 cos(pi/gamma)) (gamma > 2), Var = sin(pi/gamma)/sin(3 pi/gamma) (gamma > 3).
    Constants: L_s = (gamma-1)^{(gamma-1)/gamma}, L_d = max(1, gamma-1).

    Parameters
    ----------
    gamma : float
        The tail exponent gamma > 1 (``admissible`` needs gamma >= 1.1).

    See Also
    --------
    StudentT : Student's t with ``df`` = d degrees of freedom (mathematics §2.4, Bun-Steinke 2019)

    Examples
    --------
    >>> round(PolynomialTail(4).c_gamma, 6)
    0.450158
    """

    gamma: float
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"gamma": Rule("a finite float > 1", check=_gamma)}

    @property
    def tail_exponent(self) -> float:  # type: ignore[override]
        """The kappa with P[|Z| > z] ~ z^-kappa: gamma - 1."""
        return self.gamma - 1.0

    @property
    def analytic_mode(self) -> bool:  # type: ignore[override]
        """|z|^gamma is analytic at 0 only for even integer gamma."""
        return self.gamma % 2.0 == 0.0

    @property
    def analytic_strip(self) -> float:  # type: ignore[override]
        """For even gamma the nearest zero of 1 + z^gamma is at |Im z| = sin(pi/gamma); 0 otherwise."""
        return math.sin(math.pi / self.gamma) if self.analytic_mode else 0.0

    @property
    def fold_sector(self) -> float:  # type: ignore[override]
        """The sector of the folded law: pi/(2 gamma).

        There Re(1 + (u z)^gamma) > 1 for u in [0, 1], so the density's poles
        (z^gamma = -1, |arg z| = pi/gamma) stay outside and the folded cdf
        2 c z int_0^1 du/(1 + (u z)^gamma) has no zero but z = 0 (mathematics §13).
        """
        return math.pi / (2.0 * self.gamma)

    @property
    def c_gamma(self) -> float:
        """Normalising constant gamma sin(pi/gamma)/(2 pi)."""
        return self.gamma * math.sin(math.pi / self.gamma) / (2.0 * math.pi)

    def _fold_logpdf(self, a: Array) -> Array:
        return math.log(2.0 * self.c_gamma) + _beta_args(a, self.gamma)[2]

    def _fold_logsf(self, a: Array) -> Array:
        x, y, lx, ly = _beta_args(a, self.gamma)
        return _log_ibeta(1.0 - 1.0 / self.gamma, 1.0 / self.gamma, x, y, lx, ly)

    def _fold_logcdf(self, a: Array) -> Array:
        x, y, lx, ly = _beta_args(a, self.gamma)
        return _log_ibeta(1.0 / self.gamma, 1.0 - 1.0 / self.gamma, y, x, ly, lx)

    def _fold_tail_guess(self, w: Array) -> Array:
        lx = _ibeta_tail_logx(w, 1.0 - 1.0 / self.gamma, 1.0 / self.gamma)
        return (_log1mexp(-lx) - lx) / self.gamma

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        k1, k2 = 1.0 / self.gamma, 1.0 - 1.0 / self.gamma
        out = rng.standard_gamma(k1 + 1.0, shape)
        out /= rng.standard_gamma(k2 + 1.0, shape)
        np.log(out, out=out)
        out -= rng.standard_exponential(shape) / k1
        out += rng.standard_exponential(shape) / k2
        out /= self.gamma
        return np.exp(out, out=out)

    def mean_abs(self) -> float:
        """Return E|Z|.

        Returns
        -------
        float
            1/(2 cos(pi/gamma)) for gamma > 2 (``inf`` when infinite).
        """
        return 1.0 / (2.0 * math.cos(math.pi / self.gamma)) if self.gamma > 2 else _INF

    def var(self) -> float:
        """Return Var Z.

        Returns
        -------
        float
            sin(pi/gamma)/sin(3 pi/gamma) for gamma > 3 (``inf`` when infinite).
        """
        g = self.gamma
        return math.sin(math.pi / g) / math.sin(3 * math.pi / g) if g > 3 else _INF

    @property
    def shift_constant(self) -> float:  # type: ignore[override]
        """L_s = (gamma-1)^{(gamma-1)/gamma} (mathematics §2.3)."""
        return (self.gamma - 1.0) ** ((self.gamma - 1.0) / self.gamma)

    @property
    def dilation_constant(self) -> float:  # type: ignore[override]
        """L_d = max(1, gamma-1) (mathematics §2.3)."""
        return max(1.0, self.gamma - 1.0)

    @fill_doc
    def admissible(self, epsilon: float, delta: float = 0.0, method: str = "ys") -> tuple[float, float]:
        """Return (alpha, beta) for pure (epsilon, 0); delta must be 0.

        * ``"ys"``: Yamamoto-Shibuya Thm 6 corrected (mathematics §2.3, mathematics §7 item 1):
          alpha = eps/(2 (gamma-1)^{(gamma-1)/gamma}), beta = eps/(2 max(1, gamma-1)).
        * ``"nrs"``: NRS07 (mathematics §2.3): alpha = beta = eps/(2 (gamma+1)) (conservative).

        Requires gamma >= 1.1 (tail exponent gamma - 1 >= :data:`MIN_TAIL_EXPONENT`, see
        :meth:`StudentT.admissible`).

        %(smooth_target)s
            Must be 0 (the law is pure).
        method : {"ys", "nrs"}, default="ys"
            Which calibration (see above).

        %(alpha_beta)s
        """
        check_tail_exponent(self.gamma - 1.0, "gamma", self.gamma)
        if method == "ys":
            return self._lipschitz_admissible(epsilon, delta)
        if method == "nrs":
            eps = check_epsilon(epsilon)
            _require_pure(delta, "PolynomialTail")
            v = eps / (2.0 * (self.gamma + 1.0))
            return v, v
        raise ValueError(f"method must be 'ys' or 'nrs', got {method!r}")
