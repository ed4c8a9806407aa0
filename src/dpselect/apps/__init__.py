"""Applications, one sub-package per domain; each sub-package's ``__init__`` is its only public face.

- :mod:`dpselect.apps.counts`: votes from counts or raw labels, modes, propose-test-release
  (the mode and stable histograms).
- :mod:`dpselect.apps.quantiles`: percentiles and quantiles, Duff medians and means, and the
  smooth-sensitivity median baselines.
- :mod:`dpselect.apps.genomics`: the TDT statistic, its sensitivities and neighbour distance,
  private top SNPs and releases, trio counting from PLINK or VCF files (extras ``gwas``, ``vcf``).
- :mod:`dpselect.apps.trees`: scikit-learn estimators (extra ``ml``).

The sub-packages are imported on first attribute access (``dpselect.apps.counts``).

Examples
--------
>>> import dpselect
>>> dpselect.apps.counts.__name__
'dpselect.apps.counts'
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["counts", "genomics", "quantiles", "trees"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
