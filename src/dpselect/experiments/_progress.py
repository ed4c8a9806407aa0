"""Progress of a run on stderr: a rich bar on a terminal, else a plain line every few seconds.

The plain line (for logs, CI, ``nohup``) reads
``percentile: 12/40 tasks, elapsed 0:00:31, ETA 0:01:12`` and is printed at
every ``interval`` seconds (also while a long task runs), plus once at the end.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["Progress", "format_duration"]


def format_duration(seconds: float) -> str:
    """H:MM:SS."""
    s = max(0, round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """Counts finished tasks; shows a bar (terminal) or plain lines (``enabled`` None: decide from stderr).

    Parameters
    ----------
    enabled
        True / False forces reporting on / off; None reports on a
        terminal with a bar and elsewhere with plain lines.
    """

    def __init__(
        self,
        label: str,
        total: int,
        enabled: bool | None = None,
        *,
        interval: float = 5.0,
        stream: TextIO | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.label, self.total, self.done = label, int(total), 0
        self._stream = stream if stream is not None else sys.stderr
        self._clock, self._interval = clock, float(interval)
        self._t0 = clock()
        self._bar: Any = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        if enabled is False or total <= 0:
            return
        if enabled is None and self._stream.isatty():
            self._start_bar()
        else:  # a daemon thread prints the plain line every `interval` seconds, even while a long task runs
            self._ticker = threading.Thread(target=self._tick, name="dpselect-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(self._interval):
            print(self.line(), file=self._stream, flush=True)

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=self._stream),
            transient=False,
        )
        self._bar.start()
        self._id = self._bar.add_task(self.label, total=self.total)

    def line(self) -> str:
        """The plain progress line for the current state."""
        elapsed = self._clock() - self._t0
        eta = "?" if self.done == 0 else format_duration(elapsed / self.done * (self.total - self.done))
        return f"{self.label}: {self.done}/{self.total} tasks, elapsed {format_duration(elapsed)}, ETA {eta}"

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.advance(self._id, n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._ticker = None
            print(self.line(), file=self._stream, flush=True)
