"""Warning categories used across dpselect."""

from __future__ import annotations

__all__ = ["PrivacyLeakWarning"]


class PrivacyLeakWarning(UserWarning):
    """A call was made in a way that voids the differential-privacy guarantee.

    Typical cause: a candidate set (output space) derived from the private data
    instead of being fixed publicly in advance (mathematics §1, mathematics §7 item 16).
    """
