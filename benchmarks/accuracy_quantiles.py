"""Grid-free quantiles side by side with peers: single quantiles and nine deciles (one run).

Run by hand (peers are optional: each is used when importable)::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_quantiles.py \
        [--seeds 50] [--multi-seeds 20] [--quick]

The study on columns the project never used (``--study [--quick] [--seeds 10]``,
:mod:`_quantile_study`) needs its own environment with the peers and the data
packages: ``python -m venv V; V/bin/pip install -e . opendp statsmodels vega_datasets
"scikit-learn<1.7" diffprivlib`` (diffprivlib 0.6.6 needs scikit-learn < 1.7).

Data (public bounds chosen from what the column can be, not from the data):
adult age [0, 100], hours-per-week [0, 100], capital-gain [0, 100000]
(integers); gamma fLength [0, 400], fAlpha [0, 90] (floats); pendigits
input1 [0, 100] (integers); DPBench HEPTH / INCOME / PATENT histograms
expanded to records (the bin index of each record, [0, 4095]).  For every
(column, n in {1e3, 1e4}, seed) a subsample of n records is drawn without
replacement (``default_rng([column, n, seed])``, the same for every method);
the truth is ``numpy.quantile(sub, q, method="inverted_cdf")``.

Single quantiles, p in {10, 25, 50, 75, 90, 99}, eps in {0.1, 1, 10}:
* ours: ``private_quantile`` (integer outputs for the integer columns);
* Smith: the exponential mechanism over the intervals between raw sorted
  values, utility -|i - q n|, eps/2 (Smith 2011 as in dp_multiq's
  single-quantile / IndExp; written here from the paper) -- the law of
  diffprivlib 0.6.6 ``tools.quantile`` too (sampled only with --diffprivlib);
* OpenDP ``make_private_quantile`` (MaxDivergence, SymmetricDistance, scale
  found by ``binary_search_param``; candidates: the integers of the bounds,
  or a 10001-point grid for float columns);
* diffprivlib ``tools.quantile``.

Nine deciles (m = 9), same eps: ours (``private_quantiles`` default, and the
recursive method), JointExp as published (raw values, Delta = 2, Gillenwater,
Joseph & Kulesza 2021; sampled with the library's exact JointExp sampler) and
IndExp (nine Smith mechanisms at eps/9).

Ours and Smith: exact expected errors per subsample (closed forms); the
others one draw per subsample.  A cell is a win when ours' MAE <= every peer's MAE + 2 standard errors
of the difference (the noise tolerance); a sampled peer is compared with
ours sampled the same way (a sampled peer's 20 zero errors are no evidence
of a smaller expected error than ours' exact 1e-8).  Printed: the table, wins per eps,
the worst cells.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import quantile_pieces as QL
from dpselect.apps.quantiles._multi import joint_exp as J

PS = (10, 25, 50, 75, 90, 99)
EPSILONS = (0.1, 1.0, 10.0)
SIZES = (1000, 10_000)
DECILES = np.arange(1, 10) / 10
#: Columns holding exact expected errors (the others are sampled, one draw per subsample).
EXACT = ("ours", "Smith")


def load_columns(data_dir: Path) -> dict[str, tuple[np.ndarray, tuple[float, float], bool]]:
    """{name: (full column or histogram, bounds, is_histogram)}."""
    import pandas as pd

    cols: dict[str, tuple[np.ndarray, tuple[float, float], bool]] = {}
    adult = pd.read_parquet(data_dir / "adult" / "adult.parquet")
    cols["adult/age"] = (adult["age"].to_numpy(np.int64), (0, 100), False)
    cols["adult/hours"] = (adult["hours-per-week"].to_numpy(np.int64), (0, 100), False)
    cols["adult/capgain"] = (adult["capital-gain"].to_numpy(np.int64), (0, 100_000), False)
    gamma = pd.read_csv(data_dir / "gamma" / "gamma.csv")
    cols["gamma/fLength"] = (gamma["fLength"].to_numpy(np.float64), (0.0, 400.0), False)
    cols["gamma/fAlpha"] = (gamma["fAlpha"].to_numpy(np.float64), (0.0, 90.0), False)
    pen = pd.read_csv(data_dir / "pendigits" / "pendigits.csv")
    cols["pendigits/input1"] = (pen["input1"].to_numpy(np.int64), (0, 100), False)
    for name in ("HEPTH", "INCOME", "PATENT"):
        h = np.load(data_dir / "dpbench_1d" / f"{name}.n4096.npy").astype(np.int64)
        cols[f"dpbench/{name}"] = (h, (0, 4095), True)
    return cols


def subsample(col: np.ndarray, hist: bool, n: int, seed: list[int]) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if hist:
        counts = rng.multivariate_hypergeometric(col, n)
        return np.repeat(np.arange(col.size), counts).astype(np.int64)
    return rng.choice(col, size=n, replace=False)


# --------------------------------------------------------------------------- peers written here


def smith(x: np.ndarray, q: float, eps: float, bounds: tuple[float, float], gen: np.random.Generator) -> float:
    """Smith 2011: EM over intervals of the raw sorted values, utility -|i - q n|, weights exp(eps u / 2)."""
    z = np.concatenate(([bounds[0]], np.sort(np.asarray(x, np.float64)), [bounds[1]]))
    n = z.size - 2
    with np.errstate(divide="ignore"):
        logw = np.log(np.diff(z)) - 0.5 * eps * np.abs(np.arange(n + 1) - q * n)
    i = int(np.argmax(logw - np.log(-np.log(gen.random(n + 1)))))
    return float(z[i] + gen.random() * (z[i + 1] - z[i]))


def smith_expected_error(x: np.ndarray, q: float, eps: float, bounds: tuple[float, float], truth: float) -> float:
    """Exact E|Smith(x) - truth| (closed form per interval); diffprivlib 0.6.6's ``tools.quantile`` has this law."""
    z = np.concatenate(([bounds[0]], np.sort(np.asarray(x, np.float64)), [bounds[1]]))
    n = z.size - 2
    with np.errstate(divide="ignore"):
        logw = np.log(np.diff(z)) - 0.5 * eps * np.abs(np.arange(n + 1) - q * n)
    p = np.exp(logw - logw.max())
    p /= p.sum()
    pc = QL.Pieces(z[:-1], z[1:], z[:-1], z[:-1], logw, False)
    return float(np.dot(p, QL.abs_dev(pc, truth)))


def joint_exp_paper(
    x: np.ndarray, qs: np.ndarray, eps: float, bounds: tuple[float, float], gen: np.random.Generator
) -> np.ndarray:
    s = QL.check_sample(np.asarray(x, np.float64), bounds, integer=False)
    return J.sample_joint(s, qs, eps, "replace", gen, sensitivity=2.0)


def make_opendp() -> object | None:
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    cache: dict[tuple, object] = {}

    def release(x: np.ndarray, q: float, eps: float, bounds: tuple[float, float], integer: bool, gen) -> float:
        key = (bounds, integer, q, eps)
        if key not in cache:
            if integer:
                cands = list(range(int(bounds[0]), int(bounds[1]) + 1))
                dom = dp.vector_domain(dp.atom_domain(T=int))
            else:
                cands = [float(v) for v in np.linspace(bounds[0], bounds[1], 10001)]
                dom = dp.vector_domain(dp.atom_domain(T=float, nan=False))
            space = (dom, dp.symmetric_distance())

            def make(scale: float, space=space, cands=cands) -> object:
                return dp.m.make_private_quantile(*space, dp.max_divergence(), cands, q, scale)

            scale = dp.binary_search_param(make, d_in=1, d_out=eps)
            cache[key] = make(scale)
        meas = cache[key]
        data = [int(v) for v in x] if integer else [float(v) for v in x]
        return float(meas(data))  # type: ignore[operator]

    return release


def make_diffprivlib() -> object | None:
    try:
        from diffprivlib.tools import quantile
    except ImportError:
        return None

    def release(x: np.ndarray, q: float, eps: float, bounds: tuple[float, float], integer: bool, gen) -> float:
        try:
            return float(
                quantile(
                    np.asarray(x, np.float64), q, epsilon=eps, bounds=bounds, random_state=int(gen.integers(2**31))
                )
            )
        except RuntimeError:  # diffprivlib 0.6.6 fails (NaN probabilities) on some tied data at large eps
            return float("nan")

    return release


# --------------------------------------------------------------------------- the run


def mean_se(err: list[float] | np.ndarray) -> tuple[float, float]:
    e = np.asarray(err, dtype=np.float64)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(e.size)) if e.size > 1 else 0.0


def mae(est: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    return mean_se(np.abs(est - truth).reshape(est.shape[0], -1).mean(axis=1))


def run_single(cols, seeds: int, peers: dict) -> list[dict]:
    """Ours and Smith: exact expected errors per subsample; sampled peers: one draw per subsample."""
    rows = []
    for ci, (name, (col, bounds, hist)) in enumerate(cols.items()):
        integer = hist or np.issubdtype(col.dtype, np.integer)
        for n in SIZES:
            subs = [subsample(col, hist, n, [ci, n, s]) for s in range(seeds)]
            for p in PS:
                q = p / 100
                truth = np.array([np.quantile(x, q, method="inverted_cdf") for x in subs])
                for eps in EPSILONS:
                    gen = np.random.default_rng([ci, n, p, int(eps * 10)])
                    res = {
                        "ours": mean_se([Q.quantile_expected_error(x, q, eps, bounds=bounds) for x in subs]),
                        "ours~": mae(
                            np.array([Q.private_quantile(x, q, eps, bounds=bounds, rng=gen) for x in subs]), truth
                        ),
                        "Smith": mean_se([smith_expected_error(x, q, eps, bounds, t) for x, t in zip(subs, truth)]),
                    }
                    for pname, f in peers.items():
                        res[pname] = mae(np.array([f(x, q, eps, bounds, integer, gen) for x in subs]), truth)
                    rows.append({"col": name, "n": n, "p": p, "eps": eps, **res})
    return rows


def run_deciles(cols, seeds: int) -> list[dict]:
    rows = []
    for ci, (name, (col, bounds, hist)) in enumerate(cols.items()):
        for n in SIZES:
            subs = [subsample(col, hist, n, [ci, n, s]) for s in range(seeds)]
            truth = np.array([np.quantile(x, DECILES, method="inverted_cdf") for x in subs])
            for eps in EPSILONS:
                gen = np.random.default_rng([ci, n, int(eps * 10), 9])
                res = {
                    "ours": mae(
                        np.array([Q.private_quantiles(x, DECILES, eps, bounds=bounds, rng=gen) for x in subs]), truth
                    ),
                    "ours-rec": mae(
                        np.array(
                            [
                                Q.private_quantiles(x, DECILES, eps, bounds=bounds, rng=gen, method="recursive")
                                for x in subs
                            ]
                        ),
                        truth,
                    ),
                    "JointExp": mae(np.array([joint_exp_paper(x, DECILES, eps, bounds, gen) for x in subs]), truth),
                    "IndExp": mae(
                        np.array([[smith(x, q, eps / 9, bounds, gen) for q in DECILES] for x in subs]), truth
                    ),
                }
                rows.append({"col": name, "n": n, "p": "deciles", "eps": eps, **res})
    return rows


def report(rows: list[dict], peers: list[str], title: str) -> None:
    print(f"\n== {title}: MAE (mean over seeds) ==")
    names = ["ours", *[k for k in rows[0] if k not in ("col", "n", "p", "eps", "ours")]]
    print(f"{'column':18s} {'n':>6s} {'p':>7s} {'eps':>5s} " + " ".join(f"{k:>11s}" for k in names))
    wins: dict[float, list[int]] = {e: [0, 0] for e in EPSILONS}
    worst = []
    for r in rows:
        print(f"{r['col']:18s} {r['n']:6d} {r['p']!s:>7s} {r['eps']:5g} " + " ".join(f"{r[k][0]:11.4g}" for k in names))
        present = [k for k in peers if k in r and np.isfinite(r[k][0])]
        if not present:
            continue
        win = True
        for k in present:  # exact peers against ours' exact error, sampled ones against ours sampled
            m_o, se_o = r["ours" if k in EXACT or "ours~" not in r else "ours~"]
            win &= m_o <= r[k][0] + 2 * np.hypot(se_o, r[k][1])
        best = min(present, key=lambda k: r[k][0])
        m_o, m_b = r["ours"][0], r[best][0]
        wins[r["eps"]][0] += int(win)
        wins[r["eps"]][1] += 1
        worst.append(((m_o + 1e-12) / (m_b + 1e-12), r, best))
    total = [sum(w[0] for w in wins.values()), sum(w[1] for w in wins.values())]
    print(
        f"wins vs every one of {peers} (MAE <= peer + 2 SE; sampled peers vs ours sampled): "
        + ", ".join(f"eps={e:g}: {w[0]}/{w[1]}" for e, w in wins.items())
        + f"; total {total[0]}/{total[1]}"
    )
    worst.sort(key=lambda t: -t[0])
    print("worst cells (ours / best peer):")
    for ratio, r, best in worst[:6]:
        print(
            f"  {r['col']} n={r['n']} p={r['p']} eps={r['eps']:g}: {r['ours'][0]:.4g} vs {best} "
            f"{r[best][0]:.4g} ({ratio:.2f}x)"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--multi-seeds", type=int, default=20)
    ap.add_argument(
        "--diffprivlib",
        action="store_true",
        help="also sample diffprivlib (its law is Smith's, computed exactly anyway)",
    )
    ap.add_argument("--quick", action="store_true", help="three columns, 10 seeds")
    ap.add_argument("--single-only", action="store_true", help="skip the deciles")
    ap.add_argument(
        "--study",
        action="store_true",
        help="the 18-column study (ten unseen columns, tight and 100x loose bounds, n = 100..1e4, "
        "OpenDP / diffprivlib / Smith / JointExp, win rates by slice, bounds=None vs tight): "
        "benchmarks/_quantile_study.py; --seeds per cell (10 by default)",
    )
    args = ap.parse_args(argv)
    if args.study:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _quantile_study import main as study

        t0 = time.process_time()
        study(10 if args.seeds == 50 else args.seeds, args.quick)
        print(f"\nCPU time {time.process_time() - t0:.1f} s")
        return 0
    data_dir = Path(os.environ.get("DPSELECT_DATA", "/work/shared/data"))
    cols = load_columns(data_dir)
    if args.quick:
        cols = {k: cols[k] for k in ("adult/hours", "gamma/fLength", "dpbench/PATENT")}
        args.seeds, args.multi_seeds = 10, 5
    makers = [("OpenDP", make_opendp), ("diffprivlib", make_diffprivlib)][: 2 if args.diffprivlib else 1]
    peers = {k: f for k, f in ((k, m()) for k, m in makers) if f is not None}
    print(f"peers available: {['Smith', *peers]}; seeds {args.seeds} (single), {args.multi_seeds} (deciles)")
    t0 = time.process_time()
    single = run_single(cols, args.seeds, peers)
    report(single, ["Smith", *peers], "single quantiles")
    if not args.single_only:
        deciles = run_deciles(cols, args.multi_seeds)
        report(deciles, ["JointExp"], "nine deciles vs JointExp")
        report([{k: v for k, v in r.items() if k != "JointExp"} for r in deciles], ["IndExp"], "nine deciles vs IndExp")
    med = [r for r in single if r["p"] == 50 and "OpenDP" in r and r["col"] not in ("gamma/fLength", "gamma/fAlpha")]
    if med:
        report(med, ["OpenDP"], "integer medians vs OpenDP")
    print(f"\nCPU time {time.process_time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
