"""Entity properties with the service's defaults (`servicebus/properties.py`): values the service refuses are
bad requests (HTTP 400), partitioning and sessions cannot change once the entity exists, and names follow the service's rules."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pairedbus.servicebus.errors import ErrorKind, ServiceError
from pairedbus.servicebus.properties import EntitySettings, EntityType, reject_size_not_offered, validate_entity_name


def _refused(call, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ServiceError) as caught:
        call(*args, **kwargs)
    assert caught.value.kind is ErrorKind.BAD_REQUEST  # HTTP 400 on both front-ends
    return str(caught.value)


def test_a_new_queue_has_the_services_defaults_and_durations_may_be_iso_text() -> None:
    settings = EntitySettings(EntityType.QUEUE, {"lock_duration": "PT30S", "name": "ignored"})
    assert settings.lock_seconds == 30 and settings.max_delivery_count == 10
    assert settings.ttl_seconds is None  # TimeSpan.MaxValue: never expires
    assert settings.duplicate_window_seconds == 600 and not settings.requires_session


def test_out_of_range_values_are_refused_and_leave_the_settings_unchanged() -> None:
    settings = EntitySettings(EntityType.QUEUE)
    assert "between 5 seconds and 5 minutes" in _refused(settings.update, {"lock_duration": timedelta(minutes=6)})
    assert "max_delivery_count must be between 1" in _refused(settings.update, {"max_delivery_count": 0})
    assert "not a TimeSpan or ISO 8601 duration" in _refused(settings.update, {"lock_duration": "a minute"})
    assert settings.lock_seconds == 60


def test_sessions_and_partitioning_cannot_change_on_an_existing_entity() -> None:
    settings = EntitySettings(EntityType.QUEUE, {"requires_session": True})
    assert "requires_session property of an existing entity" in _refused(settings.update, {"requires_session": False})
    settings.update({"requires_session": True, "max_delivery_count": 3})  # the same value is fine
    assert settings.max_delivery_count == 3


def test_a_size_the_tier_does_not_offer_is_refused() -> None:
    reject_size_not_offered("Standard", 5120)
    assert "is not one of" in _refused(reject_size_not_offered, "Standard", 81920)
    reject_size_not_offered("Premium", 81920)


@pytest.mark.parametrize(
    ("name", "kind", "valid"),
    [
        ("orders/eu", EntityType.QUEUE, True),
        ("orders/", EntityType.QUEUE, False),
        ("orders//eu", EntityType.QUEUE, False),
        ("orders.", EntityType.TOPIC, False),
        ("-orders", EntityType.QUEUE, False),
        ("audit/eu", EntityType.SUBSCRIPTION, False),
        ("a" * 50, EntityType.SUBSCRIPTION, True),
        ("a" * 51, EntityType.SUBSCRIPTION, False),
        ("a" * 260, EntityType.QUEUE, True),
        ("a" * 261, EntityType.QUEUE, False),
    ],
)
def test_entity_names_follow_the_services_rules(name: str, kind: EntityType, valid: bool) -> None:
    if valid:
        validate_entity_name(name, kind)
    else:
        assert "name" in _refused(validate_entity_name, name, kind)
