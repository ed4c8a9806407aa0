"""Consumers of exact output distributions: accuracy, expected error, audits.

Everything here only calls ``mech.probabilities`` / ``mech.log_probabilities``
(never samples), so the figures are exact up to quadrature error.
:func:`error_distribution` gives the law of a numeric release's error.
"""

from .audit import AuditReport, audit, hockey_stick, privacy_loss
from .error import accuracy, expected_error, output_distribution
from .error_distribution import ErrorDistribution, error_distribution

__all__ = [
    "AuditReport",
    "ErrorDistribution",
    "accuracy",
    "audit",
    "error_distribution",
    "expected_error",
    "hockey_stick",
    "output_distribution",
    "privacy_loss",
]
