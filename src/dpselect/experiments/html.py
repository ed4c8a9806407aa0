"""``report.html``: the markdown reports as one self-contained page (figures embedded as base64 PNG).

The Markdown is rendered by markdown-it-py (CommonMark with tables; raw HTML in the
Markdown is escaped).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["markdown_to_html", "write_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #eee; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5rem 0; }
code { background: #f3f3f3; padding: 0 0.2rem; }
section { border-top: 2px solid #888; margin-top: 2rem; }
"""


def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    return md


def _link_target(href: str) -> str:
    """Links between the reports point to their HTML versions (``x.md`` -> ``x.html``)."""
    return re.sub(r"[.]md(#|$)", r".html\1", href) if "://" not in href else href


def markdown_to_html(text: str, base: Path, heading_offset: int = 0) -> str:
    r"""HTML of one report's Markdown (CommonMark + tables, by markdown-it-py).

    Images are read from ``base`` and embedded as base64 PNG figures with their alt text
    as caption; links to ``.md`` reports point to the ``.html`` pages; headings are demoted
    by ``heading_offset`` levels; "mean ± spread" is held together by non-breaking spaces.

    Parameters
    ----------
    text : str
        The Markdown (raw HTML in it is escaped).
    base : pathlib.Path
        The directory the images' paths are relative to.
    heading_offset : int, default=0
        Levels by which every heading is demoted (at most to ``h6``).

    Returns
    -------
    str
        The HTML fragment.

    Examples
    --------
    >>> from pathlib import Path
    >>> markdown_to_html("# Title\n\nsee [the report](a/report.md)", Path("."), heading_offset=1)
    '<h2>Title</h2>\n<p>see <a href="a/report.html">the report</a></p>\n'
    """
    md = _parser()
    tokens = md.parse(text)
    for tok in tokens:
        if tok.type in ("heading_open", "heading_close") and heading_offset:
            tok.tag = f"h{min(6, int(tok.tag[1]) + heading_offset)}"
        for child in tok.children or []:
            if child.type == "link_open":
                child.attrSet("href", _link_target(str(child.attrGet("href") or "")))
            elif child.type == "image":
                src = base / str(child.attrGet("src") or "")
                if src.is_file():
                    data = base64.b64encode(src.read_bytes()).decode("ascii")
                    child.attrSet("src", f"data:image/png;base64,{data}")
    rendered = md.renderer.render(tokens, md.options, {}).replace("&lt;br&gt;", "<br>")  # line breaks in cells
    rendered = rendered.replace(" ± ", "\u00a0±\u00a0")  # "0.654 ± 0.044" never wraps inside a table cell
    # an image alone in its paragraph becomes a figure captioned by its alt text
    return re.sub(
        r'<p><img src="([^"]*)" alt="([^"]*)" /></p>',
        lambda m: f'<figure><img src="{m.group(1)}" alt="{m.group(2)}"><figcaption>{m.group(2)}</figcaption></figure>',
        rendered,
    )


def write_html(path: Path, title: str, parts: Sequence[tuple[str, Path]]) -> Path:
    """One self-contained page from markdown ``parts`` = [(markdown, directory of its images)].

    The first part is the page's head; each further part is a section (its
    headings demoted by one level).

    Parameters
    ----------
    path : pathlib.Path
        The page to write (replaced).
    title : str
        The page's title (escaped).
    parts : sequence of (str, pathlib.Path)
        The Markdown texts with the directories of their images.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    body = []
    for k, (text, base) in enumerate(parts):
        rendered = markdown_to_html(text, base, heading_offset=0 if k == 0 else 1)
        body.append(rendered if k == 0 else f"<section>\n{rendered}\n</section>")
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
    path.write_text(page, encoding="utf-8")
    return path
