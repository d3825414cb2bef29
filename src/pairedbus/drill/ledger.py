"""The drill's accounting: every message sent is delivered exactly once to each of its
destinations, unchanged, or dead-lettered because its time to live ran out.

An expected delivery that is neither is *not yet delivered* while a copy of it is still parked in a
backlog queue or waiting at its destination (the audit records where: `still_parked`,
`still_waiting`), and *lost* only when it is gone from everywhere. A message whose send the drill's
`--timeout` interrupted (`interrupted`), or whose send raised to the caller (`failed`: counted as a send
failure, which fails the drill on its own), may or may not have been stored: found somewhere, it counts
as any other; found nowhere, it was never sent as far as anyone knows, and is not expected (before, a
failed send was counted twice: as a send failure, and each of its deliveries as lost).

A delivery is recorded when a consumer received the message, by the copy's sequence number, and
its settlement after: a complete that returned confirms it; one that raised leaves it unconfirmed,
since the broker may have applied it and lost only the answer (an outage or a cut connection:
recording only returned completes counted such a message lost, issue 34). The audit resolves an
unconfirmed copy against the store: still waiting at its destination or dead-lettered there, its
complete was not applied (the copy is counted where it is); found nowhere, it was. The same copy
received again (its complete failed, it came back) is a redelivery of one message, not a
duplicate. A duplicate is a second copy (another sequence number) of one message id delivered at
one destination: the service's duplicate detection must drop a send or a move that was repeated.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pairedbus import contract
from pairedbus.drill.failures import SendFailure
from pairedbus.drill.scenario import PlannedMessage

#: Failed sends the ledger keeps whole (message included) for the report's examples.
SEND_FAILURE_EXAMPLES = 10


def _text(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _body(message: Any) -> bytes:
    body = message.body
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    return b"".join(body)


@dataclass
class Expected:
    planned: PlannedMessage
    scheduled_at: datetime | None = None


@dataclass
class Ledger:
    expected: dict[str, Expected] = field(default_factory=dict)
    send_failures: int = 0
    #: Sequence numbers of the copies consumers received, by expected delivery (destination, id).
    deliveries: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    #: Copies (destination, id, sequence number) whose complete raised and no later one returned.
    unconfirmed: set[tuple[str, str, int]] = field(default_factory=set)
    mismatches: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Deliveries of ids not (yet) known to have been sent: checked when their send returns (a
    #: consumer can be faster than the sender's bookkeeping); what is left at the end is unexpected.
    early: dict[tuple[str, str], Any] = field(default_factory=dict)
    dead_letters: dict[tuple[str, str], str] = field(default_factory=dict)
    pings_skipped: int = 0
    #: Expected deliveries with a copy still in a backlog queue, and still waiting (active, scheduled
    #: or deferred) at their destination, when the audit looked.
    still_parked: set[tuple[str, str]] = field(default_factory=set)
    still_waiting: set[tuple[str, str]] = field(default_factory=set)
    #: Copies (destination, sequence number) the audit found at their destination: waiting, or in
    #: its dead-letter queue (an unconfirmed complete found there was not applied).
    copies_found: set[tuple[str, int]] = field(default_factory=set)
    #: Message ids whose send was under way when the timeout stopped the drill (outcome unknown).
    interrupted: set[str] = field(default_factory=set)
    #: Message ids whose send raised to the caller (outcome unknown: a send can fail after it was stored).
    failed: set[str] = field(default_factory=set)
    #: Messages of failed sends by what failed them (`SendFailure.kind`), and the first few failures.
    send_failures_by_error: Counter[str] = field(default_factory=Counter)
    send_failure_examples: list[SendFailure] = field(default_factory=list)

    # --- recording ----------------------------------------------------------------------

    def sent(
        self,
        planned: PlannedMessage,
        message_id: str,
        scheduled_at: datetime | None,
        *,
        interrupted: bool = False,
        failed: bool = False,
    ) -> None:
        """A send returned (or, `interrupted`, was cut off by the timeout, or, `failed`, raised to the
        caller: either may have been stored)."""
        self.expected[message_id] = Expected(planned, scheduled_at)
        if interrupted:
            self.interrupted.add(message_id)
        if failed:
            self.failed.add(message_id)
        for destination in planned.entity.destinations:
            message = self.early.pop((destination, message_id), None)
            if message is not None:
                self._check(destination, message_id, message)

    def send_failed(self, messages: int, exc: BaseException) -> None:
        """A send of `messages` messages raised `exc` to the caller (the drill's verdict fails on it)."""
        failure = SendFailure.of(exc)
        self.send_failures += messages
        self.send_failures_by_error[failure.kind] += messages
        if len(self.send_failure_examples) < SEND_FAILURE_EXAMPLES:
            self.send_failure_examples.append(failure)

    def expected_deliveries(self) -> int:
        """Deliveries the messages sent so far owe (an interrupted send's included, while it is not
        known to have been stored nowhere: see `never_stored`)."""
        return sum(len(e.planned.entity.destinations) for e in self.expected.values())

    def delivered_count(self) -> int:
        """Distinct expected deliveries received so far (unconfirmed ones included: settling waits for
        the destinations to be empty as well)."""
        return len(self.deliveries) - len(self.early)

    def received(self, destination: str, message: Any) -> None:
        """A consumer received `message` at `destination` (before settling it: see `settled`)."""
        message_id = _text(message.message_id)
        key = (destination, message_id)
        copies = self.deliveries.setdefault(key, set())
        if message.sequence_number in copies:
            return  # a redelivery of a copy already received and checked
        copies.add(message.sequence_number)
        if message_id in self.expected:
            self._check(destination, message_id, message)
        else:
            self.early[key] = message

    def settled(self, destination: str, message: Any, *, confirmed: bool) -> None:
        """The consumer's complete of a received message returned (`confirmed`) or raised (the broker may
        have applied it all the same)."""
        copy = (destination, _text(message.message_id), message.sequence_number)
        if confirmed:
            self.unconfirmed.discard(copy)
        else:
            self.unconfirmed.add(copy)

    def delivered(self, destination: str, message: Any) -> None:
        """A message received and completed at `destination`."""
        self.received(destination, message)
        self.settled(destination, message, confirmed=True)

    def delivered_copies(self, key: tuple[str, str]) -> set[int]:
        """The copies of an expected delivery that were delivered: received, and completed (or their
        complete's outcome unknown and the copy found neither waiting nor dead-lettered at the audit)."""
        destination, message_id = key
        return {
            seq
            for seq in self.deliveries.get(key, ())
            if (destination, message_id, seq) not in self.unconfirmed or (destination, seq) not in self.copies_found
        }

    def is_delivered(self, key: tuple[str, str]) -> bool:
        return bool(self.delivered_copies(key))

    def delivered_keys(self) -> list[tuple[str, str]]:
        """Expected deliveries delivered (early ones, not yet known to be sent, left out)."""
        return [key for key in self.deliveries if key not in self.early and self.is_delivered(key)]

    def _check(self, destination: str, message_id: str, message: Any) -> None:
        expected = self.expected[message_id]
        if destination not in expected.planned.entity.destinations:
            self.early[(destination, message_id)] = message  # delivered where it was not sent
            return
        problem = _difference(expected, message)
        if problem:
            self.mismatches[(destination, message_id)] = problem

    @property
    def unexpected(self) -> set[tuple[str, str]]:
        return set(self.early)

    def dead_lettered(
        self, destination: str, message_id: str, reason: str | None, sequence_number: int | None = None
    ) -> None:
        """The audit found a dead letter for `destination` (the sequence number of one at the destination
        itself; a parked copy's is the backlog queue's)."""
        self.dead_letters[(destination, message_id)] = reason or ""
        if sequence_number is not None:
            self.copies_found.add((destination, sequence_number))

    def parked(self, destination: str, message_id: str) -> None:
        """The audit found a copy for `destination` in a backlog queue."""
        self.still_parked.add((destination, message_id))

    def waiting(self, destination: str, message_id: str, sequence_number: int) -> None:
        """The audit found a copy waiting at `destination` (not yet received and completed)."""
        self.still_waiting.add((destination, message_id))
        self.copies_found.add((destination, sequence_number))

    # --- the verdict --------------------------------------------------------------------

    def _undelivered(self) -> list[tuple[str, str]]:
        """Expected deliveries neither delivered nor dead-lettered (interrupted sends included)."""
        missing = []
        for message_id, expected in self.expected.items():
            for destination in expected.planned.entity.destinations:
                key = (destination, message_id)
                if key not in self.dead_letters and not self.is_delivered(key):
                    missing.append(key)
        return missing

    def not_yet_delivered(self) -> list[tuple[str, str]]:
        """Undelivered, but a copy is still parked or waiting at the destination: not lost (yet)."""
        return [key for key in self._undelivered() if key in self.still_parked or key in self.still_waiting]

    def outcome_unknown(self, message_id: str) -> bool:
        """Whether the message's send was interrupted or failed: stored or not, no one knows."""
        return message_id in self.interrupted or message_id in self.failed

    def never_stored(self) -> list[tuple[str, str]]:
        """Deliveries of interrupted or failed sends found nowhere: as far as anyone knows, never sent."""
        return [
            key
            for key in self._undelivered()
            if self.outcome_unknown(key[1]) and key not in self.still_parked and key not in self.still_waiting
        ]

    def lost(self) -> list[tuple[str, str]]:
        """Expected deliveries gone from everywhere: not delivered, not dead-lettered, not parked,
        not waiting at the destination, and not of a send the timeout interrupted or that failed."""
        return [
            key
            for key in self._undelivered()
            if key not in self.still_parked and key not in self.still_waiting and not self.outcome_unknown(key[1])
        ]

    def duplicated_keys(self) -> list[tuple[str, str]]:
        """Expected deliveries with more than one copy delivered."""
        return sorted(key for key in self.deliveries if len(self.delivered_copies(key)) > 1)

    def duplicates(self) -> int:
        return sum(len(self.delivered_copies(key)) - 1 for key in self.duplicated_keys())

    def wrongly_dead_lettered(self) -> list[tuple[str, str]]:
        """Dead letters of messages that had no time to live to run out."""
        wrong = []
        for key in self.dead_letters:
            expected = self.expected.get(key[1])
            if expected is None or expected.planned.ttl is None:
                wrong.append(key)
        return wrong

    def dead_lettered_undelivered(self) -> int:
        """Deliveries accounted for by a dead letter (expired before they were delivered)."""
        return sum(1 for key in self.dead_letters if not self.is_delivered(key))

    def dead_lettered_copies(self) -> int:
        """Dead letters of messages also delivered: a second copy expired (e.g. the syphon's
        complete failed after its send, and the redelivered backlog copy ran out of time)."""
        return sum(1 for key in self.dead_letters if self.is_delivered(key))


def _difference(expected: Expected, message: Any) -> str | None:
    """What differs between the planned message and the received one, or None."""
    planned = expected.planned
    if _body(message) != planned.body:
        return "body"
    received = {_text(k): _text(v) for k, v in (message.application_properties or {}).items()}
    leaked = sorted(set(received) & set(contract.ALIASES))
    if leaked:
        return f"failover aliases left on the message: {leaked}"
    if received != planned.properties:
        return f"application properties {received!r} != {planned.properties!r}"
    for name in ("session_id", "subject", "correlation_id", "content_type"):
        if _text(getattr(message, name)) != getattr(planned, name):
            return name
    if planned.ttl is not None:
        ttl = message.time_to_live
        if ttl is None or not ttl.total_seconds() > 0 or ttl > planned.ttl:
            return f"time to live {ttl} (sent {planned.ttl})"
    if expected.scheduled_at is not None:
        scheduled = message.scheduled_enqueue_time_utc
        if scheduled is None:
            return "scheduled enqueue time lost"
        if scheduled.tzinfo is None:
            scheduled = scheduled.replace(tzinfo=UTC)
        if abs((scheduled - expected.scheduled_at).total_seconds()) > 0.001:
            return f"scheduled enqueue time {scheduled} (sent {expected.scheduled_at})"
    return None
