"""The core installs and imports with numpy and scipy only; each heavier domain names its extra.

Subprocess tests run a fresh interpreter in which a meta path finder refuses every optional
dependency (as if only ``pip install dpselect`` had run): the core must import and work there,
and each optional domain must raise an ImportError naming its extra.  A static test checks
the same from the source: module-level imports of the core are numpy and scipy only, and every
third-party package the source imports is declared in pyproject.toml.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import dpselect
from _source_imports import PACKAGE, SRC, imports, modules

#: Import names of every optional dependency (what the fresh core install does not have).
OPTIONAL = (
    "sklearn",
    "pandas",
    "dask",
    "distributed",
    "matplotlib",
    "typer",
    "click",
    "rich",
    "pyarrow",
    "bed_reader",
    "cyvcf2",
    "diffprivlib",
    "interpret",
    "markdown_it",
    "dp_accounting",
    "pgenlib",
    "isal",
)

#: Import name -> distribution name where they differ.
DISTRIBUTION = {
    "sklearn": "scikit-learn",
    "bed_reader": "bed-reader",
    "interpret": "interpret-core",
    "markdown_it": "markdown-it-py",
    "dp_accounting": "dp-accounting",
}

#: Modules that may import optional dependencies at module level (they require their extra).
OPTIONAL_DOMAINS = ("dpselect.apps.trees", "dpselect.experiments", "dpselect.cli", "dpselect.apps.genomics._io._vcf")

_BLOCK = """
import sys

class _Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in REFUSED:
            raise ModuleNotFoundError(f"No module named {name!r} (refused by the test)", name=name)
        return None

sys.meta_path.insert(0, _Refuse())
"""


def _run(code: str, *, block: bool = True, refuse: tuple[str, ...] = OPTIONAL) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter on this source tree, the modules ``refuse`` made unimportable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    source = (_BLOCK.replace("REFUSED", repr(set(refuse))) if block else "") + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=300)


def _last_json(proc: subprocess.CompletedProcess[str]) -> object:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


_CORE_WORK = """
import json, sys
import numpy as np
import dpselect
from dpselect.analysis import accuracy
from dpselect.apps import counts, genomics, quantiles

p = dpselect.SelectionProblem([22, 8, 17, 4, 0], global_sensitivity=1.0)
mech = dpselect.PermuteAndFlip(epsilon=1.0)
out = {
    "select": int(mech.select(p, rng=0)),
    "batch": np.bincount(mech.select(p, size=1000, rng=1), minlength=5).tolist(),
    "probabilities": mech.probabilities(p).tolist(),
    "accuracy": float(accuracy(mech, p)),
    "privacy": str(mech.privacy(p)),
    "snm_lln": dpselect.SmoothNoisyMax(1.0, 1e-6, noise="lln").probabilities(p).tolist(),
    "zcdp": dpselect.accounting.dp_to_zcdp(1.0, 1e-6),
    "student_t": float(dpselect.noise.StudentT(3).cdf(1.0)),
    "argmax": int(counts.private_argmax([22, 8, 17, 4, 0], 1.0, rng=3)),
    "median": float(quantiles.duff_median(np.linspace(0, 1, 101), 1.0, bounds=(0.0, 1.0), rng=4)),
    "tdt": genomics.tdt_statistic([60, 30], [20, 30]).tolist(),
    "top_snp": int(genomics.select_top_snp(genomics.TransmissionCounts([60, 30, 31], [20, 30, 29], 100), 5.0, rng=0)),
    "loaded": sorted({m.split(".")[0] for m in sys.modules} & OPTIONAL),
}
print(json.dumps(out))
""".replace("OPTIONAL", repr(set(OPTIONAL)))


def test_core_works_without_any_extra() -> None:
    """The core, the statistics apps and the genomics statistics give the same results with and without extras."""
    lean = _last_json(_run(_CORE_WORK))
    full = _last_json(_run(_CORE_WORK, block=False))
    assert isinstance(lean, dict) and isinstance(full, dict)
    assert lean.pop("loaded") == []
    full.pop("loaded")
    assert lean == full
    assert lean["tdt"] == [20.0, 0.0]  # (b - c)^2 / (b + c): 40^2/80 and 0


def test_import_dpselect_loads_no_optional_dependency() -> None:
    """Even with every extra installed, ``import dpselect`` and the statistics apps load none of them."""
    proc = _run(
        """
        import json, sys
        import dpselect
        dpselect.apps.counts, dpselect.apps.quantiles, dpselect.apps.genomics
        dpselect.analysis, dpselect.accounting, dpselect.noise, dpselect.mechanisms
        print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
        """,
        block=False,
    )
    loaded = set(_last_json(proc))  # type: ignore[arg-type]
    assert loaded & set(OPTIONAL) == set()


def test_import_dpselect_is_lazy() -> None:
    """``import dpselect`` does not load scipy.optimize / integrate / stats (most of its former import time)."""
    proc = _run("import json, sys, dpselect\nprint(json.dumps(sorted(sys.modules)))", block=False)
    loaded = set(_last_json(proc))  # type: ignore[arg-type]
    assert {"scipy.special", "numpy"} <= loaded  # the probe sees real imports
    assert loaded & {"scipy.optimize", "scipy.integrate", "scipy.stats", "scipy.interpolate"} == set()


@pytest.mark.parametrize(
    ("statement", "extra"),
    [
        ("import dpselect.apps.trees", "ml"),
        ("from dpselect.apps.trees import DPDecisionTreeClassifier", "ml"),
        ("import dpselect; dpselect.apps.trees", "ml"),
        ("import dpselect.experiments", "experiments"),
        ("import dpselect; dpselect.experiments", "experiments"),
        ("import dpselect.cli", "cli"),
        ("from dpselect.apps.genomics import vcf_transmission_counts", "vcf"),
        ("from dpselect.apps.genomics import transmission_counts; transmission_counts('cohort.vcf.gz')", "vcf"),
        (
            "from dpselect.apps.genomics import simulate_trios, transmission_counts; import tempfile, os;"
            "p = os.path.join(tempfile.mkdtemp(), 'toy'); simulate_trios(p, 10, 4, rng=0); transmission_counts(p)",
            "gwas",
        ),
    ],
)
def test_missing_extra_is_named(statement: str, extra: str) -> None:
    proc = _run(
        f"""
        try:
            {statement}
        except ImportError as exc:
            print(type(exc).__name__, exc)
        else:
            print("no error")
        """
    )
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("MissingExtraError "), last
    assert f'pip install "dpselect[{extra}]"' in last


def test_command_without_cli_extra_prints_one_line() -> None:
    """The ``dpselect`` console script (``dpselect.__main__:main``) names the extra instead of a traceback."""
    proc = _run("from dpselect.__main__ import main\nraise SystemExit(main(['demo']))")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "dpselect: error: the dpselect command line needs 'typer', which is not installed: "
        'pip install "dpselect[cli]"'
    ]


@pytest.mark.parametrize(
    ("args", "refuse", "extra"),
    [
        (["reproduce", "percentile", "--quick"], ("matplotlib",), "experiments"),
        (["tdt", "PLINK", "--epsilon", "1", "--k", "1"], ("dask", "distributed"), "gwas"),
    ],
)
def test_command_names_the_extra_of_a_subcommand(args: list[str], refuse: tuple[str, ...], extra: str) -> None:
    """With the cli extra but not the subcommand's, the command prints one line naming the missing extra."""
    pytest.importorskip("typer")
    proc = _run(
        f"""
        import os, tempfile
        from dpselect.apps.genomics import simulate_trios
        from dpselect.__main__ import main
        prefix = os.path.join(tempfile.mkdtemp(), "toy")
        simulate_trios(prefix, 10, 4, rng=0)
        args = [prefix if a == "PLINK" else a for a in {args!r}]
        raise SystemExit(main(args))
        """,
        refuse=refuse,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpselect: error: "), proc.stderr
    assert f'pip install "dpselect[{extra}]"' in lines[0]


def test_the_refusing_finder_works() -> None:
    """Negative control: the finder of these tests does make an optional dependency unimportable."""
    proc = _run("import sklearn")
    assert proc.returncode != 0 and "refused by the test" in proc.stderr


# --------------------------------------------------------------------------- static checks


def _third_party(target: str) -> str | None:
    top = target.split(".")[0]
    if not top or top == PACKAGE or top in sys.stdlib_module_names or top == "__future__":
        return None
    return top


def _in_optional_domain(name: str) -> bool:
    return any(name == d or name.startswith(d + ".") for d in OPTIONAL_DOMAINS)


def test_core_module_level_imports_are_numpy_and_scipy() -> None:
    """Outside the optional domains, module-level imports of third-party packages are numpy and scipy only."""
    bad = sorted(
        f"{imp.importer}:{imp.lineno} imports {imp.target}"
        for name in modules()
        if not _in_optional_domain(name)
        for imp in imports(name)
        if not imp.lazy and not imp.type_checking and _third_party(imp.target) not in (None, "numpy", "scipy")
    )
    assert not bad, "\n".join(bad)


def _requirement_name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower()


def test_pyproject_core_and_extras() -> None:
    """Core dependencies are numpy and scipy; every package the source imports is in core or an extra."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text())["project"]
    assert sorted(_requirement_name(r) for r in project["dependencies"]) == ["numpy", "scipy"]
    extras = project["optional-dependencies"]
    declared = {_requirement_name(r) for reqs in extras.values() for r in reqs} | {"numpy", "scipy"}
    used = {_third_party(imp.target) for name in modules() for imp in imports(name)} - {None}
    missing = sorted(u for u in used if DISTRIBUTION.get(u, u).replace("_", "-") not in declared)
    assert not missing, f"imported by dpselect but in no extra of pyproject.toml: {missing}"
    assert set(extras) >= {"ml", "gwas", "vcf", "cli", "experiments", "all", "test", "lint", "docs"}
    for extra in ("ml", "gwas", "vcf", "cli", "experiments"):
        assert any(extra in r for r in extras["all"]), f"'all' misses the {extra!r} extra"
    assert "dpselect[all]" in extras["test"]
    assert project["scripts"]["dpselect"] == "dpselect.__main__:main"


def test_optional_domains_are_listed() -> None:
    """The optional domains named in this file exist (a renamed module would silently escape the checks)."""
    assert all(d in modules() for d in OPTIONAL_DOMAINS)
    assert dpselect.__name__ == PACKAGE
