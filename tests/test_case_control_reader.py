"""case_control_counts: the popcount kernel against decoded genotypes, PLINK 1.9 --model / --assoc, and .pgen = .bed."""

from __future__ import annotations

import shutil
import subprocess
import warnings

import numpy as np
import pytest

from dpselect.apps.genomics import case_control_counts, simulate_case_control
from dpselect.apps.genomics._io import _case_control_kernel as kernel
from dpselect.apps.genomics._io._case_control_kernel import CaseControlPlan, count_case_control

PLINK = shutil.which("plink1.9") or shutil.which("plink")
PLINK2 = shutil.which("plink2")
needs_plink = pytest.mark.skipif(PLINK is None, reason="plink1.9 not installed (Debian package plink1.9)")
needs_plink2 = pytest.mark.skipif(PLINK2 is None, reason="plink2 not installed (Debian package plink2)")


def _decode(records: np.ndarray, n: int) -> np.ndarray:
    """(k, bytes) .bed records -> (k, n) copies of A1, -1 missing (plain bit arithmetic)."""
    i = np.arange(n)
    return np.array([2, -1, 1, 0])[(records[:, i // 4] >> (2 * (i % 4))) & 3]


def _reference(g: np.ndarray, case, control, male, on_x) -> np.ndarray:
    """(10, k) counts by the rules of PLINK 1.9 --model / --assoc written out per group and code."""
    out = np.zeros((10, g.shape[0]), dtype=np.int64)
    for j in range(g.shape[0]):
        for k, status in enumerate((case, control)):
            diploid = status & ~male if on_x[j] else status
            gg = g[j, diploid]
            geno = [(gg == 2).sum(), (gg == 1).sum(), (gg == 0).sum()]
            out[3 * k : 3 * k + 3, j] = geno
            a1, a2 = 2 * geno[0] + geno[1], geno[1] + 2 * geno[2]
            if on_x[j]:
                gm = g[j, status & male]
                a1, a2 = a1 + (gm == 2).sum(), a2 + (gm == 0).sum()  # a male's het call: missing
            out[6 + 2 * k : 8 + 2 * k, j] = a1, a2
    return out


@pytest.mark.parametrize(
    "n,k,block,words", [(1, 4, 1 << 18, 1023), (31, 50, 64, 1023), (33, 17, 8, 1), (257, 40, 1 << 18, 3)]
)
def test_kernel_equals_decoded_reference(n, k, block, words, monkeypatch):
    monkeypatch.setattr(kernel, "_BLOCK_BYTES", block)  # several SNP blocks, and one
    monkeypatch.setattr(kernel, "_WORDS_U16", words)  # the uint16 word sums in several pieces
    rng = np.random.default_rng(n + k)
    records = rng.integers(0, 256, size=(k, (n + 3) // 4), dtype=np.uint8)
    status = rng.integers(0, 3, size=n)
    case, control, male = status == 0, status == 1, rng.random(n) < 0.5
    on_x = rng.random(k) < 0.4
    plan = CaseControlPlan.from_status(case, control, male)
    got = count_case_control(records, plan, on_x)
    np.testing.assert_array_equal(got, _reference(_decode(records, n), case, control, male, on_x))
    np.testing.assert_array_equal(count_case_control(records, plan)[:, ~on_x], got[:, ~on_x])


def _write_cohort(prefix, n, m, *, x_from, rng):
    """A random fileset: 5 % missing calls, phenotypes 1 / 2 / 0 / -9, sexes 1 / 2 / 0, SNPs x_from.. on 23."""
    g = rng.choice([0, 1, 2, -1], p=[0.3, 0.4, 0.25, 0.05], size=(m, n))
    codes = np.array([0b11, 0b10, 0b00, 0b01], dtype=np.uint8)[np.where(g < 0, 3, g)]
    codes = np.pad(codes, ((0, 0), (0, (-n) % 4))).reshape(m, -1, 4)
    body = codes[..., 0] | codes[..., 1] << 2 | codes[..., 2] << 4 | codes[..., 3] << 6
    prefix.with_suffix(".bed").write_bytes(bytes((0x6C, 0x1B, 0x01)) + body.astype(np.uint8).tobytes())
    sex = rng.choice(["1", "2", "0"], p=[0.45, 0.45, 0.1], size=n)
    pheno = rng.choice(["1", "2", "0", "-9"], p=[0.45, 0.45, 0.05, 0.05], size=n)
    fam = [f"f{i} i{i} 0 0 {s} {p}\n" for i, (s, p) in enumerate(zip(sex, pheno))]
    prefix.with_suffix(".fam").write_text("".join(fam))
    prefix.with_suffix(".bim").write_text(
        "".join(f"{'23' if j >= x_from else '1'}\tr{j}\t0\t{j + 1}\tA\tG\n" for j in range(m))
    )
    return sex, pheno


@pytest.mark.parametrize("chunk", [1, 7, 1000])
@pytest.mark.parametrize("allow", [False, True])
def test_reader_equals_reference_with_missing_x_and_unknown_sex(tmp_path, chunk, allow):
    prefix = tmp_path / "c"
    sex, pheno = _write_cohort(prefix, 45, 30, x_from=18, rng=np.random.default_rng(3))
    got = case_control_counts(prefix, chunk_snps=chunk, allow_no_sex=allow)
    known = np.isin(sex, ["1", "2"]) | allow
    case, control = (pheno == "2") & known, (pheno == "1") & known
    records = np.fromfile(prefix.with_suffix(".bed"), dtype=np.uint8, offset=3).reshape(30, -1)
    ref = _reference(_decode(records, 45), case, control, sex == "1", np.arange(30) >= 18)
    np.testing.assert_array_equal(got.cases, ref[0:3].T)
    np.testing.assert_array_equal(got.controls, ref[3:6].T)
    np.testing.assert_array_equal(got.allele_cases, ref[6:8].T)
    np.testing.assert_array_equal(got.allele_controls, ref[8:10].T)
    assert (got.n_cases, got.n_controls) == (int(case.sum()), int(control.sum()))
    assert got.annotations([0, 29]) == [("1", "r0", 1, "A", "G"), ("23", "r29", 30, "A", "G")]


def _plink_model(prefix, out, *extra):
    run = subprocess.run(
        [PLINK, "--bfile", str(prefix), "--model", "--keep-allele-order", "--out", str(out), *extra],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [r.split() for r in out.with_suffix(".model").read_text().splitlines()[1:] if " GENO " in r]
    return [r[1] for r in rows], np.array(
        [[list(map(int, r[5].split("/"))), list(map(int, r[6].split("/")))] for r in rows]
    )


def _plink_assoc_counts(prefix, out, *extra):
    """(m, 2, 2) allele counts [case, control] x [A1, A2] from two --assoc counts runs (A1, then A2 as A1)."""
    got = []
    for allele in (["--keep-allele-order"], ["--a1-allele", str(prefix.with_suffix(".bim")), "6", "2"]):
        run = subprocess.run(
            [PLINK, "--bfile", str(prefix), "--assoc", "counts", *allele, "--out", str(out), *extra],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        rows = [r.split() for r in out.with_suffix(".assoc").read_text().splitlines()[1:]]
        got.append(np.array([[int(r[4]), int(r[5])] for r in rows]))
    return np.stack(got, axis=2)


def _equal_plink(prefix, tmp_path, allow):
    extra = ("--allow-no-sex",) if allow else ()
    ids, geno = _plink_model(prefix, tmp_path / "model", *extra)
    alleles = _plink_assoc_counts(prefix, tmp_path / "assoc", *extra)
    got = case_control_counts(prefix, allow_no_sex=allow, chunk_snps=250)
    assert list(got.snp_ids) == ids
    np.testing.assert_array_equal(got.cases, geno[:, 0])
    np.testing.assert_array_equal(got.controls, geno[:, 1])
    np.testing.assert_array_equal(got.allele_cases, alleles[:, 0])
    np.testing.assert_array_equal(got.allele_controls, alleles[:, 1])
    return got


@needs_plink
@pytest.mark.parametrize("allow", [False, True])
def test_plink_dummy_cohort_equals_model_and_assoc(tmp_path, allow):
    dummy = tmp_path / "dummy"
    run = subprocess.run(
        [PLINK, "--dummy", "300", "400", "0.03", "--make-bed", "--out", str(dummy)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rng = np.random.default_rng(7)
    rows = [line.split() for line in dummy.with_suffix(".fam").read_text().splitlines()]
    for r in rows:  # --dummy makes females only, cases and controls: mix the sexes, add missing ones
        r[4] = str(rng.choice(["1", "2", "0"], p=[0.45, 0.45, 0.1]))
        r[5] = str(rng.choice(["1", "2", "-9"], p=[0.47, 0.47, 0.06]))
    dummy.with_suffix(".fam").write_text("".join(" ".join(r) + "\n" for r in rows))
    bim = [line.split() for line in dummy.with_suffix(".bim").read_text().splitlines()]
    for j, r in enumerate(bim):
        r[0] = "23" if j >= 250 else ("25" if j >= 230 else "1")
    dummy.with_suffix(".bim").write_text("".join("\t".join(r) + "\n" for r in bim))
    got = _equal_plink(dummy, tmp_path, allow)
    on_x = got.chrom == "23"
    assert on_x.sum() == 150
    # on X the allele totals exceed twice the genotype totals (males add one allele each)
    assert (got.allele_cases[on_x].sum(axis=1) > 2 * got.cases[on_x].sum(axis=1)).all()


@needs_plink
def test_acceptance_cohort_1000_cases_1000_controls_3000_snps(tmp_path):
    prefix = tmp_path / "cohort"
    simulate_case_control(1000, 1000, 3000, n_causal=10, odds_ratio=1.5, path=prefix, rng=5)
    bim = [line.split() for line in prefix.with_suffix(".bim").read_text().splitlines()]
    for j, r in enumerate(bim):  # the last 600 SNPs on X (the simulated sexes alternate 1, 2)
        r[0] = "23" if j >= 2400 else r[0]
    prefix.with_suffix(".bim").write_text("".join("\t".join(r) + "\n" for r in bim))
    got = _equal_plink(prefix, tmp_path, False)
    assert (got.n_cases, got.n_controls, got.n_snps) == (1000, 1000, 3000)
    assert (got.cases[:2400].sum(axis=1) == 1000).all() and (got.cases[2400:].sum(axis=1) == 500).all()


@needs_plink2
@pytest.mark.parametrize("allow", [False, True])
def test_pgen_counts_equal_bed_counts(tmp_path, allow):
    pytest.importorskip("pgenlib")
    prefix = tmp_path / "c"
    _write_cohort(prefix, 61, 90, x_from=60, rng=np.random.default_rng(11))
    bim = prefix.with_suffix(".bim").read_text().splitlines()
    bim[85:] = [line.replace("23\t", "24\t", 1) for line in bim[85:]]  # Y: skipped by both
    prefix.with_suffix(".bim").write_text("\n".join(bim) + "\n")
    run = subprocess.run(
        [PLINK2, "--bfile", str(prefix), "--make-pgen", "--out", str(tmp_path / "p")], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bed = case_control_counts(prefix, allow_no_sex=allow)
        for path in (tmp_path / "p.pgen", tmp_path / "p.pvar", tmp_path / "p"):
            pgen = case_control_counts(path, allow_no_sex=allow, chunk_snps=13)
            for name in ("cases", "controls", "allele_cases", "allele_controls"):
                np.testing.assert_array_equal(getattr(pgen, name), getattr(bed, name))
            assert (pgen.n_cases, pgen.n_controls) == (bed.n_cases, bed.n_controls)
            assert list(pgen.snp_ids) == list(bed.snp_ids) and pgen.n_snps == 85


def test_y_and_mt_skipped_and_bad_input_named(tmp_path):
    prefix = tmp_path / "c"
    _write_cohort(prefix, 20, 12, x_from=12, rng=np.random.default_rng(1))
    bim = prefix.with_suffix(".bim").read_text().splitlines()
    bim[3], bim[4] = bim[3].replace("1\t", "Y\t", 1), bim[4].replace("1\t", "MT\t", 1)
    prefix.with_suffix(".bim").write_text("\n".join(bim) + "\n")
    with pytest.warns(UserWarning, match="skipped 2 SNP"):
        got = case_control_counts(prefix)
    assert got.n_snps == 10 and "r3" not in list(got.snp_ids)
    with pytest.raises(ValueError, match="chunk_snps"):
        case_control_counts(tmp_path / "missing", chunk_snps=0)
    with pytest.raises(TypeError, match="allow_no_sex"):
        case_control_counts(prefix, allow_no_sex=1)
    with pytest.raises(FileNotFoundError, match="path"):
        case_control_counts(tmp_path / "missing")
    with pytest.raises(ValueError, match=r"path: .*convert a VCF"):
        case_control_counts(tmp_path / "cohort.vcf.gz")
    fam = prefix.with_suffix(".fam").read_text().splitlines()
    prefix.with_suffix(".fam").write_text("\n".join(line.rsplit(" ", 1)[0] + " 3.5" for line in fam) + "\n")
    with pytest.raises(ValueError, match="quantitative"):
        case_control_counts(prefix)
    prefix.with_suffix(".fam").write_text("\n".join(line.rsplit(" ", 1)[0] + " 1" for line in fam) + "\n")
    only_controls = case_control_counts(prefix)  # counted: under add/remove the group sizes are private
    assert only_controls.n_cases == 0 and only_controls.cases.sum() == 0


def test_schedulers_agree(tmp_path):
    prefix = tmp_path / "c"
    _write_cohort(prefix, 40, 50, x_from=30, rng=np.random.default_rng(2))
    base = case_control_counts(prefix, chunk_snps=9)
    single = case_control_counts(prefix, chunk_snps=9, scheduler="single-threaded")
    np.testing.assert_array_equal(base.cases, single.cases)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            via_client = case_control_counts(prefix, chunk_snps=9, scheduler=client)
    for name in ("cases", "controls", "allele_cases", "allele_controls"):
        np.testing.assert_array_equal(getattr(via_client, name), getattr(base, name))


@needs_plink2
def test_mismatched_pgen_fileset_is_a_named_error(tmp_path):
    pytest.importorskip("pgenlib")
    prefix = tmp_path / "c"
    _write_cohort(prefix, 21, 10, x_from=10, rng=np.random.default_rng(4))
    run = subprocess.run(
        [PLINK2, "--bfile", str(prefix), "--make-pgen", "--out", str(tmp_path / "p")], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    psam = (tmp_path / "p.psam").read_text().splitlines()
    (tmp_path / "p.psam").write_text("\n".join(psam[:-1]) + "\n")
    with pytest.raises(ValueError, match=r"path: .* not a .pgen of the .psam's 20 samples"):
        case_control_counts(tmp_path / "p.pgen")
    (tmp_path / "p.psam").write_text("\n".join(psam) + "\n")
    pvar = (tmp_path / "p.pvar").read_text().splitlines()
    (tmp_path / "p.pvar").write_text("\n".join(pvar[:-1]) + "\n")
    with pytest.raises(ValueError, match=r"path: .* has 10 variants but the .pvar 9"):
        case_control_counts(tmp_path / "p.pgen")
    (tmp_path / "p.pgen").unlink()
    with pytest.raises(FileNotFoundError, match="path"):
        case_control_counts(tmp_path / "p.pvar")


def test_progress_off_a_terminal_prints_the_final_line_only_for_a_short_job():
    """Off a terminal (logs, CI) a job of a few seconds prints one line, not one per 10 %."""
    import io

    from dpselect.apps.genomics._io._progress import Progress

    stream = io.StringIO()
    p = Progress(1000, "counting", stream=stream)
    for _ in range(10):
        p.advance(100)
    p.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("counting: 1,000/1,000 SNPs (100%)")
