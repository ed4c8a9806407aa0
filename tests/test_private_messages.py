"""No error message or warning quotes a value computed from the data (issue 30.5).

Every message is a release.  Each case below is a bad call of a data-facing API made twice,
on two datasets (or two data-derived values: a smooth sensitivity, a distance to instability,
a statistic) carrying distinctive numbers: the two calls must fail with the *same* message,
and no message may contain any of the distinctive numbers (in any common formatting).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import dpselect
from dpselect import PrivateSensitivityBound, SelectionProblem, SmoothPrivateSelection, SmoothSensitivityRelease
from dpselect.apps import quantiles as Q
from dpselect.apps import quantiles as mb
from dpselect.apps.counts import propose_test_release
from dpselect.apps.quantiles import _order_stats as O
from dpselect.noise.exact import discrete_laplace, sample_snapped_atan

D1 = (987654.321, 31415.9265, 2718.28183, 0.0123456789)
D2 = (876543.219, 27182.8183, 1414.21356, 0.0234567891)


def _forms(v: float) -> set[str]:
    return {repr(v), str(v), f"{v:g}", f"{v:.6g}", f"{v:.3g}", f"{v:.4g}", repr(-v), f"{-v:g}", f"{-v:.6g}"}


FORBIDDEN = set().union(*(_forms(v) for v in D1 + D2)) - {"0.0123", "0.0235"}  # too short to be distinctive


def _problem_with_bound(s):
    return SelectionProblem([1.0, 0.5], local_sensitivity=0.5, smooth_bound=lambda _b: s)


CASES = {  # name -> f(d): a bad call whose only variable part is the private data d = D1 or D2
    "release: negative S(x)": lambda d: SmoothSensitivityRelease(1.0).release(d[0], -d[1], rng=0),
    "release: NaN S(x)": lambda d: SmoothSensitivityRelease(1.0).release(d[0], math.nan, rng=0),
    "release: inf S(x)": lambda d: SmoothSensitivityRelease(1.0).release(d[0], math.inf, rng=0),
    "release: callable S(x) < 0": lambda d: SmoothSensitivityRelease(1.0).release(d[0], lambda b: -d[1] * b, rng=0),
    "release: inf statistic": lambda d: SmoothSensitivityRelease(1.0).release(math.inf, d[1], rng=0),
    "release laplace: negative S(x)": lambda d: SmoothSensitivityRelease(1.0, 1e-6, noise="laplace").release(
        d[0], -d[2], rng=0
    ),
    "exact t3: negative scale": lambda d: sample_snapped_atan("t3", d[0], -d[1], 0.5, 2, rng=0),
    "exact t3: inf value": lambda d: sample_snapped_atan("t3", math.inf, d[1], 0.5, 2, rng=0),
    "discrete Laplace: negative scale": lambda d: discrete_laplace(-d[1], rng=0),
    "PTR: negative distance": lambda d: propose_test_release(d[0], -d[1], bound=d[2], epsilon=1.0, delta=1e-3, rng=0),
    "PTR: negative bound": lambda d: propose_test_release(d[0], d[1], bound=-d[2], epsilon=1.0, delta=1e-3, rng=0),
    "PTR: NaN value": lambda d: propose_test_release(math.nan, d[1], bound=d[2], epsilon=1.0, delta=1e-3, rng=0),
    "sensitivity bound: negative S": lambda d: PrivateSensitivityBound(
        0.5, 1.0, delta=1e-6
    ).conditional_log_probabilities(SelectionProblem([d[0], d[1]]), -d[2]),
    "problem: negative local sensitivity": lambda d: SelectionProblem([d[0], d[1]], local_sensitivity=-d[2]),
    "problem: negative smooth bound": lambda d: _problem_with_bound(-d[1]).smooth_sensitivity(0.1),
    "problem: beta above beta_max": lambda d: SelectionProblem(
        [1.0, 0.5], local_sensitivity=0.5, beta_max=d[3]
    ).smooth_sensitivity(0.5),
    "SPS: l above beta_max": lambda d: SmoothPrivateSelection(1.0, l=50.0).select(
        SelectionProblem([1.0, 0.5], local_sensitivity=0.5, beta_max=d[3]), rng=0
    ),
    "duff_mean: NaN record": lambda d: Q.duff_mean([d[0], math.nan], 1.0, bounds=(0.0, 1e6), rng=0),
    "duff_mean: inf record": lambda d: Q.duff_mean([d[0], -math.inf], 1.0, bounds=(0.0, 1e6), rng=0),
    "duff_mean: outside, raise": lambda d: Q.duff_mean(
        [d[0], d[1] * 1e3], 1.0, bounds=(0.0, 1e6), rng=0, on_out_of_bounds="raise"
    ),
    "duff_median: outside, raise": lambda d: Q.duff_median(
        [d[0], -d[1]], 1.0, bounds=(0.0, 1e6), rng=0, on_out_of_bounds="raise"
    ),
    "duff_median: NaN target": lambda d: Q.quantile_expected_error(
        [d[0], d[1]], 0.5, 1.0, bounds=(0.0, 1e6), target=math.nan, granularity=0
    ),
    "median baseline: outside, raise": lambda d: mb.smooth_sens_pure(
        [d[0], -d[1]], 1.0, bounds=(0.0, 1e6), on_out_of_bounds="raise"
    ),
    "smooth sensitivity: index >= n": lambda d: O.smooth_sensitivity_quantile(list(d), 1.0, bounds=(0.0, 1e6), index=7),
    "percentile: outside, raise": lambda d: Q.private_percentile(
        [d[0], -d[1]], 50, 1.0, np.linspace(0, 1e6, 11), rng=0, on_out_of_bounds="raise"
    ),
    "percentile: NaN record": lambda d: Q.private_percentile([d[0], math.nan], 50, 1.0, np.linspace(0, 1e6, 11), rng=0),
    "percentile loss: NaN true value": lambda d: Q.absolute_error_loss(np.linspace(0, 1e6, 11), math.nan * d[0]),
    "EM: NaN score": lambda d: dpselect.ExponentialMechanism(1.0).select(SelectionProblem([d[0], math.nan]), rng=0),
    "EM: inf score": lambda d: dpselect.ExponentialMechanism(1.0).select(SelectionProblem([d[0], math.inf]), rng=0),
}


def _message(f, d):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            f(d)
        except (ValueError, TypeError, OverflowError) as exc:
            err = f"{type(exc).__name__}: {exc}"
        else:
            err = None
    return err, [str(w.message) for w in rec]


@pytest.mark.parametrize("name", sorted(CASES))
def test_messages_quote_no_data_value(name):
    e1, w1 = _message(CASES[name], D1)
    e2, w2 = _message(CASES[name], D2)
    assert e1 is not None, "the bad call must fail"
    assert (e1, w1) == (e2, w2)  # the same message whatever the data
    for text in [e1, *w1]:
        numbers = set(re.findall(r"-?\d[\d.e+-]*", text))
        assert not numbers & FORBIDDEN, text
        assert not any(f in text for f in FORBIDDEN), text


def test_negative_control_an_echoing_message_is_caught():
    # the pre-issue-30 message "sensitivity must be > 0, got -987654.321" differs between datasets
    def echo(d):
        raise ValueError(f"sensitivity must be > 0, got {-d[0]!r}")

    e1, _ = _message(echo, D1)
    e2, _ = _message(echo, D2)
    assert e1 != e2 and any(f in e1 for f in FORBIDDEN)
