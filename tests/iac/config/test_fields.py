"""Field types of the stack config (`iac/config/fields.py`), each checking one value on its own, validated
through pydantic's TypeAdapter exactly as the model validates them."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import pytest
from pydantic import TypeAdapter, ValidationError

from pairedbus.iac.config.fields import DeliveryCount, IpRule, LockDuration, LogSelection, at_most, duration_between


def _error(annotation: Any, value: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(annotation).validate_python(value)
    [error] = caught.value.errors()
    return error["msg"]


def test_a_lock_duration_is_an_iso_duration_from_5_seconds_to_5_minutes() -> None:
    adapter = TypeAdapter(LockDuration)
    assert adapter.validate_python("PT5S") == "PT5S" and adapter.validate_python("PT5M") == "PT5M"
    assert adapter.validate_python(None) is None
    assert "expected a duration from PT5S to PT5M, got 'PT6M'" in _error(LockDuration, "PT6M")
    assert "expected a duration from PT5S to PT5M, got 'PT4S'" in _error(LockDuration, "PT4S")
    assert "expected an ISO 8601 duration such as PT1M or P14D, got '5 minutes'" in _error(LockDuration, "5 minutes")


def test_a_duration_without_an_upper_bound_goes_up_to_timespan_max() -> None:
    check = duration_between(timedelta(minutes=1), None)
    assert check("P10675199DT2H48M5.4775807S") == "P10675199DT2H48M5.4775807S"
    with pytest.raises(ValueError, match=r"to P10675199DT2H48M5\.4775807S"):
        check("P10675200D")


def test_a_delivery_count_refuses_yaml_true_for_one() -> None:
    assert TypeAdapter(DeliveryCount).validate_python(1) == 1
    assert "expected a number, got True" in _error(DeliveryCount, True)
    assert "greater than or equal to 1" in _error(DeliveryCount, 0)


def test_an_ip_rule_is_an_ipv4_address_or_range_with_host_bits_zero() -> None:
    assert TypeAdapter(IpRule).validate_python("203.0.113.0/24") == "203.0.113.0/24"
    assert TypeAdapter(IpRule).validate_python("203.0.113.7") == "203.0.113.7"
    assert "host bits zero" in _error(IpRule, "203.0.113.7/24")
    assert "expected an IPv4 address" in _error(IpRule, "2001:db8::/32")


def test_a_log_selection_is_known_categories_each_once_and_not_empty() -> None:
    assert TypeAdapter(LogSelection).validate_python(["allLogs"]) == ["allLogs"]
    assert "(exact case), got 'alllogs'" in _error(LogSelection, ["alllogs"])
    assert "each category or group once" in _error(LogSelection, ["allLogs", "allLogs"])
    assert "expected at least one category or group" in _error(LogSelection, [])


def test_at_most_says_how_many_were_given() -> None:
    three = Annotated[list[int], at_most(3, "queues")]
    assert TypeAdapter(three).validate_python([1, 2, 3]) == [1, 2, 3]
    assert "expected at most 3 queues (Service Bus quotas), got 4" in _error(three, [1, 2, 3, 4])
