"""MkDocs hook: typeset the arithmatex formulas as MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) leaves each formula as ``\\(…\\)`` in a
``<span class="arithmatex">`` (``\\[…\\]`` in a ``<div>`` for display math).  This hook
replaces them by MathML (``latex2mathml``, in the ``docs`` extra), which browsers render
natively: the built site needs no script and no network to show its mathematics.  A
formula the converter cannot read, or one with a command it would show as text, fails the
build, naming the page.
"""

from __future__ import annotations

import html
import re
from typing import Any

from latex2mathml.converter import convert

# TeX operators the converter does not know, spelt with ones it does
_OPERATORS = {name: rf"\operatorname{{{name}}}" for name in ("arg", "sgn", "argmax", "argmin")}
_OPERATOR = re.compile(r"\\(" + "|".join(_OPERATORS) + r")(?![A-Za-z])")
# a command left as text in the MathML (the converter passes unknown ones through)
_UNTYPESET = re.compile(r">(\\[A-Za-z]+)<")
_FORMULA = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*\\(?P<open>[(\[])(?P<tex>.*?)\\[)\]]\s*</(?P=tag)>', re.S
)


def to_mathml(page_html: str, where: str = "page") -> str:
    """``page_html`` with every arithmatex formula replaced by its MathML."""

    def typeset(match: re.Match[str]) -> str:
        tex = html.unescape(match.group("tex")).strip()
        display = "block" if match.group("open") == "[" else "inline"
        try:
            mathml = convert(_OPERATOR.sub(lambda m: _OPERATORS[m.group(1)], tex), display=display)
        except Exception as exc:  # the converter raises several types; name the formula
            raise ValueError(f"{where}: cannot typeset the formula {tex!r}: {exc!r}") from exc
        unknown = _UNTYPESET.findall(mathml)
        if unknown:
            raise ValueError(f"{where}: the formula {tex!r} uses commands MathML cannot show: {unknown}")
        return mathml

    return _FORMULA.sub(typeset, page_html)


def on_post_page(output: str, *, page: Any, config: Any) -> str:
    """MkDocs entry point: typeset the formulas of one built page."""
    return to_mathml(output, where=page.file.src_uri)
