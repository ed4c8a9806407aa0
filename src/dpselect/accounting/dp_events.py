"""Export of charges as ``dp_accounting`` DpEvents (optional extra ``accounting``).

Each atomic guarantee (:attr:`~dpselect.privacy.Privacy.atoms`) becomes one
event that a ``dp_accounting`` Rényi accountant composes soundly:

* eta-bounded-range (the exponential mechanism) -> ``ZCDpEvent(rho=eta^2/8)``
  (Cesar & Rogers 2021; mathematics page §10.1);
* rho-zCDP -> ``ZCDpEvent(rho)``;
* pure epsilon-DP without a certificate -> ``ZCDpEvent(rho=epsilon^2/2)``
  (Bun & Steinke 2016, Prop. 1.4);
* no guarantee (epsilon = inf) -> ``NonPrivateDpEvent``;
* (epsilon, delta > 0) without a certificate -> ``UnsupportedDpEvent`` (no
  event expresses it; accountants refuse it rather than under-count).

``dp_accounting`` has no exponential-mechanism event; zCDP events are
supported by its RDP accountant (not by its PLD accountant, which refuses
them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..privacy import Privacy

__all__ = ["to_dp_event"]


def _dp_accounting() -> Any:
    try:
        import dp_accounting
    except ImportError as err:  # pragma: no cover - exercised when the extra is missing
        raise ImportError("exporting DpEvents needs dp_accounting: pip install 'dpselect[accounting]'") from err
    return dp_accounting


def to_dp_event(charges: Iterable[Privacy] | Privacy) -> Any:
    """The charges as one ``dp_accounting.ComposedDpEvent`` (one event per atomic guarantee).

    Parameters
    ----------
    charges : Privacy or iterable of Privacy
        e.g. ``accountant.charges`` or one mechanism's ``privacy()``.

    Returns
    -------
    dp_accounting.ComposedDpEvent

    References
    ----------
    Cesar & Rogers, "Bounding, Concentrating, and Truncating", ALT 2021 (BR ->
    zCDP); Bun & Steinke, "Concentrated Differential Privacy", TCC 2016,
    Prop. 1.4 (pure -> zCDP).  Mathematics page §10.1.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.accounting.dp_events import to_dp_event
    >>> ev = to_dp_event(dpselect.Privacy(0.05, bounded_range=0.05))  # doctest: +SKIP
    >>> ev.events[0].rho  # doctest: +SKIP
    0.0003125
    """
    dpa = _dp_accounting()
    items = [charges] if isinstance(charges, Privacy) else list(charges)
    events = []
    for c in items:
        if not isinstance(c, Privacy):
            raise TypeError(f"charges must be Privacy objects, got {type(c).__name__}")
        for a in c.atoms:
            if a.epsilon == float("inf"):
                events.append(dpa.NonPrivateDpEvent())
            elif a.bounded_range is not None:
                events.append(dpa.ZCDpEvent(rho=a.bounded_range**2 / 8.0))
            elif a.rho is not None:
                events.append(dpa.ZCDpEvent(rho=a.rho))
            elif a.delta == 0.0:
                events.append(dpa.ZCDpEvent(rho=a.epsilon**2 / 2.0))
            else:
                events.append(dpa.UnsupportedDpEvent())
    return dpa.ComposedDpEvent(events)
