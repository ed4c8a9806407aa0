"""Chaves et al., Smooth Noisy Max, Fig. 4: private ID3 decision trees (DiffP-ID3).

Grid: datasets NLTCS / ACS / Adult (``--data-dir``; quick: scikit-learn's
bundled breast_cancer / wine / iris) x max depth {2, 5} x split selection
(EM, PF, SNM with Student's t, Laplace and Laplace-log-normal noise, SPS, LD;
quick: the first five) x epsilon in {0.01, 0.05, 0.1, 0.5, 1, 2} (quick:
{0.5, 2, 8}, the bundled datasets being 40-80x smaller) x 5 repetitions of
10-fold cross-validation (quick: 1 x 5-fold).  Test accuracy of
``dpselect.apps.trees.DPDecisionTreeClassifier`` (max-operator split utility, as the
SNM experiment; 20 equal-width bins for continuous features, quick: 5).

The folds depend only on the repetition index (the same folds for every
mechanism and epsilon); the mechanisms' randomness comes from the task seed.
Published accuracies (SNM's logs ``new_ones.csv``: TStudentRLNM,
SmoothLaplaceRLNM, LlnRLNM, 50 trials each) are embedded below for the
comparison.  The seeds' algorithm is reproduced with ``splits="multiway",
stopping="count"`` (DiffP-ID3).

Next to it (first depth of the grid only, the depth being theirs): our tree
and forest at their defaults ("tree_default", "forest_default": binary cuts,
PF, public shape rule), diffprivlib's tree and forest and DP-EBM (binary
tasks) when those packages are importable (optional; see
``dpselect.experiments._peers``), and the majority-class rate.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .._docstrings import fill_doc
from ._common import (
    accuracy_figure,
    claim_at_least,
    claim_matches_published,
    majority_accuracy,
    means_table,
    published_rows,
    stats_by,
)
from ._peers import LABELS, PEER_ABBREVIATIONS, fit_score
from ._plotting import fmt
from ._tabular import load
from ._tree_grid import QUICK, QUICK_SELECTIONS, REAL, SELECTIONS, Grid, grid, tasks
from .tasks import Claim, Task

__all__ = [
    "QUICK",
    "QUICK_SELECTIONS",
    "REAL",
    "SELECTIONS",
    "Grid",
    "claims",
    "grid",
    "notes",
    "plot",
    "run_task",
    "summary",
    "tasks",
]

TITLE = "Private decision trees (Chaves et al., Smooth Noisy Max, Fig. 4)"
DESCRIPTION = __doc__.split("\n\n", 1)[1]

SNM = ("snm_t", "snm_laplace", "snm_lln")
LABEL = {
    "em": "EM",
    "pf": "PF",
    "snm_t": "SNM-T",
    "snm_laplace": "SNM-LAP",
    "snm_lln": "SNM-LLN",
    "sps": "SPS",
    "ld": "LD",
    **LABELS,
}

#: Abbreviations of this report (collected in the combined report).
ABBREVIATIONS = {
    **PEER_ABBREVIATIONS,
    "ACS": "American Community Survey (US Census; SNM's tree benchmark extract)",
    "ID3": "Quinlan's Iterative Dichotomiser 3 (greedy information-gain trees); DiffP-ID3 is its private version",
    "NLTCS": "National Long Term Care Survey (binary disability indicators)",
}

#: Published mean test accuracy (Chaves et al.'s logs, new_ones.csv; 5 x 10-fold CV):
#: (dataset, depth, eps) -> {selection: accuracy}.
PUBLISHED: dict[tuple[str, int, float], dict[str, float]] = {}
for _row in published_rows("tree_snm"):  # dataset, depth, eps -> (LLN, Laplace, Student t)
    PUBLISHED[(_row["dataset"], int(_row["depth"]), float(_row["eps"]))] = {
        s: float(_row[s]) for s in ("snm_lln", "snm_laplace", "snm_t")
    }


def run_task(task: Task, seed: np.random.SeedSequence | int) -> list[dict]:
    """Cross-validated test accuracy of one (dataset, depth, selection, epsilon, repetition).

    Parameters
    ----------
    task : Task
        A task of :func:`tasks`.
    seed : numpy.random.SeedSequence or int
        The task's seed (the folds depend on the repetition only).

    Returns
    -------
    list of dict
        One row per fold: accuracy, majority-class accuracy, leaves and the proven privacy.
    """
    from sklearn.model_selection import KFold

    from ..apps.trees import DPDecisionTreeClassifier

    kw = task.kwargs
    data = load(kw["dataset"], kw["data_dir"])
    rng = np.random.default_rng(seed)
    folds = KFold(n_splits=kw["folds"], shuffle=True, random_state=kw["rep"])
    rows = []
    for fold, (train, test) in enumerate(folds.split(np.arange(data.n))):
        row = {
            "dataset": kw["dataset"],
            "depth": kw["depth"],
            "selection": kw["selection"],
            "epsilon": kw["epsilon"],
            "rep": kw["rep"],
            "fold": fold,
        }
        majority = majority_accuracy(data.y[train], data.y[test])
        if kw["selection"] not in SELECTIONS:  # a model compared at its defaults
            acc = fit_score(kw["selection"], kw["epsilon"], data, train, test, int(rng.integers(2**31)))
            rows.append(
                {
                    **row,
                    "accuracy": acc,
                    "majority_accuracy": majority,
                    "n_leaves": -1,
                    "eps_proven": kw["epsilon"],
                    "delta_proven": float("nan"),
                }
            )
            continue
        clf = DPDecisionTreeClassifier(
            epsilon=kw["epsilon"],
            max_depth=kw["depth"],
            mechanism=kw["selection"],
            split_utility="max_operator",
            splits="multiway",
            stopping="count",
            n_bins=kw["n_bins"],
            random_state=rng,
            **data.estimator_kwargs(),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(data.X.iloc[train], data.y[train])
            acc = float(clf.score(data.X.iloc[test], data.y[test]))
        rows.append(
            {
                **row,
                "accuracy": acc,
                "majority_accuracy": majority,
                "n_leaves": int(clf.tree_.n_leaves),
                "eps_proven": clf.privacy_.epsilon,
                "delta_proven": clf.privacy_.delta,
            }
        )
    return rows


_KEYS = ("dataset", "depth", "epsilon", "selection")


def _published(key: tuple, selection: str, eps: float) -> float | None:
    """Published accuracy of ``selection`` in panel ``key`` = (dataset, depth) at ``eps`` (None if not published)."""
    return PUBLISHED.get((key[0], key[1], eps), {}).get(selection)


def plot(rows: list[dict], out_dir: Path) -> list[Path]:
    """Accuracy vs epsilon per (dataset, depth); the majority rate is the dashed line (not a series).

    Parameters
    ----------
    rows : list of dict
        The rows of :func:`run_task`.
    out_dir : pathlib.Path
        Where the PNG goes.

    Returns
    -------
    list of pathlib.Path
        The figure written.
    """
    depths = {r["depth"] for r in rows}
    shown = [r for r in rows if r["selection"] != "majority"]
    return [
        accuracy_figure(
            shown,
            out_dir / "fig4_tree_accuracy.png",
            panels=("dataset", "depth"),
            x="epsilon",
            series="selection",
            labels=LABEL,
            published=_published,
            ncols=len(depths),
            title=lambda k: f"{k[0]}, depth {k[1]}",
        )
    ]


@fill_doc
def claims(rows: list[dict]) -> list[Claim]:
    """SNM trees vs EM/PF trees, and our SNM accuracies vs the published ones.

    %(rows_to_claims)s
        The paper's claims with our numbers.
    """
    means = {k: st.mean for k, st in stats_by(rows, _KEYS, "accuracy").items()}
    cells = sorted({(ds, d, e) for (ds, d, e, s) in means if s == "em"})
    out = []
    for snm in SNM:
        diffs = [
            means[(ds, d, e, snm)] - max(means[(ds, d, e, "em")], means[(ds, d, e, "pf")])
            for ds, d, e in cells
            if (ds, d, e, snm) in means and (ds, d, e, "pf") in means
        ]
        out.append(
            claim_at_least(
                f"{LABEL[snm]} trees are at least as accurate as EM/PF trees on average (Chaves et al. Fig. 4)",
                diffs,
                "accuracy difference vs best of EM/PF",
                "SNM >= EM/PF on average",
                "our EM/PF use the monotone max-operator with Delta = 1 (noise Delta/eps'), a stronger baseline "
                "than Friedman-Schuster's",
            )
        )
    for snm in ("snm_t", "snm_lln"):
        pairs = [
            (means[(ds, d, e, snm)], PUBLISHED[(ds, d, e)][snm])
            for ds, d, e in cells
            if e >= 0.5 and (ds, d, e) in PUBLISHED and (ds, d, e, snm) in means
        ]
        pub = f"{fmt(min(b for _, b in pairs))}-{fmt(max(b for _, b in pairs))}" if pairs else "0.80-0.94"
        out.append(
            claim_matches_published(
                f"{LABEL[snm]} accuracy at eps >= 0.5 matches the published value (within 0.02)",
                pairs,
                0.02,
                pub,
                "needs --data-dir: NLTCS / ACS / Adult",
            )
        )
    return out


@fill_doc
def summary(rows: list[dict]) -> str:
    """The table of mean test accuracies (± spread) per cell and selection.

    %(rows_to_markdown)s
    """
    sels = sorted({r["selection"] for r in rows}, key=list(LABEL).index)
    cells = sorted({(r["dataset"], r["depth"], r["epsilon"]) for r in rows})
    majority = stats_by(rows, _KEYS[:3], "majority_accuracy")
    return (
        "Mean test accuracy ± standard deviation over the folds and repetitions (cross-validated):\n\n"
        + means_table(
            stats_by(rows, _KEYS, "accuracy"),
            cells,
            sels,
            ["dataset", "depth", "epsilon"],
            column_labels=LABEL,
            extra_header=["SNM-T published", "majority class"],
            extra=lambda k: [fmt(_published(k[:2], "snm_t", k[2])), fmt(majority[k].mean)],
        )
    )


@fill_doc
def notes(quick: bool, data_dir: Path | None) -> list[str]:
    """The report's notes: budget split, public schema, and the data used.

    %(experiment_notes)s
    """
    out = [
        "Budget per query eps' = eps / (2 (d_eff + 1)) (mathematics §7 item 17); the smooth selections use "
        "the node's own records and the proven mathematics §3.1 accounting (the SNM code computed S once on "
        "the whole data with beta = eps, mathematics §7 item 21), so the published SNM numbers come from a "
        "less private algorithm.",
        "Feature domains, bounds and class sets are taken from the whole file and treated as public "
        "(as the papers do).",
    ]
    if data_dir is None:
        out.append(
            "No --data-dir: scikit-learn's bundled breast_cancer / wine / iris replace NLTCS / ACS / Adult, "
            "with a larger epsilon grid; the published-accuracy comparison is then not evaluated."
        )
    return out
