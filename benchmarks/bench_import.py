"""Benchmark: CPU time of ``import dpselect`` versus ``import scipy.special``.

Plain script (no pytest): prints both figures and their ratio.  Usage::

    PYTHONPATH=src python benchmarks/bench_import.py [--repeat 3]

Each import runs in a fresh interpreter (``python -c``) of the same
environment, timed inside it with ``time.process_time`` around the import
statement only (interpreter start-up excluded); the figure is the best of
``--repeat`` runs, the two modules alternating so that load drifts hit both.
``scipy.special`` is the floor: dpselect's core needs it, and numpy with it.
The target is a ratio <= 1.3.  Under load the two figures scatter by tens of
milliseconds, so the script also prints dpselect's own share, measured in one
interpreter: the CPU time of ``import dpselect`` right after ``import scipy.special``
(numpy and scipy.special already loaded).  Also printed: which heavy modules the import
pulled in (none of scipy.optimize, scipy.integrate, scipy.stats, sklearn,
pandas, dask, matplotlib, typer should appear).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parents[1] / "src"

#: Modules that ``import dpselect`` must not load (each costs a large share of the import).
HEAVY = (
    "scipy.optimize",
    "scipy.integrate",
    "scipy.stats",
    "sklearn",
    "pandas",
    "dask",
    "distributed",
    "matplotlib",
    "typer",
    "rich",
    "pyarrow",
    "bed_reader",
    "cyvcf2",
)

_PROBE = """
import json, sys, time
{before}
t = time.process_time()
import {module}
cpu = time.process_time() - t
print(json.dumps({{"cpu": cpu, "heavy": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def import_cpu(module: str, before: str = "") -> tuple[float, list[str]]:
    """CPU seconds of ``import module`` in a fresh interpreter (after running ``before``), and the heavy modules."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_SRC), env.get("PYTHONPATH", "")) if p)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module, heavy=HEAVY, before=before)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    res = json.loads(out.strip().splitlines()[-1])
    return float(res["cpu"]), list(res["heavy"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh interpreters per module (best is kept)")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"scipy.special": [], "dpselect": []}
    own: list[float] = []
    heavy: list[str] = []
    for _ in range(args.repeat):
        for module in times:
            cpu, loaded = import_cpu(module)
            times[module].append(cpu)
            if module == "dpselect":
                heavy = loaded
        own.append(import_cpu("dpselect", before="import scipy.special")[0])
    floor, ours = min(times["scipy.special"]), min(times["dpselect"])
    print(f"python {sys.version.split()[0]}, best of {args.repeat} fresh interpreters (CPU time of the import)")
    print(f"{'import scipy.special':<24}{floor:8.3f} s   runs: {', '.join(f'{t:.3f}' for t in times['scipy.special'])}")
    print(f"{'import dpselect':<24}{ours:8.3f} s   runs: {', '.join(f'{t:.3f}' for t in times['dpselect'])}")
    print(f"{'ratio':<24}{ours / floor:8.2f}     (target <= 1.30)")
    print(
        f"{'dpselect own share':<24}{min(own):8.3f} s   (import dpselect after import scipy.special; "
        f"{(floor + min(own)) / floor:.2f} x the floor)"
    )
    print(f"heavy modules loaded by `import dpselect`: {', '.join(heavy) if heavy else 'none'}")


if __name__ == "__main__":
    main()
