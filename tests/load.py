"""Hang guards that stretch with the machine's load: one helper for every bound in the tests that is there only to
stop a hung test, never to time one.

A bound written for an idle machine (a JVM starts in 8 s, a subprocess answers in 1 s) is a speed limit in disguise
on a busy one: the same JVM took 33-40 s to start beside other work (2 cores, load average 4). `guard(seconds)`
multiplies such a bound by `load_factor()`: the run-queue length per core, at least 1, at most MAX_FACTOR, so that a
real hang still ends the test. tests/conftest.py applies it to pytest-timeout's limits (the 300 s default and every
`pytest.mark.timeout`); a test applies it to its own waits (`asyncio.wait_for(x, guard(10))`, `timeout=guard(60)`).
Bounds that are the behaviour under test (an operation's `timeout=0.01` that must expire) are not guards."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import pytest

#: A guard never stretches beyond this many times its idle value: a hung test still ends.
MAX_FACTOR = 8.0


def load_factor() -> float:
    """The larger of the 1- and 5-minute load averages per core, within [1, MAX_FACTOR]: the 1-minute one follows a
    load that has just arrived, the 5-minute one a load that has just paused (both lag a change)."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:  # not every platform has a load average
        return 1.0
    return min(MAX_FACTOR, max(1.0, max(one, five) / (os.cpu_count() or 1)))


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
    a hang guard, not a speed limit. When it expires, the ON_TIMEOUT callbacks run first."""
    import pytest_timeout

    armed = pytest_timeout.pytest_timeout_set_timer(item, settings._replace(timeout=guard(settings.timeout)))
    fail = signal.getsignal(signal.SIGALRM)
    if settings.method == "signal" and callable(fail):  # pytest-timeout's handler (it uses a thread off the main one)

        def expire(signum: int, frame: Any) -> None:
            for callback in ON_TIMEOUT:
                callback()
            fail(signum, frame)

        signal.signal(signal.SIGALRM, expire)
    return armed
