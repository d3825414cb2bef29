"""How the stack config reports problems: every one kept, at most twenty shown, then a count of the rest."""

from __future__ import annotations

from pairedbus.iac.config.problems import MAX_REPORTED_PROBLEMS, StackConfigError, cap_problems, did_you_mean


def test_twenty_problems_are_shown() -> None:
    assert MAX_REPORTED_PROBLEMS == 20


def test_up_to_the_limit_every_problem_is_shown() -> None:
    problems = [f"pairedbus:queues[{i}].name: required" for i in range(20)]
    assert cap_problems(problems) == problems
    assert cap_problems(problems) is not problems  # a copy: the caller's list is not handed back


def test_past_the_limit_the_rest_is_one_counted_line() -> None:
    problems = [f"p{i}" for i in range(23)]
    assert cap_problems(problems) == [*(f"p{i}" for i in range(20)), "... and 3 more"]
    assert cap_problems(problems, limit=2) == ["p0", "p1", "... and 21 more"]


def test_the_error_keeps_every_problem_and_its_message_shows_the_capped_lines() -> None:
    problems = [f"p{i}" for i in range(25)]
    error = StackConfigError(iter(problems))
    assert error.problems == problems
    assert error.shown == [*problems[:20], "... and 5 more"]
    assert str(error) == "\n".join(error.shown)
    assert isinstance(error, ValueError)


def test_did_you_mean_names_the_closest_candidate_in_its_own_spelling() -> None:
    keys = ["backlogQueueCount", "resourceGroups", "queues"]
    assert did_you_mean("backlogqueuecount", keys) == " (did you mean backlogQueueCount?)"
    assert did_you_mean("backlogQueueCont", keys) == " (did you mean backlogQueueCount?)"


def test_did_you_mean_is_empty_when_nothing_is_close() -> None:
    assert did_you_mean("syphon", ["backlogQueueCount", "queues"]) == ""
    assert did_you_mean("queue", []) == ""
