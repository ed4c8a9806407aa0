r"""Laplace noise in the noisy-max engine: the dense candidates x nodes sums in closed form.

With Laplace noise, F(z) = e^z/2 (z <= 0) and 1 - e^{-z}/2 (z >= 0).  Between two
consecutive distinct standardised scores v_j <= y < v_{j+1} (multiplicities c_k) the
log-CDF of the noisy maximum is

.. math::

    G(y) = -\sum_{k > j} c_k (v_k - y + \log 2)
           - \sum_{n \ge 1} \frac{e^{-n (y - v_j)}}{n\, 2^n} P_n(j),
    \qquad P_n(j) = \sum_{k \le j} c_k e^{-n (v_j - v_k)},

(the series of log(1 - x/2), x <= 1), and the integrand's per-candidate factor is
f/F(y - v_r) = 1 for y < v_r and sum_{n >= 1} (e^{-(y - v_r)}/2)^n above, so

.. math::

    \Pr[r] \propto \int_{-\infty}^{v_r} e^{G} dy
        + \sum_{n \ge 1} 2^{-n} J_n(r), \qquad
    J_n(r) = \int_{v_r}^{\infty} e^{-n (y - v_r)} e^{G(y)} dy
           = M_n(r) + e^{-n (v_{r+1} - v_r)} J_n(r + 1),

M_n(r) the moment of segment [v_r, v_{r+1}).  Power sums, prefix integrals and the
backward recursion are first-order linear recurrences, evaluated by a log-depth scan;
G and the moments are evaluated on the engine's own quadrature nodes, so the result
is the same composite Gauss-Legendre value as the dense evaluation (the rule is linear:
the terms' sum is the same analytic integrand), with both series truncated at
2^-N relative.  Cost O((K + Q) N) for K distinct scores and Q nodes instead of O(K Q).
"""

from __future__ import annotations

import numpy as np

from . import _mesh as mesh

__all__ = ["group_log_probabilities", "linear_scan", "log_linear_scan"]

_LOG2 = float(np.log(2.0))


def _scan(alpha: np.ndarray, x: np.ndarray, mul: np.ufunc, add: np.ufunc, one: float, zero: float) -> np.ndarray:
    """Return y_k = add(x_k, mul(alpha_k, y_{k-1})) along axis 0, in O(K) work.

    Sequential inside blocks of ~sqrt(K) rows and across blocks, each step vectorised over
    the other axes.
    """
    K = x.shape[0]
    B = max(1, int(np.ceil(np.sqrt(K))))
    nb = -(-K // B)
    pad = nb * B - K
    shape = (nb, B, *x.shape[1:])
    X = np.concatenate([x, np.full((pad, *x.shape[1:]), zero)]).reshape(shape)
    A = np.concatenate([alpha, np.full((pad, *x.shape[1:]), one)]).reshape(shape)
    for i in range(1, B):  # inside each block; A becomes the within-block cumulative product
        X[:, i] = add(X[:, i], mul(A[:, i], X[:, i - 1]))
        A[:, i] = mul(A[:, i], A[:, i - 1])
    carry = X[:, -1].copy()
    for b in range(1, nb):  # across blocks
        carry[b] = add(carry[b], mul(A[b, -1], carry[b - 1]))
    X[1:] = add(X[1:], mul(A[1:], carry[:-1][:, None]))
    return X.reshape((nb * B, *x.shape[1:]))[:K]


def linear_scan(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """y_k = x_k + alpha_k y_{k-1} along axis 0 (y_0 = x_0, alpha_0 ignored).

    With 0 <= alpha <= 1 and x >= 0 nothing overflows and every operation is a
    sum of non-negative terms.
    """
    return _scan(alpha, x, np.multiply, np.add, 1.0, 0.0)


def log_linear_scan(log_alpha: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """The same recurrence in log space: y_k = logaddexp(x_k, alpha_k + y_{k-1})."""
    with np.errstate(invalid="ignore"):
        return _scan(log_alpha, log_x, np.add, np.logaddexp, 0.0, -np.inf)


def _segments(values: np.ndarray, p: mesh.Panels) -> np.ndarray:
    """For every panel the index j of the largest score <= its left edge (-1 if none)."""
    n = p.last - p.first + 1
    cl = np.repeat(np.arange(n.size), n)
    k = np.arange(int(p.first[0]), int(p.last[-1]) + 1)  # kept clusters are the top ones
    loc = values[k] - p.top[cl]  # the same breakpoints as the mesh's
    key_c = np.concatenate([cl, p.cluster])
    key_e = np.concatenate([loc, p.left])
    is_panel = np.concatenate([np.zeros(k.size, dtype=np.int8), np.ones(p.left.size, dtype=np.int8)])
    order = np.lexsort((is_panel, key_e, key_c))  # a score at a panel's left edge comes first
    below = np.cumsum(is_panel[order] == 0)
    seg = np.empty(order.size, dtype=np.int64)
    seg[order] = below
    return int(p.first[0]) + seg[k.size :] - 1


def group_log_probabilities(values: np.ndarray, counts: np.ndarray, noise: object) -> np.ndarray:
    """Log Pr[a given member of distinct group k wins] with standard Laplace noise.

    ``values`` ascending, finite, max 0; see the module docstring.
    """
    K = values.size
    m = float(counts.sum())
    N = 50 + int(np.ceil(np.log2(max(m, 2.0))))
    p = mesh.panels(values, counts, noise)
    seg = _segments(values, p)
    n = np.arange(1, N + 1, dtype=np.float64)
    gaps = np.diff(values)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        # power sums P_n(j) (row j + 1; row 0 = no score below) and the linear part's suffix sums
        alpha = np.exp(-np.outer(np.r_[np.inf, gaps], n))
        alpha[0] = 0.0
        P = np.vstack([np.zeros(N), linear_scan(alpha, np.repeat(counts[:, None], N, axis=1))])
        above = np.r_[np.cumsum(counts[::-1])[::-1], 0.0]  # C_J = sum_{k >= J} c_k
        S = np.r_[np.cumsum((above[1:-1] * gaps)[::-1])[::-1], 0.0, 0.0]  # sum_{k>=J} c_k (v_k - v_J)
        # nodes, (panel, 12) in local coordinates
        half = 0.5 * p.right - 0.5 * p.left
        w = (p.left + half)[:, None] + half[:, None] * mesh._GL_X[None, :]
        logw = np.log(half)[:, None] + np.log(mesh._GL_W)[None, :]
        J = np.minimum(seg + 1, K - 1)
        has_above = (seg + 1 < K)[:, None]
        s = np.where(has_above, (values[J] - p.anchor)[:, None] - w, 0.0)
        t = np.where((seg >= 0)[:, None], (p.anchor - values[np.maximum(seg, 0)])[:, None] + w, 0.0)
        t = np.maximum(t, 0.0)
        q = 0.5 * np.exp(-t)
        acc = np.zeros_like(w)
        coef = P[seg + 1] / n[None, :]  # (panels, N)
        for i in range(N - 1, -1, -1):
            acc += coef[:, i : i + 1]
            acc *= q
        G = -(np.where(has_above, above[seg + 1][:, None] * (s + _LOG2) + S[seg + 1][:, None], 0.0)) - acc
        g = G + logw
        # segment moments log sum over the segment's nodes of e^{g - n t}, n = 0..N
        starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
        owner = seg[starts] + 1  # row in 0..K (segment -1 is row 0)
        moments = np.full((K + 1, N + 1), -np.inf)
        for i in range(N + 1):
            val = g - i * t if i else g
            mx = val.max(axis=1)
            mx = np.maximum.reduceat(mx, starts)
            mx_f = np.where(np.isfinite(mx), mx, 0.0)
            e = np.exp(val - np.repeat(mx_f, np.diff(np.r_[starts, seg.size]))[:, None]).sum(axis=1)
            with np.errstate(divide="ignore"):
                moments[owner, i] = np.log(np.add.reduceat(e, starts)) + mx_f
        below = np.logaddexp.accumulate(moments[:K, 0])  # int_{y < v_r} e^G, rows -1..r-1
        # J_n(r) backwards: J_n(r) = M_n(r) + e^{-n gap_r} J_n(r + 1)
        log_a = np.vstack([np.full(N, -np.inf), -np.outer(gaps[::-1], n)])
        Jn = log_linear_scan(log_a, moments[1:, 1:][::-1])[::-1]
        upper = np.max(Jn - n * _LOG2, axis=1)
        upper_f = np.where(np.isfinite(upper), upper, 0.0)
        with np.errstate(divide="ignore"):
            upper = np.log(np.exp(Jn - n * _LOG2 - upper_f[:, None]).sum(axis=1)) + upper_f
    return np.logaddexp(np.logaddexp(below, upper), p.far)
