"""A progress line on stderr for long genomics runs (counting, simulation, VCF parsing)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress", "make_progress"]

#: Seconds between progress lines off a terminal (a short job prints its final line only).
_EVERY = 10.0


class Progress:
    """Thread-safe progress of ``total`` units: one rewritten line on a terminal, else a line every 10 s.

    ``total = 0``: unknown (a stream); the line gives the units done.  Off a
    terminal (logs, CI) a line is printed at most every ``_EVERY`` seconds, so a
    job of a few seconds prints only its final line.

    ``advance`` may be called from Dask's worker threads; ``close`` prints the
    final line (units, seconds, rate).
    """

    def __init__(self, total: int, label: str, unit: str = "SNPs", stream: TextIO | None = None) -> None:
        self.total = max(int(total), 0)
        self.label = label
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self._last = 0.0
        self._start = time.perf_counter()
        self._lock = threading.Lock()

    def _line(self) -> str:
        dt = max(time.perf_counter() - self._start, 1e-9)
        of = f"/{self.total:,} {self.unit} ({100.0 * self.done / self.total:.0f}%)" if self.total else f" {self.unit}"
        return f"{self.label}: {self.done:,}{of}, {dt:.1f} s, {self.done / dt:,.0f} {self.unit}/s"

    def advance(self, units: int) -> None:
        with self._lock:
            self.done += int(units)
            now = time.perf_counter()
            if self.tty:
                if now - self._last >= 0.2:
                    self._last = now
                    self.stream.write("\r" + self._line())
                    self.stream.flush()
            elif now - max(self._last, self._start) >= _EVERY and self.done != self.total:
                self._last = now
                self.stream.write(self._line() + "\n")
                self.stream.flush()

    def close(self) -> None:
        with self._lock:
            self.stream.write(("\r" if self.tty else "") + self._line() + "\n")
            self.stream.flush()


def make_progress(progress: Any, total: int, label: str, unit: str = "SNPs") -> Progress | None:
    """None for ``progress=False``; a :class:`Progress` on stderr for True (validated: a bool)."""
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    return Progress(total, label, unit) if progress else None
