"""CaseControlCounts (container, validation) and simulate_case_control (laws, PLINK files)."""

from __future__ import annotations

import pickle
import shutil
import subprocess

import numpy as np
import pytest

from dpselect.apps.genomics import CaseControlCounts, TransmissionCounts, association_statistic, simulate_case_control


def _cc() -> CaseControlCounts:
    return CaseControlCounts(
        [[30, 50, 20], [10, 40, 50]],
        [[20, 50, 30], [9, 42, 49]],
        snp_ids=["a", "b"],
        chrom=["1", "X"],
        pos=[10, 20],
        a1=["A", "C"],
        a2=["G", "T"],
    )


def test_defaults_derive_alleles_and_sizes() -> None:
    cc = _cc()
    assert cc.allele_cases.tolist() == [[110, 90], [60, 140]]
    assert cc.allele_controls.tolist() == [[90, 110], [60, 140]]
    assert (cc.n_cases, cc.n_controls, cc.n_snps) == (100, 100, 2)
    assert cc.annotations() == [("1", "a", 10, "A", "G"), ("X", "b", 20, "C", "T")]
    assert cc.annotations([1]) == [("X", "b", 20, "C", "T")]
    assert cc.snp_ids.tolist() == ["a", "b"] and cc.chrom.dtype.kind == "U"
    bare = CaseControlCounts([[1, 1, 1]], [[0, 2, 1]])
    assert bare.annotations() == [("0", "snp0", 0, "1", "2")]


def test_immutable_pickles_and_repr_has_no_counts() -> None:
    cc = _cc()
    with pytest.raises(AttributeError, match="immutable"):
        cc.n_cases = 3
    with pytest.raises(AttributeError, match="immutable"):
        del cc.cases
    with pytest.raises(ValueError):
        cc.cases[0, 0] = 1
    back = pickle.loads(pickle.dumps(cc))
    for name in ("cases", "controls", "allele_cases", "allele_controls", "pos"):
        np.testing.assert_array_equal(getattr(back, name), getattr(cc, name))
    assert back.annotations() == cc.annotations() and back.n_cases == cc.n_cases
    assert repr(cc) == "CaseControlCounts(2 SNPs, 100 cases, 100 controls)"
    tc = TransmissionCounts(np.array([1]), np.array([2]), 3, snp_ids=["s"], chrom=["1"], pos=[5], a1=["A"], a2=["G"])
    with pytest.raises(AttributeError, match="TransmissionCounts is immutable"):
        tc.b = 1
    with pytest.raises(ValueError):
        tc.b[0] = 0
    assert tc.annotations() == [("1", "s", 5, "A", "G")]
    back = pickle.loads(pickle.dumps(tc))
    assert back.annotations() == tc.annotations() and back.b.tolist() == [1] and back.n_families == 3
    assert repr(tc) == "TransmissionCounts(1 SNPs, 3 families)"


@pytest.mark.parametrize(
    ("args", "kwargs", "err", "match"),
    [
        (([1, 2], [1], 3), {}, ValueError, "same shape"),
        (([4], [3], 3), {}, ValueError, "b \\+ c must be <= 2 \\* n_families"),
        (([-1], [0], 3), {}, ValueError, "b"),
        (([1.5], [0], 3), {}, ValueError, "b"),
        (([1], [0], 0), {}, ValueError, "n_families"),
        (([[1]], [[0]], 3), {}, ValueError, "b"),
        (([1], [0], 3), {"snp_ids": ["a", "b"]}, ValueError, "snp_ids"),
        (([1], [0], 3), {"pos": [1.5]}, ValueError, "pos"),
        (([1], [0], 3), {"mendel_errors": [1, 2]}, ValueError, "mendel_errors"),
    ],
)
def test_transmission_counts_checks_its_arguments(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        TransmissionCounts(*args, **kwargs)


def test_transmission_counts_error_quotes_no_count():
    with pytest.raises(ValueError) as info:
        TransmissionCounts([37], [41], 30)
    assert "37" not in str(info.value) and "41" not in str(info.value) and "78" not in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"cases": [[1, 2]]}, ValueError, "cases must have shape"),
        ({"controls": [[1, 2, 3], [1, 2, 3]]}, ValueError, "controls must have 1 rows"),
        ({"cases": [[1, -2, 3]]}, ValueError, "cases must be non-negative"),
        ({"cases": [[1.5, 2, 3]]}, ValueError, "cases must hold integers"),
        ({"cases": [["a", "b", "c"]]}, TypeError, "cases"),
        ({"cases": [[1, 2, np.nan]]}, ValueError, "cases must be finite"),
        ({"n_cases": 5}, ValueError, "n_cases"),
        ({"n_controls": 2.0}, TypeError, "n_controls"),
        ({"allele_cases": [[1, 2, 3]]}, ValueError, "allele_cases must have shape"),
        ({"allele_controls": [[50, 0]]}, ValueError, "n_controls"),
        ({"snp_ids": ["a", "b"]}, ValueError, "snp_ids must have length 1"),
        ({"pos": [1.5]}, ValueError, "pos"),
    ],
)
def test_validation(kwargs: dict, err: type, match: str) -> None:
    args = {"cases": [[1, 2, 3]], "controls": [[3, 2, 1]], **kwargs}
    with pytest.raises(err, match=match):
        CaseControlCounts(args.pop("cases"), args.pop("controls"), **args)


def test_unequal_totals_need_sizes() -> None:
    with pytest.raises(ValueError, match="n_cases is required"):
        CaseControlCounts([[1, 2, 3], [1, 2, 2]], [[1, 1, 1], [1, 1, 1]])
    cc = CaseControlCounts([[1, 2, 3], [1, 2, 2]], [[1, 1, 1], [1, 1, 1]], n_cases=6)
    assert cc.n_cases == 6 and cc.n_controls == 3


def test_simulation_laws() -> None:
    """Controls in Hardy-Weinberg; causal cases tilted by OR^g (frequencies within 5 SE, pooled over SNPs)."""
    sim = simulate_case_control(4000, 4000, 200, n_causal=20, odds_ratio=2.0, maf=(0.3, 0.3), rng=5)
    p = 0.3
    law0 = np.array([p * p, 2 * p * (1 - p), (1 - p) ** 2])
    law1 = law0 * np.array([4.0, 2.0, 1.0])
    law1 /= law1.sum()
    c = sim.counts
    is_causal = np.zeros(200, bool)
    is_causal[sim.causal] = True
    for rows, law, n in (
        (c.controls, law0, 4000 * 200),
        (c.cases[~is_causal], law0, 4000 * 180),
        (c.cases[is_causal], law1, 4000 * 20),
    ):
        freq = rows.sum(axis=0) / n
        assert np.all(np.abs(freq - law) < 5 * np.sqrt(law * (1 - law) / n))
    again = simulate_case_control(4000, 4000, 200, n_causal=20, odds_ratio=2.0, maf=(0.3, 0.3), rng=5)
    np.testing.assert_array_equal(again.counts.cases, c.cases)


def test_simulated_genotypes_match_counts(tmp_path) -> None:
    sim = simulate_case_control(30, 40, 25, n_causal=5, odds_ratio=3.0, genotypes=True, path=tmp_path / "cc", rng=2)
    g = sim.genotypes
    assert g.shape == (70, 25) and sim.is_case.sum() == 30
    np.testing.assert_array_equal(sim.counts.cases, np.stack([(g[:30] == v).sum(0) for v in (2, 1, 0)], 1))
    np.testing.assert_array_equal(sim.counts.controls, np.stack([(g[30:] == v).sum(0) for v in (2, 1, 0)], 1))
    plink = shutil.which("plink1.9")
    if plink is None:
        pytest.skip("plink1.9 not installed")
    subprocess.run(
        [
            plink,
            "--bfile",
            str(tmp_path / "cc"),
            "--model",
            "--keep-allele-order",
            "--allow-no-sex",
            "--out",
            str(tmp_path / "m"),
        ],
        check=True,
        capture_output=True,
    )
    rows = [line.split() for line in (tmp_path / "m.model").read_text().splitlines()[1:]]
    geno = [r for r in rows if r[4] == "GENO"]
    aff = np.array([[int(v) for v in r[5].split("/")] for r in geno])
    unaff = np.array([[int(v) for v in r[6].split("/")] for r in geno])
    np.testing.assert_array_equal(aff, sim.counts.cases)
    np.testing.assert_array_equal(unaff, sim.counts.controls)
    chisq = np.array([float(r[7]) for r in rows if r[4] == "ALLELIC"])  # PLINK prints 4 significant digits
    np.testing.assert_allclose(association_statistic(sim.counts), chisq, rtol=5e-4, atol=5e-4)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_cases": 0}, "n_cases"),
        ({"n_causal": 11}, "n_causal"),
        ({"odds_ratio": -1.0}, "odds_ratio"),
        ({"maf": (0.6, 0.2)}, "maf"),
    ],
)
def test_simulation_validation(kwargs: dict, match: str) -> None:
    args = {"n_cases": 5, "n_controls": 5, "n_snps": 10, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        simulate_case_control(args.pop("n_cases"), args.pop("n_controls"), args.pop("n_snps"), **args)
