"""Pydantic's errors as the stack config's problem lines: `expected ..., got ...`, key paths as written in the
stack file, the closest known key for an unknown one, and the right case for an enum value."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pairedbus.iac.config.messages import config_problem, inner_model, loc_path


class Identity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["ServicePrincipal", "User"]


class Namespace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    capacity: int = 1
    identity: Identity | None = None


class Root(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    primary: Namespace
    backlog_queue_count: int = Field(3, alias="backlogQueueCount")
    queues: list[Namespace] = []


def _lines(data: dict) -> list[str]:
    with pytest.raises(ValidationError) as raised:
        Root.model_validate(data)
    return [f"{loc_path(tuple(e['loc']))}: {config_problem(e, Root)}" for e in raised.value.errors()]


def test_key_paths_are_dotted_with_list_indices_in_brackets() -> None:
    assert loc_path(("queues", 2, "name")) == "queues[2].name"
    assert loc_path(("primary",)) == "primary"
    assert loc_path(()) == ""


def test_a_missing_value() -> None:
    assert _lines({}) == ["primary: expected a value, none given"]


def test_a_wrong_type_says_what_was_expected_and_what_was_given() -> None:
    assert _lines({"primary": {"name": "a", "capacity": "two"}}) == [
        "primary.capacity: expected a valid integer, unable to parse string as an integer, got 'two'"
    ]


def test_a_long_value_is_shortened_to_eighty_characters() -> None:
    (line,) = _lines({"primary": {"name": "a", "capacity": "x" * 200}})
    assert line.endswith("got '" + "x" * 76 + "...")


def test_an_unknown_top_level_key_suggests_the_full_pulumi_key() -> None:
    assert _lines({"primary": {"name": "a"}, "backlogQueueCont": 2}) == [
        "backlogQueueCont: unknown key (did you mean pairedbus:backlogQueueCount?)"
    ]


def test_an_unknown_nested_key_suggests_the_sibling_key() -> None:
    assert _lines({"primary": {"name": "a"}, "queues": [{"name": "q", "capacty": 2}]}) == [
        "queues[0].capacty: unknown key (did you mean capacity?)"
    ]


def test_an_unknown_key_nothing_resembles_points_at_the_reference() -> None:
    assert _lines({"primary": {"name": "a", "zzz": 1}}) == [
        "primary.zzz: unknown key (check its spelling against the config reference in README.md)"
    ]


def test_an_enum_value_in_the_wrong_case_gets_the_right_spelling() -> None:
    (line,) = _lines({"primary": {"name": "a", "identity": {"type": "serviceprincipal"}}})
    assert line.startswith("primary.identity.type: expected ")
    assert line.endswith("got 'serviceprincipal' (did you mean 'ServicePrincipal'? the case matters)")


def test_an_enum_value_that_is_simply_wrong_gets_no_hint() -> None:
    (line,) = _lines({"primary": {"name": "a", "identity": {"type": "Robot"}}})
    assert line.endswith("got 'Robot'")


def test_a_validators_own_expected_message_is_kept_as_it_is() -> None:
    error = {"type": "value_error", "loc": ("primary",), "msg": "Value error, expected 6-50 characters", "input": "x"}
    assert config_problem(error, Root) == "expected 6-50 characters"


def test_the_model_inside_an_annotation_is_found() -> None:
    assert inner_model(Identity | None) is Identity
    assert inner_model(list[Namespace]) is Namespace
    assert inner_model(dict[str, list[Identity]]) is Identity
    assert inner_model(int | None) is None
