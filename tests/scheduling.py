"""How scripts/test spreads the suite over pytest-xdist workers (`-n 2 --dist loadfile`; tests/conftest.py hooks
it in): each module on one worker, so that its module fixtures are built once; a few groups share a worker; the
longest units go first; the SDK samples go last, to the worker that ran them in the background."""

from __future__ import annotations

from typing import Any

import pytest

#: Tests that share one pytest-xdist worker, by path prefix: the Spark suite, so that the run starts one JVM for it
#: (its session fixture is per process), and the two users of the wheel, so that it is built once.
SHARED_WORKER: dict[str, str] = {
    "tests/pipeline/": "spark",
    "tests/test_packaging.py": "wheel",
    "tests/iac/test_user_program.py": "wheel",
}
#: Spark modules whose audit runs in JVMs of its own (a subprocess; spark-submit to a standalone cluster): they share
#: nothing with the Spark suite's session, so they go to whichever worker is free instead of lengthening its worker.
OWN_JVM: frozenset[str] = frozenset(
    {"tests/pipeline/test_cluster.py", "tests/pipeline/test_audit_command.py", "tests/pipeline/test_spark_keeper.py"}
)
#: Work units handed out first, in this order: the longest, and mostly waiting (Spark jobs of fixed cost, a cluster,
#: a JVM started per audit), so that handed out last they would end the run on one worker while the other idles.
#: Only an order: the rest follow, the modules with the most tests first (pytest-xdist's own order).
FIRST: tuple[str, ...] = ("spark", "tests/pipeline/test_cluster.py", "tests/pipeline/test_audit_command.py")
#: The SDK samples run in the background from the end of collection on the first worker
#: (tests/testing/samples/conftest.py); their module is handed to that worker last, when they have finished.
SAMPLES = "tests/testing/samples/test_samples.py"
SAMPLES_WORKER = "gw0"


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile` (scripts/test) with the SHARED_WORKER groups, the FIRST units first and the samples last
    on SAMPLES_WORKER: each module on one worker, so that its module fixtures are built once. Not
    `--dist loadgroup` with `xdist_group` marks: pytest-xdist 3.8 renames a grouped test through
    `item._nodeid`, which pytest 9.2 no longer reads."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            scope = next_scope(list(self.workqueue), node.gateway.id, {n.gateway.id for n in self.nodes})
            if scope is None:
                return  # only the samples are left, and they wait for their worker
            self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return Scheduling(config, log)


def scope_of(module: str) -> str:
    """The work unit of a test module: its SHARED_WORKER group, else the module alone."""
    if module in OWN_JVM:
        return module
    return next((group for prefix, group in SHARED_WORKER.items() if module.startswith(prefix)), module)


def next_scope(waiting: list[str], worker: str, workers: set[str]) -> str | None:
    """The work unit `worker` takes next: a FIRST unit in FIRST's order, else the first waiting one; the
    samples only on SAMPLES_WORKER once nothing else waits (on any worker if that one is gone)."""
    first = sorted((scope for scope in waiting if scope in FIRST), key=FIRST.index)
    rest = [scope for scope in waiting if scope not in FIRST and scope != SAMPLES]
    if first or rest:
        return (first or rest)[0]
    if SAMPLES in waiting and (worker == SAMPLES_WORKER or SAMPLES_WORKER not in workers):
        return SAMPLES
    return None
