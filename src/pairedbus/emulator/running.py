"""Running the emulator beside code that blocks: on a thread of its own with its own event loop.

The sync SDK blocks its thread on the socket, so a broker on the same thread's loop would never
answer. `EmulatorThread` serves from a daemon thread; `call` runs a function on the broker's loop
(the model is not thread-safe: arrange and inspect it through `call`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pairedbus.emulator.emulator import Emulator

__all__ = ["EmulatorThread", "emulator_thread"]

T = TypeVar("T")
#: Bound on starting and stopping (a loopback listen and close take milliseconds).
_START_STOP_SECONDS = 30.0


class EmulatorThread:
    def __init__(self, namespaces: Iterable[str] = ("primary", "secondary"), **kwargs: Any) -> None:
        self.emulator = Emulator(namespaces, **kwargs)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="pairedbus-emulator", daemon=True)

    def start(self) -> EmulatorThread:
        self._thread.start()
        self._run(self.emulator.start())
        return self

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(_START_STOP_SECONDS)

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the broker's loop and return its result."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        self._loop.call_soon_threadsafe(run)
        return future.result(_START_STOP_SECONDS)

    def connection_string(self, name: str) -> str:
        return self.emulator.connection_string(name)

    def stop(self) -> None:
        try:
            self._run(self.emulator.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(_START_STOP_SECONDS)
            if not self._thread.is_alive():
                self._loop.close()


@contextmanager
def emulator_thread(namespaces: Iterable[str] = ("primary", "secondary"), **kwargs: Any) -> Iterator[EmulatorThread]:
    runner = EmulatorThread(namespaces, **kwargs).start()
    try:
        yield runner
    finally:
        runner.stop()
