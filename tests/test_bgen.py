"""BGEN 1.2 (+ .sample) input: counts equal the .bed's (plink2 --export bgen-1.2 writes the files)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from dpselect.apps.genomics import case_control_counts, select_top_snps, simulate_case_control

pytest.importorskip("cbgen")
PLINK2 = shutil.which("plink2")
pytestmark = pytest.mark.skipif(PLINK2 is None, reason="plink2 is not installed")


@pytest.fixture(scope="module")
def filesets(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bgen")
    prefix = tmp / "cc"
    sim = simulate_case_control(200, 200, 40, n_causal=2, odds_ratio=3.0, path=prefix, rng=5)
    bed = np.fromfile(prefix.with_suffix(".bed"), dtype=np.uint8, offset=3).reshape(40, -1)
    rng = np.random.default_rng(0)
    hit = rng.integers(0, 10, size=bed.shape, dtype=np.uint8) == 0  # ~10 % of bytes: their first call missing
    bed = np.where(hit, (bed & np.uint8(0xFC)) | np.uint8(1), bed)
    prefix.with_suffix(".bed").write_bytes(bytes((0x6C, 0x1B, 0x01)) + bed.tobytes())
    out = tmp / "cc_bgen"
    subprocess.run([PLINK2, "--bfile", prefix, "--export", "bgen-1.2", "bits=8", "--out", out, "--silent"], check=True)
    return prefix, out.with_suffix(".bgen"), sim


def test_bgen_counts_equal_bed_counts(filesets):
    prefix, bgen, _sim = filesets
    bed, bg = case_control_counts(prefix), case_control_counts(bgen)
    assert (bed.n_cases, bed.n_controls) == (bg.n_cases, bg.n_controls)
    np.testing.assert_array_equal(bed.cases, bg.cases)
    np.testing.assert_array_equal(bed.controls, bg.controls)
    np.testing.assert_array_equal(bed.allele_cases, bg.allele_cases)
    assert (bed.cases.sum(1) < bed.n_cases).any()  # missing calls were counted alike
    assert bed.annotations() == bg.annotations()


def test_bgen_selection_and_errors(filesets, tmp_path):
    _prefix, bgen, sim = filesets
    top = select_top_snps(case_control_counts(bgen), 20.0, 2, rng=0)
    assert sorted(top.indices.tolist()) == sorted(sim.causal.tolist())
    lonely = tmp_path / "x.bgen"
    lonely.write_bytes(bgen.read_bytes())
    with pytest.raises(ValueError, match="sample"):
        case_control_counts(lonely)
