"""The documentation's Markdown: no link inside a formula, every link a real link (fast: no site build).

Markdown reads ``E[K](1 + e^ε)`` as a link to "1 + e^ε" labelled "K": the factor disappears from the
page and ``mkdocs build --strict`` does not notice (the target is not a page).  Every ``[text](target)``
of docs/ and the README must point at a URL, a page, a file or an anchor, and no ``$...$`` formula may
hold a link.  Code (fenced blocks and inline backquotes) is left out: there brackets are literal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]

#: A link target: a URL, an anchor, a page or file (with an optional anchor), or a folder.
TARGET = re.compile(
    r"(?:https?://\S+|mailto:\S+|#[\w.-]+"
    r"|[\w./-]*\.(?:md|html|png|svg|csv|tsv|txt|py|json|yml)(?:#[\w.-]+)?|[\w./-]+/(?:#[\w.-]+)?)"
)
LINK = re.compile(r"!?\[([^\]\n]*)\]\(([^)\n]*)\)")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code (replaced by blanks, lines kept)."""
    text = re.sub(r"^(```|~~~).*?^\1", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
    return re.sub(r"`+[^`\n]*`+", " ", text)


def bad_links(text: str) -> list[str]:
    """The links of ``text`` whose target is no link (a formula read as one), and links inside formulas."""
    prose = _prose(text)
    bad = [m.group(0) for m in LINK.finditer(prose) if not TARGET.fullmatch(m.group(2).strip())]
    bad += [f"in a formula: {m.group(0)}" for f in MATH.finditer(prose) for m in LINK.finditer(f.group(0))]
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_link_inside_a_formula(page: Path) -> None:
    bad = bad_links(page.read_text(encoding="utf-8"))
    assert not bad, f"{page.relative_to(ROOT)}: Markdown links that are formulas: {bad}"


@pytest.mark.parametrize(
    "text, found",
    [
        ("δ₀ = δ/(E[K](1 + e^ε))", True),  # the bug of mathematics §11.2
        ("P[best](u) = 1", True),
        ("the bound $E[K](1+e^\\varepsilon)$", True),
        ("δ₀ = δ/(E[K]·(1 + e^ε))", False),
        ("see [the task map](tasks.md) and [§11](mathematics.md#sec-11)", False),
        ("[site](https://example.org/a?b=c) [api](api/core.md#dpselect.SelectionProblem)", False),
        ("code `x[K](1 + e)` and\n```python\nd[k](1 + 2)\n```\n", False),
    ],
)
def test_the_check_finds_formulas_read_as_links(text: str, found: bool) -> None:
    assert bool(bad_links(text)) is found
