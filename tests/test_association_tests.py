"""The five tests of ``plink1.9 --model``: statistics, 1-Lipschitz distances, selection, released statistics."""

from __future__ import annotations

import itertools
import shutil
import subprocess

import numpy as np
import pytest

from dpselect.apps import genomics as g
from dpselect.apps.genomics._casecontrol._allelic_distance import allelic_reach
from dpselect.apps.genomics._casecontrol._genotype_distance import genotype_reach
from dpselect.apps.genomics._casecontrol._statistics import collapsed_tables, model_statistic

PLINK = shutil.which("plink1.9")
_PLINK_NAMES = {"ALLELIC": "allelic", "TREND": "trend", "GENO": "genotypic", "DOM": "dominant", "REC": "recessive"}


@pytest.mark.skipif(PLINK is None, reason="plink1.9 is not installed")
def test_statistics_equal_plink_model(tmp_path):
    spec = tmp_path / "s.sim"
    spec.write_text("40 null 0.05 0.5 1 1\n8 disease 0.05 0.5 2 mult\n")
    out = tmp_path / "sim"
    common = ["--allow-no-sex", "--keep-allele-order", "--threads", "1", "--silent"]
    simulate = ["--simulate", spec, "--simulate-ncases", "300", "--simulate-ncontrols", "300", "--make-bed"]
    subprocess.run([PLINK, *simulate, "--out", out, "--seed", "7", *common], check=True)
    subprocess.run([PLINK, "--bfile", out, "--model", "--out", out, *common], check=True)
    counts = g.case_control_counts(out)
    stats = {t: g.association_statistic(counts, test=t) for t in g.ASSOCIATION_TESTS}
    index = {snp: i for i, snp in enumerate(counts.snp_ids)}
    rows = [line.split() for line in (tmp_path / "sim.model").read_text().splitlines()[1:]]
    seen = set()
    for row in rows:
        if row[7] == "NA":  # PLINK's --cell 5 rule
            continue
        test = _PLINK_NAMES[row[4]]
        seen.add(test)
        assert stats[test][index[row[1]]] == pytest.approx(float(row[7]), rel=1e-3, abs=1e-4), row
    assert seen == set(g.ASSOCIATION_TESTS)
    assert len(rows) == 5 * counts.n_snps


def test_statistics_by_hand():
    cases, controls = np.array([[10, 20, 30]]), np.array([[5, 25, 30]])
    # genotypic: Pearson's chi2 of the 2 x 3 table
    tab = np.vstack([cases, controls]).astype(float)
    exp = tab.sum(1, keepdims=True) * tab.sum(0, keepdims=True) / tab.sum()
    assert model_statistic("genotypic", cases, controls)[0] == pytest.approx(((tab - exp) ** 2 / exp).sum())
    # trend: N * r^2 of status against the allele dosage (Armitage)
    dose = np.repeat([2, 1, 0, 2, 1, 0], tab.ravel().astype(int))
    status = np.repeat([1, 1, 1, 0, 0, 0], tab.ravel().astype(int))
    r = np.corrcoef(dose, status)[0, 1]
    assert model_statistic("trend", cases, controls)[0] == pytest.approx(dose.size * r * r)
    dom = collapsed_tables("dominant", cases, controls)
    assert dom.tolist() == [[30, 30, 30, 30]] and model_statistic("dominant", cases, controls)[0] == 0.0


def _moves() -> list[np.ndarray]:
    """One individual's effect on the (6,) genotype table: replaced (status kept), a call lost/gained, added/removed."""
    out = []
    for row in (0, 3):
        for i in range(3):
            for j in range(3):
                if i != j:
                    move = np.zeros(6, dtype=np.int64)
                    move[row + i], move[row + j] = -1, 1
                    out.append(move)
            for sign in (-1, 1):
                move = np.zeros(6, dtype=np.int64)
                move[row + i] = sign
                out.append(move)
    return out


def _reach(test: str, tables: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) the selection uses for ``test`` on (6, n) genotype tables (cases 2, 1, 0; controls 2, 1, 0)."""
    kk = np.full(tables.shape[1], k)
    if test in ("trend", "genotypic"):
        return genotype_reach(test, tables, kk)
    cases, controls = tables[:3].T, tables[3:].T
    if test == "allelic":
        a, b = 2 * cases[:, 0] + cases[:, 1], cases[:, 1] + 2 * cases[:, 2]
        c, d = 2 * controls[:, 0] + controls[:, 1], controls[:, 1] + 2 * controls[:, 2]
        hi, lo = allelic_reach(a, b, c, d, kk, step=2)
    else:
        hi, lo = allelic_reach(*collapsed_tables(test, cases, controls).T, kk, step=1)
    return lo, hi


def _stat(test: str, tables: np.ndarray) -> np.ndarray:
    return model_statistic(test, tables[:3].T, tables[3:].T)


@pytest.mark.parametrize("test", g.ASSOCIATION_TESTS)
def test_reach_bounds_are_exact_at_zero_and_nest_for_neighbours(test):
    """Every table with cells 0..3 and every one-individual neighbour x' ("replace" and "add_remove"):
    hi(x, 0) = lo(x, 0) = statistic, hi(x, k) <= hi(x', k + 1) and lo(x, k + 1) <= lo(x', k), so
    the distance is 1-Lipschitz (mathematics §9.1, §14); and hi(x, 1) >= stat(x') >= lo(x, 1)."""
    grid = np.array(list(itertools.product(range(4), repeat=6)), dtype=np.int64).T  # (6, 4096)
    stat = _stat(test, grid)
    tol = lambda v: v * (1 + 1e-12) + 1e-12
    lo0, hi0 = _reach(test, grid, 0)
    np.testing.assert_allclose(lo0, stat, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hi0, stat, rtol=1e-12, atol=1e-12)
    reach = {k: _reach(test, grid, k) for k in range(5)}
    for move in _moves():
        nb = grid + move[:, None]
        ok = (nb >= 0).all(axis=0)
        nb = np.maximum(nb, 0)
        stat_nb = _stat(test, nb)
        assert (tol(reach[1][1][ok]) >= stat_nb[ok]).all() and (reach[1][0][ok] <= tol(stat_nb[ok])).all()
        for k in range(4):
            lo_n = _reach(test, nb, k)[0]
            hi_n1 = _reach(test, nb, k + 1)[1]
            assert (reach[k][1][ok] <= tol(hi_n1[ok])).all(), (test, move, k)
            assert (reach[k + 1][0][ok] <= tol(lo_n[ok])).all(), (test, move, k)


def _individuals(rng: np.random.Generator, m: int, n: int) -> np.ndarray:
    """(n, m + 1): status (1 case, 0 control) then genotypes (0, 1, 2 copies of A1; -1 missing)."""
    return np.column_stack([np.arange(n) % 2, rng.integers(-1, 3, size=(n, m))])


def _counts(people: np.ndarray) -> g.CaseControlCounts:
    status, geno = people[:, 0], people[:, 1:]
    rows = [np.stack([((geno == c) & (status == s)[:, None]).sum(0) for c in (2, 1, 0)], 1) for s in (1, 0)]
    return g.CaseControlCounts(rows[0], rows[1], n_cases=int(status.sum()), n_controls=int((1 - status).sum()))


@pytest.mark.slow
@pytest.mark.parametrize("test", g.ASSOCIATION_TESTS)
def test_distances_are_1_lipschitz_on_datasets(test):
    """Every neighbour of small datasets: one individual replaced (status kept), added or removed."""
    rng = np.random.default_rng(5)
    vectors = np.array(list(itertools.product(range(-1, 3), repeat=3)))
    for _ in range(2):
        people = _individuals(rng, 3, 6)
        base = g.association_distances(_counts(people), test=test)
        neighbours = [np.delete(people, i, 0) for i in range(len(people))]
        for i in range(len(people)):
            for v in vectors:
                swapped = people.copy()
                swapped[i, 1:] = v
                neighbours.append(swapped)
        for status in (0, 1):
            neighbours += [np.vstack([people, np.r_[status, v]]) for v in vectors]
        for nb in neighbours:
            assert np.abs(g.association_distances(_counts(nb), test=test) - base).max() <= 1


@pytest.mark.parametrize("step", [1, 2])
def test_closed_form_reach_equals_every_split(step):
    """The unclipped path's quasiconvexity (ends for hi, stationary points for lo) gives the values of the
    loop over every split k1 + k0 = k, on tables large enough that most paths are unclipped."""
    from dpselect.apps.genomics._casecontrol._allelic_distance import _reach_splits

    rng = np.random.default_rng(step)
    n1, n0 = rng.integers(1, 400, 2000), rng.integers(1, 400, 2000)
    a, c = rng.integers(0, 2 * n1 + 1), rng.integers(0, 2 * n0 + 1)
    b, d, k = 2 * n1 - a, 2 * n0 - c, rng.integers(0, 60, 2000)
    fast = np.minimum(np.minimum(a, b), np.minimum(c, d)) >= step * k
    assert fast.mean() > 0.3  # the closed form is what is checked
    hi, lo = allelic_reach(a, b, c, d, k, step=step)
    hi_ref, lo_ref = _reach_splits(a, b, c, d, k, "both", step)
    np.testing.assert_array_equal(hi, hi_ref)
    np.testing.assert_array_equal(lo, lo_ref)
