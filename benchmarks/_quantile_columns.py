"""A broad collection of real columns for the quantile benchmarks (offline; never the study's reserve).

Columns from data bundled with statsmodels, vega_datasets and scikit-learn plus the project's own
(``DPSELECT_DATA``), each tagged integer (an integer dtype) or continuous; the benchmarks subsample
them (``subsample``) and compare exact expected errors.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np


def _sm() -> dict[str, np.ndarray]:
    import statsmodels.api as sm

    d = sm.datasets
    c: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = {
            "cpunish": ("EXECUTIONS", "i"),
            "ccard": ("AVGEXP", "f"),
            "engel": ("income", "f"),
            "fertility": ("1990", "f"),
            "grunfeld": ("invest", "f"),
            "longley": ("TOTEMP", "i"),
            "modechoice": ("ttme", "i"),
            "nile": ("volume", "i"),
            "scotland": ("COUTAX", "i"),
            "spector": ("GPA", "f"),
            "star98": ("LOWINC", "f"),
            "statecrime": ("murder", "f"),
            "strikes": ("duration", "i"),
            "sunspots": ("SUNACTIVITY", "f"),
            "elnino": ("JAN", "f"),
            "heart": ("survival", "i"),
            "stackloss": ("STACKLOSS", "i"),
            "copper": ("WORLDCONSUMPTION", "f"),
            "macrodata": ("realgdp", "f"),
            "china_smoking": ("smoking_yes", "i"),
        }
        extra = [("randhie", "income", "f"), ("fair", "age", "f"), ("fair", "yrs_married", "f")]
        for name, (col, kind) in [*spec.items(), *((e[0], e[1:]) for e in extra)]:
            try:
                df = getattr(d, name).load_pandas().data
                v = df[col].dropna().to_numpy(np.float64)
                c[f"sm/{name}.{col}"] = np.round(v).astype(np.int64) if kind == "i" else v
            except Exception:  # pragma: no cover - a dataset missing from this statsmodels
                continue
    return c


def _vega() -> dict[str, np.ndarray]:
    from vega_datasets import local_data as vd

    spec = [
        ("cars", "Weight_in_lbs", "i"),
        ("cars", "Miles_per_Gallon", "f"),
        ("cars", "Displacement", "f"),
        ("iris", "sepalLength", "f"),
        ("stocks", "price", "f"),
        ("barley", "yield", "f"),
        ("sp500", "price", "f"),
        ("airports", "latitude", "f"),
        ("seattle_weather", "wind", "f"),
        ("seattle_weather", "temp_max", "f"),
        ("burtin", "Penicillin", "f"),
        ("population", "people", "i"),
        ("unemployment_across_industries", "count", "i"),
        ("us_employment", "nonfarm", "f"),
        ("la_riots", "age", "i"),
        ("iowa_electricity", "net_generation", "i"),
        ("disasters", "Deaths", "i"),
    ]
    c: dict[str, np.ndarray] = {}
    for name, col, kind in spec:
        try:
            v = getattr(vd, name)()[col].dropna().to_numpy(np.float64)
        except Exception:  # pragma: no cover - not bundled offline
            continue
        c[f"vega/{name}.{col}"] = np.round(v).astype(np.int64) if kind == "i" else v
    return c


def _sk() -> dict[str, np.ndarray]:
    from sklearn import datasets as skd

    c: dict[str, np.ndarray] = {}
    w = skd.load_wine().data
    c["sk/wine.proline"] = w[:, 12].astype(np.int64)
    c["sk/wine.magnesium"] = w[:, 4].astype(np.int64)
    c["sk/wine.alcohol"] = w[:, 0].astype(np.float64)
    c["sk/diabetes.s1"] = skd.load_diabetes(scaled=False).data[:, 4].astype(np.int64)
    c["sk/diabetes.age"] = skd.load_diabetes(scaled=False).data[:, 0].astype(np.int64)
    c["sk/linnerud.weight"] = skd.load_linnerud().target[:, 0].astype(np.int64)
    c["sk/bc.texture"] = skd.load_breast_cancer().data[:, 1].astype(np.float64)
    c["sk/digits.px36"] = skd.load_digits().data[:, 36].astype(np.int64)
    return c


def _shipped(data_dir: Path) -> dict[str, np.ndarray]:
    import pandas as pd

    c: dict[str, np.ndarray] = {}
    ad = pd.read_parquet(data_dir / "adult" / "adult.parquet")
    c["adult/age"] = ad["age"].to_numpy(np.int64)
    c["adult/fnlwgt"] = ad["fnlwgt"].to_numpy(np.int64)
    c["adult/capgain"] = ad["capital-gain"].to_numpy(np.int64)
    g = pd.read_csv(data_dir / "gamma" / "gamma.csv")
    c["gamma/fAlpha"] = g["fAlpha"].to_numpy(np.float64)
    c["gamma/fSize"] = g["fSize"].to_numpy(np.float64)
    c["pendigits/input5"] = pd.read_csv(data_dir / "pendigits" / "pendigits.csv")["input5"].to_numpy(np.int64)
    for name in ("HEPTH", "INCOME"):
        p = data_dir / "dpbench_1d" / f"{name}.n4096.npy"
        if p.exists():
            h = np.load(p).astype(np.int64)
            c[f"dpbench/{name}"] = np.repeat(np.arange(h.size), h).astype(np.int64)
    return c


def columns(data_dir: Path | None = None) -> dict[str, np.ndarray]:
    """All columns, name -> 1-D array (int64 for integer columns, float64 otherwise)."""
    c = {**_sm(), **_vega(), **_sk()}
    if data_dir is not None and data_dir.exists():
        c.update(_shipped(data_dir))
    return {k: v for k, v in c.items() if v.size >= 50 and np.unique(v).size >= 3}


def ties(col: np.ndarray) -> str:
    """ "many" when the distinct values are fewer than a fifth of the records, else "few"."""
    return "many" if np.unique(col).size < 0.2 * col.size else "few"


def subsample(col: np.ndarray, n: int, seed: list[int]) -> np.ndarray:
    return np.random.default_rng(seed).choice(col, size=n, replace=n > col.size)
