"""Peer implementations for the tree / forest comparisons: diffprivlib and DP-EBM, when importable.

They are optional benchmark extras, never runtime dependencies (diffprivlib
0.6.6 needs scikit-learn < 1.7; run them in a separate environment, e.g.
``/work/venv-peers`` with ``PYTHONPATH=src``).  Every peer gets the same
public schema as our estimators: bounds of continuous columns, categorical
domains (as ordinal codes with bounds (0, K - 1) for diffprivlib, declared
category lists for DP-EBM) and the class set.

* ``diffprivlib_tree`` / ``diffprivlib_forest``: diffprivlib's
  ``DecisionTreeClassifier`` / ``RandomForestClassifier`` at their defaults
  (pure epsilon-DP).
* ``dp_ebm``: interpret's ``DPExplainableBoostingClassifier`` at its defaults
  except ``n_jobs=1`` (the shared machine) -- (epsilon, 1e-5)-DP (its default
  delta; GDP composition); binary classification only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import majority_accuracy

__all__ = [
    "COMPARED",
    "LABELS",
    "PEERS",
    "PEER_ABBREVIATIONS",
    "available",
    "compared",
    "fit_score",
    "make_peer",
    "supports",
]

PEERS = ("diffprivlib_tree", "diffprivlib_forest", "dp_ebm")
#: Our estimators at their defaults, the peers, and the majority-class rate (keys of :func:`fit_score`).
COMPARED = ("tree_default", "forest_default", *PEERS, "majority")
#: Report labels of :data:`COMPARED`.
LABELS = {
    "tree_default": "tree (defaults)",
    "forest_default": "forest (defaults)",
    "diffprivlib_tree": "diffprivlib DT",
    "diffprivlib_forest": "diffprivlib RF",
    "dp_ebm": "DP-EBM",
    "majority": "majority rate",
}

#: Abbreviations of :data:`LABELS` (for the reports' abbreviation lists).
PEER_ABBREVIATIONS = {
    "DP-EBM": "differentially private explainable boosting machine (interpret's DPExplainableBoostingClassifier)",
    "DT": "decision tree (diffprivlib DT: diffprivlib's DecisionTreeClassifier)",
    "RF": "random forest (diffprivlib RF: diffprivlib's RandomForestClassifier)",
}


def available() -> tuple[str, ...]:
    """The peers importable here."""
    out: list[str] = []
    try:
        import diffprivlib.models  # noqa: F401

        out += ["diffprivlib_tree", "diffprivlib_forest"]
    except Exception:  # pragma: no cover - depends on the environment
        pass
    try:
        from interpret.privacy import DPExplainableBoostingClassifier  # noqa: F401

        out.append("dp_ebm")
    except Exception:  # pragma: no cover - depends on the environment
        pass
    return tuple(out)


def compared() -> tuple[str, ...]:
    """The models of :data:`COMPARED` that can run here (peers only when importable)."""
    peers = available()
    return tuple(m for m in COMPARED if m not in PEERS or m in peers)


def supports(name: str, data: Any) -> bool:
    """Whether model ``name`` runs on ``data``: DP-EBM handles binary classification only."""
    return name != "dp_ebm" or len(data.classes) == 2


def _ordinal(X: Any, categorical: dict, bounds: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numeric matrix (categoricals as codes of their public domain) and its public (lo, hi)."""
    cols, lo, hi = [], [], []
    for c in X.columns:
        if c in categorical:
            dom = list(categorical[c])
            index = {v: i for i, v in enumerate(dom)}
            cols.append(np.array([index[v] for v in X[c].tolist()], dtype=np.float64))
            lo.append(0.0)
            hi.append(float(max(len(dom) - 1, 1)))
        else:
            cols.append(X[c].to_numpy(dtype=np.float64))
            lo.append(float(bounds[c][0]))
            hi.append(float(bounds[c][1]))
    return np.column_stack(cols), np.array(lo), np.array(hi)


def make_peer(name: str, epsilon: float, data: Any, seed: int) -> tuple[Any, Any]:
    """(unfitted model, transform X -> the model's input) for ``data`` (an experiments Tabular)."""
    if name in ("diffprivlib_tree", "diffprivlib_forest"):
        from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier

        _, lo, hi = _ordinal(data.X.iloc[:1], data.categorical, data.bounds)
        cls = DecisionTreeClassifier if name == "diffprivlib_tree" else RandomForestClassifier
        # labels as codes 0..C-1 (fit_score maps them back): diffprivlib 0.6.6's forest mislabels string classes
        model = cls(epsilon=epsilon, bounds=(lo, hi), classes=list(range(len(data.classes))), random_state=seed)
        return model, (lambda X: _ordinal(X, data.categorical, data.bounds)[0])
    if name == "dp_ebm":
        from interpret.privacy import DPExplainableBoostingClassifier

        cats = {c: [str(v) for v in data.categorical[c]] for c in data.categorical}
        types: list[Any] = [cats.get(c, "continuous") for c in data.X.columns]
        pb = {c: tuple(data.bounds[c]) for c in data.X.columns if c not in cats}
        model = DPExplainableBoostingClassifier(
            epsilon=epsilon, feature_types=types, privacy_bounds=pb, n_jobs=1, random_state=seed
        )
        return model, (lambda X: X.astype({c: str for c in cats}))
    raise ValueError(f"unknown peer {name!r}; one of {PEERS}")


def fit_score(name: str, epsilon: float, data: Any, train: np.ndarray, test: np.ndarray, seed: Any) -> float:
    """Test accuracy of model ``name`` (one of :data:`COMPARED`) fitted on ``train`` rows of ``data``.

    "tree_default" / "forest_default": our estimators at their defaults with
    the public schema; "majority": the training majority class.
    """
    import warnings

    if name == "majority":
        return majority_accuracy(data.y[train], data.y[test])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in ("tree_default", "forest_default"):
            from ..apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier

            cls = DPDecisionTreeClassifier if name == "tree_default" else DPRandomForestClassifier
            model = cls(epsilon=epsilon, random_state=seed, **data.estimator_kwargs())
            model.fit(data.X.iloc[train], data.y[train])
            return float(model.score(data.X.iloc[test], data.y[test]))
        peer, tf = make_peer(name, epsilon, data, seed)
        if name.startswith("diffprivlib"):
            classes = np.asarray(data.classes)
            codes = np.searchsorted(classes, data.y[train])
            peer.fit(tf(data.X.iloc[train]), codes)
            pred = classes[np.asarray(peer.predict(tf(data.X.iloc[test]))).astype(np.int64)]
            return float(np.mean(pred == data.y[test]))
        peer.fit(tf(data.X.iloc[train]), data.y[train])
        return float(np.mean(np.asarray(peer.predict(tf(data.X.iloc[test]))) == data.y[test]))
