"""The command line shared by the scripts that write a table under ``docs/_generated/``.

``python docs/scripts/NAME.py`` writes the table; ``--check`` exits 1 when the committed file
differs from what the script computes now (the docs tests use the same comparison).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(argv: list[str] | None, description: str, out: Path, text: Callable[[], str], script: str) -> int:
    """Parse ``argv`` (``--check``), then write ``text()`` to ``out`` or compare it with ``out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed table is stale")
    args = parser.parse_args(argv)
    rendered = text()
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != rendered:
            print(f"{out} is stale: run python {script}", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rendered, encoding="utf-8")
    print(f"wrote {out}")
    return 0
