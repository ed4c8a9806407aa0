"""``dpselect tdt`` and ``dpselect assoc``: private top-k SNPs of a cohort (registered by :func:`add_commands`).

Both print only the selected SNPs' public annotations (RANK CHR SNP BP A1 A2,
``--out`` writes them as TSV) and the guarantee, never a count or a statistic;
every option (``--out`` included) is checked before the genotypes are read.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

from ._input import CLIError, check_out_file, option, write_out_file

__all__ = ["add_commands"]

HEADER = ("RANK", "CHR", "SNP", "BP", "A1", "A2")
#: --utility of ``dpselect assoc`` (its --test values are the library's ASSOCIATION_TESTS).
ASSOC_UTILITIES = ("distance", "chi2")
ASSOC_RELATIONS = {
    "replace": "one individual's genotypes replaced (case/control status and the numbers of cases and controls public)",
    "add_remove": "one individual added or removed",
}


#: Options shared by ``tdt`` and ``assoc``.
EPSILON_OPTION = typer.Option(..., "--epsilon", help="total privacy budget (> 0), split over the k rounds")
K_OPTION = typer.Option(..., "--k", help="number of SNPs to select (>= 1)")
OUT_OPTION = typer.Option(None, "--out", help="also write the selected SNPs (CHR SNP BP A1 A2) as TSV")
SCHEDULER_OPTION = typer.Option(None, "--scheduler", help="dask.distributed address for the counts")
SEED_OPTION = typer.Option(None, "--seed", help="random seed (>= 0; default: fresh entropy)")
QUIET_OPTION = typer.Option(False, "--quiet", help="no progress line on stderr")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _check_options(
    file: Path,
    epsilon: float,
    k: int,
    seed: int | None,
    chunk_snps: int | None,
    mechanism: str,
    utility: str,
    utilities: Sequence[str],
    out: Path | None,
) -> float:
    """Epsilon, after checking every option the two commands share (nothing printed)."""
    from ..mechanisms import APPROXIMATE_NAMES, MECHANISM_NAMES

    eps = option("--epsilon", epsilon)
    option("--k", k)
    option("--seed", seed)
    option("--chunk-snps", chunk_snps)
    if mechanism not in MECHANISM_NAMES:
        raise CLIError(f"--mechanism {mechanism!r} is not a mechanism; choose one of: " + ", ".join(MECHANISM_NAMES))
    if mechanism in APPROXIMATE_NAMES:
        raise CLIError(
            f"--mechanism {mechanism} is approximate DP (it needs delta > 0); this command runs pure "
            "epsilon-DP mechanisms: choose pf, em, snm_t, sps, ld, ..."
        )
    if utility not in utilities:
        raise CLIError(f"--utility {utility!r} is not a utility; choose one of: {', '.join(utilities)}")
    if file.is_dir():
        raise CLIError(f"FILE {str(file)!r} is a directory; give the PLINK fileset prefix or its .bed file")
    check_out_file(out)
    return eps


def _read_counts(read: Callable[..., Any], file: Path, **kwargs: Any) -> Any:
    """``read(file, **kwargs)`` with its errors and warnings as one-line messages naming the options."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            counts = read(file, **kwargs)
    except (ValueError, FileNotFoundError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if msg.startswith("path: "):
            msg = "FILE " + msg[len("path: ") :]
        elif msg.startswith("pedigree: "):
            msg = "--pedigree " + msg[len("pedigree: ") :]
        raise CLIError(msg) from None
    for w in caught:
        text = str(w.message)
        print("dpselect: warning: " + ("FILE " + text[6:] if text.startswith("path: ") else text), file=sys.stderr)
    return counts


def _select(select: Callable[..., Any], mechanism: str, utility: str, *args: Any, **kwargs: Any) -> Any:
    try:
        return select(*args, mechanism=mechanism, utility=utility, **kwargs)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"--mechanism {mechanism} --utility {utility}: {str(exc).splitlines()[0]}") from None


def _print_table(rows: list[tuple[Any, ...]], out: Path | None, extra: dict[str, Any] | None = None) -> None:
    """RANK CHR SNP BP A1 A2 (and released ``extra`` columns) of the selected SNPs; with ``--out`` also as TSV."""
    cols = {} if extra is None else extra
    header = (*HEADER, *cols)
    table = [
        header,
        *(
            (str(r), *(str(v) for v in row), *(f"{float(c[r - 1]):.4g}" for c in cols.values()))
            for r, row in enumerate(rows, start=1)
        ),
    ]
    if out is not None:  # written first: a failure prints nothing (a rerun would spend the budget twice)
        write_out_file(out, "".join("\t".join(line) + "\n" for line in table))
    widths = [max(len(t[j]) for t in table) for j in range(len(header))]
    for line in table:
        typer.echo(
            "  ".join(v.rjust(w) if j in (0, 3) else v.ljust(w) for j, (v, w) in enumerate(zip(line, widths))).rstrip()
        )


def _rounds(top: Any, k: int) -> str:
    return f"{top.method}, {_plural(k, 'round')} at epsilon {top.round_privacy.epsilon:g} each"


def _check_tdt_files(file: Path, pedigree: Path | None) -> None:
    """``tdt``: a PLINK fileset alone, or a VCF/BCF with its --pedigree."""
    if pedigree is not None and not pedigree.is_file():
        raise CLIError(f"--pedigree {str(pedigree)!r} is not a file")
    vcf = str(file).lower().endswith((".vcf", ".vcf.gz", ".bcf"))
    if vcf and pedigree is None:
        raise CLIError(f"FILE {str(file)!r} is a VCF/BCF: give its trios with --pedigree PED")
    if not vcf and pedigree is not None:
        raise CLIError("--pedigree is only for a VCF/BCF FILE; a PLINK fileset's .fam defines its trios")


def tdt_command(
    file: Path = typer.Argument(
        ..., metavar="FILE", help="PLINK 1 fileset (prefix or .bed path) of trios, or a VCF/BCF file (with --pedigree)"
    ),
    epsilon: float = EPSILON_OPTION,
    k: int = K_OPTION,
    mechanism: str = typer.Option(
        "pf", "--mechanism", help="pf (default), em, or another registry name (sps, ld, ... with --utility chi2)"
    ),
    utility: str = typer.Option(
        "distance",
        "--utility",
        help="distance (default: families to change before a SNP's rank changes, sensitivity 1) or chi2 "
        "(the TDT statistics; what sps and ld need)",
    ),
    out: Path | None = OUT_OPTION,
    scheduler: str | None = SCHEDULER_OPTION,
    seed: int | None = SEED_OPTION,
    chunk_snps: int = typer.Option(
        10_000, "--chunk-snps", help="SNPs per Dask task (memory ~ individuals / 4 x this bytes)"
    ),
    pedigree: Path | None = typer.Option(
        None, "--pedigree", help=".fam/.ped pedigree of a VCF/BCF FILE (individual ids = sample names)"
    ),
    allow_no_sex: bool = typer.Option(
        False,
        "--allow-no-sex",
        help="keep affected children of unknown sex (as plink --allow-no-sex; by "
        "default their trios are dropped, as plink --tdt does)",
    ),
    quiet: bool = QUIET_OPTION,
) -> None:
    """Privately select the top-k SNPs of a trio cohort by the TDT (one family replaced).

    Prints a table of the selected SNPs' public annotations (CHR, SNP, BP,
    A1, A2 from the .bim or the VCF) and the guarantee only: the counts
    and statistics (T, U, chi2, OR, P) are private and never printed.
    """
    from ..apps.genomics import UTILITIES, select_top_snps, transmission_counts

    eps = _check_options(file, epsilon, k, seed, chunk_snps, mechanism, utility, tuple(UTILITIES), out)
    _check_tdt_files(file, pedigree)
    counts = _read_counts(
        transmission_counts,
        file,
        pedigree=pedigree,
        allow_no_sex=allow_no_sex,
        chunk_snps=chunk_snps,
        scheduler=scheduler,
        progress=not quiet,
    )
    if k > counts.n_snps:
        raise CLIError(f"--k must be <= the number of SNPs in FILE ({counts.n_snps}), got {k}")
    top = _select(select_top_snps, mechanism, utility, counts, eps, k, rng=seed)
    _print_table(counts.annotations(top.indices), out)
    typer.echo(  # no count: the number of trios is the data's, the number of SNPs the .bim's (public)
        f"mechanism: {mechanism} on utility {utility} ({_rounds(top, k)}), "
        f"{counts.n_snps} SNPs" + (f"; table written to {out}" if out is not None else "")
    )
    typer.echo(
        f"guarantee: {top.privacy.epsilon:g}-DP (delta = {top.privacy.delta:g}) under one family "
        "replaced; A1 = the allele whose transmissions were counted (.bim column 5, PLINK's A1 with "
        "--keep-allele-order; ALT for a VCF)"
    )


def _check_assoc_options(file: Path, test: str, tests: Sequence[str], utility: str, relation: str) -> None:
    """``assoc``: its test, relation and utility, and a PLINK FILE."""
    if test not in tests:
        raise CLIError(f"--test {test!r} is not a test; choose one of: {', '.join(tests)}")
    if relation not in ASSOC_RELATIONS:
        raise CLIError(f"--relation {relation!r} is not a relation; choose one of: {', '.join(ASSOC_RELATIONS)}")
    if utility == "chi2" and relation != "replace":
        raise CLIError("--utility chi2 needs --relation replace (its sensitivity assumes fixed group sizes)")
    if str(file).lower().endswith((".vcf", ".vcf.gz", ".bcf")):
        raise CLIError(
            f"FILE {str(file)!r} is a VCF/BCF: dpselect assoc reads a PLINK fileset (the .fam "
            "holds the phenotypes); convert it with plink --vcf first"
        )


#: ``assoc``'s mechanism, released columns and public SNP filters.
ASSOC_MECHANISM_OPTION = typer.Option(
    "pf", "--mechanism", help="pf (default), em, or another registry name (with --utility chi2)"
)
EPSILON_RELEASE_OPTION = typer.Option(
    0.0,
    "--epsilon-release",
    help="also release CHISQ, OR, SE (of log OR) and P of the selected SNPs with this extra "
    "budget (0, the default: none); the guarantee is the sum",
)
EXTRACT_OPTION = typer.Option(None, "--extract", help="keep only the SNP ids listed in this file")
EXCLUDE_OPTION = typer.Option(None, "--exclude", help="drop the SNP ids listed in this file")
CHR_OPTION = typer.Option(None, "--chr", help="keep only these chromosomes (comma-separated codes)")
MAF_OPTION = typer.Option(
    None, "--maf", help="keep SNPs with a minor-allele frequency >= this in --maf-reference (a public panel)"
)
MAF_REFERENCE_OPTION = typer.Option(
    None, "--maf-reference", help="public reference frequencies (PLINK .frq or .afreq) for --maf"
)


def _filter(
    counts: Any,
    extract: Path | None,
    exclude: Path | None,
    chrom: str | None,
    maf: float | None,
    maf_reference: Path | None,
) -> Any:
    """``--extract/--exclude/--chr/--maf``: public SNP filters (the counts of the kept SNPs unchanged)."""
    from ..apps.genomics import filter_snps

    for name, path in (("--extract", extract), ("--exclude", exclude), ("--maf-reference", maf_reference)):
        if path is not None and not path.is_file():
            raise CLIError(f"{name} {str(path)!r} is not a file")
    try:
        return filter_snps(
            counts,
            extract=extract,
            exclude=exclude,
            chrom=None if chrom is None else chrom.split(","),
            maf=maf,
            maf_reference=maf_reference,
        )
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc).splitlines()[0]) from None


def _assoc_select(
    counts: Any,
    mechanism: str,
    utility: str,
    eps: float,
    epsilon_release: float,
    k: int,
    test: str,
    relation: str,
    seed: int | None,
) -> tuple[Any, str, dict[str, Any] | None]:
    """``assoc``: the selection (and, with ``--epsilon-release``, the released columns)."""
    from ..apps.genomics import select_and_release, select_top_snps

    extra = None
    if epsilon_release > 0:
        top = _select(
            select_and_release,
            mechanism,
            utility,
            counts,
            eps,
            epsilon_release,
            k=k,
            test=test,
            relation=relation,
            rng=seed,
        )
        extra = {"CHISQ": top.statistic, "OR": top.odds_ratio, "SE": top.standard_error, "P": top.p_value}
        top_rounds = f"released at epsilon {epsilon_release:g}"
    else:
        top = _select(select_top_snps, mechanism, utility, counts, eps, k, test=test, relation=relation, rng=seed)
        top_rounds = _rounds(top, k)
    return top, top_rounds, extra


def assoc_command(
    file: Path = typer.Argument(
        ...,
        metavar="FILE",
        help="PLINK fileset (prefix, .bed or .pgen path) of cases and controls "
        "(.fam phenotype 2 = case, 1 = control, others left out)",
    ),
    epsilon: float = EPSILON_OPTION,
    k: int = K_OPTION,
    test: str = typer.Option(
        "allelic",
        "--test",
        help="association test of plink --model: allelic, trend (Cochran-Armitage), genotypic "
        "(2 df), dominant or recessive (A1 dominant / recessive). Which epsilon finds what for a "
        "cohort size and effect: docs/genomics-guidance.md (the documentation page "
        "'Genomics: which epsilon finds what')",
    ),
    epsilon_release: float = EPSILON_RELEASE_OPTION,
    mechanism: str = ASSOC_MECHANISM_OPTION,
    utility: str = typer.Option(
        "distance",
        "--utility",
        help="distance (default: individuals to change before a SNP's rank changes, sensitivity 1) or chi2 "
        "(the test statistics with their sensitivity: the papers' baseline; --relation replace only)",
    ),
    relation: str = typer.Option(
        "replace",
        "--relation",
        help="neighbours: replace (default: one individual's genotypes replaced, "
        "status and group sizes public) or add_remove (one individual more or "
        "less)",
    ),
    out: Path | None = OUT_OPTION,
    scheduler: str | None = SCHEDULER_OPTION,
    seed: int | None = SEED_OPTION,
    chunk_snps: int | None = typer.Option(
        None, "--chunk-snps", help="SNPs per Dask task (default: chosen from the number of individuals)"
    ),
    allow_no_sex: bool = typer.Option(
        False,
        "--allow-no-sex",
        help="count individuals of unknown sex (as plink --allow-no-sex; by default "
        "they are left out, as plink --model does)",
    ),
    extract: Path | None = EXTRACT_OPTION,
    exclude: Path | None = EXCLUDE_OPTION,
    chrom: str | None = CHR_OPTION,
    maf: float | None = MAF_OPTION,
    maf_reference: Path | None = MAF_REFERENCE_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Privately select the top-k SNPs of a case-control cohort by an association test.

    Prints a table of the selected SNPs' public annotations (CHR, SNP, BP,
    A1, A2) and the guarantee only: the genotype counts and the test
    statistics are private and never printed (with --epsilon-release, the
    privately released CHISQ, OR, SE and P).  Which epsilon finds what for a
    cohort size and effect: docs/genomics-guidance.md.
    """
    from ..apps.genomics import ASSOCIATION_TESTS, case_control_counts

    if not (epsilon_release >= 0 and epsilon_release < float("inf")):
        raise CLIError(f"--epsilon-release must be a finite number >= 0, got {epsilon_release!r}")

    eps = _check_options(file, epsilon, k, seed, chunk_snps, mechanism, utility, ASSOC_UTILITIES, out)
    _check_assoc_options(file, test, tuple(ASSOCIATION_TESTS), utility, relation)
    counts = _read_counts(
        case_control_counts,
        file,
        allow_no_sex=allow_no_sex,
        chunk_snps=chunk_snps,
        scheduler=scheduler,
        progress=not quiet,
    )
    counts = _filter(counts, extract, exclude, chrom, maf, maf_reference)
    if k > counts.n_snps:
        raise CLIError(f"--k must be <= the number of SNPs in FILE ({counts.n_snps}), got {k}")
    top, top_rounds, extra = _assoc_select(counts, mechanism, utility, eps, epsilon_release, k, test, relation, seed)
    _print_table(counts.annotations(top.indices), out, extra)
    typer.echo(
        f"mechanism: {mechanism} on utility {utility} of the {test} test ({top_rounds}), "
        f"{counts.n_snps} SNPs" + (f"; table written to {out}" if out is not None else "")
    )
    guarantee = ASSOC_RELATIONS.get(str(top.privacy.relation), f"relation {top.privacy.relation}")
    typer.echo(
        f"guarantee: {top.privacy.epsilon:g}-DP (delta = {top.privacy.delta:g}) under {guarantee}; A1 = "
        "the allele counted (.bim column 5, PLINK's A1 with --keep-allele-order)"
    )


def add_commands(app: typer.Typer) -> None:
    """Register ``tdt`` and ``assoc`` on the typer ``app``."""
    app.command("tdt")(tdt_command)
    app.command("assoc")(assoc_command)
