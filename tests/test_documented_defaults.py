"""Every default a public docstring documents (numpydoc ``name : type, default=X``) is the signature's.

For every function and class of every face's ``__all__`` (a class: its constructor), each
documented ``default=X`` is evaluated (a literal, or a name of the defining module such as
``DEFAULT_STEPS``) and compared with the signature's default.  A documented default that
cannot be evaluated must read as the signature's default does (``repr``), and a parameter
documented with a default must have one.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import sys
from typing import Any

import numpy as np
import pytest

from _source_imports import exported_callables

#: ``name : type, default=VALUE`` in a numpydoc Parameters section (VALUE up to the line's end).
DEFAULT_LINE = re.compile(r"^\s{0,8}(\*{0,2}\w+)\s*:\s*[^\n]*?\bdefault[= ]\s*(.+?)\s*$", re.M)


def _documented() -> list[tuple[str, Any]]:
    return [(f"{face}.{name}", obj) for face, name, obj in exported_callables(unique=True)]


def documented_defaults(doc: str) -> dict[str, str]:
    """{parameter: documented default text} from a numpydoc Parameters section."""
    section = doc.split("Parameters\n", 1)[1] if "Parameters\n" in doc else ""
    section = re.split(
        r"\n\s*(Returns|Yields|Raises|Attributes|Examples|Notes|References|See Also)\n\s*-{3,}", section
    )[0]
    return {m.group(1): m.group(2).rstrip(".") for m in DEFAULT_LINE.finditer(section)}


def _same(documented: Any, actual: Any) -> bool:
    if isinstance(actual, float) and isinstance(documented, (int, float)) and not isinstance(documented, bool):
        return documented == actual or (math.isnan(actual) and math.isnan(documented))
    if isinstance(actual, np.ndarray) or isinstance(documented, np.ndarray):
        return bool(np.array_equal(documented, actual))
    return (type(documented) is type(actual) and documented == actual) or documented is actual


def mismatches(obj: Any) -> list[str]:
    """The documented defaults of ``obj`` that differ from its signature's."""
    target = obj.__init__ if inspect.isclass(obj) and obj.__doc__ and "Parameters" not in (obj.__doc__ or "") else obj
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and "Parameters\n" not in doc:
        doc = inspect.getdoc(obj.__init__) or ""
    try:
        params = inspect.signature(target if inspect.isfunction(target) else obj).parameters
    except (TypeError, ValueError):
        return []
    namespace = vars(sys.modules[getattr(obj, "__module__", "builtins")])
    factories = {f.name: f.default_factory for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else {}
    bad = []
    for name, text in documented_defaults(doc).items():
        p = params.get(name.lstrip("*"))
        if p is None:
            continue
        default = p.default
        factory = factories.get(p.name, dataclasses.MISSING)
        if factory is not dataclasses.MISSING:
            default = factory()  # type: ignore[operator]
        if default is p.empty:
            bad.append(f"{name}: documented default={text}, but the signature has none")
            continue
        try:
            value = eval(text, dict(namespace), {"inf": math.inf, "nan": math.nan})
        except Exception:
            if text.strip("\"'`") != repr(default).strip("\"'"):
                bad.append(f"{name}: documented default={text}, signature {default!r}")
            continue
        if not _same(value, default):
            bad.append(f"{name}: documented default={text}, signature {default!r}")
    return bad


@pytest.mark.parametrize(("name", "obj"), _documented(), ids=lambda v: v if isinstance(v, str) else "")
def test_documented_defaults_are_the_signatures(name: str, obj: Any) -> None:
    bad = mismatches(obj)
    assert not bad, f"{name}: " + "; ".join(bad)


def test_a_wrong_documented_default_is_caught() -> None:
    """Negative control: a docstring that says default=4 for a default of 16 is reported."""

    def f(steps: int = 16, scale: float = 0.5, how: str = "fast") -> None:
        """Do it.

        Parameters
        ----------
        steps : int, default=4
            Steps.
        scale : float, default=0.5
            Scale.
        how : {"fast", "exact"}, default="fast"
            How.
        """

    assert mismatches(f) == ["steps: documented default=4, signature 16"]
