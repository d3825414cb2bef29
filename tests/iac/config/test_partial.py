"""Cross-field rules over a config whose fields are not all valid: every problem of a stack in one pass, and no
rule reporting a consequence of a value that is reported already."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, ValidationError

from pairedbus.iac.config.partial import cross_field_problems_despite


class Namespace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    location: str


class Stack(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    primary: Namespace
    secondary: Namespace
    backlog_queue_count: int = 3
    queues: list[str] = []


def regions_differ(config: Stack):
    if config.primary.location == config.secondary.location:
        yield "secondary.location: expected another region than the primary's"


def enough_backlog(config: Stack):
    if config.backlog_queue_count < len(config.queues):
        yield "backlogQueueCount: expected at least one backlog queue per queue"


RULES = (regions_differ, enough_backlog)


def problems(values: dict) -> list[str]:
    try:
        Stack.model_validate(values)
    except ValidationError as exc:
        errors = exc.errors()
    else:
        errors = []
    return cross_field_problems_despite(Stack, values, errors, RULES)


def test_rules_on_valid_parts_still_report_beside_an_invalid_field() -> None:
    values = {
        "primary": {"name": "a", "location": "westeurope"},
        "secondary": {"name": 7, "location": "westeurope"},  # name invalid, location fine
        "backlog_queue_count": 1,
        "queues": ["x", "y"],
    }
    assert problems(values) == [
        "secondary.location: expected another region than the primary's",
        "backlogQueueCount: expected at least one backlog queue per queue",
    ]


def test_a_rule_that_reads_an_invalid_value_is_skipped() -> None:
    values = {
        "primary": {"name": "a", "location": "westeurope"},
        "secondary": {"name": "b", "location": ["not", "a", "string"]},
        "backlog_queue_count": "many",
        "queues": ["x", "y"],
    }
    assert problems(values) == []  # both rules touch a value pydantic reports on its own


def test_a_missing_required_part_is_invalid_and_a_missing_default_is_the_default() -> None:
    values = {"primary": {"name": "a", "location": "westeurope"}, "queues": ["x", "y", "z", "w"]}
    assert problems(values) == ["backlogQueueCount: expected at least one backlog queue per queue"]


def test_an_unknown_key_is_dropped_rather_than_blocking_the_rules() -> None:
    values = {
        "primary": {"name": "a", "location": "westeurope", "zone": 1},
        "secondary": {"name": "b", "location": "westeurope"},
    }
    assert problems(values) == ["secondary.location: expected another region than the primary's"]


def test_the_callers_values_are_left_as_they_were() -> None:
    values = {"primary": {"name": 1, "location": "westeurope"}, "secondary": {"name": "b", "location": "northeurope"}}
    before = repr(values)
    problems(values)
    assert repr(values) == before
