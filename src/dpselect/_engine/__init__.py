"""The noisy-max engine (private): sampling argmax_r (u_r + b Z_r) and its exact law.

Every noisy-max mechanism (report-noisy-max, the exponential mechanism as
Gumbel noisy max, permute-and-flip as exponential noisy max, Smooth Noisy Max,
Smooth Private Selection) is a calibration (scale b, noise law h) handed to
this package; none re-implements sampling or the integral.

Exact output distribution.  With a_r = (u_r - max u)/b and Z_r iid with
density f and CDF F, candidate r wins with probability

    Pr[r] = ∫ f(y - a_r) prod_{s != r} F(y - a_s) dy
          = ∫ exp( log f(y - a_r) + G(y) - log F(y - a_r) ) dy,
    G(y)  = sum_s log F(y - a_s)         (log-CDF of the noisy maximum),

(Dwork & Roth 2014, §3.3, written for a general noise density).  Candidates
with equal scores share one integral, so the cost is O(K Q) for K distinct
scores and Q quadrature nodes, whatever the number of tied candidates.  With
Laplace noise the K x Q sums are done in closed form instead
(:mod:`dpselect._engine._laplace`: power sums and linear recurrences over the
sorted scores, O((K + Q) N) with N ~ 50 + log2 m series terms), on the same nodes.

Quadrature (:mod:`dpselect._engine._mesh`).  The integral runs over a composite
12-point Gauss–Legendre rule whose panels are placed in *local* coordinates
around the scores: a_r are grouped into clusters (consecutive gaps at most two
noise widths); inside a cluster, panels of half the noise's interquartile
width (at most the width s of the strip |Im z| < s where the law is analytic,
for Student t, even-gamma polynomial tails and Gumbel, which need no further
breakpoint) and otherwise a breakpoint at every score (the kinks of Laplace-type densities)
and geometric refinement around each score for laws narrower at the mode than
their quartiles; away from a cluster, a per-law profile of panel lengths that
grow geometrically with the distance d (ratio 2) but never let the log-density
or log-CDF change by more than 4 nats in one panel until it has dropped by 800
nats (light tails), then ratio 2 up to 1.7e308.  Every node is stored as (its
cluster's anchor score, offset), and every argument y - a_s is formed as
offset + (anchor - a_s), so panels of width ~1 next to a score at a_r = -1e300
stay exact (an absolute y grid would round them away).  Beyond
Y = min(2^56 max(1, |min a|), 1.7e308) above the top score all arguments y - a_s
equal y to relative 2^-56 and every candidate's integral is (1 - F(Y)^m)/m in
closed form; likewise F(-Y)^m/m below -Y when the noisy maximum's log-CDF there
is not below -750.  Everything is accumulated in log space and the result is
renormalised (the correction is the quadrature error).  The region below the
point where the noisy maximum's log-CDF falls under -750 + L is dropped, L a lower
bound on the least likely candidate's log-probability, so the cut is relative.

Measured accuracy (tests/test_engine_exact.py), |error in log Pr| against
independent references: <= 2e-13 for Cauchy (closed form) at gap/scale 1e2 - 1e300;
<= 4e-15 for t_3, P_4, P_1.5 (both sidednesses, 60-digit mpmath) at 10 - 1e12 and
for LLN (2-D reference) at 10 - 1e12 (log Pr down to -1410); relative 1e-16 of
log Pr for Laplace, Gumbel and exponential at gaps up to 1e300.  The test bound
is 1e-9 max(1, |log Pr|).  Unnormalised mass defect <= 1e-14 for P_1.1 - P_1.5,
t_0.5 and LLN(1.2).  Not covered: gap/scale in (1e300, 1.8e308] for power tails
(the far region's arguments then differ from y by up to 1e-8 relative, and a
~1e-29-level mass beyond 1.8e308 is approximated), and gaps that overflow
(gap/scale > 1.8e308), which give the limit Pr = 0: exact for light tails and
LLN, within ~(1.8e308)^-kappa (< 1e-30 for kappa >= 0.1) for power tails.

Scores far below the integration range.  With many candidates the cut lies above
every score; for laws whose density and log-CDF are analytic on a sector |arg z| < theta
(one-sided P_gamma and t, Laplace-log-normal) the scores at distance >= r0 below the cut
are replaced by Chebyshev points (:mod:`dpselect._engine._separated`, mathematics §13):
measured <= 5e-16 relative in log Pr against the direct sum.  10^5 distinct scores,
one-sided SPS or SNM-LLN: under 1 s CPU (``benchmarks/bench_core.py``).

Sampling agrees with the law everywhere: power tails too heavy for floating
point (tail exponent below ``dpselect.noise.MIN_TAIL_EXPONENT`` = 0.1, e.g.
Student t with df = 0.01 or P_1.01, whose draws overflow to inf 1e-3 - 1e-2 of
the time) are rejected with a ValueError by :func:`dpselect._engine._noisy_max.check_noise`; for the laws
admitted, a draw beyond the largest double has probability below ~1e-29.
"""

from ._noisy_max import log_probabilities, sample_argmax, standardised

__all__ = ["log_probabilities", "sample_argmax", "standardised"]
