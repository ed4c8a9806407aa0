"""Public feature schema, encoding and bounds shared by the tree and forest estimators.

Inputs (both estimators)
------------------------
* ``bounds``: public (lo, hi) of the continuous features: a pair of scalars
  (all features), a dict {feature index or column name: (lo, hi)}, or an
  array of shape (n_continuous, 2) or (n_features, 2).  Continuous features
  without bounds get the training data's min/max (as diffprivlib does): that
  leaks.  Training values outside public bounds are clamped to them
  (``on_out_of_bounds="clip"``, the default: silently, nothing recorded).
* Categorical features: ``bool`` columns (domain {False, True}), pandas
  ``category`` columns, object/string columns and the features listed in
  ``categorical_features`` (indices, names, a boolean mask, or a dict
  {feature: categories} giving the public domain).  A domain that is not
  declared in ``categorical_features`` is inferred -- from the values
  (object columns) or from the pandas dtype's categories, which
  ``astype("category")`` builds from the data, so one added record with a new
  value changes the released structure.  A training record whose category
  lies outside a declared domain is dropped (``on_out_of_bounds="clip"``).
* ``classes``: the public class labels.  If None they are inferred from y
  (the set of labels present leaks).  A training record whose label is not
  in ``classes`` is dropped (``on_out_of_bounds="clip"``).
* ``on_out_of_bounds="raise"`` (opt-in, **not private**: whether the fit
  raises tells whether some record lies outside the schema) raises a
  ``ValueError`` naming the features (never their values) instead.
* Whatever is inferred from the data is listed in :attr:`Schema.inferred`;
  the estimators then warn once and claim no guarantee (epsilon = inf).
* NaN / inf in X is a ValueError.  At prediction time an unseen category gets
  code -1 (each estimator documents what it does with it).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d, validate_data

from ... import _validation

__all__ = ["Schema", "bin_codes", "encode_fit", "encode_training", "encode_transform", "encode_y", "few"]

#: What the estimators do with training values outside the public schema (see the module docstring):
#: the library-wide choices of ``on_out_of_bounds``.
OUT_OF_BOUNDS = _validation.OUT_OF_BOUNDS


def bin_codes(Xc: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bin codes over the public [lo, hi]; values outside go to the first/last bin."""
    z = (Xc - lo) * (n_bins / (hi - lo))
    np.clip(z, 0, n_bins - 1, out=z)  # then truncation is the floor
    return z.astype(np.int64)


def is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


@dataclass
class Schema:
    """Fitted description of the (public) feature space."""

    n_features: int
    is_cat: np.ndarray  # (p,) bool
    cont: np.ndarray  # indices of continuous features
    cat: np.ndarray  # indices of categorical features
    lo: np.ndarray  # (m_c,) public lower bounds
    hi: np.ndarray  # (m_c,) public upper bounds
    categories: list  # m_k public domains (1-D arrays)
    inferred: list[str] = field(default_factory=list)  # what was taken from the training data (leaks)
    names: list | None = None  # column names of a DataFrame input (public: the schema's)

    @property
    def n_categories(self) -> np.ndarray:
        return np.array([len(c) for c in self.categories], dtype=np.int64)

    def label(self, j: int) -> Any:
        """Feature ``j`` as messages name it: its column name, else its index."""
        return _label(j, self.names)


def _label(j: int, names: list | None) -> Any:
    return names[j] if names is not None else int(j)


def _feature_index(key: Any, names: list | None, p: int, what: str) -> int:
    if isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)):
        j = int(key)
        if not -p <= j < p:
            raise ValueError(f"{what}: feature index {j} out of range for {p} features")
        return j % p
    if names is not None and key in names:
        return names.index(key)
    raise ValueError(f"{what}: unknown feature {key!r}")


def _resolve_categorical(categorical_features: Any, names: list | None, p: int) -> dict:
    """categorical_features -> {feature index: public categories or None}."""
    if categorical_features is None:
        return {}
    if isinstance(categorical_features, dict):
        return {_feature_index(k, names, p, "categorical_features"): v for k, v in categorical_features.items()}
    if isinstance(categorical_features, str):
        categorical_features = [categorical_features]
    arr = np.asarray(categorical_features)
    if arr.dtype == bool:
        if arr.shape != (p,):
            raise ValueError(f"categorical_features as a boolean mask must have length {p}, got {arr.shape}")
        return {int(j): None for j in np.flatnonzero(arr)}
    return {_feature_index(k, names, p, "categorical_features"): None for k in list(categorical_features)}


def _resolve_bounds(bounds: Any, cont: np.ndarray, names: list | None, p: int) -> list:
    """Bounds -> list over continuous features of (lo, hi) or None (infer)."""
    m_c = cont.size
    if bounds is None:
        return [None] * m_c
    if isinstance(bounds, dict):
        resolved = {_feature_index(k, names, p, "bounds"): v for k, v in bounds.items()}
        return [resolved.get(int(j)) for j in cont]
    arr = np.asarray(bounds, dtype=np.float64)
    if arr.shape == (2,):
        return [tuple(arr)] * m_c
    if arr.ndim == 2 and arr.shape[1] == 2 and arr.shape[0] in (m_c, p):
        rows = arr if arr.shape[0] == m_c else arr[cont]
        return [tuple(r) for r in rows]
    shapes = f"({p}, 2)" if m_c == p else f"({m_c}, 2) or ({p}, 2)"
    raise ValueError(
        f"bounds must be a (lo, hi) pair, a dict {{feature: (lo, hi)}} or an array of shape {shapes}; "
        f"got shape {arr.shape}"
    )


def _check_pair(b: Any, j: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in b)
    except (TypeError, ValueError):
        raise ValueError(f"bounds for feature {j!r} must be a (lo, hi) pair of numbers, got {b!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds for feature {j!r} must be finite with lo < hi, got ({lo}, {hi})")
    return lo, hi


def _codes(values: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Index of each value in the public domain, -1 if absent."""
    import pandas as pd  # the ml extra's; imported when used

    return np.asarray(pd.Index(categories).get_indexer(values), dtype=np.int64)


def _infer_categories(values: np.ndarray) -> np.ndarray:
    try:
        return np.unique(values)
    except TypeError:  # unorderable mix of types: order of appearance
        import pandas as pd

        return np.asarray(pd.unique(values), dtype=object)


def _columns(estimator: Any, X: Any, reset: bool) -> tuple[list, list, int, int]:
    """Validated columns of X: (list of 1-D arrays, per-column declared categories or None, n, p)."""
    if is_dataframe(X):
        import pandas as pd

        n, p = X.shape
        if n < 1:
            raise ValueError(f"Found array with {n} sample(s) (shape={X.shape}) while a minimum of 1 is required.")
        if p < 1:
            raise ValueError(f"Found array with {p} feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        cols: list = []
        declared: list[Any] = []
        for j in range(p):
            s = X.iloc[:, j]
            if s.isna().any():
                raise ValueError("Input X contains NaN.")
            dtype = s.dtype
            if isinstance(dtype, pd.CategoricalDtype):
                cols.append(np.asarray(s.astype(object)))
                declared.append(np.asarray(dtype.categories))
            elif pd.api.types.is_bool_dtype(dtype):
                cols.append(s.to_numpy(dtype=bool))
                declared.append(np.array([False, True]))
            elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
                v = s.to_numpy(dtype=np.float64)
                if not np.isfinite(v).all():
                    raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
                cols.append(v)
                declared.append(None)
            elif pd.api.types.is_complex_dtype(dtype):
                raise ValueError("Complex data not supported")
            else:  # object / string: categorical with a domain to be declared or inferred
                cols.append(np.asarray(s.astype(object)))
                declared.append("object")
        return cols, declared, n, p
    Xa = check_array(X, dtype=np.float64, ensure_all_finite=True, estimator=estimator)
    validate_data(estimator, Xa, reset=reset, skip_check_array=True)
    n, p = Xa.shape
    return _ArrayColumns(Xa), [None] * p, n, p


class _ArrayColumns(list):
    """The columns of a 2-D float array (indexable like a list of columns, keeps the array)."""

    def __init__(self, a: np.ndarray) -> None:
        super().__init__(a[:, j] for j in range(a.shape[1]))
        self.array = a


def _stack(cols: list, idx: np.ndarray, n: int) -> np.ndarray:
    if not idx.size:
        return np.empty((n, 0))
    if isinstance(cols, _ArrayColumns):
        return cols.array if idx.size == cols.array.shape[1] else cols.array[:, idx]
    return np.column_stack([cols[j] for j in idx]).astype(np.float64, copy=False)


def encode_fit(estimator: Any, X: Any, bounds: Any, categorical_features: Any) -> tuple[Schema, np.ndarray, np.ndarray]:
    """Fit the public feature schema; returns (schema, continuous values (n, m_c), categorical codes (n, m_k)).

    The values are as given (not clamped) and a category outside its domain
    has code -1: :func:`encode_training` applies ``on_out_of_bounds``.
    """
    cols, declared, n, p = _columns(estimator, X, reset=True)
    names = list(X.columns) if is_dataframe(X) else None
    cat_spec = _resolve_categorical(categorical_features, names, p)
    is_cat = np.zeros(p, dtype=bool)
    categories: list = []
    leaked_cats: list = []
    leaked_dtype: list = []
    for j in range(p):
        if declared[j] is not None or j in cat_spec:
            is_cat[j] = True
            given = cat_spec.get(j)
            if given is not None:
                dom = np.asarray(list(given))
            elif declared[j] is not None and not isinstance(declared[j], str):
                dom = declared[j]
                if dom.dtype != bool:  # a pandas category dtype: its categories usually came from the data
                    leaked_dtype.append(names[j] if names is not None else j)
            else:
                dom = _infer_categories(cols[j])
                leaked_cats.append(names[j] if names is not None else j)
            if len(dom) < 1 or len(set(dom.tolist())) != len(dom):
                raise ValueError(f"the categories of feature {_label(j, names)!r} must be non-empty and distinct")
            categories.append(dom)
    cont = np.flatnonzero(~is_cat)
    cat = np.flatnonzero(is_cat)
    for j in cont.tolist():
        if cols[j].dtype == object:
            raise ValueError(f"feature {_label(j, names)!r} is not numeric: declare it in categorical_features")
    raw_bounds = _resolve_bounds(bounds, cont, names, p)
    lo, hi, leaked_bounds = np.empty(cont.size), np.empty(cont.size), []
    for i, j in enumerate(cont.tolist()):
        if raw_bounds[i] is None:
            v = cols[j]
            a, b = float(v.min()), float(v.max())
            if not a < b:
                a, b = a - 0.5, b + 0.5
            lo[i], hi[i] = a, b
            leaked_bounds.append(_label(j, names))
        else:
            lo[i], hi[i] = _check_pair(raw_bounds[i], _label(j, names))
    inferred: list[str] = []
    if leaked_bounds:
        inferred.append(f"the bounds of continuous features {few(leaked_bounds)} (the data's min/max)")
    if leaked_cats:
        inferred.append(f"the categories of features {few(leaked_cats)}")
    if leaked_dtype:
        inferred.append(
            f"the categories of the pandas 'category' columns {few(leaked_dtype)} (their dtype, "
            "which astype('category') builds from the data)"
        )
    Xc = _stack(cols, cont, n)
    schema = Schema(p, is_cat, cont, cat, lo, hi, categories, inferred, names)
    return schema, Xc, _cat_codes(cols, schema, n)


def _cat_codes(cols: list, schema: Schema, n: int) -> np.ndarray:
    Xk = np.empty((n, schema.cat.size), dtype=np.int64)
    for i, j in enumerate(schema.cat):
        Xk[:, i] = _codes(cols[j], schema.categories[i])
    return Xk


def encode_transform(estimator: Any, X: Any, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
    """Continuous values and categorical codes (-1 = unseen category) for prediction."""
    cols, _declared, n, _p = _columns(estimator, X, reset=False)
    for j in schema.cont:
        if cols[j].dtype == object:
            raise ValueError(f"feature {j} was continuous at fit time but is not numeric now")
    return _stack(cols, schema.cont, n), _cat_codes(cols, schema, n)


def encode_y(estimator: Any, y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, y codes); the classes are inferred from y when ``estimator.classes`` is None.

    A label outside ``classes`` has code -1 (:func:`encode_training` applies
    ``on_out_of_bounds``).  Errors name ``y`` and never show its values.
    """
    owner = type(estimator).__name__
    if y is None:
        raise ValueError(f"This {owner} estimator requires y to be passed, but the target y is None.")
    y = column_or_1d(y, warn=True)
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        raise ValueError("Input y contains NaN or infinity.")
    if y.shape[0] != n:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]")
    if y.dtype == object and any(v is None for v in y.tolist()):
        raise ValueError(f"{owner}: y contains None (missing labels); drop those records or give them a label")
    try:
        check_classification_targets(y)
        if estimator.classes is None:
            classes = np.unique(y)
        else:
            classes = np.unique(np.asarray(estimator.classes))
            if classes.size != len(estimator.classes):
                raise ValueError(f"{owner}: classes must be distinct")
    except TypeError:
        raise TypeError(
            f"{owner}: the labels in y (or classes) must be of one comparable type, e.g. all str or all int"
        ) from None
    return classes, _codes(y, classes)


def encode_training(
    estimator: Any, X: Any, y: Any, bounds: Any, categorical_features: Any
) -> tuple[Schema, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The training data on the public schema: (schema, Xc clamped, Xk, classes, y codes).

    ``estimator.on_out_of_bounds`` decides what happens to values outside the
    public schema (module docstring): "clip" clamps continuous values to the
    bounds and drops records whose category or label is outside its declared
    domain, silently; "raise" raises a ``ValueError`` naming the features
    (not private).
    """
    schema, Xc, Xk = encode_fit(estimator, X, bounds, categorical_features)
    classes, yc = encode_y(estimator, y, Xc.shape[0])
    owner = type(estimator).__name__
    if getattr(estimator, "on_out_of_bounds", "clip") == "raise":
        outside = (Xc < schema.lo) | (Xc > schema.hi)
        where = [schema.label(int(j)) for j in schema.cont[outside.any(axis=0)]]
        where += [schema.label(int(j)) for j in schema.cat[(Xk < 0).any(axis=0)]]
        if where or (yc < 0).any():
            what = f"features {few(where)}" if where else "y"
            raise ValueError(
                f"{owner}: training values of {what} lie outside the public bounds, categories or "
                "classes (on_out_of_bounds='raise'; this check is not private)"
            )
    keep = (Xk >= 0).all(axis=1) & (yc >= 0)
    if not keep.all():
        Xc, Xk, yc = Xc[keep], Xk[keep], yc[keep]
    return schema, np.clip(Xc, schema.lo, schema.hi), Xk, classes, yc


def few(items: list) -> str:
    """The first ten items of a list of feature names, for a message."""
    return f"{items[:10]}{'...' if len(items) > 10 else ''}"
