"""``report.html``: the markdown reports as one self-contained page (figures embedded as base64 PNG).

Only the markdown the reports themselves produce is rendered: headings,
paragraphs, bullet lists, pipe tables, images on a line of their own, and
inline code, emphasis, bold and links.  Everything else is escaped text.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["markdown_to_html", "write_html"]

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #eee; }
td.c, th.c { text-align: center; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5rem 0; }
code { background: #f3f3f3; padding: 0 0.2rem; }
section { border-top: 2px solid #888; margin-top: 2rem; }
"""

_IMG = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")


def _inline(text: str) -> str:
    s = html.escape(text, quote=False).replace("&lt;br&gt;", "<br>")
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
    s = re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", s)
    # links between the markdown reports point to their HTML versions
    s = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)",
               lambda m: f'<a href="{re.sub(r"report[.]md$", "report.html", m.group(2))}">{m.group(1)}</a>', s)
    return s


def _cells(line: str) -> list[str]:
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    cells = re.split(r"(?<!\\)\|", body)
    return [c.strip().replace("\\|", "|") for c in cells]


def _table(lines: list[str]) -> str:
    head = _cells(lines[0])
    align = ["c" if c.startswith(":") and c.endswith(":") else "" for c in _cells(lines[1])] if len(lines) > 1 else []
    def cls(i: int) -> str:
        return ' class="c"' if i < len(align) and align[i] else ""
    out = ["<table>", "<tr>" + "".join(f"<th{cls(i)}>{_inline(c)}</th>" for i, c in enumerate(head)) + "</tr>"]
    for ln in lines[2:]:
        out.append("<tr>" + "".join(f"<td{cls(i)}>{_inline(c)}</td>" for i, c in enumerate(_cells(ln))) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _image(alt: str, src: str, base: Path) -> str:
    path = base / src
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(path.name)}</figcaption></figure>")


def markdown_to_html(text: str, base: Path, heading_offset: int = 0) -> str:
    """HTML of one report's markdown; images are read from ``base`` and embedded."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i].rstrip()
        if not ln.strip():
            i += 1
            continue
        m = re.match(r"^(#{1,6}) (.*)$", ln)
        img = _IMG.match(ln.strip())
        if m:
            level = min(6, len(m.group(1)) + heading_offset)
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
            i += 1
        elif img:
            out.append(_image(img.group(1), img.group(2), base))
            i += 1
        elif ln.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            out.append(_table(block))
        elif ln.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"^(#{1,6} |\||- |!\[)", lines[i].lstrip()):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def write_html(path: Path, title: str, parts: Sequence[tuple[str, Path]]) -> Path:
    """One self-contained page from markdown ``parts`` = [(markdown, directory of its images)].

    The first part is the page's head; each further part is a section (its
    headings demoted by one level).
    """
    body = []
    for k, (text, base) in enumerate(parts):
        rendered = markdown_to_html(text, base, heading_offset=0 if k == 0 else 1)
        body.append(rendered if k == 0 else f"<section>\n{rendered}\n</section>")
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
    path.write_text(page, encoding="utf-8")
    return path
