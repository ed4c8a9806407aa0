"""The layout of the source tree (docs/architecture.md): rooms, faces, import rules, no circles.

Read from the source with :mod:`ast` (tests/_source_imports.py), except the face checks,
which import the faces.  Rules:

* ``dpselect/apps/`` holds no module but ``__init__.py``: one sub-package per domain, whose
  ``__init__`` is its public face and whose other modules are private (``_name.py``, or any
  module inside a private sub-package ``_family/`` that groups one concern of the domain);
  a domain's top level holds at most :data:`MAX_DOMAIN_TOP` modules and sub-packages.
* No import cycle between the package's modules, lazy imports inside functions included
  (imports under ``if TYPE_CHECKING:`` never run and are left out).
* No cross-package private import: a module may import a ``_private`` module or name only
  from its own package or an enclosing one (``dpselect._validation`` serves every layer; a
  sibling's ``_private`` module does not).
* The layer rules of the architecture: ``mechanisms`` never imports ``apps`` or
  ``analysis``; ``apps`` never imports ``experiments`` (its ``datasets`` included) or the CLI;
  ``analysis`` never imports ``apps``, ``experiments`` or the CLI; the core below them never imports any
  of those.
* One import path per public object: every name of a face's ``__all__`` is defined in that
  package, and no two faces export the same function or class (the root ``dpselect``
  re-exports the core objects by design and is exempt).
* No citation of the project's history in the source.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from _source_imports import PACKAGE, SRC, Import, faces, imports, internal_targets, is_package, modules, package_of

APPS = f"{PACKAGE}.apps"
CLI = (f"{PACKAGE}.cli", f"{PACKAGE}._cli_input", f"{PACKAGE}.__main__")

#: importer prefix -> forbidden target prefixes (the architecture's layer rules).
CORE = (
    "accounting",
    "noise",
    "_engine",
    "sensitivity",
    "privacy",
    "problem",
    "_validation",
    "_params",
    "_arraylike",
    "_param_rules",
    "_docstrings",
    "_exact_numbers",
    "_mechanism_support",
    "output_law",
    "_optional",
    "_warnings",
    "typing",
)
LAYER_RULES: dict[str, tuple[str, ...]] = {
    f"{PACKAGE}.mechanisms": (APPS, f"{PACKAGE}.analysis", f"{PACKAGE}.experiments", *CLI),
    f"{PACKAGE}._mechanism_lookup": (APPS, f"{PACKAGE}.analysis", f"{PACKAGE}.experiments", *CLI),
    APPS: (f"{PACKAGE}.experiments", *CLI),
    f"{PACKAGE}.analysis": (APPS, f"{PACKAGE}.experiments", *CLI),
    **{
        f"{PACKAGE}.{c}": (f"{PACKAGE}.mechanisms", APPS, f"{PACKAGE}.analysis", f"{PACKAGE}.experiments", *CLI)
        for c in CORE
    },
}

#: History citations a reader of the installed package cannot resolve (the exact patterns).
CITATION_PATTERNS = {
    "SPEC §N": re.compile(r"\bSPEC(?:\.md)?\s*§"),
    "errata N / erratum N": re.compile(r"\berrat(?:a|um)\s+\d+", re.IGNORECASE),
    "issue #N": re.compile(r"\bissue\s*#\s*\d+", re.IGNORECASE),
    "seed 00N": re.compile(r"\bseed\s+00\d\b", re.IGNORECASE),
}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


# --------------------------------------------------------------------------- apps layout


def test_apps_holds_only_sub_packages() -> None:
    apps_dir = SRC / PACKAGE / "apps"
    loose = sorted(p.name for p in apps_dir.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules directly in dpselect/apps/ (move them into a domain sub-package): {loose}"
    subs = [p for p in apps_dir.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert subs, "dpselect/apps/ has no domain sub-package"
    assert all((p / "__init__.py").is_file() for p in subs), [p.name for p in subs]


def test_apps_modules_behind_the_face_are_private() -> None:
    """Behind a domain's face a module is ``_name.py`` or lies inside a private sub-package (``_family/name.py``)."""
    public = sorted(
        name
        for name in modules()
        if _within(name, APPS)
        and name.count(".") >= 3
        and not is_package(name)
        and not any(_private(part) for part in name.split(".")[3:])
    )
    assert not public, f"public modules behind an apps face (rename to _name.py): {public}"


#: The most modules and sub-packages one domain of ``dpselect/apps/`` holds at its top level
#: (its face and shared rules included); more, and the domain is split into private
#: sub-packages by concern (``_family/``), as ``apps/quantiles`` is.
MAX_DOMAIN_TOP = 12


def _domain_top(domain: Path) -> list[str]:
    """The modules and sub-packages at the top level of one apps domain."""
    return sorted(
        p.name
        for p in domain.iterdir()
        if (p.suffix == ".py" and p.is_file()) or (p.is_dir() and (p / "__init__.py").is_file())
    )


@pytest.mark.parametrize(
    "domain", sorted(p.name for p in (SRC / PACKAGE / "apps").iterdir() if (p / "__init__.py").is_file())
)
def test_apps_domain_top_level_is_small(domain: str) -> None:
    top = _domain_top(SRC / PACKAGE / "apps" / domain)
    assert len(top) <= MAX_DOMAIN_TOP, (
        f"apps/{domain} holds {len(top)} modules/sub-packages at its top level (at most {MAX_DOMAIN_TOP}; "
        f"group them into private sub-packages by concern): {top}"
    )


def test_domain_top_counts_modules_and_sub_packages(tmp_path: Path) -> None:
    """Negative control: files and sub-packages count, a folder without ``__init__.py`` or data does not."""
    for name in ("__init__.py", "_a.py", "_b.py", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "_family").mkdir()
    (tmp_path / "_family" / "__init__.py").write_text("")
    (tmp_path / "__pycache__").mkdir()
    assert _domain_top(tmp_path) == ["__init__.py", "_a.py", "_b.py", "_family"]


# --------------------------------------------------------------------------- cycles


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    for name in modules():
        for imp in imports(name):
            if not imp.type_checking:
                graph[name].update(t for t in internal_targets(imp) if t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "modules importing each other (directly or through others): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_cycle_finder_finds_a_cycle() -> None:
    """Negative control: a -> b -> c -> a and a lazy self-free d -> a are found / ignored correctly."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_lazy_imports_are_in_the_graph() -> None:
    """The graph sees imports inside functions (the CLI's commands import their domains lazily)."""
    cli = [name for name in modules() if _within(name, f"{PACKAGE}.cli")]
    lazy = [imp for name in cli for imp in imports(name) if imp.lazy]
    assert any(_within(t, APPS) for imp in lazy for t in internal_targets(imp))
    assert any(_within(t, APPS) for name in cli for t in _graph()[name])


# --------------------------------------------------------------------------- private imports


def _private_owner(imp: Import) -> str | None:
    """The package owning the private module or names an import takes (None: nothing private)."""
    parts = imp.target.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])
            return owner
    if any(_private(n) for n in imp.names):
        return package_of(imp.target) if imp.target in modules() else imp.target.rpartition(".")[0]
    return None


def _cross_package_private(name: str) -> list[str]:
    bad = []
    for imp in imports(name):
        if not _within(imp.target, PACKAGE):
            continue
        owner = _private_owner(imp)
        if owner is not None and not _within(package_of(name), owner):
            bad.append(f"{name}:{imp.lineno} takes private {imp.target} {list(imp.names)} (owned by {owner})")
    return bad


def test_no_cross_package_private_imports() -> None:
    bad = [b for name in sorted(modules()) for b in _cross_package_private(name)]
    assert not bad, "\n".join(bad)


def test_private_owner_rules() -> None:
    """The rule on hand-made imports: an enclosing package's private module is fine, a sibling's is not."""
    mk = lambda importer, target, names=(): Import(importer, target, tuple(names), False, False, 1)
    assert _private_owner(mk("x", f"{PACKAGE}._validation", ["check_int"])) == PACKAGE
    assert _private_owner(mk("x", f"{APPS}.genomics._tdt", ["_beta_max"])) == f"{APPS}.genomics"
    assert _private_owner(mk("x", f"{APPS}.quantiles", ["_check_bounds"])) == f"{APPS}.quantiles"
    assert _private_owner(mk("x", f"{APPS}.quantiles", ["duff_median"])) is None
    assert _within(package_of(f"{APPS}.genomics._io._plink"), f"{APPS}.genomics")
    assert not _within(package_of(f"{PACKAGE}.experiments.tdt"), f"{APPS}.genomics")


# --------------------------------------------------------------------------- layers


def test_layer_rules() -> None:
    bad = []
    for name in sorted(modules()):
        forbidden = [f for importer, fs in LAYER_RULES.items() if _within(name, importer) for f in fs]
        for imp in imports(name):
            for target in internal_targets(imp) or [imp.target]:
                hit = [f for f in forbidden if _within(target, f)]
                if hit:
                    bad.append(f"{name}:{imp.lineno} imports {target} ({'lazily' if imp.lazy else 'at import'})")
    assert not bad, "imports against the layer rules of docs/architecture.md:\n" + "\n".join(bad)


def test_layer_rules_cover_the_core() -> None:
    """Every top-level module or package is an importer in the rules or a higher layer (none escapes)."""
    higher = {"apps", "experiments", "cli", "_cli_input", "__main__", "analysis", "mechanisms", "_mechanism_lookup"}
    tops = {name.split(".")[1] for name in modules() if name != PACKAGE}
    assert tops - higher - set(CORE) == set(), tops - higher - set(CORE)


# --------------------------------------------------------------------------- faces


def _import_face(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # an optional domain without its extra
        pytest.skip(f"{name}: {exc}")


def _bindings(face: str) -> tuple[dict[str, str], bool]:
    """Name -> absolute module it is imported from ("" if defined in the face); whether it has __getattr__."""
    tree = ast.parse(modules()[face].read_text())
    out: dict[str, str] = {}
    lazy = False
    for imp in imports(face):
        if not imp.lazy and imp.names:
            node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.lineno == imp.lineno)
            for alias in node.names:
                out[alias.asname or alias.name] = imp.target
    for node in tree.body:
        targets: list[Any] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            targets = [node.name]
            lazy = lazy or node.name == "__getattr__"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                targets += [t.id] if isinstance(t, ast.Name) else []
        for t in targets:
            out[t] = ""
    return out, lazy


@pytest.mark.parametrize("face", [f for f in faces() if f != PACKAGE])
def test_face_exports_only_its_own_package(face: str) -> None:
    """Every name of a face's __all__ is defined in its package (no second import path into another room)."""
    source = modules()[face].read_text()
    if "__all__" not in source:
        pytest.skip(f"{face} has no __all__")
    module = _import_face(face)
    bindings, has_getattr = _bindings(face)
    bad = []
    for name in module.__all__:
        origin = bindings.get(name)
        if origin is None:
            if not has_getattr:
                bad.append(f"{name}: not bound in the face")
            continue
        if origin and not _within(origin, face):
            bad.append(f"{name}: imported from {origin}")
        obj = getattr(module, name)
        mod = getattr(obj, "__module__", None) if inspect.isfunction(obj) or inspect.isclass(obj) else None
        if mod is not None and _within(mod, PACKAGE) and not _within(mod, face):
            bad.append(f"{name}: defined in {mod}")
    assert not bad, f"{face}.__all__ exports names of other packages:\n" + "\n".join(bad)


def test_no_two_faces_export_the_same_object() -> None:
    """(An alias inside one face, e.g. ``private_median = duff_median``, is one face: not counted.)"""
    owners: dict[int, list[str]] = defaultdict(list)
    for face in faces():
        if face == PACKAGE:
            continue  # the root re-exports the core objects by design (docs/architecture.md)
        try:
            module = importlib.import_module(face)
        except ImportError:
            continue  # an optional domain without its extra
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and face not in owners[id(obj)]:
                owners[id(obj)].append(face)
    dup = sorted(v for v in owners.values() if len(v) > 1)
    assert not dup, "objects exported by two faces: " + "; ".join(" and ".join(v) for v in dup)


# --------------------------------------------------------------------------- history citations


def _citations() -> list[str]:
    hits = []
    for path in sorted(modules().values()):
        for lineno, line in enumerate(path.read_text().splitlines(), start=1):
            for label, pattern in CITATION_PATTERNS.items():
                if pattern.search(line):
                    hits.append(f"{path.relative_to(SRC)}:{lineno}: {label}: {line.strip()[:100]}")
    return hits


def test_no_history_citations_in_source() -> None:
    hits = _citations()
    assert not hits, (
        f"{len(hits)} citations of the project's history in src/ (cite papers and "
        f"docs/mathematics.md anchors instead):\n" + "\n".join(hits)
    )


def test_user_facing_texts_cite_the_mathematics_page() -> None:
    """README, the guide pages and the examples say "mathematics §N", never the history's "SPEC §N"."""
    root = SRC.parent
    texts = [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "examples").glob("*.py"))]
    hits = [
        f"{path.relative_to(root)}:{lineno}: {line.strip()[:100]}"
        for path in texts
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if CITATION_PATTERNS["SPEC §N"].search(line)
    ]
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("see SPEC §9.1", "SPEC §N"),
        ("(SPEC.md §2.2-§2.5)", "SPEC §N"),
        ("SPEC errata 16", "errata N / erratum N"),
        ("[erratum 3]", "errata N / erratum N"),
        ("issue #17 item 4", "issue #N"),
        ("Duff, seed 001, for medians", "seed 00N"),
    ],
)
def test_citation_patterns_match(text: str, label: str) -> None:
    """The patterns catch each form of citation, and nothing in plain prose."""
    assert [k for k, p in CITATION_PATTERNS.items() if p.search(text)] == [label]


@pytest.mark.parametrize(
    "text",
    ["Bun & Steinke 2019 §3.1.1", "the specification", "seed=0", "seed 12345", "issue a warning", "errata", "#888"],
)
def test_citation_patterns_spare_prose(text: str) -> None:
    assert not any(p.search(text) for p in CITATION_PATTERNS.values())


# --------------------------------------------------------------------------- sealed faces


def _face_binds(face: str, name: str) -> bool:
    """Whether ``face``'s ``__init__`` binds ``name`` itself (then ``from face import name`` takes that object)."""
    return name in _bindings(face)[0]


def _room(package: str) -> str:
    """The room a package belongs to: a private sub-package nested in another package is part of it.

    ``apps.quantiles._duff`` only groups modules of ``apps.quantiles`` (whose face is the one way
    in); a private package right below the root (``_engine``) is a room of its own.
    """
    while package.count(".") >= 2 and _private(package.rpartition(".")[2]):
        package = package.rpartition(".")[0]
    return package


def _deep_imports(name: str) -> list[str]:
    """Imports of ``name`` that reach past another package's face into one of its modules.

    The top-level modules of ``dpselect`` (``privacy``, ``problem``, ``_validation``, ...) are their
    own faces; a sub-package (``mechanisms``, ``noise``, ``apps.quantiles``, ...) is entered only
    through its ``__init__``.  ``from face import x`` where the face binds ``x`` (a function that
    shares its module's name, like ``analysis.audit``) is not deep.
    """
    bad = []
    for imp in imports(name):
        if imp.type_checking or not _within(imp.target, PACKAGE):
            continue
        targets = [imp.target] if imp.target in modules() and not is_package(imp.target) else []
        if imp.target in modules() and is_package(imp.target):
            targets += [
                f"{imp.target}.{n}"
                for n in imp.names
                if f"{imp.target}.{n}" in modules()
                and not is_package(f"{imp.target}.{n}")
                and not _face_binds(imp.target, n)
            ]
        for target in targets:
            owner = _room(package_of(target))
            if owner != PACKAGE and not _within(name, owner):
                bad.append(f"{name}:{imp.lineno} imports {target} (use the face {owner})")
    return bad


def test_no_deep_imports_across_packages() -> None:
    bad = [b for name in sorted(modules()) for b in _deep_imports(name)]
    assert not bad, f"{len(bad)} imports past a face:\n" + "\n".join(bad)


def test_private_sub_packages_belong_to_their_room() -> None:
    """A domain's private sub-package is inside the domain's room; the engine and public packages are rooms."""
    assert _room(f"{APPS}.quantiles._duff") == f"{APPS}.quantiles"
    assert _room(f"{APPS}.quantiles") == f"{APPS}.quantiles"
    assert _room(f"{PACKAGE}._engine") == f"{PACKAGE}._engine"
    assert _room(f"{PACKAGE}.mechanisms") == f"{PACKAGE}.mechanisms"
    assert not _within(f"{APPS}.counts._votes", _room(f"{APPS}.quantiles._duff"))


def test_type_only_imports_make_no_circle() -> None:
    """Imports under ``if TYPE_CHECKING:`` count here: two modules naming each other's types are one idea."""
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    for name in modules():
        for imp in imports(name):
            graph[name].update(t for t in internal_targets(imp) if t != name and not is_package(t))
    cycles = _cycles(graph)
    assert not cycles, "; ".join(" <-> ".join(c) for c in cycles)


def test_top_level_holds_the_core_only() -> None:
    """The engine is one private package, the CLI one package, the paper data under experiments."""
    top = sorted(p.stem for p in (SRC / PACKAGE).glob("*.py"))
    allowed = {
        "__init__",
        "__main__",
        "_arraylike",
        "_docstrings",
        "_exact_numbers",
        "_mechanism_lookup",
        "_mechanism_support",
        "_optional",
        "_param_rules",
        "_params",
        "_validation",
        "_warnings",
        "output_law",
        "privacy",
        "problem",
        "sensitivity",
        "typing",
    }
    assert set(top) <= allowed, f"modules at the top level beyond the core: {sorted(set(top) - allowed)}"
    for package in ("_engine", "cli", "experiments"):
        assert (SRC / PACKAGE / package / "__init__.py").is_file(), package
    assert (SRC / PACKAGE / "experiments" / "datasets.py").is_file()


# --------------------------------------------------------------------------- internal helpers

#: Internal helpers shared through the private modules made for it (dpselect._exact_numbers,
#: _mechanism_support, _mechanism_lookup, _validation, _params), never through a public face.
INTERNAL_HELPERS = frozenset(
    {
        "as_fraction",
        "check_granularity",
        "check_problem",
        "check_tail_exponent",
        "dyadic_ceil",
        "grid_index",
        "is_gumbel_mechanism",
        "resolve_mechanism",
    }
)


def internal_exports(names: list[str]) -> list[str]:
    """The names of a face's ``__all__`` that are internal helpers (``check_*`` or listed)."""
    return sorted(n for n in names if n.startswith("check_") or n in INTERNAL_HELPERS)


@pytest.mark.parametrize("face", faces())
def test_faces_export_no_internal_helpers(face: str) -> None:
    module = _import_face(face)
    bad = internal_exports(list(getattr(module, "__all__", ())))
    assert not bad, f"{face}.__all__ exports internal helpers (share them through a private module): {bad}"


def test_internal_exports_finds_helpers() -> None:
    """Negative control: a check_ name and a listed helper are caught, a public function is not."""
    assert internal_exports(["check_x", "grid_index", "duff_median"]) == ["check_x", "grid_index"]
