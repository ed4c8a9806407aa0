"""The public surface (issue #13 items 4, 7, 8, 9, 10): one vocabulary, keyword-only options, lazy subpackages."""

from __future__ import annotations

import inspect
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dpselect
from dpselect._validation import check_counts, check_random_state
from dpselect.mechanisms import Mechanism, make_mechanism


def test_subpackages_reachable_after_import_dpselect():
    code = (
        "import sys, dpselect; assert 'dpselect.apps' not in sys.modules and 'sklearn' not in sys.modules; "
        "print(dpselect.apps.counts.__name__, dpselect.apps.quantiles.__name__, "
        "dpselect.analysis.accuracy.__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": ":".join(sys.path)}
    )
    assert out.stdout.split() == ["dpselect.apps.counts", "dpselect.apps.quantiles", "accuracy"]
    with pytest.raises(AttributeError, match="nope"):
        dpselect.nope  # noqa: B018


def test_release_is_exported_apart_from_the_mechanisms():
    assert not issubclass(dpselect.SmoothSensitivityRelease, Mechanism)
    assert "not a selection mechanism" in dpselect.SmoothSensitivityRelease.__doc__.splitlines()[0]
    for name in ("SmoothNoisyMax", "SmoothPrivateSelection", "LocalDampening", "PrivateSensitivityBound"):
        assert issubclass(getattr(dpselect, name), Mechanism)


def test_every_mechanism_constructs_with_its_defaults():
    p = dpselect.SelectionProblem([3.0, 1.0, 0.0], local_sensitivity=0.5)
    for cls in (
        dpselect.ExponentialMechanism,
        dpselect.PermuteAndFlip,
        dpselect.ReportNoisyMax,
        dpselect.SmoothNoisyMax,
        dpselect.SmoothPrivateSelection,
        dpselect.LocalDampening,
    ):
        mech = cls(1.0)
        assert mech.privacy(p).delta == 0.0  # the defaults are pure
        assert mech.probabilities(p).sum() == pytest.approx(1.0)
    assert dpselect.SmoothSensitivityRelease(1.0).privacy().delta == 0.0
    assert dpselect.PrivateSensitivityBound(0.5, 1.0).privacy(p).delta == 1e-6


def test_make_mechanism_never_drops_delta_silently():
    with pytest.warns(UserWarning, match="delta=0.5 is not used: 'em' is pure"):
        mech = make_mechanism("em", 1.0, delta=0.5)
    assert mech.privacy(dpselect.SelectionProblem([1.0, 0.0])).delta == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_mechanism("em", 1.0)  # no delta: no warning
        assert make_mechanism("snm_laplace", 1.0, 1e-6).delta == 1e-6
    with pytest.raises(ValueError, match="delta"):
        make_mechanism("snm_laplace", 1.0)  # approximate DP needs a delta > 0


def test_keyword_only_options():
    """After the first one or two positional arguments, options are keyword-only."""

    def kinds(fn):
        return {n: p.kind for n, p in inspect.signature(fn).parameters.items()}

    kw = inspect.Parameter.KEYWORD_ONLY
    assert kinds(dpselect.SmoothSensitivityRelease.release)["rng"] == kw
    assert kinds(dpselect.SmoothSensitivityRelease.release)["size"] == kw
    assert kinds(dpselect.PrivateSensitivityBound)["delta"] == kw
    assert kinds(dpselect.SmoothNoisyMax)["noise"] == kw
    assert kinds(dpselect.SmoothPrivateSelection)["gamma"] == kw
    assert kinds(dpselect.SmoothSensitivityRelease)["noise"] == kw
    rel = dpselect.SmoothSensitivityRelease(1.0)
    with pytest.raises(TypeError):
        rel.release(1.0, 0.5, 0)  # rng must be named
    problem = dpselect.SelectionProblem([3.0, 1.0, 2.0])
    for mech in (
        dpselect.PermuteAndFlip(1.0),
        dpselect.ExponentialMechanism(1.0),
        dpselect.SmoothNoisyMax(1.0),
        dpselect.SmoothPrivateSelection(1.0),
        dpselect.LocalDampening(1.0),
        dpselect.PrivateSensitivityBound(0.5, 0.5),
    ):
        for name in ("size", "rng"):
            assert kinds(mech.select)[name] == kw, (type(mech).__name__, name)
        with pytest.raises(TypeError):
            mech.select(problem, 10)  # size must be named
        assert mech.select(problem, size=3, rng=0).shape == (3,)


def test_one_vocabulary():
    """kappa is the sliding share everywhere; calibration is "proven" or "paper" everywhere."""
    p = dpselect.SelectionProblem(np.zeros(4), local_sensitivity=1.0)
    for mech in (
        dpselect.SmoothNoisyMax(1.0, kappa=0.3),
        dpselect.SmoothPrivateSelection(1.0, kappa=0.3),
        dpselect.SmoothSensitivityRelease(1.0, kappa=0.3),
    ):
        assert mech.kappa == 0.3
    assert dpselect.SmoothPrivateSelection(1.0, kappa=0.3).parameters(p).k == 0.3
    assert dpselect.SmoothNoisyMax(1.0).calibration == dpselect.SmoothSensitivityRelease(1.0).calibration == "proven"
    for cls, extra in ((dpselect.SmoothNoisyMax, {}), (dpselect.SmoothSensitivityRelease, {"noise": "laplace"})):
        with pytest.raises(ValueError, match="calibration"):
            cls(1.0, 1e-6, calibration="claimed", **{"noise": "laplace", **extra})


@pytest.mark.parametrize("counts", [[2**63, 1], [2**64 + 5, 0], [1e19, 0.0], np.array([2**63], dtype=np.uint64)])
def test_huge_counts_are_named_not_wrapped(counts):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in cast"
        with pytest.raises(ValueError, match=r"^votes must fit in a 64-bit integer"):
            check_counts(counts, "votes")
    assert check_counts([2**63 - 1, 0]).tolist() == [2**63 - 1, 0]


def test_random_state_is_converted_deterministically():
    a = check_random_state(np.random.RandomState(7)).random(3)
    b = check_random_state(np.random.RandomState(7)).random(3)
    np.testing.assert_array_equal(a, b)
    p = dpselect.SelectionProblem([1.0, 0.9, 0.0])
    mech = dpselect.PermuteAndFlip(1.0)
    draws = [mech.select(p, size=20, rng=np.random.RandomState(3)).tolist() for _ in range(2)]
    assert draws[0] == draws[1]
    with pytest.raises(ValueError, match="rng"):
        check_random_state(-5)
    with pytest.raises(TypeError, match="rng"):
        check_random_state("seed")


@pytest.mark.parametrize(
    "factory",
    [
        lambda e: dpselect.PermuteAndFlip(e),
        lambda e: dpselect.SmoothNoisyMax(e),
        lambda e: dpselect.SmoothNoisyMax(e, 1e-6, noise="laplace"),
        lambda e: dpselect.SmoothPrivateSelection(e),
        lambda e: dpselect.LocalDampening(e),
        lambda e: dpselect.SmoothSensitivityRelease(e),
        lambda e: dpselect.PrivateSensitivityBound(e, 1.0),
    ],
)
def test_subnormal_epsilon_is_named(factory):
    """Issue #13 item 7: PermuteAndFlip(epsilon=1e-320) used to fail later with "scale must be finite"."""
    with pytest.raises(ValueError, match=r"epsilon1? must be at least"):
        factory(1e-320)
    factory(1e-300)  # the smallest normal floats are fine


# ---------------------------------------------------------------- argument checks of the analysis functions


@pytest.mark.parametrize(
    ("mech", "pairs", "error", "match"),
    [
        (
            dpselect.PermuteAndFlip(1.0),
            [([1, 2, 3], [1, 2, 4])],
            TypeError,
            r"pairs\[0\]\[0\] must be a SelectionProblem",
        ),
        (dpselect.PermuteAndFlip(1.0), [1], TypeError, r"pairs\[0\] must be an \(x, y\) pair"),
        (dpselect.PermuteAndFlip(1.0), 3, TypeError, "pairs must be an iterable"),
        (object(), [], TypeError, "mech must be a mechanism"),
    ],
)
def test_audit_names_its_bad_arguments(mech, pairs, error, match):
    from dpselect.analysis import audit

    with pytest.raises(error, match=match):
        audit(mech, pairs)


def test_audit_rejects_negative_tolerance():
    from dpselect.analysis import audit

    p = dpselect.SelectionProblem([1.0, 0.0])
    with pytest.raises(ValueError, match="tol must be"):
        audit(dpselect.PermuteAndFlip(1.0), [(p, p)], tol=-1.0)


def test_accountant_remaining_numbers_beside_the_privacy():
    acc = dpselect.Accountant(2.0, delta=1e-6)
    acc.spend(dpselect.Privacy(0.5))
    assert isinstance(acc.remaining_epsilon, float) and acc.remaining_epsilon == pytest.approx(1.5)
    assert acc.remaining_delta == pytest.approx(5e-7)  # the default privacy filter keeps delta / 2 for itself
    assert acc.remaining.epsilon == acc.remaining_epsilon


def test_messages_print_plain_numbers_and_each_shape_once():
    from dpselect.apps.quantiles import private_percentile

    with pytest.raises(ValueError) as exc:
        private_percentile([150.0], 50, 1.0, np.linspace(0.0, 100.0, 11), on_out_of_bounds="raise")
    assert "np.float64" not in str(exc.value) and "[0, 100]" in str(exc.value)
    pytest.importorskip("sklearn")
    from dpselect.apps.trees import DPDecisionTreeClassifier

    X = np.zeros((6, 3))
    with pytest.raises(ValueError) as exc:
        DPDecisionTreeClassifier(epsilon=1.0, bounds=np.zeros((2, 2)), classes=[0, 1]).fit(X, [0, 1] * 3)
    assert str(exc.value).count("(3, 2)") == 1
