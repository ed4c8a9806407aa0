"""Selection per test, every mechanism/method at large epsilon, select_and_release on case-control counts, assoc."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpselect import Accountant
from dpselect.apps import genomics as g
from dpselect.apps.genomics._casecontrol._release import association_release
from dpselect.cli import main
from dpselect.noise import discrete_laplace_logpmf

_METHODS = [("peel", "pf"), ("peel", "em"), ("peel", "rnm_gumbel"), ("joint", "em"), ("gumbel", "em")]


@pytest.fixture(scope="module")
def cohort():
    return g.simulate_case_control(1000, 1000, 400, n_causal=3, odds_ratio=2.0, rng=3)


@pytest.mark.parametrize("test", g.ASSOCIATION_TESTS)
@pytest.mark.parametrize(("method", "mechanism"), _METHODS)
def test_every_mechanism_and_method_recovers_the_top_10_at_large_epsilon(cohort, test, method, mechanism):
    top = set(np.argsort(-g.association_statistic(cohort.counts, test=test), kind="stable")[:10].tolist())
    got = g.select_top_snps(cohort.counts, 1e4, 10, test=test, method=method, mechanism=mechanism, rng=0)
    assert len(top & set(got.indices.tolist())) >= 9
    assert got.privacy.epsilon == pytest.approx(1e4)


@pytest.mark.parametrize(("method", "mechanism"), _METHODS)
def test_tdt_every_mechanism_and_method_recovers_the_top_10(method, mechanism):
    rng = np.random.default_rng(2)
    s = rng.integers(40, 120, 300)
    b = rng.binomial(s, 0.5)
    counts = g.TransmissionCounts(b, s - b, 200)
    top = set(np.argsort(-np.asarray(g.tdt_statistic(counts.b, counts.c)), kind="stable")[:10].tolist())
    got = g.select_top_snps(counts, 1e4, 10, method=method, mechanism=mechanism, rng=0)
    assert len(top & set(got.indices.tolist())) >= 9


@pytest.mark.slow
@pytest.mark.parametrize("test", g.ASSOCIATION_TESTS)
def test_causal_snps_found_at_epsilon_1_not_at_0_005(test):
    sim = g.simulate_case_control(2000, 2000, 1000, n_causal=3, odds_ratio=2.0, rng=1)
    causal = set(sim.causal.tolist())
    hits = {
        eps: np.mean(
            [len(causal & set(g.select_top_snps(sim.counts, eps, 3, test=test, rng=s).indices)) for s in range(4)]
        )
        for eps in (1.0, 0.005)
    }
    assert hits[1.0] >= 2.5 and hits[0.005] <= 0.5, hits


def test_select_top_snp_takes_a_counts_object(cohort):
    picks = [g.select_top_snp(cohort.counts, 20.0, test="dominant", rng=s) for s in range(5)]
    assert set(picks) <= set(cohort.causal.tolist())
    with pytest.raises(TypeError, match="counts"):
        g.select_top_snp([1, 2], 1.0)


def test_select_and_release_on_case_control_counts(cohort):
    acc = Accountant(10.0)
    out = g.select_and_release(cohort.counts, 3.0, 2.0, k=3, test="allelic", rng=0, accountant=acc)
    assert out.privacy.epsilon == pytest.approx(5.0) and acc.spent.epsilon == pytest.approx(5.0)
    assert out.labels == cohort.counts.snp_ids[out.indices].tolist()
    assert out.statistic.shape == out.p_value.shape == out.odds_ratio.shape == out.standard_error.shape == (3,)
    assert ((out.p_value >= 0) & (out.p_value <= 1)).all() and (out.standard_error > 0).all()
    # a large release budget: the released columns approach the exact ones of the selected SNPs
    big = g.select_and_release(cohort.counts, 3.0, 1e5, k=3, test="trend", rng=1)
    exact = g.association_statistic(cohort.counts, test="trend")[big.indices]
    np.testing.assert_allclose(big.statistic, exact, rtol=0.02)
    a, b = cohort.counts.allele_cases[big.indices].T
    c, d = cohort.counts.allele_controls[big.indices].T
    np.testing.assert_allclose(big.odds_ratio, (a + 0.5) * (d + 0.5) / ((b + 0.5) * (c + 0.5)), rtol=0.02)
    with pytest.raises(ValueError, match="test"):
        g.select_and_release(cohort.counts, 1.0, 1.0, test="logistic")
    with pytest.raises(ValueError, match="epsilon_release"):
        g.select_and_release(cohort.counts, 1.0, -1.0)


@pytest.mark.parametrize(
    ("test", "relation", "l1"), [("allelic", "replace", 4), ("trend", "replace", 2), ("dominant", "add_remove", 1)]
)
def test_released_tables_audit_exactly(test, relation, l1):
    """Exact privacy loss of the table release over every one-individual neighbour of a small table:
    sum_cells |t - t'| / scale <= epsilon; the negative control (half the scale) exceeds it."""
    eps, k = 1.0, 2
    scale = Fraction(l1 * k) / Fraction(eps)
    cases, controls = np.array([[3, 4, 2]]), np.array([[1, 5, 3]])
    ys = np.arange(-60, 61)

    def table(cs, ct):
        if test == "allelic":
            return np.r_[2 * cs[0] + cs[1], cs[1] + 2 * cs[2], 2 * ct[0] + ct[1], ct[1] + 2 * ct[2]]
        return np.r_[cs, ct]

    base = table(cases[0], controls[0])
    worst = worst_control = 0.0
    moves = [m for m in itertools.product((-1, 0, 1), repeat=6) if 0 < sum(map(abs, m)) <= 2]
    for m in moves:
        m = np.array(m)
        rows = m[:3], m[3:]
        if any(r.any() for r in rows) and all(r.any() for r in rows):
            continue  # one individual moves one row
        if relation == "add_remove" and (np.abs(m).sum() != 1):
            continue
        if relation == "replace" and np.abs(m).sum() == 2 and m.sum() != 0:
            continue
        nb = table(cases[0] + m[:3], controls[0] + m[3:])
        if (nb < 0).any():
            continue
        for sc, key in ((scale, "real"), (scale / 2, "control")):
            loss = sum(
                np.max(np.abs(discrete_laplace_logpmf(ys - x, sc) - discrete_laplace_logpmf(ys - y, sc)))
                for x, y in zip(base, nb)
            )
            if key == "real":
                worst = max(worst, loss)
            else:
                worst_control = max(worst_control, loss)
    assert worst <= eps / k + 1e-9
    assert worst_control > eps / k + 1e-6


def test_release_draws_integers_and_charges_nothing_itself(cohort):
    tables = association_release(
        cohort.counts, np.array([0, 1]), 1.0, test="genotypic", relation="replace", gen=np.random.default_rng(0)
    )
    assert tables.dtype.kind == "i" and tables.shape == (2, 6) and (tables >= 0).all()


def test_assoc_cli_releases_plink_columns(tmp_path, capsys):
    prefix = tmp_path / "cc"
    g.simulate_case_control(300, 300, 60, n_causal=2, odds_ratio=3.0, path=prefix, rng=4)
    out = tmp_path / "top.tsv"
    argv = ["assoc", prefix, "--epsilon", 5, "--k", 2, "--test", "trend", "--epsilon-release", 2, "--seed", 1]
    code = main([str(a) for a in [*argv, "--out", out, "--quiet"]])
    text, err = capsys.readouterr()
    assert code == 0, err
    header = out.read_text().splitlines()[0].split("\t")
    assert header == ["RANK", "CHR", "SNP", "BP", "A1", "A2", "CHISQ", "OR", "SE", "P"]
    assert "guarantee: 7-DP" in text
    rows = [line.split("\t") for line in out.read_text().splitlines()[1:]]
    assert len(rows) == 2 and all(math.isfinite(float(r[-1])) for r in rows)
    assert main([str(a) for a in ["assoc", prefix, "--epsilon", 5, "--k", 2, "--epsilon-release", -1]]) == 2


def test_assoc_help_points_to_the_guidance_table(capsys):
    from pathlib import Path

    assert main(["assoc", "--help"]) == 0
    assert "genomics-guidance.md" in capsys.readouterr().out.replace("\n", "").replace(" ", "")
    docs = Path(__file__).resolve().parents[1] / "docs"
    assert '--8<-- "_generated/genomics-guidance.md"' in (docs / "genomics-guidance.md").read_text(encoding="utf-8")
    assert (docs / "_generated" / "genomics-guidance.md").read_text(encoding="utf-8").count("\n| ") == 9
