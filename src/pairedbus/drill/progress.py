"""A one-line progress bar for the drill, drawn only when stderr is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

WIDTH = 30


class ProgressBar:
    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.total = max(total, 1)
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._drawn = False

    def draw(self, done: int, detail: str = "") -> None:
        if not self.enabled:
            return
        filled = min(WIDTH, WIDTH * done // self.total)
        bar = "#" * filled + "." * (WIDTH - filled)
        self.stream.write(f"\r[{bar}] {done}/{self.total} {detail}\x1b[K")
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


Status = Callable[[], tuple[int, str]]
