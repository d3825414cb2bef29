"""The drill's progress: sending (with rate and ETA), then settling.

On a terminal, two bars drawn with rich; piped or in CI, one plain line every `LINE_EVERY` seconds
(a log keeps what a bar would overwrite, and a long settle is never silent).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, Task, TaskID


def _rate_column() -> ProgressColumn:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        """Messages per second of the running phase."""

        def render(self, task: Task) -> Text:
            return Text(f"{task.speed:,.0f} msg/s" if task.speed else "- msg/s", style="cyan")

    return Rate()


#: Seconds between two progress lines when the stream is not a terminal.
LINE_EVERY = 10.0


class DrillProgress:
    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        #: Bars on a terminal; otherwise lines.
        self.enabled = bool(isatty and isatty()) if enabled is None else enabled
        self.total = max(total, 1)
        self._clock = clock
        self._started = self._last_line = clock()
        self._progress: Progress | None = None
        self._sending: TaskID | None = None
        self._settling: TaskID | None = None

    def _start(self) -> tuple[Progress, TaskID]:
        """The bars, and the sending task's id (added with them)."""
        if self._progress is None or self._sending is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description:9}"),
                BarColumn(),
                MofNCompleteColumn(),
                _rate_column(),
                TimeRemainingColumn(),
                TextColumn("{task.fields[detail]}", style="dim"),
                console=Console(file=self.stream, force_terminal=True),
                auto_refresh=False,
            )
            self._progress.start()
            self._sending = self._progress.add_task("sending", total=self.total, detail="")
        return self._progress, self._sending

    def _line(self, phase: str, done: int, total: int, detail: str) -> None:
        """Off a terminal: one line every LINE_EVERY seconds."""
        now = self._clock()
        if now - self._last_line < LINE_EVERY:
            return
        self._last_line = now
        text = f"{phase} {done:,}/{total:,}" + (f" · {detail}" if detail else "")
        print(f"{text} · {now - self._started:.0f} s", file=self.stream, flush=True)

    def sending(self, sent: int, detail: str = "") -> None:
        if not self.enabled:
            self._line("sending", sent, self.total, detail)
            return
        progress, sending = self._start()
        progress.update(sending, completed=sent, detail=detail)
        progress.refresh()

    def settling(self, delivered: int, expected: int, detail: str = "") -> None:
        """After the last send: deliveries recorded against those expected (topic fan-out included)."""
        if not self.enabled:
            self._line("settling", delivered, max(expected, 1), detail)
            return
        progress, sending = self._start()
        if self._settling is None:
            progress.update(sending, completed=self.total)
            self._settling = progress.add_task("settling", total=max(expected, 1), detail="")
        progress.update(self._settling, completed=delivered, total=max(expected, 1), detail=detail)
        progress.refresh()

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.refresh()
            self._progress.stop()
