r"""Local dampening (Farias et al., PVLDB 2020 / VLDB J. 2023; mathematics §5.1).

**[RECON]**: the primary paper could not be retrieved; the definitions below
are mathematics §5.1's reconstruction (two public code bases by the same group +
recollection).  Confirm against the primary paper before relying on it.

Definitions (mathematics §5.1)
--------------------------
* Element local sensitivity at distance t: delta(x, t, r) =
  max_{y: d(x,y) <= t} LS_u(y, r), here ``problem.candidate_local_sensitivity(t)``.
  It is an *admissible* sensitivity function: (i) delta(x, 0, r) >= LS_u(x, r),
  (ii) delta(x, t, r) <= delta(y, t+1, r) for neighbours x ~ y.
* b(x, i, r) = sum_{j=0}^{i-1} delta(x, j, r) for i > 0, b(x, 0, r) = 0,
  b(x, -i, r) = -b(x, i, r).
* Dampened utility, for the integer i with b(x, i, r) <= u(x, r) < b(x, i+1, r)
  (its global sensitivity is at most 1):

  .. math::

      D(x, r) = \frac{u(x, r) - b(x, i, r)}{b(x, i+1, r) - b(x, i, r)} + i.

* Mechanism: P[r] ∝ exp(eps D(x, r) / 2), which is eps-DP (Farias et al.;
  mathematics §5.1):

  .. math::

      P[r] = \frac{\exp(\varepsilon D(x, r) / 2)}{\sum_s \exp(\varepsilon D(x, s) / 2)}.

Conventions made explicit here
------------------------------
* **Profile horizon.**  delta(x, t, r) is read for t = 0..T with
  T = ``problem.profile_horizon`` (``max_distance``, or the last breakpoint
  of a step profile: the problem promises that its profiles are constant
  beyond it), and delta(x, t, r) = delta(x, T, r) for
  t > T, so b grows linearly with slope delta(x, T, r) beyond b(x, T+1, r) and
  D is extended linearly there.  This is the exact element local sensitivity
  (admissible by definition); the mathematics page's "boundedness" convention
  delta = GS for t >= n is not imposed (it only matters for utilities that
  run beyond b(T+1), where the exact profile is the smaller, still admissible,
  choice).
* **Zero-length intervals, u = 0.**  delta is non-decreasing in t (checked),
  so zero-length intervals (delta(x, j, r) = 0) can only be the leading ones,
  j < t*_r, and then b = 0 on the whole index range [-t*_r, t*_r]: for
  u != 0 the defining condition has exactly one solution and D is the unique
  point of the piecewise-linear inverse of b (the zero-length intervals are
  skipped).  Only u = 0 is ambiguous: every D in [-t*_r, t*_r] satisfies
  "b(D) = u".  The literal reading of the condition (largest i with
  b(i) <= 0) gives D = +t*_r, which makes a candidate with score 0 look
  *better* the more stable its score is (on the argmax indicator, local
  dampening would then prefer the class with the smallest count).  We use
  **D = 0 for u = 0** (the anchor b(x, 0, r) = 0 of the definition; D stays
  odd, D(-u) = -D(u); the authors' public code also returns 0 there).
  Sensitivity <= 1 for this rule [DERIVED]: let B_x be the piecewise-linear
  interpolation of i -> b(x, i, r) on the reals and c = min(delta(x,0,r),
  delta(y,0,r)) >= |u(x,r) - u(y,r)|.  Admissibility (ii) and
  c <= delta(., 0, r) give B_y(s + 1) >= B_x(s) + c for all real s (and
  symmetrically).  If D_y > D_x + 1 then u_y = B_y(D_y) >= B_y(D_x + 1) >=
  u_x + c >= u_y, so B_y is constant (= u_y) on [D_x + 1, D_y]; the only flat
  of B_y is at level 0, so u_y = 0 and D_y = 0 by the rule, and D_x < -1,
  i.e. u_x < 0 = u_y: then c = u_y - u_x > 0, so delta(y, 0, r) > 0 and B_y
  has no flat — a contradiction.  (The literal rule, and the "leftmost"
  rule D = -t*_r, are sensitivity-1 as well; the choice only affects
  utility.)
* **Constant candidates.**  If delta(x, t, r) = 0 for every t (the candidate's
  score can never change), b is identically 0 and there is no solution for
  u != 0: D = +inf for u > 0, -inf for u < 0 (0 for u = 0).  Candidates with
  D = +inf are then output uniformly (the others never), -inf ones never.
  Neighbours have the same profile property and the same score, so this is
  consistent with eps-DP.

With a constant profile delta = GS the mechanism is the exponential mechanism
(D = u/GS); with instance-based profiles it is not (tests check both).

Shifted local dampening (VLDB J.) is not offered (mathematics §9.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from .. import _engine as noisy_max
from .._docstrings import fill_doc
from .._mechanism_support import PROBLEM, check_problem
from .._params import EPSILON, Rule, validate_fields, validate_params
from .._validation import check_random_state
from ..noise import Gumbel
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..sensitivity import StepProfile
from ..typing import SeedLike
from .base import Mechanism, no_guarantee

__all__ = ["LocalDampening", "dampened_utilities"]

_CHUNK_ELEMENTS = 1 << 22


@fill_doc
def candidate_steps(problem: SelectionProblem) -> tuple[np.ndarray, np.ndarray]:
    """The per-candidate profile as steps: breakpoints p (K+1,) from 0 and values (K+1, m).

    delta(x, t, r) = values[k, r] for p_k <= t < p_{k+1} (and for t >= p_K
    when k = K).  A step profile (per candidate, or the global one broadcast)
    is read as it is, so memory and time follow the number of breakpoints
    (at most the number of candidates plus one for the counts' profiles),
    never the distances themselves; a callable profile is read at every
    t = 0..T (T = ``problem.profile_horizon``).  The values must be
    non-decreasing in t.

    %(profile_sections)s
    tuple of numpy.ndarray
        The breakpoints (int, shape (K+1,), from 0) and the values (float,
        shape (K+1, m)).
    """
    cls, ls = problem._cls, problem._ls
    if isinstance(cls, StepProfile):
        bps, values = np.asarray(cls.breakpoints, dtype=np.int64), np.asarray(cls.values, dtype=np.float64)
    elif cls is None and isinstance(ls, StepProfile):
        bps = np.asarray(ls.breakpoints, dtype=np.int64)
        values = np.repeat(np.asarray(ls.values, dtype=np.float64)[:, None], problem.n_candidates, axis=1)
    else:
        values = problem.candidate_local_sensitivity_matrix()
        bps = np.arange(values.shape[0], dtype=np.int64)
    if (np.diff(values, axis=0) < 0).any():
        raise ValueError(
            "problem.candidate_local_sensitivity(t) must be non-decreasing in t (it is a local "
            "sensitivity at distance t) for local dampening"
        )
    return bps, values


def _dampen(u: np.ndarray, bps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """D for utilities u (m,) and non-decreasing step profiles (bps (K+1,), delta (K+1, m)).

    b is piecewise linear between the breakpoints: B_0 = 0 and
    B_{k+1} = B_k + delta_k (p_{k+1} - p_k), slope delta_K beyond p_K (at the
    integers it is the sum of the module docstring).  For w = |u| > 0,
    k = (number of B_j < w) - 1 is the piece with B_k < w <= B_{k+1}, and
    D = sign(u) (p_k + (w - B_k)/delta_k).  Because delta is non-decreasing
    the only zero-slope pieces are the leading ones (B = 0 there), so for
    u != 0 this is exactly the defining condition b(i) <= u < b(i+1) (the
    interpolation is continuous across segment ends); u = 0 gives D = 0.
    With unit breakpoints this is the sum form term by term.
    """
    K1, m = delta.shape  # K + 1 pieces
    B = np.zeros((K1, m))
    np.cumsum(delta[:-1] * np.diff(bps).astype(np.float64)[:, None], axis=0, out=B[1:])
    w = np.abs(u)
    k = np.maximum((B < w[None, :]).sum(axis=0) - 1, 0)  # in [0, K]
    cols = np.arange(m)
    width = delta[k, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = bps[k] + (w - B[k, cols]) / width
    mag = np.where(width > 0, mag, np.inf)  # all-zero profile (k = K, slope 0): |D| = inf
    mag[w == 0] = 0.0
    return np.where(u < 0, -mag, mag)


@validate_params({"problem": PROBLEM})
@fill_doc
def dampened_utilities(problem: SelectionProblem) -> np.ndarray:
    r"""The dampened utilities D_{u,delta}(x, r) of every candidate (mathematics §5.1).

    .. math::

        D(x, r) = \frac{u(x, r) - b(x, i, r)}{b(x, i+1, r) - b(x, i, r)} + i,
        \qquad b(x, i, r) = \sum_{j=0}^{i-1} \delta(x, j, r),

    for the integer i with b(x, i, r) <= u(x, r) < b(x, i+1, r).
    Uses delta(x, t, r) = ``problem.candidate_local_sensitivity(t)``; see the
    module docstring for the conventions (horizon, zero-length intervals,
    constant candidates).  Vectorised over candidates (chunks bound memory);
    a step profile is read at its breakpoints only, so time and memory do not
    depend on the size of the distances (e.g. of the counts behind the
    argmax indicator).

    Parameters
    ----------
    problem : SelectionProblem
        The utilities and their per-candidate local-sensitivity profile
        (non-decreasing in t).

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        D(x, r), with ``+inf`` / ``-inf`` for candidates whose positive /
        negative score can never change.

    See Also
    --------
    LocalDampening : Local dampening (Farias et al

    %(local_dampening_references)s

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.mechanisms.dampening import dampened_utilities
    >>> dampened_utilities(dpselect.SelectionProblem([3.0, 1.0, 0.0], global_sensitivity=2.0))
    array([1.5, 0.5, 0. ])
    """
    bps, delta = candidate_steps(problem)
    u = problem.scores
    m = u.size
    out = np.empty(m)
    step = max(1, _CHUNK_ELEMENTS // (bps.size + 1))
    for start in range(0, m, step):
        sl = slice(start, start + step)
        out[sl] = _dampen(u[sl], bps, delta[:, sl])
    return out


@dataclass(frozen=True)
@fill_doc
class LocalDampening(Mechanism):
    """Local dampening (Farias et al. 2020): P[r] ∝ exp(eps D_{u,delta}(x, r) / 2).

    **[RECON]** — reconstructed in mathematics §5.1 from third-party code and
    recollection; the primary paper was not available.  Confirm before relying
    on it.

    D is the dampened utility of :func:`dampened_utilities` with the exact
    element local sensitivity ``problem.candidate_local_sensitivity(t)`` as the
    admissible sensitivity function; GS(D) <= 1, so the mechanism is the
    exponential mechanism on D: **eps-DP** under ``problem.relation``, the
    problem's neighbour relation (add/remove or replace; Farias et al.;
    mathematics §5.1).  Probabilities are the closed-form log-softmax
    of eps (D - max D) / 2 (no overflow for any eps); sampling is Gumbel
    noisy max on D with scale 2/eps through :mod:`dpselect._engine`, over
    the candidates that can win (all of them unless some score can never
    change).

    **Not the default for votes, percentiles or TDT.**  Prefer PF/EM on the
    counts or on a dataset-distance (rank) utility (mathematics §9.1).  Majority
    counts [22, 8, 17, 4, 0], eps = 1, exact P[best]: LD on the argmax
    indicator 0.834 vs PF on the counts 0.997.  On the DPBench percentile
    settings rank-utility EM/PF beat LD in 82 of 108 and lose by more than 5%
    in 6, all where both errors are ~0 (mathematics §9.1).  LD stays useful on
    information-gain splits at small nodes (mathematics §9.3: ACS, n = 1000,
    eps = 1: 0.69 vs EM 0.24).  Shifted local dampening (VLDB J. 2023) is not
    offered (mathematics §9.3: it penalises stable candidates; the two public
    codebases disagree on its shift).

    Parameters
    ----------
    epsilon : float
        The privacy budget (> 0).

    See Also
    --------
    dampened_utilities : The dampened utilities D_{u,delta}(x, r) of every candidate (mathematics §5.1)

    %(local_dampening_references)s

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0])   # constant profile: LD is EM (D = u / GS)
    >>> ld, em = dpselect.LocalDampening(1.0), dpselect.ExponentialMechanism(1.0)
    >>> bool(abs(ld.probabilities(p) - em.probabilities(p)).max() < 1e-12)
    True
    """

    epsilon: float
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"epsilon": EPSILON}

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    def _winners(self, problem: SelectionProblem) -> tuple[np.ndarray, np.ndarray]:
        """(indices that can win, their dampened utilities (0 for the D = +inf ones))."""
        d = dampened_utilities(problem)
        top = np.isposinf(d)
        if top.any():  # candidates whose positive score can never change: uniform over them
            idx = np.flatnonzero(top)
            return idx, np.zeros(idx.size)
        finite = np.isfinite(d)
        if not finite.any():  # every D is -inf: nothing distinguishes the candidates
            return np.arange(d.size), np.zeros(d.size)
        idx = np.flatnonzero(finite)
        return idx, d[idx]

    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact log output probabilities: the log-softmax of eps (D - max D) / 2.

        %(profile_sections)s
        numpy.ndarray of float, shape (m,)
            ``log P[r]`` over the candidates that can win, ``-inf`` elsewhere.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0])
        >>> ld = dpselect.LocalDampening(1.0)
        >>> ld.log_probabilities(p).round(4)
        array([-0.4644, -1.4644, -1.9644])
        """
        idx, d = self._winners(problem)
        with np.errstate(over="ignore"):
            a = (0.5 * self.epsilon) * (d - d.max())  # <= 0; overflow to -inf is the right limit
        out = np.full(problem.n_candidates, -np.inf)
        out[idx] = a - logsumexp(a)
        return out

    def _sample(self, problem: SelectionProblem, n: int, rng: SeedLike) -> np.ndarray:
        """Gumbel noisy max on the dampened utilities (scale 2/eps), over the candidates that can win."""
        gen = check_random_state(rng)
        idx, d = self._winners(problem)
        scale = max(2.0 / self.epsilon, _TINY)
        draws = noisy_max.sample_argmax(d, scale, Gumbel(), size=n, rng=gen)
        return idx[np.asarray(draws)].astype(np.int64)

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """(epsilon, 0)-DP under ``problem.relation`` (no guarantee for a non-private problem).

        %(privacy_sections)s
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0])
        >>> ld = dpselect.LocalDampening(1.0)
        >>> print(ld.privacy(p))
        1-DP [add_remove]
        """
        check_problem(problem)
        return no_guarantee(problem) or Privacy(
            self.epsilon, 0.0, problem.relation, "local dampening (Farias et al. 2020) [RECON]; mathematics §5.1"
        )


_TINY = float(np.nextafter(0.0, 1.0))
