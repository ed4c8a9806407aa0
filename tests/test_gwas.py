"""PLINK trio files -> TDT counts (dpselect.apps.genomics) against a plain per-trio reference."""

from __future__ import annotations

import numpy as np
import pytest
from bed_reader import open_bed, to_bed

from dpselect.apps import genomics as tdt
from dpselect.apps.genomics import simulate_trios, transmission_counts


def _reference(prefix):
    """Per-trio, per-SNP Python loops over the genotypes read by bed-reader (independent of gwas.py)."""
    with open_bed(str(prefix) + ".bed", count_A1=True) as bed:
        g = bed.read(dtype="float64")
        fid, iid, father, mother, pheno = bed.fid, bed.iid, bed.father, bed.mother, bed.pheno
        sid = bed.sid
    where = {(f, i): r for r, (f, i) in enumerate(zip(fid, iid))}
    trios, pairs = [], set()
    for r in range(len(iid)):
        fa, mo = where.get((fid[r], father[r])), where.get((fid[r], mother[r]))
        if fa is None or mo is None or str(pheno[r]) != "2" or (fa, mo) in pairs:
            continue
        pairs.add((fa, mo))
        trios.append((r, fa, mo))
    m = g.shape[1]
    b, c, err = np.zeros(m, int), np.zeros(m, int), np.zeros(m, int)
    for j in range(m):
        for kid, fa, mo in trios:
            gk, gf, gm = g[kid, j], g[fa, j], g[mo, j]
            if np.isnan(gk) or np.isnan(gf) or np.isnan(gm):
                continue
            # enumerate the four transmissions; consistent iff one of them gives the child
            alleles = {0: [0, 0], 1: [0, 1], 2: [1, 1]}
            options = [(a, d) for a in alleles[int(gf)] for d in alleles[int(gm)] if a + d == gk]
            if not options:
                err[j] += 1
                continue
            a, d = options[0]
            for gp, t in ((gf, a), (gm, d)):
                if gp == 1:
                    b[j] += t
                    c[j] += 1 - t
    return b, c, err, len(trios), sid


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_counts_equal_per_trio_reference_with_missing_and_mendel_errors(tmp_path, chunk):
    prefix = tmp_path / "cohort"
    simulate_trios(prefix, 40, 23, causal=[2, 9], effect=0.85, missing_rate=0.05, error_rate=0.1, rng=4)
    got = transmission_counts(prefix, chunk_snps=chunk)
    b, c, err, n, sid = _reference(prefix)
    np.testing.assert_array_equal(got.b, b)
    np.testing.assert_array_equal(got.c, c)
    np.testing.assert_array_equal(got.mendel_errors, err)
    assert got.n_families == n == 40 and list(got.snp_ids) == list(sid)
    assert err.sum() > 0 and (got.b + got.c).min() < (got.b + got.c).max()
    assert (got.b + got.c <= 2 * got.n_families).all()
    assert transmission_counts(str(prefix) + ".bed", chunk_snps=chunk).b.tolist() == b.tolist()


def test_hand_made_trios_with_unaffected_and_incomplete_families(tmp_path):
    # 3 trios (one child unaffected), one child without a mother in the file, a second child of trio 1.
    val = np.array(
        [
            # fa, mo, kid (trio 0: affected) | fa, mo, kid (trio 1: unaffected) | orphan | sib of trio 0
            [1, 1, 2, 1, 0, 0, 1, 1],
            [1, 2, 2, 1, 1, 1, 0, 1],
            [2, 2, 0, 1, 1, 2, 2, 2],  # trio 0 Mendel error (2 x 2 -> 0)
            [np.nan, 1, 1, 0, 0, 0, 1, 1],  # father missing in trio 0
        ]
    ).T
    props = {
        "fid": ["A", "A", "A", "B", "B", "B", "C", "A"],
        "iid": ["fa", "mo", "k1", "fa", "mo", "k", "k", "k2"],
        "father": ["0", "0", "fa", "0", "0", "fa", "fa", "fa"],
        "mother": ["0", "0", "mo", "0", "0", "mo", "mo", "mo"],
        "pheno": ["1", "1", "2", "1", "1", "1", "2", "2"],
        "sex": [1, 2, 2, 1, 2, 1, 1, 1],
        "sid": ["s1", "s2", "s3", "s4"],
    }
    to_bed(tmp_path / "hand.bed", val, properties=props)
    got = transmission_counts(tmp_path / "hand")
    # only trio A (first affected child k1) counts: s1 both het, kid 2 -> b = 2; s2 father het, mother hom A1,
    # kid 2 -> father sent A1: b = 1; s3 Mendel error; s4 missing
    assert got.n_families == 1
    assert got.b.tolist() == [2, 1, 0, 0] and got.c.tolist() == [0, 0, 0, 0]
    assert got.mendel_errors.tolist() == [0, 0, 1, 0]
    everyone = transmission_counts(tmp_path / "hand", affected_only=False)
    assert everyone.n_families == 2  # trio B joins; A's second child does not (one trio per parent pair)
    # trio B: s1 het father sent A2 (c); s2 both het, kid het (b, c); s3 both het, kid 2 (b += 2)
    assert everyone.b.tolist() == [2, 2, 2, 0] and everyone.c.tolist() == [1, 1, 0, 0]


def test_simulated_causal_snps_are_found_end_to_end(tmp_path):
    prefix = tmp_path / "sim"
    causal = simulate_trios(prefix, 400, 300, causal=3, effect=0.8, rng=7)
    assert causal.size == 3
    counts = transmission_counts(prefix, chunk_snps=64)
    chi = np.asarray(tdt.tdt_statistic(counts.b, counts.c))
    assert set(np.argsort(-chi)[:3]) == set(causal)
    out = tdt.select_top_snps(counts, 30.0, 3, rng=0)
    assert sorted(out.indices.tolist()) == sorted(causal.tolist())


def test_reproducible_and_distributed_scheduler(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    simulate_trios(a, 20, 30, rng=1)
    simulate_trios(b, 20, 30, rng=1)
    assert (tmp_path / "a.bed").read_bytes() == (tmp_path / "b.bed").read_bytes()
    base = transmission_counts(a, chunk_snps=8)
    single = transmission_counts(a, chunk_snps=8, scheduler="single-threaded")
    assert base.b.tolist() == single.b.tolist()
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            via_address = transmission_counts(a, chunk_snps=8, scheduler=lc.scheduler_address)
            via_client = transmission_counts(a, chunk_snps=8, scheduler=client)
    assert via_address.c.tolist() == base.c.tolist() == via_client.c.tolist()


def test_bad_files_raise_clear_errors(tmp_path):
    prefix = tmp_path / "x"
    simulate_trios(prefix, 5, 10, rng=0)
    with pytest.raises(FileNotFoundError, match=r"path: .*no .bed"):
        transmission_counts(tmp_path / "nothing")
    data = (tmp_path / "x.bed").read_bytes()
    (tmp_path / "x.bed").write_bytes(b"\x00\x00\x00" + data[3:])
    with pytest.raises(ValueError, match=r"path: .*magic"):
        transmission_counts(prefix)
    (tmp_path / "x.bed").write_bytes(data[:-1])
    with pytest.raises(ValueError, match=r"path: .*mismatched or truncated"):
        transmission_counts(prefix)
    (tmp_path / "x.bed").write_bytes(data)
    (tmp_path / "x.fam").unlink()
    with pytest.raises(FileNotFoundError, match=r"path: .*no .fam"):
        transmission_counts(prefix)
    simulate_trios(prefix, 5, 10, rng=0)
    with open(tmp_path / "x.bim", "a") as f:
        f.write("1 extra 0 99 A G\n")
    with pytest.raises(ValueError, match="mismatched"):
        transmission_counts(prefix)
    (tmp_path / "x.bim").write_text("1 rs0 0 1 A\n")
    with pytest.raises(ValueError, match=r"path: .*columns"):
        transmission_counts(prefix)
    (tmp_path / "dir.bed").mkdir()
    with pytest.raises(ValueError, match="directory"):
        transmission_counts(tmp_path / "dir")
    with pytest.raises(TypeError, match="path"):
        transmission_counts(3)
    simulate_trios(prefix, 5, 10, rng=0)
    with pytest.raises(ValueError, match="chunk_snps"):
        transmission_counts(prefix, chunk_snps=0)
    with pytest.raises(TypeError, match="scheduler"):
        transmission_counts(prefix, scheduler=3.5)
    with pytest.raises(ValueError, match="effect"):
        simulate_trios(prefix, 5, 10, effect=1.5)
    with pytest.raises(ValueError, match="causal"):
        simulate_trios(prefix, 5, 10, causal=11)
