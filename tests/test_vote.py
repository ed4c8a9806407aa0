"""Majority vote from raw labels (dpselect.apps.counts.private_majority)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import dpselect
from conftest import assert_frequencies_match
from dpselect import ExponentialMechanism, PermuteAndFlip, SelectionProblem
from dpselect._warnings import PrivacyLeakWarning
from dpselect.analysis import audit
from dpselect.apps.counts import label_counts, private_majority

CANDIDATES = ["red", "green", "blue"]


def _problem(labels: list[str]) -> SelectionProblem:
    return SelectionProblem(
        label_counts(labels, CANDIDATES), global_sensitivity=1.0, monotone=True, relation="add_remove"
    )


def test_label_counts_equal_a_python_count():
    rng = np.random.default_rng(3)
    labels = rng.choice(["red", "green", "blue", "other"], size=500).tolist()
    assert label_counts(labels, CANDIDATES).tolist() == [labels.count(c) for c in CANDIDATES]
    assert label_counts(np.array([3, 1, 3, 7]), [1, 2, 3]).tolist() == [1, 0, 2]


def test_frequencies_match_the_exact_permute_and_flip_law():
    labels = ["red"] * 3 + ["green"] * 2 + ["blue"] * 2 + ["purple"] * 4
    law = PermuteAndFlip(0.7).probabilities(_problem(labels))
    gen = np.random.default_rng(11)
    draws = [CANDIDATES.index(private_majority(labels, 0.7, candidates=CANDIDATES, rng=gen)) for _ in range(4000)]
    assert_frequencies_match(np.array(draws), law)


def test_same_seed_same_answer_and_mechanism_choice():
    labels = ["a", "b", "b", "c", "a", "b"]
    runs = {private_majority(labels, 0.3, candidates=["a", "b", "c"], mechanism="em", rng=s) for s in range(40)}
    assert runs <= {"a", "b", "c"} and len(runs) > 1
    assert private_majority(labels, 0.3, candidates=["a", "b", "c"], rng=5) == private_majority(
        labels, 0.3, candidates=["a", "b", "c"], rng=5
    )


@pytest.mark.parametrize("mech", [PermuteAndFlip(0.8), ExponentialMechanism(0.8)])
def test_exact_audit_over_every_small_label_dataset_and_its_add_remove_neighbours(mech):
    pairs = []
    alphabet = [*CANDIDATES, "other"]
    for n in range(4):
        for combo in itertools.combinations_with_replacement(alphabet, n):
            x = list(combo)
            for extra in alphabet:  # add one record (removal is the same pair read backwards)
                pairs.append((_problem(x), _problem([*x, extra])))
                pairs.append((_problem([*x, extra]), _problem(x)))
    rep = audit(mech, pairs)
    assert not rep.violates and rep.max_loss <= 0.8 + 1e-9
    # negative control: counts doubled (true sensitivity 2) but declared 1 -> caught
    doubled = [
        (
            SelectionProblem(2 * a.scores, global_sensitivity=1.0, monotone=True),
            SelectionProblem(2 * b.scores, global_sensitivity=1.0, monotone=True),
        )
        for a, b in pairs
    ]
    assert audit(mech, doubled).violates


def test_inferred_candidates_warn_and_report_no_guarantee():
    labels = ["x", "y", "y"]
    with pytest.warns(PrivacyLeakWarning, match="candidates=None"):
        assert private_majority(labels, 1.0, rng=0) in {"x", "y"}
    acc = dpselect.Accountant(100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(dpselect.BudgetExceededError):
            private_majority(labels, 1.0, rng=0, accountant=acc)
    assert acc.charges == ()


def test_accountant_charged_the_pure_epsilon():
    acc = dpselect.Accountant(1.0)
    private_majority(["a", "b"], 0.4, candidates=["a", "b"], rng=0, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"labels": [["a"], ["b"]]}, ValueError, "labels must be 1-D"),
        ({"labels": [1.0, float("nan")]}, ValueError, "labels must not contain"),
        ({"labels": ["a", None]}, ValueError, "labels must not contain"),
        ({"candidates": []}, ValueError, "candidates must not be empty"),
        ({"candidates": ["a", "a"]}, ValueError, "candidates must be distinct"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
    ],
)
def test_bad_input_is_named_before_any_randomness(kwargs, error, match):
    class Exploding(np.random.Generator):
        def __getattribute__(self, name):
            raise AssertionError("randomness drawn")

    args = {"labels": ["a", "b"], "epsilon": 1.0, "candidates": ["a", "b"]} | kwargs
    with pytest.raises(error, match=match):
        private_majority(args.pop("labels"), args.pop("epsilon"), rng=Exploding(np.random.PCG64(0)), **args)
