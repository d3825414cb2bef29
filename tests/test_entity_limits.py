"""Azure's limits on entity properties, as the literals of .NET's AdministrationClientConstants, and
checked where the stack config, the fake and the drill meet them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pairedbus import entity_limits


def test_duration_limits_are_the_dotnet_administration_client_constants():
    # AdministrationClientConstants.cs: MinimumAllowedTimeToLive = 1 s, Minimum/MaximumLockDuration
    # = 5 s / 5 min, MinimumAllowedAutoDeleteOnIdle = 5 min, duplicate window 20 s .. 7 days.
    assert entity_limits.MIN_TIME_TO_LIVE == timedelta(seconds=1)
    assert (entity_limits.MIN_LOCK_DURATION, entity_limits.MAX_LOCK_DURATION) == (
        timedelta(seconds=5),
        timedelta(minutes=5),
    )
    assert entity_limits.MIN_AUTO_DELETE_ON_IDLE == timedelta(minutes=5)
    assert entity_limits.MIN_DUPLICATE_DETECTION_WINDOW == timedelta(seconds=20)
    assert entity_limits.MAX_DUPLICATE_DETECTION_WINDOW == timedelta(days=7)
    assert (entity_limits.MIN_MAX_DELIVERY_COUNT, entity_limits.MAX_MAX_DELIVERY_COUNT) == (1, 2_147_483_647)


@pytest.mark.parametrize("lock", [timedelta(seconds=4), timedelta(minutes=5, seconds=1)])
def test_the_fake_refuses_a_lock_duration_outside_the_service_limits(lock: timedelta) -> None:
    from azure.core.exceptions import HttpResponseError

    from pairedbus.servicebus.properties import EntitySettings, EntityType

    with pytest.raises(HttpResponseError, match="lock_duration"):
        EntitySettings(EntityType.QUEUE, {"lock_duration": lock})


@pytest.mark.parametrize("lock", [timedelta(seconds=5), timedelta(minutes=5)])
def test_the_fake_accepts_the_lock_duration_limits_themselves(lock: timedelta) -> None:
    from pairedbus.servicebus.properties import EntitySettings, EntityType

    assert EntitySettings(EntityType.QUEUE, {"lock_duration": lock}).lock_seconds == lock.total_seconds()


def test_the_drill_locks_its_destinations_for_the_service_minimum_and_its_backlog_for_20_s() -> None:
    # The backlog's 20 s: the syphon renews no lock while a message waits for its session's turn
    # (tests/drill/test_syphon_key_turn_locks.py); at 5 s the harsh drill never settled.
    from pairedbus.drill import world
    from pairedbus.drill.scenario import DrillConfig

    assert world.DESTINATION_LOCK == timedelta(seconds=5)
    assert DrillConfig().backlog_lock_duration == timedelta(seconds=20)
