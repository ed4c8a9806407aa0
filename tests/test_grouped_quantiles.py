"""grouped_quantiles: parallel composition over public keys, epsilon charged once.

The joint law over groups is the product of each group's exact law (``quantile_law`` on the
group's records plus the public anchor); its privacy loss is audited exactly over add/remove
neighbours (a record added to one group), with a negative control (a record counted in two
groups: the loss exceeds epsilon and the audit sees it).  Draws follow the product law.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect.accounting import Accountant, BudgetExceededError
from dpselect.apps.quantiles import grouped_quantiles, quantile_law

BOUNDS = (0, 4)
KEYS = ("a", "b")


def _pmf(x: list[int], eps: float) -> np.ndarray:
    """P[output = t], t = 0..4, of one group: private_quantile's exact law on x plus the anchor 2."""
    law = quantile_law([*x, 2], 0.5, eps, bounds=BOUNDS, integer=True)
    out = np.zeros(BOUNDS[1] + 1)
    for lo, hi, p in zip(law.lo, law.hi, np.asarray(law)):
        out[int(lo) : int(hi) + 1] += p / (int(hi) - int(lo) + 1)
    return out


def _joint(data: dict[str, list[int]], eps: float) -> np.ndarray:
    """The product law over (group a's output, group b's output), flattened."""
    return np.outer(_pmf(data["a"], eps), _pmf(data["b"], eps)).ravel()


def _loss(p: np.ndarray, r: np.ndarray) -> float:
    return float(np.max(np.abs(np.log(p) - np.log(r))))


def test_five_groups_charge_epsilon_once():
    gen = np.random.default_rng(0)
    keys = ["n", "s", "e", "w", "c"]
    values, groups = gen.integers(0, 100, size=2000), gen.choice(keys, size=2000)
    acc = Accountant(1.0)
    res = grouped_quantiles(values, groups, 0.5, 1.0, bounds=(0, 100), keys=keys, accountant=acc, rng=1)
    assert acc.spent.epsilon == 1.0 and acc.spent.delta == 0.0
    assert res.privacy.epsilon == 1.0 and res.keys == tuple(keys) and res.values.shape == (5,)
    truth = [np.quantile(values[groups == k], 0.5, method="inverted_cdf") for k in keys]
    assert np.all(np.abs(res.values - truth) <= 10)  # ~400 records a group at epsilon 1
    # a second release of the same size no longer fits: the accountant refuses before any draw
    with pytest.raises(BudgetExceededError):
        grouped_quantiles(values, groups, [0.25, 0.75], 0.5, bounds=(0, 100), keys=keys, accountant=acc)


def test_exact_audit_of_the_parallel_composition():
    eps = 0.8
    worst, worst_shared = 0.0, 0.0
    for na, nb in [(0, 0), (1, 0), (1, 2), (2, 2)]:
        for xa in itertools.combinations_with_replacement(range(5), na):
            for xb in itertools.combinations_with_replacement(range(5), nb):
                data = {"a": list(xa), "b": list(xb)}
                p = _joint(data, eps)
                for g, v in itertools.product(KEYS, range(5)):  # add one record (removal: read backwards)
                    bigger = {k: [*data[k], v] if k == g else data[k] for k in KEYS}
                    worst = max(worst, _loss(p, _joint(bigger, eps)))
                    # negative control: the record counted in both groups (not a partition)
                    shared = {k: [*data[k], v] for k in KEYS}
                    worst_shared = max(worst_shared, _loss(p, _joint(shared, eps)))
    assert worst <= eps + 1e-9
    assert worst_shared > eps + 0.1


def test_draws_follow_the_product_law_and_empty_groups_are_no_error():
    data = {"a": [0, 1, 1, 4], "b": []}  # group b is empty: its output is the law on the anchor alone
    values = np.array(data["a"] + [3, 3])
    groups = np.array(["a"] * 4 + ["z", "z"])  # records of a group outside the keys are dropped
    gen = np.random.default_rng(5)
    draws = []
    for _ in range(2500):
        res = grouped_quantiles(values, groups, 0.5, 0.8, bounds=BOUNDS, keys=KEYS, rng=gen)
        draws.append(int(res["a"]) * 5 + int(res["b"]))
    assert_frequencies_match(np.array(draws), _joint(data, 0.8))


def test_several_levels_typed_columns_and_to_dict():
    pd = pytest.importorskip("pandas")
    values = pd.Series([1.5, 2.5, 3.5, 4.5, 5.5, 6.5] * 20, dtype="Float64")
    groups = pd.Series(["x", "y"] * 60, dtype="string")
    res = grouped_quantiles(values, groups, [0.25, 0.75], 2.0, bounds=(0, 10), keys=["x", "y"], rng=0)
    assert res.values.shape == (2, 2) and res.q == (0.25, 0.75)
    assert set(res.to_dict()) == {"x", "y"} and np.all(np.diff(res.values, axis=1) >= 0)
    with pytest.raises(ValueError, match=r"^values has missing values"):
        grouped_quantiles(pd.Series([1.0, None], dtype="Float64"), ["x", "y"], 0.5, 1.0, bounds=(0, 1), keys=["x"])
    with pytest.raises(ValueError, match=r"^groups has missing values"):
        grouped_quantiles([1.0, 2.0], ["x", None], 0.5, 1.0, bounds=(0, 1), keys=["x"])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"groups": ["a"]}, ValueError, "^values and groups must have the same length"),
        ({"keys": None}, ValueError, "^delta must be > 0 when keys is None"),
        ({"keys": ["a", "a"]}, ValueError, "^keys must be distinct"),
        ({"keys": "ab"}, TypeError, "^keys must be None or a sequence"),
        ({"q": 1.5}, ValueError, "^q must be"),
        ({"q": []}, ValueError, "^q must not be empty"),
        ({"epsilon": 0.0}, ValueError, "^epsilon must be > 0"),
    ],
)
def test_bad_input_is_named_before_any_randomness(kwargs, error, match):
    args = {"values": [1, 2, 3], "groups": ["a", "b", "a"], "q": 0.5, "epsilon": 1.0, "keys": ["a", "b"]} | kwargs
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(error, match=match):
        grouped_quantiles(
            args["values"], args["groups"], args["q"], args["epsilon"], bounds=(0, 5), keys=args["keys"], rng=gen
        )
    assert gen.bit_generator.state == state


def test_keys_selected_privately_when_not_given():
    pytest.importorskip("dpselect.apps.counts")
    gen = np.random.default_rng(2)
    groups = np.array(["big"] * 3000 + ["mid"] * 800 + ["tiny"] * 1)
    values = gen.integers(0, 50, size=groups.size)
    acc = Accountant(2.0, 1e-5)
    res = grouped_quantiles(values, groups, 0.5, 2.0, bounds=(0, 50), delta=1e-6, accountant=acc, rng=3)
    assert set(res.keys) <= {"big", "mid", "tiny"} and "big" in res.keys
    assert abs(acc.spent.epsilon - 2.0) < 1e-12 and acc.spent.delta == pytest.approx(1e-6)


def test_keys_none_route_wiring_with_a_stand_in_partition_selection(monkeypatch):
    """The route calls it with one item per record, key_share * epsilon and
    delta, before the quantiles at the rest, and the accountant is charged (epsilon, delta) once, up front."""
    import dpselect.apps.counts as counts

    calls = []

    def stand_in(user_items, epsilon, delta, *, max_contributions, rng=None):
        calls.append((len(user_items), [list(u) for u in user_items[:2]], epsilon, delta, max_contributions))
        return ["b", "a"]

    monkeypatch.setattr(counts, "select_partitions", stand_in, raising=False)
    acc = Accountant(1.0, 1e-5)
    values, groups = [1, 2, 3, 4, 4], ["a", "b", "a", "c", "b"]
    res = grouped_quantiles(values, groups, 0.5, 1.0, bounds=(0, 5), delta=1e-6, key_share=0.25, accountant=acc, rng=0)
    assert calls == [(5, [["a"], ["b"]], 0.25, 1e-6, 1)]
    assert res.keys == ("b", "a") and res.values.shape == (2,)
    assert acc.spent.epsilon == pytest.approx(1.0) and acc.spent.delta == pytest.approx(1e-6)
    assert res.privacy.epsilon == pytest.approx(1.0) and res.privacy.delta == pytest.approx(1e-6)
