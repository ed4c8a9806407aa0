"""Records outside the public bounds change nothing observable (issue 30.5).

Default: clamped to the bounds (a per-record map, so neighbours stay neighbours and every
guarantee holds as stated), no exception, no data-dependent warning; the output for a dataset
with out-of-bounds records is the output for the clamped dataset (same seed, same draws).
``on_out_of_bounds="raise"`` is the curator's opt-in (documented as not private).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from _quantile_grid_laws import duff_mean_grid_law
from dpselect.apps import quantiles as M
from dpselect.apps import quantiles as mb
from dpselect.apps.quantiles import _order_stats as O
from dpselect.apps.quantiles._percentile import percentile as pct

B = (0.0, 10.0)
GRID = np.linspace(0.0, 10.0, 21)

RELEASES = {  # name -> f(x, rng, **kw): a release from data in B
    "duff_mean": lambda x, rng, **kw: M.duff_mean(x, 1.0, bounds=B, size=4, rng=rng, **kw),
    "duff_mean_float": lambda x, rng, **kw: M.duff_mean(x, 1.0, bounds=B, size=4, rng=rng, granularity=0, **kw),
    "duff_median": lambda x, rng, **kw: M.duff_median(x, 1.0, bounds=B, size=4, rng=rng, **kw),
    "duff_median_float": lambda x, rng, **kw: M.duff_median(x, 1.0, bounds=B, size=4, rng=rng, granularity=0, **kw),
    "smooth_sens_pure": lambda x, rng, **kw: mb.smooth_sens_pure(x, 1.0, bounds=B, size=4, rng=rng, **kw),
    "smooth_sens_approx": lambda x, rng, **kw: mb.smooth_sens_approx(
        x, 1.0, delta=1e-6, bounds=B, size=4, rng=rng, **kw
    ),
    "smooth_sens_paper": lambda x, rng, **kw: mb.smooth_sens_approx(
        x, 1.0, delta=1e-6, bounds=B, size=4, rng=rng, tuning="paper", **kw
    ),
    "laplace_ln": lambda x, rng, **kw: mb.laplace_ln(x, 1.0, bounds=B, size=4, rng=rng, **kw),
    "private_percentile": lambda x, rng, **kw: pct.private_percentile(x, 50, 1.0, GRID, rng=rng, **kw),
    "private_percentile_em": lambda x, rng, **kw: pct.private_percentile(
        x, 30, 1.0, GRID, mechanism="em", utility="indicator", rng=rng, **kw
    ),
}

LAWS = {  # data -> exact law / statistic (no randomness)
    "duff_mean_intervals": lambda x: np.asarray(M.duff_mean_intervals(x, 1.0, bounds=B)),
    "duff_mean_grid_law": lambda x: duff_mean_grid_law(x, 1.0, bounds=B)[2],
    "duff_median_intervals": lambda x: np.asarray(M.duff_median_intervals(x, 1.0, bounds=B)),
    "duff_median_error": lambda x: M.expected_absolute_error(x, 1.0, bounds=B),
    "smooth_sensitivity": lambda x: O.smooth_sensitivity_median(x, 0.5, bounds=B),
    "percentile_scores": lambda x: pct.percentile_problem(x, 50, GRID, utility="rank").scores,
    "expected_error_pure": lambda x: mb.expected_abs_error_smooth_sens_approx(x, 1.0, delta=1e-6, bounds=B),
}

X = [1.5, 2.0, 7.25, 3.0, 9.5]
OUTSIDE = [25.0, -3.0e5, 10.0 + 2.0**-40, -(2.0**-1074)]


def _run(f, *args, **kw):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = f(*args, **kw)
    return out, [(w.category, str(w.message)) for w in rec]


@pytest.mark.parametrize("name", sorted(RELEASES))
@pytest.mark.parametrize("z", OUTSIDE)
def test_release_neighbour_with_an_outside_record(name, z):
    f = RELEASES[name]
    y = [*X, z]
    _out_x, warn_x = _run(f, X, 3)
    out_y, warn_y = _run(f, y, 3)  # no exception
    assert warn_x == warn_y  # identical warnings (none, or the data-independent tuning warning)
    out_c, warn_c = _run(f, list(np.clip(y, *B)), 3)
    assert np.array_equal(out_y, out_c) and warn_c == warn_y  # the clamped dataset's release, draw for draw
    replaced = [z, *X[1:]]  # replace-one neighbour
    assert np.array_equal(_run(f, replaced, 4)[0], _run(f, list(np.clip(replaced, *B)), 4)[0])


@pytest.mark.parametrize("name", sorted(LAWS))
def test_laws_see_the_clamped_data(name):
    f = LAWS[name]
    for z in OUTSIDE:
        y = [*X, z]
        got, warn = _run(f, y)
        assert not warn
        assert np.array_equal(got, f(list(np.clip(y, *B))))


@pytest.mark.filterwarnings("ignore:tuning='paper'")
@pytest.mark.parametrize("name", sorted(RELEASES))
def test_raise_is_an_opt_in_and_quotes_no_value(name):
    f = RELEASES[name]
    msg = r"outside the bounds \[0, 10\] \(on_out_of_bounds='raise' is not private"
    with pytest.raises(ValueError, match=msg) as info:
        f([*X, 25.0], 0, on_out_of_bounds="raise")
    assert "25" not in str(info.value)
    f(X, 0, on_out_of_bounds="raise")  # in bounds: no error
    with pytest.raises(ValueError, match="on_out_of_bounds"):
        f(X, 0, on_out_of_bounds="ignore")


def test_raise_before_any_randomness():
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for name in ("duff_mean", "duff_median", "smooth_sens_pure", "private_percentile"):
        with pytest.raises(ValueError):
            RELEASES[name]([*X, -1.0], gen, on_out_of_bounds="raise")
    assert gen.bit_generator.state == state


def test_non_finite_records_are_still_bad_input():
    for name in ("duff_mean", "duff_median", "smooth_sens_pure", "private_percentile"):
        for bad in (np.nan, np.inf, -np.inf):
            with pytest.raises(ValueError, match=r"\bx\b"):
                RELEASES[name]([*X, bad], 0)
