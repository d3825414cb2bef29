"""The Spark suite's one local session, handed out only when it works: a test that broke it (a pytest-timeout fired
inside a Py4J call, the SparkContext stopped, the JVM gone) costs the next test a new session, not its result.

Why a timeout poisons a shared session: pytest-timeout raises `Failed` (a BaseException) in the middle of Py4J's
`readline()`; Py4J only closes a connection on its own network errors, so the main thread keeps the connection whose
answer never came. The next call on it sends a new command and reads the *previous* one's answer, and so on for every
later call: `'NoneType' object has no attribute 'defaultParallelism'`, `int() argument must be ... not 'JavaObject'`
(seen by interrupting `Thread.sleep` in the JVM and counting a range after). Meanwhile the interrupted job still runs
in the JVM, on the suite's two cores.

So, after any test that used Spark and failed (`pytest_runtest_makereport` marks the keeper suspect), the keeper drops
the main thread's Py4J connection (the next call opens a fresh one), cancels the JVM's jobs and asks a fresh
connection, under a load-scaled guard, whether the SparkContext still runs. Before every test it checks what is free
to check (the JVM process alive, the context not stopped from Python, a one-call `isStopped`). When something is
wrong it kills that JVM, forgets PySpark's singletons and starts a new session."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.load import ON_TIMEOUT, guard

#: A healthy JVM answers two Py4J calls in milliseconds; this (scaled by the load) bounds a wedged one.
PROBE_S = 20.0
#: How long a killed JVM, or a gateway shut down, may take to go (scaled by the load).
STOP_S = 20.0


def build() -> Any:
    from pairedbus.pipeline.spark_session import build_session

    session = build_session("local[2]", app_name="pairedbus-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    return session


class SparkKeeper:
    """One SparkSession per process, started on first use and again whenever the last one is broken."""

    def __init__(self, start: Callable[[], Any] = build) -> None:
        self._start = start
        self._session: Any = None
        #: Sessions started so far (a rebuild shows as a second one).
        self.started = 0
        #: Why each session before the current one was replaced.
        self.replaced: list[str] = []
        #: Processes a start cut short had launched, killed.
        self.killed_at_start: list[int] = []
        #: Set after a test that used Spark failed: the next hand-out probes the session thoroughly first.
        self.suspect = False

    def session(self) -> Any:
        """A working session: the current one if it answers, else a new one."""
        if self._session is not None:
            problem = self.problem()
            if problem is None:
                return self._session
            self.discard(problem)
        self.suspect = False
        before = _children()
        try:
            self._session = self._start()
        except BaseException:
            # A start cut short (a timeout while the JVM boots) leaves a JVM that PySpark never learnt of: it would
            # outlive the run. Kill what this start launched, and let the next test start afresh.
            for pid in _children() - before:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                self.killed_at_start.append(pid)
            _forget_pyspark()
            raise
        self.started += 1
        return self._session

    def problem(self) -> str | None:
        """Why the current session cannot be handed out, or None."""
        session = self._session
        context = session.sparkContext
        process = getattr(context._gateway, "proc", None)
        if process is not None and process.poll() is not None:
            return f"its JVM exited (status {process.returncode})"
        if context._jsc is None:
            return "its SparkContext was stopped"
        if self.suspect:
            self.suspect = False
            _drop_thread_connection(context._gateway)
            return _probe(context)
        try:
            if context._jsc.sc().isStopped():
                return "its SparkContext was stopped in the JVM"
        except Exception as error:  # any answer but False: the session is unusable
            return f"the JVM did not answer: {type(error).__name__}: {error}"
        return None

    def discard(self, reason: str) -> None:
        """Kill the session's JVM and forget PySpark's singletons, so that the next build starts a new JVM."""
        session, self._session = self._session, None
        self.replaced.append(reason)
        context = session.sparkContext
        gateway = context._gateway
        process = getattr(gateway, "proc", None)
        if process is not None and process.poll() is None:
            process.kill()
            with contextlib.suppress(Exception):
                process.wait(guard(STOP_S))
        _bounded(lambda: gateway.shutdown(raise_exception=False), guard(STOP_S))
        if getattr(context, "_accumulatorServer", None) is not None:
            _bounded(context._accumulatorServer.shutdown, guard(STOP_S))
            context._accumulatorServer = None
        context._jsc = None
        _forget_pyspark()

    def cancel_jobs(self) -> None:
        """Cancel every job of the current session, from a thread of its own (the main thread may be waiting on one)."""
        if self._session is not None and self._session.sparkContext._jsc is not None:
            _bounded(self._session.sparkContext.cancelAllJobs, guard(PROBE_S))

    def close(self) -> None:
        if self._session is None:
            return
        if self.problem() is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._session.stop()
            self._session = None
        else:
            self.discard("the run ended")


def _forget_pyspark() -> None:
    """PySpark's singletons (the gateway, the context, the session), so that the next build launches a new JVM."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession, SQLContext

    with SparkContext._lock:
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    SQLContext._instantiatedContext = None


def _children() -> set[int]:
    """This process's child processes (Linux's /proc; none elsewhere)."""
    pids: set[int] = set()
    for children in Path("/proc/self/task").glob("*/children"):
        with contextlib.suppress(OSError, ValueError):
            pids.update(int(pid) for pid in children.read_text().split())
    return pids


def _drop_thread_connection(gateway: Any) -> None:
    """Close this thread's Py4J connection, whose last answer may still be on its way: the next call opens a new one
    (Py4J's ClientServer keeps one connection per thread, in a thread-local)."""
    client = gateway._gateway_client
    get = getattr(client, "get_thread_connection", None)
    connection = get() if get is not None else None
    if connection is None:
        return
    with contextlib.suppress(Exception):
        client.deque.remove(connection)
    with contextlib.suppress(Exception):
        connection.close(reset=True)
    with contextlib.suppress(AttributeError):
        del client.thread_connection.connection


def _probe(context: Any) -> str | None:
    """On a connection of its own: cancel what the failed test left running, then ask whether the context runs."""
    answer: list[str | None] = []

    def ask() -> None:
        try:
            context.cancelAllJobs()
            if context._jsc.sc().isStopped():
                answer.append("its SparkContext was stopped in the JVM")
            else:
                answer.append(None)
        except Exception as error:  # any answer but False: the session is unusable
            answer.append(f"the JVM did not answer: {type(error).__name__}: {error}")

    limit = guard(PROBE_S)
    if not _bounded(ask, limit):
        return f"the JVM did not answer within {limit:.0f} s"
    return answer[0]


def _bounded(action: Callable[[], object], seconds: float) -> bool:
    """Run `action` on a daemon thread; False when it has not returned within `seconds` (it is left behind)."""
    thread = threading.Thread(target=action, name="spark-keeper", daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


#: The keeper of this process (pytest-xdist runs the Spark suite on one worker; see tests/scheduling.py).
KEEPER = SparkKeeper()
ON_TIMEOUT.append(KEEPER.cancel_jobs)


@pytest.fixture(scope="session")
def spark_keeper() -> Iterator[SparkKeeper]:
    """For module fixtures that need a session (`spark_keeper.session()`): `spark` is per test."""
    yield KEEPER
    KEEPER.close()


@pytest.fixture
def spark(spark_keeper: SparkKeeper) -> Any:
    """A working local[2] session, checked before every test and replaced when a test broke it."""
    return spark_keeper.session()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.failed and "spark_keeper" in getattr(item, "fixturenames", ()):
        KEEPER.suspect = True
    return report
