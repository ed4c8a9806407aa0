"""PublicBoundsScaler: scale features by declared public bounds (a Pipeline step that learns nothing).

A scaler fitted on the training data (``MinMaxScaler``, ``StandardScaler``, ...)
learns the private min/max or mean/deviation: in
``Pipeline([MinMaxScaler(), DPDecisionTreeClassifier(bounds=[(0, 1)] * d)])``
the tree's "public" bounds are then the private data's extremes, and the
fitted model (the scaler's ``data_min_``, the cut points) releases them.
:class:`PublicBoundsScaler` maps every feature by public bounds
(lo_j, hi_j) declared in advance:

    z_j = (x_j - lo_j) / (hi_j - lo_j),   clipped to [0, 1] with ``clip_output=True``,

so its output lies in [0, 1] and ``bounds=(0, 1)`` of the next step is
public indeed.  ``fit`` records only the number of features (and their
names): the map is the same for every dataset, which makes it a
per-record function, and a per-record function applied before a DP
estimator keeps the estimator's guarantee (post-processing of the input
records: neighbours stay neighbours).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils import Tags
from sklearn.utils.validation import check_is_fitted, validate_data

from ..._params import BOOLEAN, Rule, validate_estimator
from ...typing import ArrayLike

__all__ = ["PublicBoundsScaler"]


def _bounds_rule(value: Any, name: str) -> Any:
    """A (lo, hi) pair or an (n_features, 2) array of finite numbers with lo < hi (the count is checked at fit)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a (lo, hi) pair or an array of shape (n_features, 2)") from None
    if arr.ndim not in (1, 2) or arr.shape[-1] != 2 or (arr.ndim == 1 and arr.shape != (2,)):
        raise ValueError(f"{name} must be a (lo, hi) pair or an array of shape (n_features, 2), got shape {arr.shape}")
    pairs = arr.reshape(-1, 2)
    if not (np.isfinite(pairs).all() and (pairs[:, 0] < pairs[:, 1]).all()):
        raise ValueError(f"PublicBoundsScaler: {name} must be finite with lo < hi for every feature")
    return value


def _bounds(bounds: Any, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) arrays of length ``n_features`` from a pair or an (n_features, 2) array."""
    if bounds is None:
        raise ValueError("PublicBoundsScaler: bounds must be given (public (lo, hi), declared before seeing the data)")
    try:
        arr = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "PublicBoundsScaler: bounds must be a (lo, hi) pair or an array of shape (n_features, 2)"
        ) from None
    if arr.shape == (2,):
        arr = np.broadcast_to(arr, (n_features, 2))
    if arr.shape != (n_features, 2):
        raise ValueError(
            f"PublicBoundsScaler: bounds must be a (lo, hi) pair or an array of shape ({n_features}, 2), "
            f"got shape {arr.shape}"
        )
    lo, hi = arr[:, 0].copy(), arr[:, 1].copy()
    if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo < hi).all()):
        raise ValueError("PublicBoundsScaler: bounds must be finite with lo < hi for every feature")
    return lo, hi


class PublicBoundsScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale every feature to [0, 1] by declared public bounds: z = (x - lo) / (hi - lo), clipped.

    The map depends on the declared bounds only, never on the training data
    (``fit`` records the number of features and their names, nothing else),
    so the next step's ``bounds=(0, 1)`` is public and a DP estimator after
    it keeps its guarantee (the scaler is a fixed per-record function:
    neighbouring datasets stay neighbouring, add/remove or replace).

    Parameters
    ----------
    bounds : (lo, hi) pair or array-like of shape (n_features, 2)
        Public bounds of every feature (one pair for all, or one per
        feature), finite with lo < hi, declared before seeing the data.
    clip_output : bool, default=True
        Clip the output to [0, 1] (values outside the bounds go to the
        nearest end, as the DP estimators' ``on_out_of_bounds="clip"`` does).

    Attributes
    ----------
    n_features_in_ : int
        The number of features (the only thing ``fit`` records, with
        ``feature_names_in_`` for a DataFrame).
    lower_, upper_ : ndarray of shape (n_features_in_,)
        The declared bounds, one per feature (public).

    Notes
    -----
    Safe before a DP estimator: this scaler, fixed encodings of public
    categories, and any per-record function that does not look at other
    records.  Not safe: scalers and encoders fitted on the private data
    (``MinMaxScaler``, ``StandardScaler``, ``RobustScaler``,
    ``QuantileTransformer``, ``KBinsDiscretizer``, ``OneHotEncoder`` with
    ``categories="auto"``, imputers with a learned fill value): their
    learned parameters are released with the pipeline and shape what the
    estimator sees.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.trees import PublicBoundsScaler
    >>> PublicBoundsScaler(bounds=[(0, 10), (-1, 1)]).fit_transform(np.array([[5.0, 0.0], [12.0, -1.0]]))
    array([[0.5, 0.5],
           [1. , 0. ]])
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "bounds": Rule(
            "a (lo, hi) pair or an (n_features, 2) array, finite with lo < hi", check=_bounds_rule, none=True
        ),
        "clip_output": BOOLEAN,
    }

    def __init__(self, bounds: ArrayLike | None = None, *, clip_output: bool = True) -> None:
        self.bounds = bounds
        self.clip_output = clip_output

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def fit(self, X: ArrayLike, y: object = None) -> PublicBoundsScaler:
        """Record the number of features (and names) and check the bounds against it; nothing else.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite numbers (only its shape and column names are read).
        y : ignored
            Accepted for Pipeline compatibility.

        Returns
        -------
        PublicBoundsScaler
            The scaler (``n_features_in_``, ``lower_``, ``upper_``).
        """
        validate_estimator(self, self._parameter_constraints)
        arr: np.ndarray = validate_data(self, X, reset=True, dtype=[np.float64, np.float32])
        self.lower_, self.upper_ = _bounds(self.bounds, arr.shape[1])
        return self

    def _fitted_data(self, X: ArrayLike) -> np.ndarray:
        """X checked against the fit (float64 or float32, the fitted number of features)."""
        check_is_fitted(self, ("lower_", "upper_"))
        arr: np.ndarray = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return arr

    def transform(self, X: ArrayLike) -> np.ndarray:
        """(X - lo) / (hi - lo) per feature, clipped to [0, 1] when ``clip_output``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Finite numbers.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            The scaled features (float32 input stays float32).
        """
        arr = self._fitted_data(X)
        Z = (arr - self.lower_.astype(arr.dtype)) / (self.upper_ - self.lower_).astype(arr.dtype)
        return np.clip(Z, 0.0, 1.0) if self.clip_output else Z

    def inverse_transform(self, X: ArrayLike) -> np.ndarray:
        """The original scale: lo + Z (hi - lo) per feature (clipped values come back at the bounds).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Scaled features.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            The features on the original scale.
        """
        arr = self._fitted_data(X)
        return arr * (self.upper_ - self.lower_).astype(arr.dtype) + self.lower_.astype(arr.dtype)
