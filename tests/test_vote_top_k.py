"""Top-k labels from raw labels: ``private_majority(..., k=K)`` and ``dpselect select --k K``.

The law is peeling (mathematics §10.2): round j runs the mechanism at epsilon / k on the
candidates not chosen yet.  It is checked against a product of one-round laws computed here
(independently of ``dpselect.mechanisms.top_k``), the draws against that law, the guarantee
by an exact audit over add/remove neighbours (with a negative control), and the accountant.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, SelectionProblem
from dpselect.accounting import Accountant
from dpselect.analysis import audit
from dpselect.apps.counts import label_counts, private_majority
from dpselect.mechanisms.top_k import TopK

CANDIDATES = ["red", "green", "blue", "grey"]
LABELS = ["red"] * 17 + ["green"] * 15 + ["blue"] * 11 + ["grey"] * 2 + ["other"] * 5


def _problem(counts) -> SelectionProblem:
    return SelectionProblem(np.asarray(counts, float), global_sensitivity=1.0, monotone=True, relation="add_remove")


def _peeling_law(mech_of_round, counts: np.ndarray, k: int) -> dict[tuple[int, ...], float]:
    """P[ordered tuple] = product over rounds of the one-round law on the remaining candidates."""
    law = {}
    for tup in itertools.permutations(range(counts.size), k):
        remaining, p = list(range(counts.size)), 1.0
        for pick in tup:
            probs = np.asarray(mech_of_round.probabilities(_problem(counts[remaining])))
            p *= probs[remaining.index(pick)]
            remaining.remove(pick)
        law[tup] = p
    return law


@pytest.mark.parametrize("mechanism, cls", [("pf", PermuteAndFlip), ("em", ExponentialMechanism)])
def test_top_k_law_is_peeling_at_epsilon_over_k(mechanism, cls):
    eps, k = 1.5, 2
    counts = label_counts(LABELS, CANDIDATES)
    law = _peeling_law(cls(eps / k), counts, k)
    tuples = list(law)
    exact = np.array([law[t] for t in tuples])
    assert abs(exact.sum() - 1.0) < 1e-12
    # the library's top-k law (TopK) is that product
    top = TopK(cls(eps / k), k)
    lib = dict(zip(map(tuple, top.outputs(_problem(counts)).tolist()), np.asarray(top.probabilities(_problem(counts)))))
    assert all(abs(lib[t] - law[t]) < 1e-12 for t in tuples)
    # the draws of private_majority follow it
    gen = np.random.default_rng(7)
    index = {t: i for i, t in enumerate(tuples)}
    draws = []
    for _ in range(3000):
        got = private_majority(LABELS, eps, candidates=CANDIDATES, k=k, mechanism=mechanism, rng=gen)
        assert isinstance(got, list) and len(got) == k and len(set(got)) == k
        draws.append(index[tuple(CANDIDATES.index(g) for g in got)])
    assert_frequencies_match(np.array(draws), exact)


def test_exact_audit_of_the_k_labels_over_add_remove_neighbours():
    eps, k = 1.2, 3
    law = TopK(PermuteAndFlip(eps / k), k)
    pairs = []
    vectors = [*itertools.product(range(2), repeat=4), (5, 3, 0, 1), (2, 2, 2, 2), (7, 0, 0, 7), (9, 8, 1, 0)]
    for counts in vectors:
        for j in range(4):  # add one record of candidate j (removal: the pair read backwards)
            y = np.array(counts)
            y[j] += 1
            pairs += [(_problem(counts), _problem(y)), (_problem(y), _problem(counts))]
    rep = audit(law, pairs, claimed=Privacy(eps, 0.0, "add_remove"))
    assert not rep.violates and rep.max_loss <= eps + 1e-9
    # negative control: held to one round's budget, the audit catches it
    assert audit(law, pairs, claimed=Privacy(eps / k, 0.0, "add_remove")).violates


@pytest.mark.parametrize("eps", [0.1, 0.3, 0.7, 1.0, 2.3])
@pytest.mark.parametrize("k", [1, 3, 4])
def test_accountant_is_charged_epsilon_and_holds_exactly_epsilon(eps, k):
    acc = Accountant(eps)
    private_majority(LABELS, eps, candidates=CANDIDATES, k=k, rng=0, accountant=acc)
    spent = acc.spent.epsilon
    assert spent <= eps and spent >= eps * (1 - 1e-12)


def test_k_none_is_one_label_and_k_one_a_list_of_it():
    one = private_majority(LABELS, 1.0, candidates=CANDIDATES, rng=3)
    assert one in CANDIDATES
    assert private_majority(LABELS, 1.0, candidates=CANDIDATES, k=1, rng=3) == [one]


@pytest.mark.parametrize("k, error, match", [(5, ValueError, "^k must be at most"), (0, ValueError, "^k must be >= 1")])
def test_bad_k_is_named_before_any_randomness(k, error, match):
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(error, match=match):
        private_majority(LABELS, 1.0, candidates=CANDIDATES, k=k, rng=gen)
    assert gen.bit_generator.state == state


def test_cli_select_k_prints_k_labels_only(tmp_path, capsys):
    pytest.importorskip("typer")
    from dpselect.cli import main

    path = tmp_path / "votes.csv"
    path.write_text("colour\n" + "\n".join(LABELS) + "\n")
    argv = ["select", str(path), "--column", "colour", "--epsilon", "3", "--candidates", ",".join(CANDIDATES)]
    assert main([*argv, "--k", "3", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("selected: ") and first.endswith(" (most preferred first)")
    chosen = first.removeprefix("selected: ").removesuffix(" (most preferred first)").split(", ")
    assert len(chosen) == 3 and len(set(chosen)) == 3 and set(chosen) <= set(CANDIDATES)
    # the same draw as the library (same seed, same per-round budget), and no count is printed
    gen = np.random.default_rng(4)
    assert chosen == private_majority(LABELS, 3.0, candidates=CANDIDATES, k=3, rng=gen)
    assert "guarantee: 3-DP" in out
    numbers = set(re.findall(r"\d+", out))
    assert not numbers & {"17", "15", "11", "45", "50"}
    assert main([*argv, "--k", "5"]) == 2
    assert "--k must be at most the number of candidates (4)" in capsys.readouterr().err


def test_a_misspelt_candidate_is_a_candidate_with_count_zero_and_no_warning(tmp_path, capsys):
    """--candidates red,gren: 'gren' counts 0 (the law of PF on [17, 0]), and nothing warns (it would leak)."""
    pytest.importorskip("typer")
    from dpselect.cli import main

    assert label_counts(LABELS, ["red", "gren"]).tolist() == [17, 0]
    path = tmp_path / "votes.csv"
    path.write_text("colour\n" + "\n".join(LABELS) + "\n")
    assert main(["select", str(path), "--column", "colour", "--epsilon", "0.1", "--candidates", "red,gren"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("selected: ") and err == ""
    assert main(["select", "--help"]) == 0
    assert "misspelt label is a candidate no record holds (count 0)" in " ".join(capsys.readouterr().out.split())
