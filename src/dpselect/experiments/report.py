"""Markdown reports of the reproductions: one per experiment and the combined ``OUT/report.md``.

Every report says which data it used (the files read, or "embedded"),
counts the papers' claims as reproduced (✓), not reproduced (✗) and not
evaluated (–), counts the library's new findings apart (+ holds, ○ does not
hold), and the combined report defines the abbreviations its tables use.
:mod:`.html` renders the same text as one self-contained ``report.html``.  The
vocabulary (abbreviations, glossary) is in :mod:`._report_terms`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType

from .._docstrings import fill_doc
from .._params import validate_params
from ._report_terms import ABBREVIATIONS, GLOSSARY, abbreviations_used, claim_gloss
from .tasks import CLAIMS, Claim, ClaimCounts, ExperimentResult

__all__ = [
    "ABBREVIATIONS",
    "GLOSSARY",
    "abbreviations_used",
    "claim_counts",
    "claim_gloss",
    "claims_table",
    "claims_text",
    "combined_report",
    "count_line",
    "data_line",
    "experiment_report",
    "finding_counts",
]


@validate_params({"claims": CLAIMS})
@fill_doc
def claims_text(claims: Sequence[Claim]) -> str:
    """The claims as plain text for a terminal: mark, claim, our number and the published one, meaning.

    %(claims_sequence)s
        Two to four lines per claim: the mark and the claim, our number and the published
        one, the note if any and the meaning of its terms if any.

    See Also
    --------
    count_line : One sentence counting the papers' claims by outcome, and the new findings apart

    Examples
    --------
    >>> print(claims_text([Claim("A claim", "0.9", "0.8", True, note="a note")]))
    ✓ A claim
        ours: 0.9; published: 0.8
        note: a note
    """
    lines = []
    for c in claims:
        lines.append(f"{c.mark} {c.text}")
        lines.append(f"    ours: {c.ours}; published: {c.published}")
        if c.note:
            lines.append(f"    note: {c.note}")
        gloss = claim_gloss(c)
        if gloss:
            lines.append(f"    meaning: {gloss}")
    return "\n".join(lines)


#: Caption of every figure unless the experiment module sets ``FIGURE_NOTE``.
DEFAULT_FIGURE_NOTE = (
    "points are means over the repetitions; error bars are ± one standard deviation over the "
    "repetitions (cross-validation folds for the trees), clipped to the metric's range"
)


def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def claims_table(claims: Sequence[Claim], experiment: str | None = None) -> str:
    """Markdown table of claims: claim | ours | published | mark (✓/✗ paper claims, +/○ new findings).

    Parameters
    ----------
    claims : sequence of Claim
        The claims, one row each.
    experiment : str or None, default=None
        An experiment's name for a leading "experiment" column (None: no such column).

    Returns
    -------
    str
        The table (header, separator, one line per claim).
    """
    head = ("| experiment " if experiment is not None else "") + "| claim | ours | published | result |"
    sep = ("|---" if experiment is not None else "") + "|---|---|---|:-:|"
    lines = [head, sep]
    for c in claims:
        gloss = claim_gloss(c)
        text = (
            _md_escape(c.text)
            + (f" <br>*{_md_escape(c.note)}*" if c.note else "")
            + (f" <br>{_md_escape(gloss)}" if gloss else "")
        )
        pre = f"| {experiment} " if experiment is not None else ""
        lines.append(f"{pre}| {text} | {_md_escape(c.ours)} | {_md_escape(c.published)} | {c.mark} |")
    return "\n".join(lines)


def claim_counts(claims: Iterable[Claim]) -> ClaimCounts:
    """The papers' claims: reproduced ✓, not reproduced ✗, not evaluated –.

    Parameters
    ----------
    claims : iterable of Claim
        The claims; those of kind "new" are not counted.

    Returns
    -------
    ClaimCounts
        The counts.
    """
    return ClaimCounts.of(claims, "paper")


def finding_counts(claims: Iterable[Claim]) -> ClaimCounts:
    """The library's new findings: holds +, does not hold ○, not evaluated –.

    Parameters
    ----------
    claims : iterable of Claim
        The claims; only those of kind "new" are counted.

    Returns
    -------
    ClaimCounts
        The counts.
    """
    return ClaimCounts.of(claims, "new")


@validate_params({"claims": CLAIMS})
@fill_doc
def count_line(claims: Iterable[Claim]) -> str:
    """One sentence counting the papers' claims by outcome, and the new findings apart.

    %(claims_iterable)s
        "N claims of the papers: a reproduced (✓), b not reproduced (✗), c not evaluated (–)."
        followed, if there are new findings, by their counts.

    See Also
    --------
    claims_text : The claims as plain text for a terminal: mark, claim, our number and the published one, meaning

    Examples
    --------
    >>> count_line([Claim("A", "1", "2", True), Claim("B", "1", "2", None)])
    '2 claims of the papers: 1 reproduced (✓), 0 not reproduced (✗), 1 not evaluated (–).'
    """
    paper, new = claim_counts(claims), finding_counts(claims)
    line = (
        f"{paper.total} claims of the papers: {paper.holds} reproduced (✓), {paper.fails} not reproduced (✗), "
        f"{paper.not_evaluated} not evaluated (–)."
    )
    if new.total:
        line += (
            f" {new.total} new findings (baselines the papers do not have): {new.holds} hold (+), "
            f"{new.fails} do not hold (○), {new.not_evaluated} not evaluated (–)."
        )
    return line


def data_line(files: Sequence[Path], data_dir: Path | None) -> str:
    """Exactly which data files were read (or that only embedded data were used).

    Parameters
    ----------
    files : sequence of pathlib.Path
        The files read (empty: embedded data only).
    data_dir : pathlib.Path or None
        The data directory given (files are shown relative to it).

    Returns
    -------
    str
        The report's data line.
    """
    if files:
        shown = []
        for f in files:
            try:
                shown.append(str(Path(f).relative_to(data_dir)) if data_dir is not None else str(f))
            except ValueError:
                shown.append(str(f))
        where = f" under `{data_dir}`" if data_dir is not None else ""
        return f"files read{where}: " + ", ".join(f"`{s}`" for s in shown)
    unused = f" (the data directory `{data_dir}` was not read by this experiment)" if data_dir is not None else ""
    return "embedded data only (synthetic / generated in code / bundled with scikit-learn), no file read" + unused


def experiment_report(
    module: ModuleType,
    res: ExperimentResult,
    *,
    quick: bool,
    data_dir: Path | None,
    seed: int,
    figures: Sequence[Path],
    has_timings: bool,
) -> str:
    """The markdown of ``OUT/NAME/report.md``.

    Parameters
    ----------
    module : module
        The experiment module (its ``TITLE``, ``DESCRIPTION``, ``summary``, ``notes``, ...).
    res : ExperimentResult
        The run's result.
    quick : bool
        Whether the grid was the quick one.
    data_dir : pathlib.Path or None
        The data directory given.
    seed : int
        The master seed.
    figures : sequence of pathlib.Path
        The figures written (shown in the report).
    has_timings : bool
        Whether ``timings.csv`` was written.

    Returns
    -------
    str
        The report.
    """
    lines = [f"# {getattr(module, 'TITLE', res.name)}", ""]
    desc = getattr(module, "DESCRIPTION", "")
    if desc:
        lines += [desc.strip(), ""]
    lines += [
        f"- grid: {'quick (reduced)' if quick else 'full'}; seed: {seed}; {res.n_tasks} tasks, "
        f"{len(res.rows)} result rows; wall time {res.seconds:.1f} s",
        f"- data: {data_line(res.data_files, data_dir)}",
        "- files: `results.csv`"
        + (", `timings.csv`" if has_timings else "")
        + "".join(f", `{f.name}`" for f in figures)
        + ", `report.html`",
        "",
        "## Claims",
        "",
        count_line(res.claims),
        "",
        claims_table(res.claims),
        "",
    ]
    summary = getattr(module, "summary", None)
    if summary is not None:
        text = summary(res.rows)
        if text:
            lines += ["## Results", "", text.strip(), ""]
    if figures:
        note = getattr(module, "FIGURE_NOTE", DEFAULT_FIGURE_NOTE)
        lines += ["## Figures", ""] + [f"![{f.stem}: {note}]({f.name})" for f in figures] + [""]
    notes_fn = getattr(module, "notes", None)
    notes = list(notes_fn(quick, data_dir)) if notes_fn is not None else []
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def combined_report(
    results: Sequence[ExperimentResult],
    *,
    quick: bool,
    seed: int,
    seconds: float,
    data_dir: Path | None,
    extra_abbreviations: Mapping[str, str] | None = None,
    also_scan: Sequence[str] = (),
) -> str:
    """The markdown of ``OUT/report.md``: every claim, the data of each experiment, the abbreviations.

    Parameters
    ----------
    results : sequence of ExperimentResult
        Every experiment's result.
    quick : bool
        Whether the grids were the quick ones.
    seed : int
        The master seed.
    seconds : float
        The total wall time.
    data_dir : pathlib.Path or None
        The data directory given.
    extra_abbreviations : mapping of str to str or None, default=None
        The experiments' own abbreviations.
    also_scan : sequence of str, default=()
        More texts whose abbreviations are listed (the experiments' reports, which the
        combined ``report.html`` shows too).

    Returns
    -------
    str
        The report.
    """
    all_claims = [c for r in results for c in r.claims]
    lines = [
        "# dpselect: reproduction report",
        "",
        f"All experiments, {'quick' if quick else 'full'} grid, seed {seed}, total wall time {seconds:.1f} s. "
        "Per-experiment details, tables and figures: "
        + ", ".join(f"[{r.name}]({r.name}/report.md)" for r in results)  # .md or .html: the text names neither
        + ".",
        "",
        f"**Summary:** {count_line(all_claims)}",
        "",
        "| experiment | ✓ | ✗ | – | + | ○ | data |",
        "|---|:-:|:-:|:-:|:-:|:-:|---|",
    ]
    for r in results:
        paper, new = claim_counts(r.claims), finding_counts(r.claims)
        lines.append(
            f"| {r.name} | {paper.holds} | {paper.fails} | {paper.not_evaluated} | {new.holds} | "
            f"{new.fails} | {_md_escape(data_line(r.data_files, data_dir))} |"
        )
    lines += ["", "## Claims", "", "| experiment | claim | ours | published | result |", "|---|---|---|---|:-:|"]
    for r in results:
        lines += claims_table(r.claims, r.name).splitlines()[2:]
    text = "\n".join(lines)
    used = abbreviations_used("\n".join([text, *also_scan]), extra_abbreviations)
    lines += [
        "",
        "Papers' claims: ✓ reproduced, ✗ not reproduced. New findings of this library (baselines the "
        "papers do not have): + holds, ○ does not hold. – not evaluated (e.g. the real data were not given).",
        "",
    ]
    if used:
        lines += ["## Abbreviations", ""] + [f"- **{k}**: {v}" for k, v in used.items()] + [""]
    return "\n".join(lines)
