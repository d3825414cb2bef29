"""The syphon's keyword-only options, validated when a Syphon is constructed."""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from pairedbus import contract, durations
from pairedbus.syphon.backlog_directory import validate_namespace_resource_id

#: Backlog queues are created with this lock duration (the spec's table); renewal is timed by it.
BACKLOG_LOCK_DURATION = durations.duration_timedelta(str(contract.BACKLOG_QUEUE_PROPERTIES["lockDuration"]))


class SyphonOptions(BaseModel):
    """Tuning of a Syphon; every field has a documented default and range."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Backlog queue names start with `contract.backlog_queue_prefix(backlog_prefix)`; None: the primary's
    #: namespace name (its first DNS label).
    backlog_prefix: str | None = Field(default=None, min_length=1)
    #: The pair's backlog queue count (BacklogQueueCount: `contract.DEFAULT_BACKLOG_QUEUE_COUNT`, the senders'
    #: `backlog_queue_count`, the IaC's), in `contract.MIN/MAX_BACKLOG_QUEUE_COUNT`; None: not known. Known, `drain()`
    #: opens the receivers of queues 0..count-1 while its first listing runs, so their first receives start as
    #: it lands (warm_receivers.py). The listing still decides what is served: extra queues too, missing ones not.
    backlog_queue_count: StrictInt | None = Field(
        default=None, ge=contract.MIN_BACKLOG_QUEUE_COUNT, le=contract.MAX_BACKLOG_QUEUE_COUNT
    )
    #: Messages received and not yet settled, across all backlog queues (1..100,000).
    max_in_flight: StrictInt = Field(default=2_000, ge=1, le=100_000)
    #: Body bytes received and not yet settled, across all backlog queues (256 KB..4 GiB): with
    #: large messages this, not the count, bounds memory (no receive starts while over it).
    max_in_flight_bytes: StrictInt = Field(default=64 * 1024 * 1024, ge=contract.MAX_MESSAGE_SIZE_BYTES, le=4 * 1024**3)
    #: Largest receive per call on one backlog queue (1..5,000; capped by what the in-flight budget
    #: has free). A busy queue takes up to this much per round trip, an idle one only a probe.
    #: Measured (syphon_bench): 500 with 4 receivers per busy queue keeps a 2,000-message budget
    #: busier than 1,000 with one, at less CPU per message than 250 with 8.
    receive_batch_size: StrictInt = Field(default=500, ge=1, le=5_000)
    #: Receivers one busy backlog queue may have at once (1..8): a receive holds its grant for a
    #: round trip, so with one receiver the slots freed meanwhile wait for it to return; more
    #: receivers take them at once. Extra receivers close when their receive comes back short.
    receivers_per_queue: StrictInt = Field(default=4, ge=1, le=8)
    #: Senders (each its own AMQP connection) one destination in the primary may have at once
    #: (1..16): the SDK's aio sender carries one send at a time (`destinations.SenderPool`), so
    #: sends to one destination overlap only across senders. A sender is added only while every
    #: one is busy.
    senders_per_destination: StrictInt = Field(default=4, ge=1, le=16)
    #: Settlements one backlog receiver has outstanding at most (1..5,000; a group of completes waiting together,
    #: `sdk.complete_together`, counts once); None: no bound. Not bounded by default, from figures on both
    #: brokers (docs/benchmarks.md, "... round 4"): 16 slowed the syphon on the fake (steady state at 2 queues
    #: 4,881 -> 1,760 msg/s) and over the emulator (10 queues: 898 -> 409 msg/s end to end).
    settles_per_receiver: StrictInt | None = Field(default=None, ge=1, le=5_000)
    #: How long one receive waits for messages in `run()` (the spec's 15-minute long poll).
    long_poll: timedelta = Field(default=contract.SYPHON_LONG_POLL, gt=timedelta(0))
    #: How long one receive waits in `drain()` before a queue counts as empty (then its depth is
    #: checked through the administration client).
    drain_wait: timedelta = Field(default=timedelta(seconds=2), gt=timedelta(0), le=contract.SYPHON_LONG_POLL)
    #: How often `run()` lists the secondary's queues to serve new backlog queues and read depths.
    relist_interval: timedelta = Field(default=timedelta(minutes=5), gt=timedelta(0))
    #: The backlog queues' lock duration; a message is renewed every `lock_renewal_fraction` of it
    #: while the syphon holds it (from its receive until it is settled or left locked).
    lock_duration: timedelta = Field(default=BACKLOG_LOCK_DURATION, gt=timedelta(0))
    lock_renewal_fraction: float = Field(default=0.5, gt=0.0, lt=1.0)
    #: Per-destination back-off after a retryable send failure: doubles from `backoff_initial` up to
    #: `backoff_max`.
    backoff_initial: timedelta = Field(default=timedelta(seconds=1), gt=timedelta(0))
    backoff_max: timedelta = Field(default=timedelta(minutes=1), gt=timedelta(0))
    #: A failed send is retried in place (message kept locked and renewed) while the destination's
    #: back-off is at most this; beyond it the message is left locked, unrenewed, and the broker
    #: redelivers it when the lock expires, so an outage costs no busy loop.
    retry_hold: timedelta = Field(default=timedelta(seconds=10), ge=timedelta(0))
    #: ARM id of the secondary namespace: when set, backlog queues are listed through ARM (Reader
    #: role) instead of the data plane (which needs Manage); see backlog_directory.py.
    secondary_resource_id: str | None = None
    #: The bound on every call the syphon makes to Service Bus besides the long-poll receive itself
    #: (sends, settlements, lock renewals, listings; a receive gets its wait plus this).
    #: partitioning.md: must exceed 15 s so the service can re-route to another fragment; 60 s
    #: recommended (the default).
    operation_timeout: timedelta = Field(
        default=contract.RECOMMENDED_CLIENT_OPERATION_TIMEOUT, gt=contract.MIN_CLIENT_OPERATION_TIMEOUT
    )
    #: The spec's close/fault grace: how long a closed namespace's partner has to follow.
    close_fault_grace: timedelta = Field(default=contract.CLOSE_FAULT_GRACE, gt=timedelta(0))

    @field_validator("secondary_resource_id")
    @classmethod
    def _arm_id(cls, value: str | None) -> str | None:
        return None if value is None else validate_namespace_resource_id(value)

    @model_validator(mode="after")
    def _ranges_agree(self) -> SyphonOptions:
        if self.backoff_max < self.backoff_initial:
            raise ValueError("backoff_max must be >= backoff_initial")
        if self.retry_hold >= self.lock_duration:
            raise ValueError("retry_hold must be shorter than lock_duration")
        return self

    @property
    def lock_renewal_interval(self) -> float:
        return self.lock_duration.total_seconds() * self.lock_renewal_fraction
