"""The private median of a CSV column (Duff's dataset-distance exponential mechanism).

Writes a small synthetic CSV of ages to a temporary directory, reads the
column back and releases its median under epsilon-DP (one person added or
removed).  The bounds [0, 120] are public: they are chosen from what an age
can be, not from the data.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np

from dpselect.apps.quantiles import duff_median

EPSILON = 1.0
BOUNDS = (0.0, 120.0)


def write_csv(path: Path, rng: np.random.Generator) -> None:
    ages = rng.normal(41.0, 12.0, size=2_000).clip(18, 95).round()
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "age"])
        writer.writerows((i, int(a)) for i, a in enumerate(ages))


def read_column(path: Path, column: str) -> np.ndarray:
    with path.open(newline="") as f:
        return np.array([float(row[column]) for row in csv.DictReader(f)])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "people.csv"
        write_csv(path, np.random.default_rng(7))
        ages = read_column(path, "age")
    released = duff_median(ages, EPSILON, bounds=BOUNDS, rng=2024)
    print(f"records: {ages.size}")
    print(f"private median: {released:.2f}")
    print(f"guarantee: {EPSILON:g}-DP under add/remove (Duff, mathematics §6.1)")
    # For illustration only: comparing with the true median reads the private data.
    print(f"true median (not private): {np.median(ages):.2f}")


if __name__ == "__main__":
    main()
