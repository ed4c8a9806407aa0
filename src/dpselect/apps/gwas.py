"""Trio genotype files -> TDT transmission counts, streamed in SNP chunks on Dask.

Input: PLINK 1 binary filesets (``.bed/.bim/.fam``), read with the
maintained ``bed-reader`` package (SNP chunks ``read(index=np.s_[:, a:b])``,
so only one chunk per worker is in memory).  The ``.fam`` father / mother
columns define the trios (both parents and the child present in the file;
the child affected, phenotype 2, unless ``affected_only=False``); one trio is
kept per parent pair (the first such child in file order), so that every
family is one privacy unit and moves each SNP's table by at most one
table-level move (the neighbour relation of :mod:`dpselect.apps.tdt`).

Counts (standard TDT, as PLINK's ``--tdt``): with g = copies of the ``.bim``
allele 1 (A1), a heterozygous parent transmits A1 or A2; at a SNP the number
of A1 alleles the heterozygous parents transmitted is
``x = g_child - [g_father = 2] - [g_mother = 2]`` and
``b += x``, ``c += (#heterozygous parents) - x``.  A trio with a missing
call at the SNP contributes nothing there; a trio whose child genotype is
impossible given the parents (``x`` outside ``[0, #het parents]``) is a
Mendelian error, contributes nothing and is counted in ``mendel_errors``.

The chunks are Dask tasks: the default threaded scheduler streams a cohort
larger than memory, and ``scheduler="tcp://..."`` runs the same graph on a
``dask.distributed`` cluster.  VCF/BCF input (with a pedigree file; allele 1
= ALT) is read sequentially by :mod:`dpselect.apps.gwas_vcf` into the same
counting kernel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_int, check_probability_in, check_random_state

__all__ = ["TransmissionCounts", "transmission_counts", "simulate_trios", "trios"]

_MAGIC = bytes((0x6C, 0x1B, 0x01))
_FAM_COLUMNS = 6
#: Path endings read as VCF/BCF (with a pedigree file) by :mod:`dpselect.apps.gwas_vcf`.
VCF_SUFFIXES = (".vcf", ".vcf.gz", ".bcf")


@dataclass(frozen=True)
class TransmissionCounts:
    """TDT counts per SNP (private data: never print them next to a private release).

    ``b`` / ``c``: transmissions of ``.bim`` allele 1 / allele 2 by
    heterozygous parents (int64, one per SNP); ``n_families``: number of trios
    used (the public N of :func:`dpselect.apps.tdt.select_top_snps`);
    ``snp_ids``: the ``.bim`` SNP ids; ``mendel_errors``: trios with a
    Mendelian-inconsistent call per SNP.
    """

    b: np.ndarray
    c: np.ndarray
    n_families: int
    snp_ids: np.ndarray
    mendel_errors: np.ndarray


def _prefix(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    p = Path(path)
    if p.suffix in (".bed", ".bim", ".fam"):
        p = p.with_suffix("")
    for ext in (".bed", ".bim", ".fam"):
        f = p.with_suffix(ext)
        if f.is_dir():
            raise ValueError(f"path: {str(f)!r} is a directory, not a PLINK {ext} file")
        if not f.is_file():
            raise FileNotFoundError(f"path: PLINK fileset {str(p)!r} has no {ext} file ({str(f)!r} not found)")
    return p


def _read_table(path: Path, columns: int, what: str) -> np.ndarray:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        raise ValueError(f"path: {what} file {str(path)!r} is empty")
    bad = [i for i, r in enumerate(rows) if len(r) != columns]
    if bad:
        raise ValueError(f"path: {what} file {str(path)!r} line {bad[0] + 1} has "
                         f"{len(rows[bad[0]])} columns, expected {columns}")
    return np.array(rows, dtype=object)


def _check_bed(path: Path, n_ind: int, n_snp: int) -> None:
    with open(path, "rb") as f:
        head = f.read(3)
    if head != _MAGIC:
        raise ValueError(f"path: {str(path)!r} is not a SNP-major PLINK 1 .bed file (magic bytes {head.hex()!r}, "
                         f"expected {_MAGIC.hex()!r})")
    expected = 3 + n_snp * ((n_ind + 3) // 4)
    size = path.stat().st_size
    if size != expected:
        raise ValueError(f"path: {str(path)!r} has {size} bytes but the .fam ({n_ind} individuals) and .bim "
                         f"({n_snp} SNPs) need {expected}: the fileset is mismatched or truncated")


def trios(fam: np.ndarray, *, affected_only: bool = True) -> np.ndarray:
    """(child, father, mother) row indices of the complete trios of a .fam table (one per parent pair)."""
    key = {(f, i): r for r, (f, i) in enumerate(zip(fam[:, 0], fam[:, 1]))}
    seen: set[tuple[int, int]] = set()
    out = []
    for r, row in enumerate(fam):
        fa, mo = key.get((row[0], row[2])), key.get((row[0], row[3]))
        if fa is None or mo is None or (affected_only and row[5] != "2") or (fa, mo) in seen:
            continue
        seen.add((fa, mo))
        out.append((r, fa, mo))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def _chunk_counts(bed: str, n_ind: int, n_snp: int, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(3, stop - start) int64: b, c and Mendel errors of SNPs start..stop-1."""
    from bed_reader import open_bed

    with open_bed(bed, iid_count=n_ind, sid_count=n_snp, count_A1=True) as reader:
        g = reader.read(index=(rows.T.ravel(), np.s_[start:stop]), dtype="int8", order="C", num_threads=1)
    return _count_trios(g.reshape(3, rows.shape[0], stop - start))  # int8, missing = -127


def _count_trios(g: np.ndarray) -> np.ndarray:
    """Counting kernel: (3, n_trios, k) int8 allele-1 copies (child, father, mother; < 0 = missing) -> (3, k)
    int64 rows b, c and Mendel errors (shared by the PLINK and VCF readers)."""
    kid, fa, mo = g
    called = (kid >= 0) & (fa >= 0) & (mo >= 0)
    het = (fa == 1).view(np.int8) + (mo == 1).view(np.int8)
    x = kid - (fa == 2).view(np.int8) - (mo == 2).view(np.int8)
    ok = called & (x >= 0) & (x <= het)
    b = np.where(ok, x, 0).sum(axis=0, dtype=np.int64)
    c = np.where(ok, het - x, 0).sum(axis=0, dtype=np.int64)
    return np.stack([b, c, (called & ~ok).sum(axis=0, dtype=np.int64)])


def transmission_counts(path: Any, *, pedigree: Any = None, affected_only: bool = True,
                        chunk_snps: int = 10_000, scheduler: Any = None) -> TransmissionCounts:
    """TDT transmission counts of every SNP of a PLINK 1 fileset or a VCF/BCF (module docstring for the rules).

    Parameters
    ----------
    path : the fileset prefix (or the ``.bed`` / ``.bim`` / ``.fam`` path), or a
        ``.vcf`` / ``.vcf.gz`` / ``.bcf`` file (read by :mod:`dpselect.apps.gwas_vcf`;
        allele 1 = ALT, as PLINK's VCF import).
    pedigree : for VCF/BCF only (required there): a PLINK-style ``.fam`` / ``.ped``
        file whose individual ids are the VCF sample names.
    affected_only : keep trios whose child has phenotype 2 (default) or all trios.
    chunk_snps : SNPs per Dask task; peak memory is about
        (#individuals x chunk_snps) bytes per concurrent task.
    scheduler : None (Dask's threaded scheduler), a Dask scheduler name, or a
        ``dask.distributed`` address ("tcp://host:port") or ``Client``.
        VCF/BCF parsing is sequential: only None is accepted there.

    Returns
    -------
    TransmissionCounts

    Examples
    --------
    >>> import tempfile, os
    >>> from dpselect.apps.gwas import simulate_trios, transmission_counts
    >>> d = tempfile.mkdtemp()
    >>> causal = simulate_trios(os.path.join(d, "toy"), 50, 20, causal=[3], effect=0.9, rng=0)
    >>> counts = transmission_counts(os.path.join(d, "toy"))
    >>> counts.n_families, counts.b.shape
    (50, (20,))
    """
    import dask
    import dask.array as da

    if isinstance(path, (str, os.PathLike)) and str(path).lower().endswith(VCF_SUFFIXES):
        try:
            from .gwas_vcf import vcf_transmission_counts
        except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
            if exc.name != "cyvcf2":
                raise
            raise ImportError("path: VCF/BCF input needs cyvcf2: pip install 'dpselect[vcf]' "
                              "(or cyvcf2>=0.30), or convert the file with plink --vcf") from exc
        return vcf_transmission_counts(path, pedigree=pedigree, affected_only=affected_only,
                                       chunk_snps=chunk_snps, scheduler=scheduler)
    if pedigree is not None:
        raise ValueError("pedigree: only for VCF/BCF input; the .fam of a PLINK fileset defines its trios")
    prefix = _prefix(path)
    chunk = check_int(chunk_snps, "chunk_snps", minimum=1)
    fam = _read_table(prefix.with_suffix(".fam"), _FAM_COLUMNS, ".fam")
    bim = _read_table(prefix.with_suffix(".bim"), 6, ".bim")
    n_ind, n_snp = fam.shape[0], bim.shape[0]
    bed = prefix.with_suffix(".bed")
    _check_bed(bed, n_ind, n_snp)
    rows = trios(fam, affected_only=bool(affected_only))
    if rows.shape[0] == 0:
        raise ValueError(f"path: {str(prefix)!r} has no complete {'affected ' if affected_only else ''}trio "
                         "(child with father and mother in the .fam)")
    parts = [
        da.from_delayed(dask.delayed(_chunk_counts)(str(bed), n_ind, n_snp, rows, a, min(a + chunk, n_snp)),
                        shape=(3, min(a + chunk, n_snp) - a), dtype=np.int64)
        for a in range(0, n_snp, chunk)
    ]
    graph = da.concatenate(parts, axis=1)
    out = _compute(graph, scheduler)
    return TransmissionCounts(out[0], out[1], int(rows.shape[0]), bim[:, 1].astype(str), out[2])


def _compute(graph: Any, scheduler: Any) -> np.ndarray:
    if scheduler is None:
        return np.asarray(graph.compute(scheduler="threads"))
    if isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client

        with Client(scheduler) as client:
            return np.asarray(client.compute(graph).result())
    if hasattr(scheduler, "compute") and hasattr(scheduler, "scheduler_info"):
        return np.asarray(scheduler.compute(graph).result())
    if isinstance(scheduler, str):
        return np.asarray(graph.compute(scheduler=scheduler))
    raise TypeError(f"scheduler must be None, a scheduler name, an address or a Client, got {type(scheduler).__name__}")


# ---------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------

#: 2-bit PLINK codes by copies of allele 1 (0, 1, 2) and missing (index 3).
_CODES = np.array([0b11, 0b10, 0b00, 0b01], dtype=np.uint8)


def _pack(g: np.ndarray) -> np.ndarray:
    """(n_ind, k) genotypes in {0, 1, 2, -1} -> (k, ceil(n_ind/4)) SNP-major .bed bytes."""
    n = g.shape[0]
    codes = _CODES[np.where(g < 0, 3, g)].T  # (k, n)
    pad = (-n) % 4
    codes = np.pad(codes, ((0, 0), (0, pad)), constant_values=0).reshape(codes.shape[0], -1, 4)
    return (codes[..., 0] | codes[..., 1] << 2 | codes[..., 2] << 4 | codes[..., 3] << 6).astype(np.uint8)


def simulate_trios(path: Any, n_trios: int, n_snps: int, *, causal: Any = 3, effect: float = 0.7,
                   missing_rate: float = 0.0, error_rate: float = 0.0, chunk_snps: int | None = None,
                   rng: Any = None) -> np.ndarray:
    """Write a PLINK 1 fileset of ``n_trios`` affected trios with Mendelian transmission.

    Per SNP an allele-1 frequency p ~ U(0.05, 0.95); parents are in
    Hardy-Weinberg proportions; each parent transmits one of its two alleles
    at random, except that at the causal SNPs a heterozygous parent transmits
    allele 1 with probability ``effect`` (transmission distortion).  Calls go
    missing independently with ``missing_rate``; with ``error_rate`` a child's
    call is replaced by a uniform genotype (some become Mendel errors).  The
    ``.bed`` is written SNP-major in chunks of ``chunk_snps`` (default about
    2 * 10^6 / n_trios SNPs, ~100 MB of work arrays; bed-reader's ``to_bed``
    needs the whole matrix in memory), readable by PLINK and bed-reader.

    Returns the indices of the causal SNPs (``causal``: a count, placed at
    random, or explicit indices).
    """
    prefix = Path(path)
    n_trios = check_int(n_trios, "n_trios", minimum=1)
    n_snps = check_int(n_snps, "n_snps", minimum=1)
    effect = check_probability_in(effect, "effect", 0.0, 1.0, closed=True)
    missing_rate = check_probability_in(missing_rate, "missing_rate", 0.0, 1.0, closed=True)
    error_rate = check_probability_in(error_rate, "error_rate", 0.0, 1.0, closed=True)
    chunk = max(1, 2_000_000 // n_trios) if chunk_snps is None else check_int(chunk_snps, "chunk_snps", minimum=1)
    gen = check_random_state(rng)
    if np.isscalar(causal):
        k = check_int(causal, "causal", minimum=0)
        if k > n_snps:
            raise ValueError(f"causal must be <= n_snps = {n_snps}, got {k}")
        causal_idx = np.sort(gen.choice(n_snps, size=k, replace=False))
    else:
        causal_idx = np.unique(np.asarray(causal, dtype=np.int64))
        if causal_idx.size and (causal_idx[0] < 0 or causal_idx[-1] >= n_snps):
            raise ValueError(f"causal indices must be in [0, {n_snps})")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    fam = []
    for t in range(n_trios):
        fid = f"F{t}"
        fam += [f"{fid}\t{fid}_fa\t0\t0\t1\t1", f"{fid}\t{fid}_mo\t0\t0\t2\t1",
                f"{fid}\t{fid}_ch\t{fid}_fa\t{fid}_mo\t1\t2"]
    prefix.with_suffix(".fam").write_text("\n".join(fam) + "\n")
    prefix.with_suffix(".bim").write_text("".join(f"1\trs{j}\t0\t{j + 1}\tA\tG\n" for j in range(n_snps)))
    is_causal = np.zeros(n_snps, dtype=bool)
    is_causal[causal_idx] = True
    with open(prefix.with_suffix(".bed"), "wb") as f:
        f.write(_MAGIC)
        for a in range(0, n_snps, chunk):
            f.write(_pack(_simulate_chunk(gen, n_trios, is_causal[a:a + chunk], effect, missing_rate,
                                          error_rate)).tobytes())
    return causal_idx


def _simulate_chunk(gen: np.random.Generator, n: int, causal: np.ndarray, effect: float,
                    missing_rate: float, error_rate: float) -> np.ndarray:
    k = causal.size
    p = gen.uniform(0.05, 0.95, size=k)
    hap = gen.random((2, 2, n, k)) < p  # parent, haplotype, trio, snp: True = allele 1
    parents = hap.sum(axis=1)  # (2, n, k)
    pick = gen.random((2, n, k))
    het = parents == 1
    odds = np.where(causal, effect, 0.5)
    # a heterozygous parent transmits allele 1 w.p. effect (causal) / 1/2; homozygotes their allele
    sent = np.where(het, pick < odds, parents == 2)
    child = sent.sum(axis=0)
    g = np.concatenate([parents[0], parents[1], child]).astype(np.int8)  # rows: fathers, mothers, children
    order = np.arange(3 * n).reshape(3, n).T.ravel()  # father, mother, child of trio 0, then trio 1, ...
    g = g[order]
    if error_rate > 0:
        kids = np.arange(2, 3 * n, 3)
        flip = gen.random((n, k)) < error_rate
        g[kids] = np.where(flip, gen.integers(0, 3, size=(n, k)), g[kids])
    if missing_rate > 0:
        g[gen.random(g.shape) < missing_rate] = -1
    return g
