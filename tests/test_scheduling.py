"""How the suite is spread over pytest-xdist workers (tests/scheduling.py)."""

from __future__ import annotations

from pathlib import Path

from tests.scheduling import FIRST, SAMPLES, SHARED_WORKER, next_scope

CLUSTER, AUDIT_COMMAND = "tests/pipeline/test_cluster.py", "tests/pipeline/test_audit_command.py"


def test_the_modules_that_mostly_wait_go_first_in_their_order() -> None:
    assert FIRST[:2] == (CLUSTER, AUDIT_COMMAND)
    waiting = ["tests/sender/test_sender.py", SAMPLES, AUDIT_COMMAND, "tests/drill/test_run.py", CLUSTER]
    assert next_scope(waiting, "gw1", {"gw0", "gw1"}) == CLUSTER
    assert next_scope(waiting[:4], "gw0", {"gw0", "gw1"}) == AUDIT_COMMAND
    assert next_scope(waiting[:2], "gw0", {"gw0", "gw1"}) == "tests/sender/test_sender.py"


def test_the_samples_go_last_to_the_worker_that_runs_them_in_the_background() -> None:
    assert next_scope([SAMPLES, "tests/sender/test_sender.py"], "gw0", {"gw0", "gw1"}) == "tests/sender/test_sender.py"
    assert next_scope([SAMPLES], "gw1", {"gw0", "gw1"}) is None
    assert next_scope([SAMPLES], "gw0", {"gw0", "gw1"}) == SAMPLES
    assert next_scope([SAMPLES], "gw1", {"gw1"}) == SAMPLES  # its worker is gone: anyone takes them
    assert next_scope([], "gw0", {"gw0"}) is None


def test_the_spark_suite_is_spread_and_the_wheel_users_share_a_worker() -> None:
    assert not any(prefix.startswith("tests/pipeline") for prefix in SHARED_WORKER)
    assert SHARED_WORKER["tests/test_packaging.py"] == SHARED_WORKER["tests/iac/test_user_program.py"]


def test_every_module_named_exists() -> None:
    """A renamed module would silently lose its place in the order."""
    repo = Path(__file__).resolve().parents[1]
    assert [m for m in (*FIRST, SAMPLES, *SHARED_WORKER) if not (repo / m).is_file()] == []
