"""Entity properties with the service's defaults, as the administration client reads them back."""

from __future__ import annotations

import re
from datetime import timedelta
from enum import StrEnum
from typing import Any

from pairedbus import contract, durations, limits
from pairedbus.servicebus.errors import bad_request

#: TimeSpan.MaxValue as the admin client returns it (a timedelta, to the microsecond).
TIMESPAN_MAX = durations.duration_timedelta(contract.TIMESPAN_MAX_ISO)
DEFAULT_LOCK_DURATION = timedelta(minutes=1)
DEFAULT_DUPLICATE_WINDOW = timedelta(minutes=10)
DEFAULT_MAX_DELIVERY_COUNT = 10
#: Durations at least this long are "forever" in the fake (no expiry bookkeeping).
_FOREVER = timedelta(days=365 * 1000)

_ENTITY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
_SUBSCRIPTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class EntityType(StrEnum):
    """Which of the service's messaging entities a settings object belongs to."""

    QUEUE = "queue"
    TOPIC = "topic"
    SUBSCRIPTION = "subscription"


QUEUE_DEFAULTS: dict[str, Any] = {
    "authorization_rules": [],
    "auto_delete_on_idle": TIMESPAN_MAX,
    "dead_lettering_on_message_expiration": False,
    "default_message_time_to_live": TIMESPAN_MAX,
    "duplicate_detection_history_time_window": DEFAULT_DUPLICATE_WINDOW,
    "availability_status": "Available",
    "enable_batched_operations": True,
    "enable_express": False,
    "enable_partitioning": False,
    "lock_duration": DEFAULT_LOCK_DURATION,
    "max_delivery_count": DEFAULT_MAX_DELIVERY_COUNT,
    "max_size_in_megabytes": contract.DEFAULT_ENTITY_SIZE_MB,
    "requires_duplicate_detection": False,
    "requires_session": False,
    "status": "Active",
    "forward_to": None,
    "user_metadata": None,
    "forward_dead_lettered_messages_to": None,
    "max_message_size_in_kilobytes": None,
}

TOPIC_DEFAULTS: dict[str, Any] = {
    "default_message_time_to_live": TIMESPAN_MAX,
    "max_size_in_megabytes": contract.DEFAULT_ENTITY_SIZE_MB,
    "requires_duplicate_detection": False,
    "duplicate_detection_history_time_window": DEFAULT_DUPLICATE_WINDOW,
    "enable_batched_operations": True,
    "size_in_bytes": 0,
    "filtering_messages_before_publishing": False,
    "authorization_rules": [],
    "status": "Active",
    "support_ordering": True,
    "auto_delete_on_idle": TIMESPAN_MAX,
    "enable_partitioning": False,
    "availability_status": "Available",
    "enable_express": False,
    "user_metadata": None,
    "max_message_size_in_kilobytes": None,
}

SUBSCRIPTION_DEFAULTS: dict[str, Any] = {
    "lock_duration": DEFAULT_LOCK_DURATION,
    "requires_session": False,
    "default_message_time_to_live": TIMESPAN_MAX,
    "dead_lettering_on_message_expiration": False,
    "dead_lettering_on_filter_evaluation_exceptions": True,
    "max_delivery_count": DEFAULT_MAX_DELIVERY_COUNT,
    "enable_batched_operations": True,
    "status": "Active",
    "forward_to": None,
    "user_metadata": None,
    "forward_dead_lettered_messages_to": None,
    "auto_delete_on_idle": TIMESPAN_MAX,
    "availability_status": "Available",
}

DEFAULTS = {
    EntityType.QUEUE: QUEUE_DEFAULTS,
    EntityType.TOPIC: TOPIC_DEFAULTS,
    EntityType.SUBSCRIPTION: SUBSCRIPTION_DEFAULTS,
}
#: The properties that hold a duration (ISO 8601 on the ARM wire, a timedelta in the admin client).
DURATION_PROPERTIES = frozenset(
    {
        "auto_delete_on_idle",
        "default_message_time_to_live",
        "duplicate_detection_history_time_window",
        "lock_duration",
    }
)
#: Properties the service refuses to change on an existing entity.
_IMMUTABLE = ("requires_session", "enable_partitioning")


def reject_size_not_offered(sku: str, size_in_megabytes: int) -> None:
    """Refuse (HTTP 400) a max_size_in_megabytes the namespace's tier does not offer."""
    allowed = contract.ENTITY_SIZES_MB.get(sku, contract.STANDARD_ENTITY_SIZES_MB)
    if size_in_megabytes not in allowed:
        raise bad_request(f"max_size_in_megabytes {size_in_megabytes} is not one of {allowed} on {sku}")


def _duration(name: str, value: Any) -> timedelta:
    """A duration property's value; an ISO 8601 text above .NET TimeSpan.MaxValue is refused, as
    the service refuses it (what the SDK's isodate makes of the spec's maximum, `...5.477581S`)."""
    if isinstance(value, timedelta):
        return value
    try:
        ticks = durations.duration_ticks(value)
    except ValueError:
        raise bad_request(f"{name}: {value!r} is not a TimeSpan or ISO 8601 duration") from None
    if ticks > durations.TIMESPAN_MAX_TICKS:
        raise bad_request(f"{name}: {value!r} exceeds TimeSpan.MaxValue ({contract.TIMESPAN_MAX_ISO})")
    return durations.duration_timedelta(value)


class EntitySettings:
    """Property values (SDK attribute names) and the numbers the hot path needs, precomputed."""

    def __init__(self, kind: EntityType, values: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.values: dict[str, Any] = dict(DEFAULTS[kind])
        self.update(values or {}, creating=True)

    def update(self, values: dict[str, Any], *, creating: bool = False) -> None:
        defaults = DEFAULTS[self.kind]
        new = dict(self.values)
        for key, value in values.items():
            if key not in defaults:
                continue  # read-only or unknown fields (name, size_in_bytes...) are ignored
            if value is None and key not in ("forward_to", "user_metadata", "forward_dead_lettered_messages_to"):
                continue  # None keeps the current value, as in the real models
            if key in DURATION_PROPERTIES:
                value = _duration(key, value)
            new[key] = value
        if not creating:
            for key in _IMMUTABLE:
                if key in new and new[key] != self.values.get(key):
                    raise bad_request(f"The value for the {key} property of an existing entity cannot be changed.")
        _validate(new)
        self.values = new
        self._derive()

    def _derive(self) -> None:
        v = self.values
        self.lock_seconds: float = v.get("lock_duration", DEFAULT_LOCK_DURATION).total_seconds()
        self.max_delivery_count: int = v.get("max_delivery_count", DEFAULT_MAX_DELIVERY_COUNT)
        ttl = v["default_message_time_to_live"]
        self.ttl_seconds: float | None = None if ttl >= _FOREVER else ttl.total_seconds()
        self.dead_lettering_on_message_expiration: bool = bool(v.get("dead_lettering_on_message_expiration"))
        self.requires_session: bool = bool(v.get("requires_session"))
        self.requires_duplicate_detection: bool = bool(v.get("requires_duplicate_detection"))
        self.duplicate_window_seconds: float = v.get(
            "duplicate_detection_history_time_window", DEFAULT_DUPLICATE_WINDOW
        ).total_seconds()
        self.max_size_in_megabytes: int = v.get("max_size_in_megabytes") or contract.DEFAULT_ENTITY_SIZE_MB
        self.forward_to: str | None = v.get("forward_to") or None
        self.forward_dead_lettered_messages_to: str | None = v.get("forward_dead_lettered_messages_to") or None


def _validate(values: dict[str, Any]) -> None:
    lock = values.get("lock_duration")
    if lock is not None and not (limits.MIN_LOCK_DURATION <= lock <= limits.MAX_LOCK_DURATION):
        raise bad_request(f"lock_duration must be between 5 seconds and 5 minutes, got {lock}")
    mdc = values.get("max_delivery_count")
    if mdc is not None and not (limits.MIN_MAX_DELIVERY_COUNT <= mdc <= limits.MAX_MAX_DELIVERY_COUNT):
        raise bad_request(f"max_delivery_count must be between 1 and {contract.INT32_MAX}, got {mdc}")
    ttl = values.get("default_message_time_to_live")
    if ttl is not None and ttl <= timedelta(0):
        raise bad_request("default_message_time_to_live must be positive")


def validate_entity_name(name: str, kind: EntityType) -> None:
    if kind is EntityType.SUBSCRIPTION:
        ok = bool(_SUBSCRIPTION_NAME.match(name)) and len(name) <= contract.SUBSCRIPTION_NAME_MAX
    else:
        ok = (
            bool(_ENTITY_NAME.match(name))
            and len(name) <= contract.ENTITY_NAME_MAX
            and not name.endswith(("/", "."))
            and "//" not in name
        )
    if not ok:
        raise bad_request(f"The {kind.value} name {name!r} is invalid.")
