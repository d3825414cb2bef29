"""One output layer for every command: rich on a terminal, plain stable text when piped.

Colour only on a terminal and never under `NO_COLOR` (https://no-color.org); piped output has no
escape codes and a fixed width so that scripts and diffs see the same text every run. Every
output path is checked before the work starts, so a typo costs nothing.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pairedbus.errors import OutputError

if TYPE_CHECKING:  # rich is imported where output is drawn: the checks below run without it (a bare Spark driver)
    from rich.console import Console
    from rich.progress import Progress, TaskID

#: Width of piped output: wide enough for a resource URN, fixed so the text is stable.
PIPED_WIDTH = 160
#: How many problems a command prints before it says how many more there are.
MAX_PROBLEMS = 20


def is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def colour_allowed(stream: IO[str]) -> bool:
    """A terminal, and no `NO_COLOR` of any value (the convention says: present and not empty)."""
    return is_terminal(stream) and not os.environ.get("NO_COLOR")


def console(stream: IO[str] | None = None) -> Console:
    """A console for `stream` (stdout by default): styled on a terminal, plain when piped."""
    from rich.console import Console

    stream = stream if stream is not None else sys.stdout
    terminal = is_terminal(stream)
    return Console(
        file=stream,
        force_terminal=terminal,
        no_color=not colour_allowed(stream),
        color_system="auto" if colour_allowed(stream) else None,
        width=None if terminal else PIPED_WIDTH,
        highlight=False,
        emoji=False,
    )


def bounded(problems: Iterable[str], limit: int = MAX_PROBLEMS) -> Iterator[str]:
    """The first `limit` problems, then one line with how many more there were."""
    items = list(problems)
    yield from items[:limit]
    if len(items) > limit:
        yield f"... and {len(items) - limit} more"


def check_writable(path: Path | None, flag: str) -> None:
    """Fail now, naming `flag`, if `path` cannot be written: before any render, drill or job.

    Creates missing parent folders (as writing later would) and writes a scratch file beside the
    target, so permissions, read-only mounts and "a folder of that name" are all caught.
    """
    if path is None:
        return
    if path.is_dir():
        raise OutputError(f"{flag} {path}: is a directory, expected a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".pairedbus-check-", delete=True):
            pass
    except OSError as exc:
        raise OutputError(f"{flag} {path}: not writable ({exc.strerror or type(exc).__name__})") from None


def check_writable_dir(path: Path | None, flag: str) -> None:
    """Like `check_writable`, for an output folder."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise OutputError(f"{flag} {path}: exists and is not a directory")
    check_writable(path / ".pairedbus-probe", flag)


class Steps:
    """Progress of long work whose total is not known up front (an export walking a subscription, a render):
    a spinner, the count of steps done (`unit`) and the current one, on a terminal's stderr only; quiet
    when piped, in CI, or not `enabled`. Use as a context manager; call it with each step's label (from any
    thread), and `set_description` when what is being done changes."""

    def __init__(
        self, description: str, stream: IO[str] | None = None, *, unit: str = "done", enabled: bool = True
    ) -> None:
        self.description = description
        self.stream = stream if stream is not None else sys.stderr
        self.unit = unit
        self.enabled = enabled
        self.done = 0
        self._lock = threading.Lock()
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Steps:
        if self.enabled and is_terminal(self.stream):
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TextColumn("{task.completed:,} " + self.unit, style="cyan"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[step]}", style="dim"),
                console=Console(file=self.stream, no_color=not colour_allowed(self.stream)),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=None, step="")
        return self

    def __call__(self, step: str) -> None:
        with self._lock:  # a render registers from the SDK's executor threads
            self.done += 1
            done = self.done
        if self._progress is not None and self._task is not None:  # both set together by __enter__
            self._progress.update(self._task, completed=done, step=step)

    def set_description(self, description: str) -> None:
        self.description = description
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=description)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
