"""Tabular datasets of the tree / forest reproductions.

``load(name, data_dir)`` returns a :class:`Tabular`: features (a pandas
DataFrame), labels, and the *public* schema the estimators need (categorical
domains, continuous bounds, classes).  Following the papers, the domains,
bounds and class sets are taken from the whole file and treated as public
knowledge (the papers' own assumption; documented in the reports).

* scikit-learn's bundled datasets (no download): ``breast_cancer``,
  ``digits``, ``wine``, ``iris`` -- the quick defaults;
* the real files under ``--data-dir`` (see shared/data/README.md):
  ``nltcs``, ``acs``, ``adult_clean`` (SNM greedy tree) and ``adult``,
  ``compas``, ``mushroom``, ``pendigits``, ``wall_following``,
  ``wine_quality``, ``gamma``, ``nursery`` (SNM random forest); ``br2000``,
  ``credit_approval`` (rows without "?"), ``pima_diabetes`` (MODPS).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._data import record_read, recording, require_file

__all__ = ["SKLEARN", "Tabular", "load", "load_all"]

SKLEARN = ("breast_cancer", "digits", "wine", "iris")


@dataclass(frozen=True)
class Tabular:
    name: str
    X: Any  # pandas DataFrame
    y: np.ndarray
    categorical: dict  # column name -> list of categories (public domain)
    bounds: dict  # column name -> (lo, hi) for continuous columns
    classes: list

    @property
    def n(self) -> int:
        return int(self.y.size)

    def estimator_kwargs(self) -> dict[str, Any]:
        out: dict[str, Any] = {"classes": self.classes}
        if self.categorical:
            out["categorical_features"] = dict(self.categorical)
        if self.bounds:
            out["bounds"] = dict(self.bounds)
        return out


def _schema(name: str, df: Any, y: Any, categorical_cols: list[str] | None = None) -> Tabular:
    import pandas as pd

    df = df.reset_index(drop=True)
    cats, bounds = {}, {}
    for col in df.columns:
        s = df[col]
        is_cat = (categorical_cols is not None and col in categorical_cols) or not pd.api.types.is_numeric_dtype(s)
        if is_cat:
            if pd.api.types.is_numeric_dtype(s):
                cats[col] = sorted(int(v) for v in s.unique())
            else:
                s = s.astype(str)
                df[col] = s
                cats[col] = sorted(s.unique().tolist())
        else:
            df[col] = s.astype(float)
            lo, hi = float(s.min()), float(s.max())
            bounds[col] = (lo, hi if hi > lo else lo + 1.0)
    y = np.asarray(y)
    if y.dtype.kind in "OUS" or y.dtype.kind == "T":
        y = y.astype(str)
    classes = sorted(np.unique(y).tolist())
    return Tabular(name, df, y, cats, bounds, classes)


def _sklearn(name: str) -> Tabular:
    import pandas as pd
    from sklearn import datasets

    loader = {
        "breast_cancer": datasets.load_breast_cancer,
        "digits": datasets.load_digits,
        "wine": datasets.load_wine,
        "iris": datasets.load_iris,
    }[name]
    bunch = loader()
    cols = [str(c) for c in getattr(bunch, "feature_names", range(bunch.data.shape[1]))]
    df = pd.DataFrame(bunch.data, columns=cols)
    tab = _schema(name, df, bunch.target.astype(int))
    if name == "digits":  # pixel intensities: the public range is [0, 16]
        tab = Tabular(tab.name, tab.X, tab.y, tab.categorical, {c: (0.0, 16.0) for c in cols}, tab.classes)
    return tab


def _normalise_columns(df: Any) -> Any:
    df = df.copy()
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _real(name: str, data_dir: Path) -> Tabular:
    import pandas as pd

    if name in ("nltcs", "acs"):
        path = require_file(data_dir, f"{name}/{name}.csv", what=name.upper())
        df = _normalise_columns(pd.read_csv(path))
        label = {"nltcs": "15", "acs": "22"}[name]
        y = df.pop(label).to_numpy()
        return _schema(name, df, y, categorical_cols=list(df.columns))
    if name in ("adult_clean", "adult"):
        path = require_file(data_dir, f"adult/{name}.parquet", what=f"Adult ({name}.parquet)")
        try:
            df = pd.read_parquet(path)
        except ImportError as exc:
            raise RuntimeError(f"reading {path} needs pyarrow (pip install pyarrow): {exc}") from None
        df = _normalise_columns(df)
        for drop in ("index", "fnlwgt", "education") if name == "adult" else ("index",):
            if drop in df.columns:
                df = df.drop(columns=drop)
        y = df.pop("income").astype(str).str.replace(".", "", regex=False).to_numpy()
        return _schema(name, df, y)
    if name == "br2000":  # MODPS: tab-separated integer codes, domain file "C lo hi" / "D ..." per column
        path = require_file(data_dir, "br2000/br2000.dat", what="BR2000")
        kinds = [line.split()[0] for line in (path.parent / "br2000.domain").read_text().splitlines() if line.strip()]
        df = pd.read_csv(path, sep="\t", header=None)
        df.columns = [str(c) for c in df.columns]
        y = df.pop(df.columns[-1]).to_numpy()
        return _schema(name, df, y, categorical_cols=[c for c, k in zip(df.columns, kinds) if k == "D"])
    if name == "credit_approval":  # UCI Credit Approval without the rows holding "?"; label: last column
        path = require_file(data_dir, "credit_approval/credit.data.nonan.csv", what="Credit Approval")
        df = pd.read_csv(path, header=None, skipinitialspace=True)
        df.columns = [f"a{j + 1}" for j in range(df.shape[1])]
        for c in df.columns:
            if df[c].dtype == object:
                df[c] = df[c].astype(str).str.strip()
        y = df.pop("a16").to_numpy()
        numeric = ("a2", "a3", "a8", "a11", "a14", "a15")
        for c in numeric:
            df[c] = pd.to_numeric(df[c])
        return _schema(name, df, y, categorical_cols=[c for c in df.columns if c not in numeric])
    spec = {
        "gamma": ("gamma/gamma.csv", "class", ("index",)),
        "nursery": ("nursery/nursery.csv", "final evaluation", ()),
        "pima_diabetes": ("pima_diabetes/diabetes.csv", "Outcome", ()),
        "compas": ("compas/compass.csv", "decile_score", ()),
        "mushroom": ("mushroom/mushroom.csv", "class", ()),
        "pendigits": ("pendigits/pendigits.csv", "class", ("index",)),
        "wall_following": ("wall_following/wallsensor.csv", "class", ()),
        "wine_quality": ("wine/wine.csv", "quality", ()),
    }
    if name not in spec:
        raise ValueError(f"unknown dataset {name!r}")
    rel, label, drops = spec[name]
    path = require_file(data_dir, rel, what=name)
    df = _normalise_columns(pd.read_csv(path))
    df = df.drop(columns=[d for d in drops if d in df.columns])
    y = df.pop(label).astype(str).to_numpy()
    return _schema(name, df, y)


def load(name: str, data_dir: str | None) -> Tabular:
    """A dataset by name: scikit-learn's bundled ones whatever ``data_dir`` (they never come from it).

    Parsed once per process; every call reports the files behind it to the open
    ``recording`` blocks, so a cached read still appears in the reports' data line.
    """
    table, files = _load_cached(name, data_dir)
    record_read(*files)
    return table


@functools.lru_cache(maxsize=16)
def _load_cached(name: str, data_dir: str | None) -> tuple[Tabular, tuple[Path, ...]]:
    if name in SKLEARN:
        return _sklearn(name), ()
    if data_dir is None:
        require_file(None, what=name)  # raises: the real datasets need a data directory
        raise ValueError(f"dataset {name!r} needs a data directory")
    with recording() as files:
        table = _real(name, Path(data_dir))
    return table, tuple(files)


def load_all(names: Iterable[str], data_dir: Path | None) -> str | None:
    """Load every dataset now (a missing file fails in the client, not on a worker); ``data_dir`` as tasks carry it."""
    ddir = str(data_dir) if data_dir is not None else None
    for name in names:
        load(name, ddir)
    return ddir
