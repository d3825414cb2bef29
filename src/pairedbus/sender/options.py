"""`SendAvailabilityOptions`: how a paired-namespace client fails over (paired-namespaces.md)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pairedbus import contract


def _check_range(field: str, value: timedelta, low: timedelta, high: timedelta) -> timedelta:
    if not low <= value <= high:
        raise ValueError(f"{field} must be between {low} and {high}, got {value}")
    return value


class SendAvailabilityOptions(BaseModel):
    """Keyword-only, validated at construction; durations accept a timedelta or seconds.

    - `backlog_queue_count`: backlog queues (`contract.backlog_queue_name`) to spread over (>= 1).
    - `failover_interval`: how long a run of retryable errors/timeouts must last, with no successful
      send in between, before the entity is switched to the backlog (0..60 min; 0 = the first
      triggering error switches).
    - `ping_primary_interval`: how often a switched entity is pinged (1 s..30 min).
    - `enable_syphon`: run a syphon inside the client.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backlog_queue_count: int = Field(default=contract.DEFAULT_BACKLOG_QUEUE_COUNT, ge=1)
    failover_interval: timedelta = contract.DEFAULT_FAILOVER_INTERVAL
    ping_primary_interval: timedelta = contract.DEFAULT_PING_PRIMARY_INTERVAL
    enable_syphon: bool = False

    @field_validator("failover_interval")
    @classmethod
    def _failover_interval_in_range(cls, value: timedelta) -> timedelta:
        return _check_range("failover_interval", value, contract.MIN_FAILOVER_INTERVAL, contract.MAX_FAILOVER_INTERVAL)

    @field_validator("ping_primary_interval")
    @classmethod
    def _ping_interval_in_range(cls, value: timedelta) -> timedelta:
        return _check_range(
            "ping_primary_interval",
            value,
            contract.MIN_PING_PRIMARY_INTERVAL,
            contract.MAX_PING_PRIMARY_INTERVAL,
        )
