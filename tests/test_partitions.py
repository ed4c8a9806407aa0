"""Partition selection (mathematics §16): exact calibration checks, exact audits on neighbours, input rules."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import special

from dpselect import Accountant
from dpselect.analysis import hockey_stick
from dpselect.apps.counts import (
    PARTITION_METHODS,
    partition_release_probabilities,
    partition_selection_privacy,
    select_partitions,
)
from dpselect.apps.counts._partitions.calibration import (
    calibrate_gaussian,
    calibrate_laplace,
    truncated_geometric_probabilities,
    unique_weight_bound,
)
from dpselect.apps.counts._partitions.joint_calibration import grid_cells
from dpselect.apps.counts._partitions.selection import POLICY_CUTOFF_SCALES, calibrate
from dpselect.apps.counts._partitions.user_items import as_user_keys, parse_user_items
from dpselect.apps.counts._partitions.weights import policy_gaussian_weights, policy_laplace_weights

mpmath.mp.dps = 50
METHODS = [m for m in PARTITION_METHODS if m != "auto"]


def _phi(x: float) -> mpmath.mpf:
    return mpmath.ncdf(mpmath.mpf(x))


# ----------------------------------------------------------------------------- calibration, exactly


@pytest.mark.parametrize(
    ("epsilon", "delta", "c"),
    [(1.0, 1e-6, 1), (0.1, 1e-9, 1), (3.0, 1e-3, 4), (1.0, 1e-6, 10), (10.0, 1e-12, 1), (50.0, 0.9, 1)],
)
def test_truncated_geometric_meets_both_constraints_exactly(epsilon: float, delta: float, c: int) -> None:
    p = truncated_geometric_probabilities(epsilon, delta, c)
    eps, dlt = mpmath.mpf(epsilon) / c, mpmath.mpf(delta) / c
    grow, best = mpmath.e**eps, mpmath.mpf(0)
    assert p[0] == 0.0 and p[-1] == 1.0 and np.all(np.diff(p) > 0)
    assert np.all(p * 2.0**53 == np.floor(p * 2.0**53))  # on numpy's uniform grid: P[U < p] = p exactly
    for prev, cur in itertools.pairwise(p):
        a, b = mpmath.mpf(prev), mpmath.mpf(cur)
        assert b <= grow * a + dlt  # P'[release] <= e^eps P[release] + delta
        assert 1 - a <= grow * (1 - b) + dlt  # P[drop] <= e^eps P'[drop] + delta
        step = min(1, grow * a + dlt, 1 - (1 - a - dlt) / grow)  # the optimal step (Desfontaines et al.)
        assert b >= step - mpmath.mpf(2) ** -48  # within rounding of the optimal recurrence
        best = min(1, grow * best + dlt, 1 - (1 - best - dlt) / grow)
        assert b >= best * (
            1 - mpmath.mpf(1e-6) - 4 * mpmath.mpf(2) ** -53 / dlt
        )  # near the exact optimum (grid 2^-53)


def _profile_mp(x: mpmath.mpf, sigma: float, shift: mpmath.mpf) -> mpmath.mpf:
    """Balle & Wang's exact profile of N(0, s^2) vs N(shift, s^2), in 50 digits."""
    if shift == 0:
        return mpmath.mpf(0) if x >= 0 else 1 - mpmath.e**x
    s = mpmath.mpf(sigma)
    return _phi(shift / (2 * s) - x * s / shift) - mpmath.e**x * _phi(-shift / (2 * s) - x * s / shift)


def _joint_mp(epsilon: float, sigma: float, rho: float, t: int, a: mpmath.mpf, shift: mpmath.mpf) -> mpmath.mpf:
    """The joint bound of mathematics §16.2 at lone weight a and shared shift, in 50 digits."""
    q = _phi((mpmath.mpf(rho) - a) / sigma) ** t
    eps = mpmath.mpf(epsilon)
    return max(
        _profile_mp(eps + mpmath.log(q), sigma, shift), q * _profile_mp(eps - mpmath.log(q), sigma, shift) + 1 - q
    )


@pytest.mark.parametrize("method", ["gaussian", "weighted_gaussian", "policy_gaussian"])
@pytest.mark.parametrize(
    ("epsilon", "delta", "c"), [(1.0, 1e-6, 1), (1.0, 1e-6, 10), (0.3, 1e-8, 3), (4.0, 1e-4, 7), (2.0, 1e-7, 40)]
)
def test_gaussian_calibration_holds_in_high_precision(method: str, epsilon: float, delta: float, c: int) -> None:
    """The joint bound in 50 digits: at the grid's worst cells (as calibrated) and at random lone weights."""
    cal = calibrate_gaussian(epsilon, delta, c, method)
    a_max = unique_weight_bound(method, np.arange(1, c + 1, dtype=float), c)
    gen = np.random.default_rng(0)
    worst = _profile_mp(mpmath.mpf(epsilon), cal.scale, mpmath.mpf(1))  # no lone key
    for t in range(1, c + 1):
        am = a_max[t - 1]
        n_cells = grid_cells(c)
        grid = np.linspace(0.0, am, n_cells + 1)
        cells = [(grid[j + 1], grid[j]) for j in (0, n_cells // 2, n_cells - 1)]  # (q at hi, shift at lo)
        cells += [(a, a) for a in gen.uniform(0.0, am, 8)] + [(am, am)]  # the exact statement at points
        for a_q, a_s in cells:
            shift = mpmath.sqrt(max(mpmath.mpf(0), 1 - t * mpmath.mpf(a_s) ** 2))
            worst = max(worst, _joint_mp(epsilon, cal.scale, cal.threshold, t, mpmath.mpf(a_q), shift))
    assert worst <= delta
    assert worst >= 0.9 * delta  # tight: rho is the smallest that fits
    lone = max(1 - _phi((cal.threshold - ai) / cal.scale) ** t for t, ai in enumerate(a_max, start=1))
    assert lone <= delta  # a lone user's keys: at most delta


@pytest.mark.parametrize("method", ["laplace", "weighted_laplace"])
@pytest.mark.parametrize(("epsilon", "delta", "c"), [(1.0, 1e-6, 1), (0.5, 1e-7, 6), (0.1, 0.5, 3)])
def test_laplace_calibration_holds_in_high_precision(method: str, epsilon: float, delta: float, c: int) -> None:
    cal = calibrate_laplace(epsilon, delta, c, method)
    assert cal.theta <= delta and 0 < 1 / cal.scale <= epsilon + math.log1p(-cal.theta)  # pure part
    for t in range(1, c + 1):
        a = float(unique_weight_bound(method, np.array([float(t)]), c)[0])
        tail = mpmath.mpf(0.5) * mpmath.e ** (-(mpmath.mpf(cal.threshold) - a) / cal.scale)
        assert 1 - (1 - tail) ** t <= cal.theta


# ----------------------------------------------------------------------------- exact audits on neighbours


def _product_log_law(probs: dict, keys: list) -> np.ndarray:
    """Log-probability of each subset of ``keys`` (bit i: key i released) for independent Bernoullis."""
    p = np.array([probs.get(k, 0.0) for k in keys])
    bits = (np.arange(2 ** len(keys))[:, None] >> np.arange(len(keys))) & 1
    with np.errstate(divide="ignore"):
        return np.where(bits == 1, np.log(p), np.log1p(-p)).sum(axis=1)


def _pair_divergence(d: list, d_plus: list, method: str, epsilon: float, delta: float, c: int) -> float:
    keys = sorted({k for user in d_plus for k in user})
    kw = dict(max_contributions=c, method=method, rng=0)
    p = partition_release_probabilities(d, epsilon, delta, **kw) if d else {}
    q = partition_release_probabilities(d_plus, epsilon, delta, **kw)
    return hockey_stick(_product_log_law(p, keys), _product_log_law(q, keys), epsilon)


BASE = [["a", "b"], ["a"], ["a", "c"], ["b"]] + [["a"]] * 30 + [["b", "c"]] * 20
ADDED = [["x", "y", "z"], ["x"], ["a", "x"], ["a", "b", "c"], ["c"]]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("added", ADDED)
def test_exact_audit_add_one_user(method: str, added: list) -> None:
    """The product law over the union of keys, enumerated: hockey stick <= delta both ways."""
    c = 1 if method == "truncated_geometric" else 3
    epsilon, delta = 1.0, 1e-3
    div = _pair_divergence(BASE, [*BASE, added[:c]], method, epsilon, delta, c)
    assert div <= delta * (1 + 1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_lone_user_keys_at_most_delta(method: str) -> None:
    """A user whose keys nobody else has: each of them, and any of them, kept with probability <= delta."""
    c = 1 if method == "truncated_geometric" else 4
    lone = ["q1", "q2", "q3", "q4"][:c]
    users = [*BASE, *[["a"]] * 200, lone]
    probs = partition_release_probabilities(users, 1.0, 1e-6, max_contributions=c, method=method, rng=1)
    assert 1 - np.prod([1 - probs[k] for k in lone]) <= 1e-6
    assert probs["a"] > 0.5  # the negative side: a frequent key is released


def test_truncated_geometric_is_tight_on_a_lone_key() -> None:
    div = _pair_divergence([["a"]] * 5, [["a"]] * 5 + [["z"]], "truncated_geometric", 1.0, 1e-6, 1)
    assert div == pytest.approx(1e-6, rel=1e-6)  # optimal: delta is spent exactly


def _policy_law(users: list, order: list, method: str, cal) -> dict:
    uk = as_user_keys(parse_user_items(users), 3, np.random.default_rng(0))
    cutoff = cal.threshold + POLICY_CUTOFF_SCALES[method] * cal.scale
    policy = policy_gaussian_weights if method == "policy_gaussian" else policy_laplace_weights
    w = policy(uk, cutoff, np.array(order))
    z = (cal.threshold - w) / cal.scale
    p = special.ndtr(-z) if cal.noise == "gaussian" else np.where(z >= 0, 0.5 * np.exp(-z), 1 - 0.5 * np.exp(z))
    return dict(zip(uk.keys, p.tolist(), strict=True))


@pytest.mark.parametrize("method", ["policy_gaussian", "policy_laplace"])
def test_policy_audit_every_insertion_position(method: str) -> None:
    """The policy's guarantee holds for any order of the others and any position of the added user."""
    epsilon, delta = 1.0, 1e-3
    cal = calibrate(method, epsilon, delta, 3)
    base = [["a", "b"]] * 12 + [["a"]] * 25 + [["b", "c"]] * 9
    added = ["a", "c", "x"]
    keys = ["a", "b", "c", "x"]
    p = _policy_law(base, list(range(len(base))), method, cal)
    worst = 0.0
    for pos in range(len(base) + 1):
        order = [*range(pos), len(base), *range(pos, len(base))]
        q = _policy_law([*base, added], order, method, cal)
        worst = max(worst, hockey_stick(_product_log_law(p, keys), _product_log_law(q, keys), epsilon))
    assert 0 < worst <= delta


def test_policy_steps_are_contractions() -> None:
    """Random pairs of weight vectors: one user's step never increases their l2 (Gaussian) / l1 (Laplace) distance."""
    gen = np.random.default_rng(0)
    uk = as_user_keys(parse_user_items([list(range(6))]), 6, gen)
    for _ in range(300):
        cutoff = float(gen.uniform(0.2, 3.0))
        x, y = gen.uniform(0, cutoff, 6), gen.uniform(0, cutoff, 6)
        for policy, norm in ((policy_gaussian_weights, 2), (policy_laplace_weights, 1)):
            fx = _step_from(policy, uk, cutoff, x)
            fy = _step_from(policy, uk, cutoff, y)
            assert np.linalg.norm(fx - fy, norm) <= np.linalg.norm(x - y, norm) * (1 + 1e-12) + 1e-12
            assert np.linalg.norm(fx - x, norm) <= 1 + 1e-12


def _step_from(policy, uk, cutoff: float, start: np.ndarray) -> np.ndarray:
    """One user's step (the only user, holding every key) from the weights ``start``."""
    return policy(uk, cutoff, np.array([0]), initial=start)


@pytest.mark.parametrize("method", ["weighted_gaussian", "policy_gaussian", "policy_laplace"])
def test_audit_catches_a_low_threshold(method: str) -> None:
    """Negative control: the same enumeration flags the real pipeline run with rho two scales too low."""
    from dataclasses import replace

    from dpselect.apps.counts._partitions.selection import release_probabilities

    epsilon, delta, c = 1.0, 1e-3, 2
    cal = calibrate(method, epsilon, delta, c)
    bad = replace(cal, threshold=cal.threshold - 2 * cal.scale)
    d = [["a"]] * 30 + [["a", "b"]] * 5
    keys = ["a", "b", "z"]

    def law(users: list, constants) -> np.ndarray:
        uk = as_user_keys(parse_user_items(users), c, np.random.default_rng(0))
        probs = release_probabilities(uk, method, constants, c, np.random.default_rng(0))
        return _product_log_law(dict(zip(uk.keys, probs.tolist(), strict=True)), keys)

    good = hockey_stick(law(d, cal), law([*d, ["z"]], cal), epsilon)
    caught = hockey_stick(law(d, bad), law([*d, ["z"]], bad), epsilon)
    assert good <= delta < caught


# ----------------------------------------------------------------------------- sampler, input, budget


def test_sampler_matches_the_closed_form() -> None:
    users = [["a"]] * 20 + [["b"]] * 24 + [["c"]] * 28
    exact = partition_release_probabilities(users, 1.0, 1e-6, max_contributions=2, method="weighted_gaussian")
    runs = 2000
    gen = np.random.default_rng(5)
    hits = {k: 0 for k in exact}
    for _ in range(runs):
        for k in select_partitions(users, 1.0, 1e-6, max_contributions=2, method="weighted_gaussian", rng=gen):
            hits[k] += 1
    for k, p in exact.items():
        assert abs(hits[k] / runs - p) <= 4.5 * math.sqrt(p * (1 - p) / runs) + 1e-3


BAD = [
    ({"epsilon": 0.0}, ValueError),
    ({"epsilon": -1.0}, ValueError),
    ({"epsilon": float("nan")}, ValueError),
    ({"epsilon": float("inf")}, ValueError),
    ({"delta": 0.0}, ValueError),
    ({"delta": 1.0}, ValueError),
    ({"delta": -0.1}, ValueError),
    ({"delta": float("nan")}, ValueError),
    ({"delta": "0.1"}, TypeError),
    ({"max_contributions": 0}, ValueError),
    ({"method": "nope"}, ValueError),
    ({"delta": 1e-17, "method": "truncated_geometric"}, ValueError),
    ({"user_items": [["a"], "ab"]}, TypeError),
    ({"user_items": [["a", None]]}, ValueError),
    ({"user_items": [["a", float("nan")]]}, ValueError),
    ({"user_items": [[["unhashable"]]]}, TypeError),
]


@pytest.mark.parametrize(("change", "error"), BAD)
def test_bad_input_refused_before_any_randomness(change: dict, error: type) -> None:
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    acc = Accountant(10.0, delta=0.5)
    kwargs = dict(user_items=[["a", "b"], ["a"]], epsilon=1.0, delta=1e-6, max_contributions=2, rng=gen)
    kwargs.update(change)
    with pytest.raises(error):
        select_partitions(accountant=acc, **kwargs)
    assert gen.bit_generator.state == state
    assert acc.spent.epsilon == 0.0


def test_accountant_charged_epsilon_and_delta() -> None:
    acc = Accountant(2.0, delta=1e-5)
    select_partitions([["a"]] * 50, 1.0, 1e-6, max_contributions=1, rng=0, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(1.0) and acc.spent.delta == pytest.approx(1e-6)
    assert partition_selection_privacy(1.0, 1e-6, max_contributions=4).relation == "add_remove"


def test_frames_match_lists() -> None:
    pd = pytest.importorskip("pandas")
    users = [["a", "b"], ["a"], ["c", "a", "a"]] * 30
    rows = [(i, k) for i, u in enumerate(users) for k in u]
    frame = pd.DataFrame(rows, columns=["user", "item"])
    kw = dict(max_contributions=2, method="policy_gaussian")
    p_list = partition_release_probabilities(users, 1.0, 1e-6, rng=4, **kw)
    p_frame = partition_release_probabilities(frame, 1.0, 1e-6, rng=4, user_column="user", key_column="item", **kw)
    assert p_list == pytest.approx(p_frame)
    mapping = {f"u{i}": u for i, u in enumerate(users)}
    assert partition_release_probabilities(mapping, 1.0, 1e-6, rng=4, **kw) == pytest.approx(p_list)
    pl = pytest.importorskip("polars")
    p_polars = partition_release_probabilities(
        pl.from_pandas(frame), 1.0, 1e-6, rng=4, user_column="user", key_column="item", **kw
    )
    assert p_polars == pytest.approx(p_list)
    with pytest.raises(ValueError, match="user_column"):
        select_partitions(frame, 1.0, 1e-6, max_contributions=2)
    with pytest.raises(ValueError, match="key_column"):
        select_partitions(frame, 1.0, 1e-6, max_contributions=2, user_column="user", key_column="nope")


def test_bounding_keeps_at_most_c_keys_of_own_set() -> None:
    users = [list(range(i, i + 8)) for i in range(50)]
    uk = as_user_keys(parse_user_items(users), 3, np.random.default_rng(0))
    assert uk.sizes.max() == 3
    for i in range(50):
        kept = {uk.keys[c] for c in uk.codes[uk.indptr[i] : uk.indptr[i + 1]]}
        assert kept <= set(users[i])


def test_output_sorted_reproducible_and_empty_ok() -> None:
    users = [["b"]] * 100 + [["a"]] * 100 + [["c", "b"]] * 80
    out = select_partitions(users, 1.0, 1e-6, max_contributions=2, rng=7)
    assert out == sorted(out) == select_partitions(users, 1.0, 1e-6, max_contributions=2, rng=7)
    assert set(out) == {"a", "b", "c"}
    assert select_partitions([], 1.0, 1e-6, max_contributions=2, rng=0) == []  # a neighbour of one user
    assert select_partitions([[1, "x"]] * 200, 1.0, 1e-6, max_contributions=2, rng=0) == [1, "x"]


def test_policy_beats_weighted_gaussian_exactly_on_zipf() -> None:
    """The default's accuracy claim, on exact expected counts (sum of release probabilities)."""
    gen = np.random.default_rng(0)
    users = [np.unique(gen.zipf(1.5, 10)).tolist() for _ in range(3000)]
    kw = dict(max_contributions=10, rng=0)
    expect = {
        m: sum(partition_release_probabilities(users, 1.0, 1e-6, method=m, **kw).values())
        for m in ("policy_gaussian", "weighted_gaussian", "gaussian", "truncated_geometric")
    }
    assert expect["policy_gaussian"] >= 1.3 * max(v for m, v in expect.items() if m != "policy_gaussian")
