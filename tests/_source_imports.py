"""The import statements of dpselect's source tree, read with :mod:`ast` (nothing is imported).

Shared by tests/test_layout.py (layout, cycles, private imports, layers) and
tests/test_lean_core.py (import-time third-party dependencies).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "dpselect"


@dataclass(frozen=True)
class Import:
    """One imported module (and the names taken from it) of one source module."""

    importer: str  #: dotted name of the importing module
    target: str  #: absolute dotted name of the module imported (``from X import a`` -> X)
    names: tuple[str, ...]  #: names taken by ``from X import ...`` (empty for ``import X``)
    lazy: bool  #: inside a function body (runs when the function is called, not at import)
    type_checking: bool  #: under ``if TYPE_CHECKING:`` (never runs)
    lineno: int


@cache
def modules() -> dict[str, Path]:
    """Dotted name -> path of every module of the package (a package is named by its ``__init__``)."""
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def is_package(name: str) -> bool:
    """Whether ``name`` is a package (its module is an ``__init__.py``)."""
    return modules()[name].name == "__init__.py"


def faces() -> list[str]:
    """Every package of the source tree (its ``__init__`` is its face), sorted."""
    return sorted(name for name in modules() if is_package(name))


def exported_callables(*, unique: bool = False) -> list[tuple[str, str, object]]:
    """(face, name, object) for every function and class in a face's ``__all__`` (faces of a missing extra skipped).

    ``unique``: an object re-exported by several faces appears once (under its first face). This
    one imports the faces, unlike the rest of the module.
    """
    out, seen = [], set()
    for face in faces():
        try:
            module = importlib.import_module(face)
        except ImportError:
            continue
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not (unique and id(obj) in seen):
                seen.add(id(obj))
                out.append((face, name, obj))
    return out


def package_of(name: str) -> str:
    """The package a module belongs to (a package belongs to itself)."""
    return name if is_package(name) else name.rpartition(".")[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, importer: str) -> None:
        self.importer = importer
        self.base = package_of(importer).split(".")
        self.depth = 0  # function nesting
        self.type_checking = 0
        self.found: list[Import] = []

    def _add(self, target: str, names: tuple[str, ...], node: ast.stmt) -> None:
        self.found.append(Import(self.importer, target, names, self.depth > 0, self.type_checking > 0, node.lineno))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self.type_checking += 1
            for child in node.body:
                self.visit(child)
            self.type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, (), node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.base[: len(self.base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        self._add(target, tuple(a.name for a in node.names), node)


@cache
def imports(name: str) -> tuple[Import, ...]:
    """Every import statement of module ``name``, relative imports made absolute."""
    collector = _Collector(name)
    collector.visit(ast.parse(modules()[name].read_text(), filename=str(modules()[name])))
    return tuple(collector.found)


def internal_targets(imp: Import) -> list[str]:
    """The package modules an import loads by name: ``from P import m`` with m a submodule gives P.m."""
    mods = modules()
    if imp.target not in mods:
        return []
    subs = [f"{imp.target}.{n}" for n in imp.names if f"{imp.target}.{n}" in mods]
    others = [n for n in imp.names if f"{imp.target}.{n}" not in mods]
    return subs + ([imp.target] if others or not imp.names else [])
