"""A griffe extension: render the numpydoc/reStructuredText parts of dpselect's docstrings as Markdown.

The docstrings follow numpydoc, which is reStructuredText: ``:func:`name``` roles, simple
tables framed by ``====`` lines and ``.. math::`` blocks.  mkdocstrings renders docstrings as
Markdown, so this extension rewrites, before the docstrings are parsed:

- ``:func:`x```, ``:class:`x```, ``:mod:`x```, ``:meth:`x```, ``:attr:`x```, ``:data:`x```,
  ``:obj:`x```, ``:exc:`x``` -> an autorefs link to the page where ``x`` is documented
  (resolved relative to the docstring's object, then through the public face that exports
  it); a target that is not rendered anywhere becomes inline code (an *optional* autoref);
- ``:math:`x``` -> ``$x$`` and ``.. math::`` blocks -> ``$$ ... $$`` (pymdownx.arithmatex);
- simple RST tables -> Markdown pipe tables;
- a numpydoc parameter written ``name : what it is.`` (a description on the type line) ->
  ``name`` with the description below it, so that the prose is not shown as a type;
- citations of the mathematics page (``mathematics §3.1``, ``mathematics §7 items 5, 7``) -> links
  to its anchors (``sec-3-1``, ``errata-5``).

The sources keep plain numpydoc (what ``help()`` and Sphinx users read); only the site changes.
Used from mkdocs.yml: ``extensions: [docs/scripts/griffe_rst.py:RstToMarkdown]``.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

from dpselect._docstrings import expand

_ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|obj|exc):`(~?)([^`<]+?)(?:\s*<([^>`]+)>)?`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_SECTION = re.compile(r"\bmathematics §(\d+(?:\.\d+)?)(?! items?\b)")
_ERRATA = re.compile(r"\bmathematics §7 (items?) (\d+)((?:\s*(?:,|–|-|and)\s*\d+)*)")
_TABLE_RULE = re.compile(r"^(\s*)(=+)((?:\s+=+)+)\s*$")
_ITEM_SECTIONS = ("Parameters", "Other Parameters", "Attributes")
# a type line that is prose: it ends a sentence, cites, quotes code or reads as a sentence
_PROSE = re.compile(r"\.\s*$|:(?:func|class|mod|meth|attr|data|obj|exc|math):`|``|\b(?:see|as|the|of the)\b")


def _objects(obj: griffe.Object) -> Any:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


def _is_public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split(".")[1:])


class RstToMarkdown(griffe.Extension):
    """Rewrite reStructuredText roles, math and tables in every docstring of a package as Markdown."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self.pkg = pkg
        self.public: dict[str, str] = {}  # canonical path -> public (rendered) path
        for obj in _objects(pkg):
            if not _is_public(obj.path):
                continue
            self.public.setdefault(obj.path, obj.path)
            for name, member in obj.members.items():
                if member.is_alias and not name.startswith("_") and obj.is_module:
                    try:
                        target = member.final_target.path  # type: ignore[union-attr]
                    except Exception:
                        continue
                    path = f"{obj.path}.{name}"
                    if _is_public(path):
                        self.public.setdefault(target, path)
        for obj in _objects(pkg):
            if obj.docstring is not None:  # docstring fragments first (dpselect._docstrings), then the markup
                obj.docstring.value = self.convert(expand(obj.docstring.value), obj)

    # -- resolution ---------------------------------------------------------------------------

    def _exists(self, path: str) -> str | None:
        if path == self.pkg.path:
            return path
        if not path.startswith(self.pkg.path + "."):
            return None
        try:
            obj = self.pkg[path[len(self.pkg.path) + 1 :]]
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return None
        try:
            return obj.final_target.path if obj.is_alias else obj.path
        except Exception:
            return None

    def resolve(self, name: str, obj: griffe.Object) -> str | None:
        """The rendered path of ``name`` as cited in the docstring of ``obj``, or None."""
        name = name.strip().lstrip(".").removesuffix("()")
        scopes = []
        scope: griffe.Object | None = obj
        while scope is not None:
            scopes.append(scope.path)
            scope = scope.parent
        for candidate in [name, *(f"{s}.{name}" for s in scopes), f"{self.pkg.path}.{name}"]:
            found = self._exists(candidate)
            if found is not None:
                return self.public.get(found, found if _is_public(found) else None)
        return None

    # -- rewriting ----------------------------------------------------------------------------

    def convert(self, text: str, obj: griffe.Object) -> str:
        text = _tables(_math_blocks(_prose_types(text)))
        text = _MATH_ROLE.sub(lambda m: f"${m.group(1)}$", text)

        def role(m: re.Match[str]) -> str:
            short, name, explicit = m.group(2), m.group(3).strip(), m.group(4)
            target = (explicit or name).strip()
            shown = name.split(".")[-1] if short else name
            if m.group(1) in ("func", "meth") and not shown.endswith(")"):
                shown += "()"
            code = f"<code>{html.escape(shown)}</code>"
            path = self.resolve(target, obj)
            if path is None:
                return code
            return f'<autoref identifier="{path}" optional>{code}</autoref>'

        text = _ROLE.sub(role, text)
        # the API pages live in docs/api/: the mathematics page is ../mathematics.md
        math = "../mathematics.md"
        text = _ERRATA.sub(
            lambda m: f"[mathematics §7 {m.group(1)} {m.group(2)}]({math}#errata-{m.group(2)}){m.group(3)}", text
        )
        return _SECTION.sub(lambda m: f"[mathematics §{m.group(1)}]({math}#sec-{m.group(1).replace('.', '-')})", text)


def _prose_types(text: str) -> str:
    """In Parameters/Attributes sections, ``name : prose`` -> ``name`` + the prose indented below."""
    lines = text.split("\n")
    out: list[str] = []
    section = ""
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if re.fullmatch(r"-{3,}", nxt.strip()):
            section = line.strip()
        m = re.match(r"^(\s*)([\w*][\w*, ]*?) : (.+)$", line)
        if section in _ITEM_SECTIONS and m and _PROSE.search(m.group(3)):
            indent = m.group(1)
            body = nxt if nxt.strip() and len(nxt) - len(nxt.lstrip()) > len(indent) else indent + "    "
            body_indent = body[: len(body) - len(body.lstrip())]
            out += [f"{indent}{m.group(2)}", f"{body_indent}{m.group(3)}"]
            continue
        out.append(line)
    return "\n".join(out)


def _math_blocks(text: str) -> str:
    """``.. math::`` + indented body -> a ``$$`` block (the body's indentation removed)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. math::\s*(.*)$", lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, first = m.group(1), m.group(2)
        body = [first] if first.strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
            body.append(lines[i].strip())
            i += 1
        while body and not body[-1]:
            body.pop()
        out += [f"{indent}$$", *(f"{indent}{b}" for b in body if b), f"{indent}$$", ""]
    return "\n".join(out)


def _tables(text: str) -> str:
    """Simple RST tables (``===  ===`` rule, header, rule, rows, rule) -> Markdown pipe tables."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _TABLE_RULE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent = m.group(1)
        spans = [(a.start(), a.end()) for a in re.finditer(r"=+", lines[i])]
        rules = [i]
        j = i + 1
        while j < len(lines) and len(rules) < 3 and lines[j].strip():
            if _TABLE_RULE.match(lines[j]):
                rules.append(j)
            j += 1
        if len(rules) < 3:
            out.append(lines[i])
            i += 1
            continue

        def cells(line: str) -> list[str]:
            parts = []
            for k, (a, _) in enumerate(spans):
                b = spans[k + 1][0] if k + 1 < len(spans) else len(line)
                parts.append(line[a:b].strip().replace("|", "\\|"))
            return parts

        header = [cells(r) for r in lines[rules[0] + 1 : rules[1]]]
        body = [cells(r) for r in lines[rules[1] + 1 : rules[2]]]
        head = [" ".join(col).strip() for col in zip(*header)] if header else [""] * len(spans)
        out.append("")
        out.append(indent + "| " + " | ".join(head) + " |")
        out.append(indent + "|" + "|".join("---" for _ in spans) + "|")
        for row in body:
            if any(row):
                out.append(indent + "| " + " | ".join(row) + " |")
        out.append("")
        i = rules[2] + 1
    return "\n".join(out)
