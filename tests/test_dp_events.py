"""Export of charges as dp_accounting DpEvents (skipped when dp_accounting is not installed)."""

from __future__ import annotations

import math

import pytest

from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, SelectionProblem
from dpselect.accounting import Accountant
from dpselect.accounting.dp_events import to_dp_event

dpa = pytest.importorskip("dp_accounting")


def test_charges_become_zcdp_events_that_an_rdp_accountant_composes():
    prob = SelectionProblem([3.0, 1.0, 0.0])
    acc = Accountant(10.0, 1e-6)
    for _ in range(100):
        acc.spend(ExponentialMechanism(0.05).privacy(prob))
    acc.spend(PermuteAndFlip(0.1).privacy(prob))
    event = to_dp_event(acc.charges)
    assert isinstance(event, dpa.ComposedDpEvent) and len(event.events) == 101
    assert event.events[0] == dpa.ZCDpEvent(rho=0.05**2 / 8)  # bounded range -> eta^2/8
    assert event.events[-1] == dpa.ZCDpEvent(rho=0.1**2 / 2)  # pure -> eps^2/2
    rdp = dpa.rdp.RdpAccountant()
    rdp.compose(event)
    eps = rdp.get_epsilon(1e-6)
    rho = 100 * 0.05**2 / 8 + 0.1**2 / 2
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1e6))  # at least Bun-Steinke's conversion


def test_uncertified_approximate_and_non_private_charges():
    event = to_dp_event([Privacy(1.0, 1e-6), Privacy(math.inf), Privacy(0.5, 1e-7, rho=0.01)])
    kinds = [type(e) for e in event.events]
    assert kinds == [dpa.UnsupportedDpEvent, dpa.NonPrivateDpEvent, dpa.ZCDpEvent]
    assert not dpa.rdp.RdpAccountant().supports(event)  # refused, never under-counted
    with pytest.raises(TypeError, match="Privacy"):
        to_dp_event([0.1])
