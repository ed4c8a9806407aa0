"""validate_params: the checked values reach the body however the arguments are passed."""

from __future__ import annotations

import pytest

from dpselect._params import EPSILON, SIZE, int_at_least, options, validate_params


@validate_params({"epsilon": EPSILON, "k": int_at_least(1), "how": options("a", "b"), "size": SIZE})
def _f(epsilon, k=1, *, how="a", size=None):
    return epsilon, k, how, size


@validate_params({"x": EPSILON})
def _g(x, *rest):
    return x, rest


class _Owner:
    @validate_params({"epsilon": EPSILON})
    def method(self, epsilon):
        return epsilon


@pytest.mark.parametrize(
    ("args", "kwargs"), [((1, 2), {"how": "b"}), ((1,), {"k": 2, "how": "b"}), ((), {"epsilon": 1, "k": 2, "how": "b"})]
)
def test_checked_values_reach_the_body_positionally_or_by_keyword(args, kwargs):
    out = _f(*args, **kwargs)
    assert out == (1.0, 2, "b", None) and type(out[0]) is float


def test_rules_run_in_the_signature_order_whatever_the_call_order():
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        _f(k=0, epsilon=-1.0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        _f(1.0, 0, how="c")


def test_defaults_are_not_checked_and_methods_skip_self():
    assert _f(2.0) == (2.0, 1, "a", None)
    assert _Owner().method(3) == 3.0
    with pytest.raises(ValueError, match="epsilon"):
        _Owner().method(0.0)


def test_bad_calls_are_type_errors_as_without_the_decorator():
    with pytest.raises(TypeError):
        _f(1.0, 2, 3)  # too many positional arguments
    with pytest.raises(TypeError):
        _f()  # epsilon missing
    with pytest.raises(TypeError):
        _f(1.0, epsilon=2.0)  # two values


def test_var_positional_signatures_take_the_general_path():
    assert _g(1, 2) == (1.0, (2,))
    with pytest.raises(ValueError, match="x must be > 0"):
        _g(-1)
