"""How the suite is spread over pytest-xdist workers (tests/scheduling.py)."""

from __future__ import annotations

from pathlib import Path

from tests.scheduling import FIRST, OWN_JVM, SAMPLES, SHARED_WORKER, next_scope, scope_of

CLUSTER, AUDIT_COMMAND = "tests/pipeline/test_cluster.py", "tests/pipeline/test_audit_command.py"
BOTH = {"gw0", "gw1"}


def test_the_spark_suite_shares_one_worker_but_the_modules_with_their_own_jvm_do_not() -> None:
    assert scope_of("tests/pipeline/test_focus.py") == scope_of("tests/pipeline/test_read.py") == "spark"
    assert scope_of(CLUSTER) == CLUSTER and scope_of(AUDIT_COMMAND) == AUDIT_COMMAND
    assert scope_of("tests/test_packaging.py") == scope_of("tests/iac/test_user_program.py") == "wheel"
    assert scope_of("tests/sender/test_sender.py") == "tests/sender/test_sender.py"


def test_the_longest_units_go_first_in_their_order() -> None:
    assert FIRST == ("spark", CLUSTER, AUDIT_COMMAND)
    waiting = ["tests/sender/test_sender.py", SAMPLES, AUDIT_COMMAND, "tests/drill/test_run.py", CLUSTER, "spark"]
    assert next_scope(waiting, "gw0", BOTH) == "spark"
    assert next_scope(waiting[:5], "gw1", BOTH) == CLUSTER
    assert next_scope(waiting[:4], "gw0", BOTH) == AUDIT_COMMAND
    assert next_scope(waiting[:2], "gw0", BOTH) == "tests/sender/test_sender.py"


def test_the_samples_go_last_to_the_worker_that_runs_them_in_the_background() -> None:
    assert next_scope([SAMPLES, "tests/sender/test_sender.py"], "gw0", BOTH) == "tests/sender/test_sender.py"
    assert next_scope([SAMPLES], "gw1", BOTH) is None
    assert next_scope([SAMPLES], "gw0", BOTH) == SAMPLES
    assert next_scope([SAMPLES], "gw1", {"gw1"}) == SAMPLES  # its worker is gone: anyone takes them
    assert next_scope([], "gw0", {"gw0"}) is None


def test_every_module_named_exists() -> None:
    """A renamed module would silently lose its place."""
    repo = Path(__file__).resolve().parents[1]
    named = [*OWN_JVM, SAMPLES, *SHARED_WORKER, *(unit for unit in FIRST if unit.startswith("tests/"))]
    assert [m for m in named if not (repo / m).exists()] == []
