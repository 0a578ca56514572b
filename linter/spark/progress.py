"""A progress bar for pipeline runs: the current step, and the tasks of the running Spark stages.

Spark's own console progress is off (``spark.ui.showConsoleProgress``); this polls the status
tracker instead and draws one rich bar on stderr. Without a terminal it prints each step once.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import Any, Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from linter.escape import printable


class RunProgress:
    """``with RunProgress() as progress: progress.step("...")``; ``watch(spark)`` adds Spark's tasks."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.live = self.console.is_terminal
        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=self.console, transient=True, disable=not self.live)
        self.task = self.bar.add_task("starting", total=None)
        self._spark: Any = None
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> Self:
        self.bar.start()
        self._poller.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._poller.join(timeout=2)
        self.bar.stop()

    def step(self, text: str) -> None:
        """A new step of the run: the bar's label (a line of its own without a terminal)."""
        text = printable(text)  # steps name inputs (a FRAMES path, a repository): never a terminal sequence
        self.bar.update(self.task, description=text, total=None, completed=0)
        if not self.live:
            print(f"krpc-lint: {text}", file=sys.stderr, flush=True)

    def watch(self, spark: Any) -> None:
        """Follow the running stages' tasks of this Spark session."""
        self._spark = spark

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            if self._spark is None:
                continue
            try:
                tracker = self._spark.sparkContext.statusTracker()
                stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            except Exception:  # noqa: BLE001, S112 - the session may be stopping; the bar is cosmetic
                continue
            stages = [s for s in stages if s is not None]
            if stages:
                total = sum(s.numTasks for s in stages)
                self.bar.update(self.task, total=total, completed=sum(s.numCompletedTasks for s in stages))
