"""An audit's independent steps at once, each on a driver thread of its own.

Spark plans a query on the thread that submits it, and on a small estate the planning is most of a
step's time (the sample audit: seconds of the JVM's analysis and optimization before each of its
queries, one core busy, the other idle). Steps that do not depend on each other (the FOCUS exports'
read beside the inventory's, the quarantine beside the pairing, the written tables side by side)
run at once, so one's planning overlaps another's tasks or planning on a second core. Spark accepts
jobs from several threads of one driver; each step runs with the local properties (the job group,
the job's description) of the thread that started it, and its jobs in a scheduler pool of its thread's
(`POOL`): with `spark.scheduler.mode=FAIR` (spark_session.build_session) the free task slots go to the
pool running fewest tasks, where Spark's default (FIFO) hands them all to the earliest job, so that a
step on the run's critical path (the pairing's one task) does not queue behind a wide one beside it (the
quarantine's 13 tasks over the input files: 4.9 s waited in the sample audit at load 6).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import ParamSpec, TypeVar

from pyspark.sql import SparkSession
from pyspark.util import inheritable_thread_target

P = ParamSpec("P")
T = TypeVar("T")

#: Threads for the steps: a step waiting for another's result holds one, so there are enough for every
#: step of an audit (about 20); how many run Spark work at once is up to the steps' dependencies.
MAX_STEPS = 24


#: The local property naming the scheduler pool of a thread's jobs.
POOL = "spark.scheduler.pool"


def done(value: T) -> Future[T]:
    """A future that already holds `value`."""
    future: Future[T] = Future()
    future.set_result(value)
    return future


class Steps:
    """Steps started in threads; leaving the block waits for every step that started (one that had not
    is cancelled), so that no query of a run outlives it. A step may wait for the result of a step
    started before it, never after: the pool takes steps in order, so the one waited for has a thread."""

    def __init__(self, spark: SparkSession, workers: int = MAX_STEPS) -> None:
        self._spark = spark
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pairedbus-audit-step")

    def __enter__(self) -> Steps:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._pool.shutdown(wait=True, cancel_futures=exc is not None)

    def start(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """`fn(*args, **kwargs)` in a thread, with this thread's Spark local properties as they are now and
        a scheduler pool of its own thread's."""
        context = self._spark.sparkContext

        def pooled(*args: P.args, **kwargs: P.kwargs) -> T:
            # One pool a worker thread (their names are numbered): as many pools as threads, however many runs.
            context.setLocalProperty(POOL, threading.current_thread().name)
            return fn(*args, **kwargs)

        return self._pool.submit(inheritable_thread_target(self._spark)(pooled), *args, **kwargs)
