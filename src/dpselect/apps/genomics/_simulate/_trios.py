"""Simulated trio cohorts written as PLINK 1 filesets (for tests, examples and benchmarks)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ...._params import BOOLEAN, SEED, Rule, int_at_least, options, real_in, validate_params
from ...._validation import check_int, check_random_state
from ....typing import SeedLike
from .._io import BED_MAGIC, make_progress
from .._rules import PATH

__all__ = ["simulate_trios"]

# ---------------------------------------------------------------------------
# simulation
# ---------------------------------------------------------------------------

_CHILD_SEXES = ("male", "female", "mixed")

#: 2-bit PLINK codes by copies of allele 1 (0, 1, 2) and missing (index 3).
_CODES = np.array([0b11, 0b10, 0b00, 0b01], dtype=np.uint8)


def _pack(g: np.ndarray) -> np.ndarray:
    """(n_ind, k) genotypes in {0, 1, 2, -1} -> (k, ceil(n_ind/4)) SNP-major .bed bytes."""
    n = g.shape[0]
    codes = _CODES[np.where(g < 0, 3, g)].T  # (k, n)
    pad = (-n) % 4
    codes = np.pad(codes, ((0, 0), (0, pad)), constant_values=0).reshape(codes.shape[0], -1, 4)
    return (codes[..., 0] | codes[..., 1] << 2 | codes[..., 2] << 4 | codes[..., 3] << 6).astype(np.uint8)


_RATE = real_in(0.0, 1.0, closed=True)


def _causal(value: object, name: str) -> object:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.ndim > 1 or (arr < 0).any():
        raise ValueError(f"{name} must be an int >= 0 or a 1-D sequence of SNP indices")
    return value


@validate_params(
    {
        "path": PATH,
        "n_trios": int_at_least(1),
        "n_snps": int_at_least(1),
        "causal": Rule("an int >= 0 or SNP indices, checked against n_snps", check=_causal),
        "effect": _RATE,
        "missing_rate": _RATE,
        "error_rate": _RATE,
        "chunk_snps": int_at_least(1, none=True),
        "x_snps": int_at_least(0),
        "child_sex": options(*_CHILD_SEXES),
        "progress": BOOLEAN,
        "rng": SEED,
    }
)
def simulate_trios(
    path: str | os.PathLike[str],
    n_trios: int,
    n_snps: int,
    *,
    causal: int | ArrayLike = 3,
    effect: float = 0.7,
    missing_rate: float = 0.0,
    error_rate: float = 0.0,
    chunk_snps: int | None = None,
    x_snps: int = 0,
    child_sex: str = "male",
    progress: bool = False,
    rng: SeedLike = None,
) -> np.ndarray:
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

    The last ``x_snps`` SNPs are on chromosome X (``.bim`` code 23): fathers
    are hemizygous (one allele, written as a homozygous call, as PLINK stores
    haploid calls) and transmit it to daughters only; sons receive one of
    their mother's alleles and are homozygous.  ``child_sex``: "male"
    (every child sex 1), "female" (2) or "mixed" (each child male with
    probability 1/2, drawn from ``rng``); fathers are 1, mothers 2.
    ``progress``: a progress line on stderr.

    Parameters
    ----------
    path : str or path-like
        Fileset prefix (``.bed/.bim/.fam`` are written).
    n_trios : int
        Number of affected trios.
    n_snps : int
        Number of SNPs.
    causal : int or array-like, default=3
        Number of causal SNPs (placed at random) or their indices.
    effect : float, default=0.7
        Probability that a heterozygous parent transmits allele 1 at a causal SNP.
    missing_rate : float, default=0.0
        Probability of a missing call.
    error_rate : float, default=0.0
        Probability of a child's call replaced by a uniform genotype.
    chunk_snps : int, default=None
        SNPs simulated and written at once.
    x_snps : int, default=0
        Number of SNPs (the last ones) on chromosome X.
    child_sex : {"male", "female", "mixed"}, default="male"
        Sex of the children in the ``.fam``.
    progress : bool, default=False
        Print a progress line on stderr.
    rng : None, int or numpy.random.Generator, default=None
        Randomness; a seed reproduces the files.

    Returns
    -------
    ndarray of int64
        The sorted indices of the causal SNPs.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpselect.apps.genomics import simulate_trios
    >>> simulate_trios(os.path.join(tempfile.mkdtemp(), "toy"), 20, 10, causal=[2, 5], rng=0).tolist()
    [2, 5]
    """
    prefix = Path(path)
    chunk = max(1, 2_000_000 // n_trios) if chunk_snps is None else chunk_snps
    if x_snps > n_snps:
        raise ValueError(f"x_snps must be <= n_snps = {n_snps}, got {x_snps}")
    bar = make_progress(progress, n_snps, "simulating trios")
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
    if child_sex == "mixed":
        male = gen.random(n_trios) < 0.5
    else:
        male = np.full(n_trios, child_sex == "male")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    _write_fam_bim(prefix, male, n_snps, x_snps)
    auto = n_snps - x_snps
    is_causal = np.zeros(n_snps, dtype=bool)
    is_causal[causal_idx] = True
    on_x = np.arange(n_snps) >= auto
    with open(prefix.with_suffix(".bed"), "wb") as f:
        f.write(BED_MAGIC)
        for a in range(0, n_snps, chunk):
            z = min(a + chunk, n_snps)
            f.write(
                _pack(
                    _simulate_chunk(gen, n_trios, is_causal[a:z], effect, missing_rate, error_rate, on_x[a:z], male)
                ).tobytes()
            )
            if bar is not None:
                bar.advance(z - a)
    if bar is not None:
        bar.close()
    return causal_idx


def _write_fam_bim(prefix: Path, male: np.ndarray, n_snps: int, x_snps: int) -> None:
    """The ``.fam`` (trio t: father, mother, child of family F<t>) and the ``.bim`` (X: code 23, the last SNPs)."""
    fam = []
    for t in range(male.size):
        fid = f"F{t}"
        fam += [
            f"{fid}\t{fid}_fa\t0\t0\t1\t1",
            f"{fid}\t{fid}_mo\t0\t0\t2\t1",
            f"{fid}\t{fid}_ch\t{fid}_fa\t{fid}_mo\t{1 if male[t] else 2}\t2",
        ]
    prefix.with_suffix(".fam").write_text("\n".join(fam) + "\n")
    auto = n_snps - x_snps
    prefix.with_suffix(".bim").write_text(
        "".join(f"{1 if j < auto else 23}\trs{j}\t0\t{j + 1}\tA\tG\n" for j in range(n_snps))
    )


def _simulate_chunk(
    gen: np.random.Generator,
    n: int,
    causal: np.ndarray,
    effect: float,
    missing_rate: float,
    error_rate: float,
    on_x: np.ndarray,
    male: np.ndarray,
) -> np.ndarray:
    k = causal.size
    p = gen.uniform(0.05, 0.95, size=k)
    hap = gen.random((2, 2, n, k)) < p  # parent, haplotype, trio, snp: True = allele 1
    if on_x.any():  # hemizygous fathers: one X, stored as a homozygous call
        hap[0, 1] = np.where(on_x, hap[0, 0], hap[0, 1])
    parents = hap.sum(axis=1)  # (2, n, k)
    pick = gen.random((2, n, k))
    het = parents == 1
    odds = np.where(causal, effect, 0.5)
    # a heterozygous parent transmits allele 1 w.p. effect (causal) / 1/2; homozygotes their allele
    sent = np.where(het, pick < odds, parents == 2)
    child = sent.sum(axis=0)
    if on_x.any():  # sons: their mother's X only (homozygous call); daughters: one X from each parent
        son = on_x[None, :] & male[:, None]
        child = np.where(son, 2 * sent[1], child)
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
