"""The failover state machine of one primary entity, shared by every sender of it in one client.

    healthy --retryable error/timeout--> failing (the failover clock runs)
    failing --success--> healthy
    failing --error after `failover_interval`--> switched (sends park; the entity is pinged)
    switched --a ping succeeds (or says the entity is gone)--> healthy

`switched` is one attribute read on every send: flipping it moves every sender of the entity at
once. While switched, `refuse_unparkable` raises what the primary would have raised for a message
(from the `EntityFacts` learned while it was healthy, or given), so nobody is told "sent" for a
message the syphon could only dead-letter.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from azure.servicebus import ServiceBusMessage

from pairedbus.pairing.failures import Failure, failure_of
from pairedbus.pairing.ping import ping_message
from pairedbus.sender.errors import (
    SessionRequiredError,
    destination_not_found,
    is_session_id_refusal,
    starts_failover_clock,
)
from pairedbus.sender.failover_clock import FailoverClock

_log = logging.getLogger("pairedbus.sender")

Sleep = Callable[[float], Awaitable[object]]


class EntityKind(StrEnum):
    QUEUE = "queue"
    TOPIC = "topic"


@dataclass
class FailoverStats:
    """What one client did off the healthy path (for logs, metrics and the drill's report)."""

    failovers: int = 0
    returns_to_primary: int = 0
    pings_sent: int = 0
    pings_failed: int = 0
    parked_messages: int = 0
    backlog_send_failures: int = 0
    #: Backlog queues below the configured count that did not exist when the client opened.
    backlog_queues_missing: int = 0
    #: Messages refused while failed over because the primary would have refused them.
    refused_while_switched: int = 0
    #: Failed-over sends that waited for the entity's metadata read before parking (its session
    #: fact was not known yet).
    metadata_waits: int = 0
    #: Entities whose metadata could not be read (no Manage right, or an error): their facts are
    #: learned from sends only.
    metadata_unavailable: int = 0
    #: Namespace connections that closed or faulted, and the fresh ones that replaced them.
    connection_faults: int = 0
    connection_replacements: int = 0
    #: Replacements called off in their back-off because the side's client worked again.
    replacements_called_off: int = 0
    #: SDK calls cut at their bound because the SDK had not returned (their handler discarded).
    calls_cut: int = 0
    #: SDK handlers found shut down by the SDK itself (their connection fine), replaced by fresh ones.
    handlers_renewed: int = 0
    #: Faults of the embedded syphon, and its restarts with fresh connections.
    syphon_faults: int = 0
    syphon_restarts: int = 0


@dataclass
class EntityFacts:
    """What the client knows of a primary entity; None: not known (nothing is refused for it).

    Learned from the entity's metadata while the primary is healthy (when the credential may read
    it), from the primary's own answers (a message without a session id accepted: no sessions
    required; refused with "The SessionId was not set": sessions required; a ping answered "not
    found": the entity is gone), or given by the caller."""

    requires_session: bool | None = None
    exists: bool | None = None


class EntityFailover:
    """The per-entity state machine. `ping` sends one ping to the primary entity (and raises when
    it fails); `sleep` waits between pings (injectable for tests and drills)."""

    def __init__(
        self,
        name: str,
        kind: EntityKind,
        clock: FailoverClock,
        stats: FailoverStats,
        *,
        ping: Callable[[EntityFailover, ServiceBusMessage], Awaitable[object]],
        ping_interval: float,
        sleep: Sleep,
        facts: EntityFacts | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.failover_clock = clock
        self.facts = facts or EntityFacts()
        #: Messages with a session id were sent: pings carry one (a session entity needs it).
        self.sends_sessions = False
        self.switched = False
        #: Whether a success on the primary tells this object anything (the failover clock runs,
        #: or a fact is still to be learned from it): one attribute read on the healthy path.
        self.listening = True
        self.ping_task: asyncio.Task[None] | None = None
        #: The client's one read of the entity's metadata while it is under way (set by the client).
        self.metadata_read: asyncio.Future[None] | None = None
        self._stats = stats
        self._ping = ping
        self._ping_interval = ping_interval
        self._sleep = sleep
        self._closed = False

    # --- the primary's answers ----------------------------------------------------------------

    def succeeded(self) -> None:
        """A send to the primary succeeded: the failover clock stops."""
        if self.failover_clock.failing_since is not None:
            self.failover_clock.record_success()
        self.listening = self.facts.requires_session is None

    def failed(self, exc: BaseException, started: float | None = None) -> bool:
        """A send to the primary begun at `started` (the failover clock's time) raised `exc`: True if
        this call must be parked (the entity is, or now becomes, switched), False if the error is
        the caller's."""
        if not starts_failover_clock(exc):
            if failure_of(exc) is Failure.ENTITY_NOT_FOUND:
                self.facts.exists = False
            elif is_session_id_refusal(exc):
                self.facts.requires_session = True
            return False
        if self.switched:
            return True
        self.listening = True
        if not self.failover_clock.record_failure(started):
            return False
        self._switch()
        return True

    async def await_session_fact(self, messages: Iterable[ServiceBusMessage], timeout: float | None) -> None:  # noqa: ASYNC109
        """While switched, before parking a message without a session id to a queue whose session
        fact is not known yet: wait for the metadata read still under way (at most `timeout`), so
        that `refuse_unparkable` decides on the fact instead of parking blindly. Returns at once
        when nothing is to be learned (the fact is known, no read is under way, every message has
        a session id); after `timeout` the read goes on and the messages are parked."""
        read = self.metadata_read
        if read is None or read.done() or self.facts.requires_session is not None or self.kind is not EntityKind.QUEUE:
            return
        if all(message.session_id is not None for message in messages):
            return
        self._stats.metadata_waits += 1
        await asyncio.wait({read}, timeout=timeout)  # never cancels the read: it is the client's

    def refuse_unparkable(self, messages: Iterable[ServiceBusMessage]) -> None:
        """While switched: raise what the primary would raise for these messages, if anything."""
        facts = self.facts
        if facts.exists is False:
            self._stats.refused_while_switched += 1
            raise destination_not_found(self.name)
        if facts.requires_session:
            for message in messages:
                if message.session_id is None:
                    self._stats.refused_while_switched += 1
                    raise SessionRequiredError(self.name, message.message_id)

    # --- switching and pings ------------------------------------------------------------------

    def _switch(self) -> None:
        self.switched = True
        self._stats.failovers += 1
        _log.warning("%s %r switched to the backlog", self.kind.value, self.name)
        if not self._closed and self.ping_task is None:
            self.ping_task = asyncio.create_task(self._ping_until_available(), name=f"pairedbus-ping:{self.name}")

    def return_to_primary(self, why: str = "is available again") -> None:
        self.switched = False
        self.failover_clock.record_success()
        self._stats.returns_to_primary += 1
        _log.warning("%s %r %s: back to the primary", self.kind.value, self.name, why)

    async def _ping_until_available(self) -> None:
        """One ping per `ping_primary_interval` until one is answered; then every sender of the
        entity is back on the primary at once, and the pings stop."""
        try:
            while self.switched:
                await self._sleep(self._ping_interval)
                try:
                    await self._ping(
                        self, ping_message(session=bool(self.sends_sessions or self.facts.requires_session))
                    )
                except Exception as exc:
                    if failure_of(exc) is Failure.ENTITY_NOT_FOUND:
                        # The primary answered: it is up and the entity is gone. Sends go back to it and
                        # the caller sees its "not found", instead of parking what can never arrive.
                        self.facts.exists = False
                        self.return_to_primary("answered that it does not exist")
                        return
                    self._stats.pings_failed += 1
                    _log.debug("ping of %r failed: %r", self.name, exc)
                    continue
                self._stats.pings_sent += 1
                self.facts.exists = True
                self.return_to_primary()
        finally:
            self.ping_task = None

    async def close(self) -> None:
        """Stop pinging (cancel and await the ping task)."""
        self._closed = True
        task = self.ping_task
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
