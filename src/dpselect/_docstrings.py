"""Docstring fragments: parameter entries several public functions share, written once.

scipy's ``docfiller`` pattern.  A docstring line that holds only ``%(name)s`` stands for the
fragment ``name`` of :data:`FRAGMENTS`, indented as the placeholder is.  :func:`fill_doc`
expands the docstring of a function when it is defined (``help()``, doctests and
``inspect`` see the full text); the static readers of the docstrings (the API pages'
griffe extension ``docs/scripts/griffe_rst.py`` and the docstring tests) call :func:`expand`.

Examples
--------
>>> print(expand("    %(median_data)s").splitlines()[0])
    x : array_like
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

__all__ = ["FRAGMENTS", "expand", "fill_doc"]

F = TypeVar("F", bound=Callable[..., object])

#: name -> numpydoc parameter entries (no indentation).
FRAGMENTS: dict[str, str] = {
    # the data of the Duff (dataset-distance) median and mean (dpselect.apps.quantiles)
    "duff_data": """\
x : array_like
    1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
epsilon : float
    Privacy parameter (> 0) of the mechanism: epsilon-DP under add/remove neighbours
    (mathematics §6.1).
bounds : tuple of float
    Public ``(a, b)`` with ``a < b``.""",
    # the data of the smooth-sensitivity median baselines of Nissim, Raskhodnikova & Smith
    "median_data": """\
x : array_like
    1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
epsilon : float
    The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
    n fixed).
bounds : tuple of float
    Public ``(a, b)`` with ``a < b``.""",
    # how the smooth-sensitivity median baselines release
    "median_release": """\
rng : None, int, Generator or "secure", default=None
    The randomness (keyword-only); a seed reproduces.
size : int or None, default=None
    None (one float) or the number of iid draws (an array).
clip_output : bool, default=True
    Clip the release to ``bounds`` (post-processing: the guarantee is unchanged).
accountant : Accountant or None, default=None
    Charged ``mechanism.privacy()`` before any randomness is drawn.
granularity : float or None, default=None
    The output grid (a power of two; None: 2^-20; 0: float output).
on_out_of_bounds : {"clip", "raise"}, default="clip"
    "clip": records outside ``bounds`` are clamped to them (private); "raise": a
    ValueError instead, **not private**.""",
    # how an experiment runs (dpselect.experiments.reproduce and reproduce_all)
    "run_options": """\
quick : bool, default=False
    The reduced grid with embedded data (minutes) instead of the full one.
out : str or os.PathLike, default="out"
    The output directory; an experiment's files go to ``out/NAME/``.
data_dir : str or os.PathLike or None, default=None
    The root of the real datasets (None: ``$DPSELECT_DATA`` if set; the full grids need it).
scheduler : str or None, default=None
    A dask.distributed scheduler address (``"tcp://host:8786"``) or a local dask scheduler
    (``"processes"``, ``"threads"``, ``"synchronous"``); None: local processes.
client : distributed.Client or None, default=None
    A ``dask.distributed.Client`` to run on (instead of ``scheduler``).
seed : int, default=0
    The master seed (>= 0): the results are identical for a seed whatever the scheduler.
workers : int or None, default=None
    Local worker processes (None: all cores; 1 runs in this process).
progress : bool or None, default=None
    Progress on stderr: True / False force it on / off; None shows a bar on a terminal
    and a plain line every few seconds elsewhere.""",
}


def _sections(parameters: str, returns: str = "") -> str:
    """A fragment of numpydoc ``Parameters`` entries and the ``Returns`` heading with its entry (if any)."""
    return f"Parameters\n----------\n{parameters}\n\nReturns\n-------" + (f"\n{returns}" if returns else "")


_PROBLEM = "problem : SelectionProblem\n    The problem (its ``relation``{} ``private`` flag {}matter)."
_ROWS = "rows : list of dict\n    The rows of :func:`run_task`."
_QUICK = "quick : bool\n    The small grid of ``--quick``."
_TRAINING = (
    "X : array-like or DataFrame of shape (n_samples, n_features)\n    Training records.\n"
    "y : array-like of shape (n_samples,)\n    Class labels."
)
_CLAIMS = "claims : {} of Claim\n    The claims of one experiment (or of several)."
_POINTS = "t : array_like\n    Points of [a, b] (any shape).\n"
_FAMILIES = "n_families : int\n    N >= 1, the number of families (public)."
_PRIVACY = "Privacy\n    The guarantee under ``problem.relation``.\n\nExamples\n--------\n>>> import dpselect"

FRAGMENTS.update(
    {
        # the sections of a selection mechanism's ``privacy(problem)`` (dpselect.mechanisms); "_m": m matters too
        "privacy_sections": _sections(_PROBLEM.format(" and", ""), _PRIVACY),
        "privacy_sections_m": _sections(_PROBLEM.format(",", "and m "), _PRIVACY),
        # a method of a mechanism on a selection problem (dpselect.mechanisms)
        "problem_sections": _sections("problem : SelectionProblem\n    The candidates' utilities and sensitivities."),
        # the same, scores and sensitivities (dpselect.mechanisms.top_k)
        "scores_sections": _sections("problem : SelectionProblem\n    The candidates' scores and sensitivities."),
        # the same, with a smooth bound (dpselect.mechanisms.sensitivity_bound)
        "smooth_problem_sections": _sections(
            "problem : SelectionProblem\n    The scores, global sensitivity and smooth bound S(x)."
        ),
        # above-threshold queries (dpselect.mechanisms.sparse_vector)
        "threshold_queries": _sections(
            "queries : array_like of int, shape (m,)\n    The query values on the dataset.\nthreshold : int\n"
            "    The public threshold T."
        ),
        # local dampening's reference (dpselect.mechanisms.dampening)
        "local_dampening_references": "References\n----------\n"
        'Farias, Brito, Flynn, Machado, Majumdar & Srivastava, "Local dampening:\n'
        'differential privacy for non-numeric queries via local sensitivity",\n'
        "PVLDB 14(4), 2020 (the local dampening mechanism; reconstructed from two\n"
        "public code bases, the theorem numbers not checked against the primary\ntext); mathematics §5.1.",
        # the same, with a local-sensitivity profile (dpselect.mechanisms.dampening)
        "profile_sections": _sections(
            "problem : SelectionProblem\n    The utilities and their per-candidate local-sensitivity profile."
        ),
        # a smooth-sensitivity release's S(x) (dpselect.mechanisms.release)
        "release_sensitivity": _sections(
            "sensitivity : float or callable\n"
            "    S_beta'(x) computed at ``self.beta``, or a callable beta -> S_beta(x).",
            "float",
        ),
        # the per-round mechanism and problem of a top-k selection (dpselect.mechanisms.top_k)
        "top_k_round": "Parameters\n----------\nmechanism : Mechanism\n"
        "    The per-round mechanism (as in :func:`select_top_k`).\nproblem : SelectionProblem\n"
        "    The candidates' scores and sensitivities.",
        # a mechanism's noise calibration (dpselect.mechanisms)
        "calibrate_sections": _sections(
            "problem : SelectionProblem\n    The candidates' utilities, global sensitivity and ``monotone`` flag.",
            "Calibration\n    The scale and the standard noise law (a :mod:`dpselect.noise` object).\n\n"
            "Examples\n--------\n>>> import dpselect\n>>> p = dpselect.SelectionProblem([1.0, 0.0])",
        ),
        # the composition of k eta-bounded-range mechanisms (dpselect.accounting.bounded_range)
        "br_composition": _sections(
            "eta : float\n    The bounded-range parameter of every mechanism, > 0.\nk : int\n"
            "    The number of mechanisms, >= 1.\ndelta : float\n    The delta of the composed guarantee, in (0, 1).",
            "float",
        ),
        # the dilation of the smooth-bound selections (dpselect.accounting.selection)
        "dilation_m": "Parameters\n----------\nm : int\n    The number of candidates, >= 1.",
        "dilation_delta": "delta : float\n    The delta of the dilation, in (0, 1).\n\nReturns\n-------\nfloat",
        # the parameters of the LLN-noised selection (dpselect.accounting)
        "lln_parameters": "Parameters\n----------\nm : int\n    The number of candidates, >= 1.\nbeta : float\n"
        "    The smoothness of the bound S, >= 0.\nsigma : float\n    The shape of the LLN noise, > 0.\na : float\n"
        "    A > 0: the noise scale is S(x)/A.",
        # the smooth-bound noise of the smooth selections (dpselect.accounting.selection)
        "smooth_noise_parameters": "Parameters\n----------\na : float\n    A > 0: the noise scale is S(x)/A.\n"
        "beta : float\n    The smoothness of the bound S, >= 0.\nm : int\n    The number of candidates, >= 1.",
        # a function of one bounded-range parameter (dpselect.accounting.composition)
        "eta_to_float": _sections("eta : float\n    The bounded-range parameter, >= 0.", "float"),
        # the target guarantee of a calibration (dpselect.accounting)
        "target_privacy": "Parameters\n----------\nepsilon : float\n    The target epsilon, > 0.\ndelta : float\n"
        "    The target delta, in (0, 1).",
        # a problem's local sensitivity at distance t (dpselect.problem)
        "distance_t": _sections("t : int, default=0\n    The distance (>= 0) in the metric of ``relation``."),
        # the randomness of an exact integer sampler (dpselect.noise.exact)
        "exact_rng": 'rng : None, int, Generator or "secure", default=None\n'
        '    Randomness (keyword-only); ``"secure"`` uses the OS CSPRNG.\n\nReturns\n-------',
        # a noise law's smooth-bound calibration (dpselect.noise)
        "alpha_beta": "Returns\n-------\ntuple of (float, float)\n    (alpha, beta).",
        # a function of the error of a noisy release (dpselect.analysis.error_distribution)
        "error_at_t": _sections("t : array_like of float\n    Error value(s).", "float or numpy.ndarray"),
        "error_example": "Examples\n--------\n>>> from dpselect.analysis import ErrorDistribution\n"
        ">>> from dpselect.noise import Laplace\n>>> dist = ErrorDistribution(Laplace(), 2.0)",
        # a noise law's smooth-bound calibration target (dpselect.noise) and a problem's smoothing (dpselect.problem)
        "smooth_target": "Parameters\n----------\nepsilon : float\n    The target epsilon, > 0.\n"
        "delta : float, default=0.0",
        "smooth_beta": _sections("beta : float\n    The smoothing parameter, 0 < beta <= ``beta_max``."),
        "error_at_q": _sections("q : array_like of float\n    Probabilities in [0, 1].", "float or numpy.ndarray"),
        # the Duff mode's public output space and its references (dpselect.apps.counts)
        "mode_candidates": "candidates : array_like of float, default=None\n"
        "    The **public** output space (distinct values).  If None the distinct\n"
        "    values of x are used and a :class:`~dpselect.PrivacyLeakWarning` is\n"
        "    emitted (data-dependent output space: no guarantee).",
        "mode_sample": "Parameters\n----------\nx : array_like of float, shape (n,)\n"
        "    The sample (may be empty when ``candidates`` is given).",
        "mode_monotone": "monotone : bool, default=True\n"
        "    True: P(v) ∝ exp(epsilon (n_v - n_max)), the monotone-utility EM;\n"
        "    False: the Duff paper's exp(epsilon (n_v - n_max) / 2), which needs\n"
        "    twice the epsilon for the same law.  Both are epsilon-DP.",
        "duff_mode_references": "References\n----------\n"
        "Gillenwater & Muñoz Medina, the dataset-distance exponential mechanism\n"
        '("Duff") for medians, modes and means (the mode utility); McSherry &\n'
        'Talwar, "Mechanism design via differential privacy", FOCS 2007,\n'
        "Theorem 6 (the exponential mechanism); mathematics §6.1 and §9.1.",
        # the stable histogram's reference (dpselect.apps.counts)
        "stable_histogram_references": "References\n----------\n"
        "The stable histogram of the propose-test-release lecture notes, proof\nchecked in mathematics §6.3.",
        # the records of the partition selection: each user's keys (dpselect.apps.counts)
        "user_items": "Parameters\n----------\nuser_items : iterable of iterables of hashable, or DataFrame\n"
        "    One iterable of keys per user (repeats count once), or a pandas / polars frame with\n"
        "    one row per (user, key) pair named by ``user_column`` and ``key_column``.",
        # the PTR mode's reference (dpselect.apps.counts)
        "ptr_mode_references": "References\n----------\n"
        'Dwork & Lei, "Differential privacy and robust statistics", STOC 2009\n'
        "(propose-test-release); the lecture notes' version with the corrections\n"
        "of mathematics §6.2 (strict distance to instability, the mode's gamma).",
        # a table of class counts and the argmax indicator's ties and neighbours (dpselect.apps.counts)
        "indicator_table": "Parameters\n----------\ncounts : array_like of int, shape (m,)\n"
        "    Non-negative integer counts, one per candidate class (m >= 1).\n"
        'tie_rule : {"tieset", "first"}, default="tieset"\n'
        '    "tieset": every tied maximum scores 1 (T1); "first": the lowest index\n    among the maxima wins (T2).\n'
        'relation : {"add_remove", "replace"}, default="add_remove"\n'
        "    The neighbour relation: one count +-1, or one unit moved between\n    classes (module docstring).",
        # the TDT tables of a real-data example (dpselect.experiments)
        "tdt_tables": "Parameters\n----------\nb : numpy.ndarray\n    Transmissions of the first allele, one per SNP.\n"
        "c : numpy.ndarray\n    Transmissions of the second allele.",
        # an order statistic's data range and index (dpselect.apps.quantiles)
        "order_statistic_range": "bounds : tuple of float\n"
        "    Public ``(a, b)`` with ``a < b`` (the data range under replace-one neighbours).\nindex : int\n"
        "    0-based index of the order statistic (< n).\n\nReturns\n-------\nfloat",
        # the sample and smoothing of a smooth sensitivity (dpselect.apps.quantiles)
        "smoothing_data": "Parameters\n----------\nx : array_like\n"
        "    1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.\n"
        "beta : float\n    The smoothing parameter (> 0).",
        # the argmax indicator's distance to instability: reference (dpselect.apps.counts)
        "indicator_references": "References\n----------\n"
        "Chaves et al., Smooth Noisy Max, Definition 7.1 (leaf majority, the\n"
        "argmax-indicator utility), corrected on the mathematics page,\n"
        "mathematics §4.2 (the table of t* in the module docstring).",
        # the neighbouring pair an audit example checks (dpselect.analysis.audit)
        "audit_example": "Examples\n--------\n>>> import dpselect\n>>> from dpselect.analysis import audit\n"
        ">>> x, y = dpselect.SelectionProblem([3.0, 1.0]), dpselect.SelectionProblem([2.0, 2.0])",
        # a mechanism on a problem, measured exactly (dpselect.analysis.error)
        "mech_on_problem": _sections(
            "mech : Mechanism\n    Any object with ``probabilities(problem)`` or ``log_probabilities(problem)``.\n"
            "problem : SelectionProblem\n    The candidates' utilities."
        ),
        # the command line's entry points (dpselect.cli, dpselect.__main__)
        "cli_argv": _sections(
            "argv : sequence of str or None, default=None\n"
            "    The arguments after the program name (None: ``sys.argv[1:]``).",
            "int\n    The exit status: 0 on success, 2 on a user error, 1 on an internal error.",
        ),
        # the samples a fitted tree estimator predicts on (dpselect.apps.trees)
        "samples_X": _sections("X : array-like or DataFrame of shape (n_samples, n_features)\n    Samples."),
        # the training data of a private tree or forest fit, and its budget (dpselect.apps.trees)
        "training_records": _TRAINING,
        "training_records_budget": _TRAINING + "\naccountant : Accountant or None\n"
        "    The budget the fit charges (before any randomness); None charges\n    nothing.",
        # the private tree estimators' public schema, budget, fitted attributes and preprocessing note
        "feature_schema": "bounds : pair, dict or array-like, default=None\n"
        "    Public bounds of the continuous features\n"
        "    (:data:`~dpselect.typing.FeatureBounds`, :mod:`dpselect.apps.trees`);\n"
        "    None infers them from the data: no guarantee.\ncategorical_features : indices, names, mask or dict, "
        "default=None\n    The categorical features and, as a dict, their public categories\n"
        "    (:data:`~dpselect.typing.CategoricalFeatures`).",
        "estimator_accountant": "accountant : Accountant or None, default=None\n"
        "    The budget every fit is charged to before drawing any randomness\n"
        "    (carried by ``clone``, so ``GridSearchCV`` charges every fit to it).",
        "fitted_features": "classes_ : ndarray\n    The class labels.\nn_features_in_ : int\n"
        "    Number of features seen at fit.\nfeature_names_in_ : ndarray\n    Column names of a DataFrame input.",
        "preprocessing_note": "**Preprocessing.**  In a ``Pipeline``, scale with\n"
        ":class:`~dpselect.apps.trees.PublicBoundsScaler` (declared public bounds,\n"
        "then ``bounds=(0, 1)`` here) or any fixed per-record map; a scaler or\n"
        "encoder fitted on the data (``MinMaxScaler``, ``StandardScaler``,\n"
        '``OneHotEncoder(categories="auto")``, imputers) makes the "public" bounds\n'
        "private and has no guarantee (see the publishing page).",
        # the public record count a tree's shape rule reads (dpselect.apps.trees)
        "public_records": "Parameters\n----------\nn_records : float\n"
        "    Public (or noisy) number of training records n.",
        # an experiment's claims, summary table, notes, epsilon grid and tasks (dpselect.experiments)
        "rows_to_claims": _sections(_ROWS, "list of Claim"),
        "rows_to_markdown": _sections(_ROWS, "str\n    Markdown."),
        "experiment_task": _sections(
            "task : Task\n    A task of :func:`tasks`.\nseed : SeedSequence or int\n"
            "    The task's seed (the scheduler derives it from the run's seed)."
        ),
        "experiment_grid": _sections(
            "quick : bool\n    The reduced grid.\nreal : bool\n"
            "    Whether the real datasets are given (``--data-dir``).",
            "Grid",
        ),
        "experiment_grid_tasks": _sections(
            "quick : bool\n    The reduced grid (bundled datasets without ``data_dir``).\n"
            "data_dir : pathlib.Path or None\n    The root of the real datasets (required without ``quick``).",
            "list of Task",
        ),
        "experiment_notes": _sections(
            "quick : bool\n    Whether the grid was the quick one.\n"
            "data_dir : pathlib.Path or None\n    The data directory given.",
            "list of str\n    One note each.",
        ),
        "experiment_epsilons": _sections(_QUICK, "list of float\n    The epsilons, increasing."),
        "experiment_tasks": _sections(
            _QUICK
            + "\ndata_dir : Path or None\n    The data directory (``--data-dir``), or None for the embedded defaults.",
            "list of Task\n    The tasks, in a deterministic order.",
        ),
    }
)

FRAGMENTS.update(
    {
        # TDT transmission tables of any shape (dpselect.apps.genomics)
        "tdt_table_counts": "b : array-like of int\n    Transmissions of allele 1, any shape.\nc : array-like of int\n"
        "    Transmissions of allele 2, the shape of ``b`` (``b + c <= 2N``).\n" + _FAMILIES,
        # the same, one table per SNP
        "tdt_panel": "b : array-like of int\n    1-D transmissions of allele 1, one per SNP.\nc : array-like of int\n"
        "    1-D transmissions of allele 2, one per SNP (``b + c <= 2N``).\n" + _FAMILIES,
        # two output laws on neighbouring datasets (dpselect.analysis)
        "log_laws": "logp : array_like of float, shape (m,)\n    Log output probabilities on the first dataset.\n"
        "logq : array_like of float, shape (m,)\n    Log output probabilities on the second dataset.",
        # the selected SNPs of a result (dpselect.apps.genomics)
        "selected_snps": "Parameters\n----------\nindices : ndarray of int64\n"
        "    The selected SNPs, most preferred first.",
        # the claims of an experiment report (dpselect.experiments.report)
        "claims_sequence": _sections(_CLAIMS.format("sequence"), "str"),
        "claims_iterable": _sections(_CLAIMS.format("iterable"), "str"),
        # the example of ``log_probabilities`` (dpselect.mechanisms)
        "log_probabilities_example": "Examples\n--------\n>>> import dpselect\n"
        ">>> p = dpselect.SelectionProblem([1.0, 0.0])\n"
        ">>> dpselect.ExponentialMechanism(2.0).log_probabilities(p).round(4)\narray([-0.3133, -1.3133])",
        # the See Also and References of the Duff mode's utility and problem (dpselect.apps.counts)
        "duff_mode_see_also": "See Also\n--------\n"
        "ModeUtility : What :func:`duff_mode_utility` returns: the output space and Duff's mode utility on it\n"
        "duff_mode : Duff exponential mechanism for the mode: epsilon-DP under add/remove\n"
        "duff_mode_probabilities : The exact output law of :func:`duff_mode` (epsilon-DP under add/remove)"
        "\n\n" + FRAGMENTS["duff_mode_references"],
        # the users of the policy weights' examples (dpselect.apps.counts)
        "policy_example_users": "Examples\n--------\n>>> import numpy as np\n"
        ">>> from dpselect.apps.counts._partitions.user_items import as_user_keys, parse_user_items\n"
        '>>> uk = as_user_keys(parse_user_items([["a"], ["a", "b"]]), 5, np.random.default_rng(0))',
        # how an unbounded-range release runs (dpselect.apps.quantiles)
        "unbounded_release": 'relation : {"add_remove", "replace"}, default="add_remove"\n'
        "    The neighbour relation (mathematics §1): epsilon-DP for add/remove or replace neighbours.\n"
        'rng : None, int, numpy.random.Generator or "secure", default=None\n'
        "    randomness; a seed reproduces.\n"
        "size : int or None, default=None\n"
        "    None: one release; an int: ``size`` independent releases (an array),\n"
        "    charged as ``size`` releases (mathematics §10.1).\n"
        "accountant : Accountant or None, default=None\n"
        "    charged ``Privacy(epsilon, 0, relation)`` (``size`` times) before any randomness is drawn.",
        # a sample clamped to public bounds (dpselect.apps.quantiles)
        "clamped_data": "x : array_like\n"
        "    1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.\n"
        "bounds : tuple of float\n    Public ``(a, b)`` with ``a < b``.",
        # a percentile over a public grid (dpselect.apps.quantiles)
        "percentile_grid": "p : float\n    Percentile in [0, 100].\ngrid : array_like\n"
        "    Public candidate values, finite and strictly increasing.\nhistogram : bool, default=False\n"
        "    Whether ``x`` holds per-grid-point counts.",
    }
)

# the points and the data of a Duff median utility or law (dpselect.apps.quantiles)
FRAGMENTS["duff_points_clamped"] = _POINTS + FRAGMENTS["clamped_data"]
FRAGMENTS["duff_points_data"] = _POINTS + FRAGMENTS["duff_data"]

_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def expand(doc: str) -> str:
    """The docstring with every placeholder line replaced by its fragment.

    Parameters
    ----------
    doc : str
        A docstring (raw, as written in the source).

    Returns
    -------
    str
        The expanded docstring (unknown names raise ``KeyError``: a typo is a programming error).
    """

    def one(m: re.Match[str]) -> str:
        indent = m.group("indent")
        return "\n".join(indent + line if line else line for line in FRAGMENTS[m.group("name")].splitlines())

    return _PLACEHOLDER.sub(one, doc)


def fill_doc(func: F) -> F:
    """Expand the docstring of ``func`` in place (a decorator).

    Parameters
    ----------
    func : callable
        A function whose docstring holds placeholders.

    Returns
    -------
    callable
        ``func`` itself.
    """
    if func.__doc__:
        func.__doc__ = expand(func.__doc__)
    return func
