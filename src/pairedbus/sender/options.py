"""`SendAvailabilityOptions`: how a paired-namespace client fails over (paired-namespaces.md).

Strict: a bool is not a count, a string is not a number, and every error names its option."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Annotated, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, field_validator

from pairedbus import contract


def _duration(value: object) -> object:
    """A timedelta, or seconds as an int/float; never a bool or a string."""
    if isinstance(value, bool) or not isinstance(value, (timedelta, int, float)):
        raise ValueError(f"expected a timedelta or a number of seconds, got {type(value).__name__} {value!r}")
    return value


Duration = Annotated[timedelta, BeforeValidator(_duration)]


def _check_range(field: str, value: timedelta, low: timedelta, high: timedelta) -> timedelta:
    if not low <= value <= high:
        raise ValueError(f"{field} must be between {low} and {high}, got {value}")
    return value


class SendAvailabilityOptions(BaseModel):
    """Keyword-only, validated at construction; durations accept a timedelta or seconds.

    - `backlog_queue_count`: backlog queues (`contract.backlog_queue_name`) to spread over
      (`contract.MIN_BACKLOG_QUEUE_COUNT`..`contract.MAX_BACKLOG_QUEUE_COUNT`: no more than a namespace holds).
    - `failover_interval`: how long a run of retryable errors/timeouts must last, with no successful
      send in between, before the entity is switched to the backlog (0..60 min; 0 = the first
      triggering error switches).
    - `ping_primary_interval`: how often a switched entity is pinged (1 s..30 min).
    - `operation_timeout`: the bound on every call the client makes to Service Bus when the caller
      gives none (sends, schedules, pings, backlog sends, metadata reads). partitioning.md: it must
      exceed 15 s so the service can re-route to another fragment; 60 s recommended (default).
    - `backlog_retry_interval`: how long a backlog queue that failed stays out of the rotation
      before it is tried again (1 s..60 min, default 1 min).
    - `enable_syphon`: run a syphon inside the client (restarted with fresh connections if it faults).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backlog_queue_count: StrictInt = Field(
        default=contract.DEFAULT_BACKLOG_QUEUE_COUNT,
        ge=contract.MIN_BACKLOG_QUEUE_COUNT,
        le=contract.MAX_BACKLOG_QUEUE_COUNT,
    )
    failover_interval: Duration = contract.DEFAULT_FAILOVER_INTERVAL
    ping_primary_interval: Duration = contract.DEFAULT_PING_PRIMARY_INTERVAL
    operation_timeout: Duration = contract.RECOMMENDED_CLIENT_OPERATION_TIMEOUT
    backlog_retry_interval: Duration = timedelta(minutes=1)
    enable_syphon: StrictBool = False

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

    @field_validator("operation_timeout")
    @classmethod
    def _operation_timeout_above_minimum(cls, value: timedelta) -> timedelta:
        return check_operation_timeout("operation_timeout", value)

    @field_validator("backlog_retry_interval")
    @classmethod
    def _retry_interval_in_range(cls, value: timedelta) -> timedelta:
        return _check_range("backlog_retry_interval", value, timedelta(seconds=1), timedelta(minutes=60))


def check_operation_timeout(field: str, value: timedelta) -> timedelta:
    """partitioning.md: a client operation timeout must exceed 15 s (and need not exceed a day)."""
    if not contract.MIN_CLIENT_OPERATION_TIMEOUT < value <= timedelta(days=1):
        raise ValueError(
            f"{field} must exceed {contract.MIN_CLIENT_OPERATION_TIMEOUT.total_seconds():g} s (the service needs "
            f"the time to re-route to another fragment; {contract.RECOMMENDED_CLIENT_OPERATION_TIMEOUT.total_seconds():g}"
            f" s recommended) and be at most a day, got {value}"
        )
    return value


#: How long the SDK's default retry policy (azure-servicebus 7.15.0: 3 retries, back-off factor 0.8 s)
#: takes to give up on one send against an unavailable primary: at most 15.9 s over the wire
#: (benchmarks/failover_bench.py; each fault's figure in docs/benchmarks.md#figures-behind-the-codes-comments).
SDK_DEFAULT_GIVE_UP: Final = timedelta(seconds=16)
#: The policy used instead when the failover interval is shorter than that: one retry after half a
#: second, which parks within seconds and raises no send to the caller, where `retry_total=0` raised
#: some (docs/benchmarks.md#figures-behind-the-codes-comments).
SHORT_INTERVAL_RETRIES: Final = {"retry_total": 1, "retry_backoff_factor": 0.5}


def sdk_client_kwargs(
    options: SendAvailabilityOptions, client_kwargs: Mapping[str, object] | None
) -> dict[str, object]:
    """The keyword arguments of the namespaces' ServiceBusClients. A failing send reaches the
    failover clock only once the SDK's own retries give up, so the first parked message comes
    `max(failover_interval, SDK give-up time)` after the fault: with an interval shorter than the
    default policy's give-up time, that policy is replaced by one that gives up sooner. Any
    `retry_*` keyword the caller passes wins."""
    kwargs = dict(client_kwargs or {})
    if options.failover_interval < SDK_DEFAULT_GIVE_UP and not any(k.startswith("retry_") for k in kwargs):
        kwargs.update(SHORT_INTERVAL_RETRIES)
    return kwargs
