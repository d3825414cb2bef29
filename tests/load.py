"""Hang guards that stretch with the machine's load: one helper for every bound in the tests that is there only to
stop a hung test, never to time one.

A bound written for an idle machine (a JVM starts in 8 s, a subprocess answers in 1 s) is a speed limit in disguise
on a busy one: the same JVM took 33-40 s to start beside other work (2 cores, load average 4). `guard(seconds)`
multiplies such a bound by `load_factor()`: the run-queue length per core, at least 1, at most MAX_FACTOR, so that a
real hang still ends the test. tests/conftest.py applies it to pytest-timeout's limits (the 300 s default and every
`pytest.mark.timeout`); a test applies it to its own waits (`asyncio.wait_for(x, guard(10))`, `timeout=guard(60)`).
Bounds that are the behaviour under test (an operation's `timeout=0.01` that must expire) are not guards.

The kernel's load averages lag a load that has just arrived by a minute, and a limit fixed when a test starts misses
a load that comes later: two copies of the Spark suite started side by side gave the sample audit's module fixture
868 s (factor 2.9, the load of the first minute); the load then rose to 20-27, the audit took longer, and the timeout
errored the 11 tests that use it, in each copy. So the factor also follows the run queue of the last seconds (RECENT_S,
sampled once a second by a daemon thread of each process), and pytest-timeout's limit is checked again when it
expires: a test ends only when it has run longer than its limit stretched by the highest load seen meanwhile.
PAIREDBUS_LOAD_FACTOR=<number> pins the factor (a test of the guards themselves; a run that knows its load)."""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: A guard never stretches beyond this many times its idle value: a hung test still ends.
MAX_FACTOR = 8.0
#: The time constant of the run queue's own short average (the kernel's shortest is a minute).
RECENT_S = 10.0
#: Pins the factor when set (a number within [1, MAX_FACTOR]).
PIN = "PAIREDBUS_LOAD_FACTOR"
LOADAVG = Path("/proc/loadavg")


def runnable() -> float | None:
    """The tasks runnable right now, the reader itself left out (/proc/loadavg's fourth field); None where there is
    no such file."""
    try:
        return max(0.0, float(LOADAVG.read_text().split()[3].split("/")[0]) - 1)
    except (OSError, IndexError, ValueError):
        return None


class RecentLoad:
    """An exponential average of the run queue over the last RECENT_S seconds, the kernel's load average made faster:
    fed once a second by a daemon thread, started with the run queue of the moment it was first asked."""

    def __init__(
        self, sample: Callable[[], float | None] = runnable, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._sample = sample
        self._clock = clock
        self._value: float | None = None
        self._at = 0.0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def observe(self) -> None:
        """Fold the run queue of this moment into the average."""
        now, queue = self._clock(), self._sample()
        if queue is None:
            return
        with self._lock:
            if self._value is None:
                self._value = queue
            else:
                weight = math.exp(-(now - self._at) / RECENT_S)
                self._value = weight * self._value + (1 - weight) * queue
            self._at = now

    def value(self) -> float | None:
        if self._thread is None or not self._thread.is_alive():
            # Started on first use (a process that imports this module but never asks pays nothing); also after a
            # fork, which keeps no thread: each pytest-xdist worker feeds its own.
            self.observe()
            self._thread = threading.Thread(target=self._feed, name="load-sampler", daemon=True)
            self._thread.start()
        with self._lock:
            return self._value

    def _feed(self) -> None:
        while True:
            time.sleep(1.0)
            self.observe()


RECENT = RecentLoad()


def load_factor() -> float:
    """The largest of the 1- and 5-minute load averages and the last seconds' run queue, per core, within
    [1, MAX_FACTOR]: the short one follows a load that has just arrived, the 5-minute one a load that has just paused;
    PAIREDBUS_LOAD_FACTOR, when set, instead."""
    pinned = os.environ.get(PIN)
    if pinned:
        return min(MAX_FACTOR, max(1.0, float(pinned)))
    try:
        one, five, _ = os.getloadavg()
    except OSError:  # not every platform has a load average
        return 1.0
    load = max(one, five, RECENT.value() or 0.0)
    return min(MAX_FACTOR, max(1.0, load / (os.cpu_count() or 1)))


def guard(seconds: float) -> float:
    """`seconds`, a bound that an idle machine stays far inside, stretched by the machine's current load."""
    return seconds * load_factor()


#: Called (in the main thread, before the test is failed) when pytest-timeout's limit expires: a resource a test may
#: be blocked in gets the chance to let go (tests/pipeline/spark_keeper.py cancels the JVM's jobs, so that the Py4J
#: calls the interrupted code makes on its way out, in `finally` blocks, do not wait for a job of unbounded length).
ON_TIMEOUT: list[Callable[[], None]] = []


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Any:
    """pytest-timeout's limit for this test (the 300 s default or its `timeout` mark), stretched by the machine's load:
    a hang guard, not a speed limit. When it expires, the limit is stretched by the load of that moment if that is
    higher, and the timer armed again for the rest; only a test past its longest limit fails, after the ON_TIMEOUT
    callbacks have run."""
    import pytest_timeout

    started = time.monotonic()
    longest = guard(settings.timeout)
    armed = pytest_timeout.pytest_timeout_set_timer(item, settings._replace(timeout=longest))
    fail = signal.getsignal(signal.SIGALRM)
    if settings.method == "signal" and callable(fail):  # pytest-timeout's handler (it uses a thread off the main one)

        def expire(signum: int, frame: Any) -> None:
            nonlocal longest
            longest = max(longest, guard(settings.timeout))
            left = longest - (time.monotonic() - started)
            if left > 0.1:  # the load rose while the test ran: it has not yet used the time this load gives it
                signal.setitimer(signal.ITIMER_REAL, left)
                return
            for callback in ON_TIMEOUT:
                callback()
            # pytest-timeout's own failure (its handler's), saying the limit that ran out rather than the first one
            pytest_timeout.timeout_sigalrm(item, settings._replace(timeout=round(longest, 1)))

        signal.signal(signal.SIGALRM, expire)
    return armed
