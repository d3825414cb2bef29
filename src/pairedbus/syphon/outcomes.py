"""What a send to the primary ends with, and what a round of sends ends with.

Each is a small result read by one `match`; no exception steers the hot path. A failed send is
judged here (`send_failure`), from the error alone; what the pump then does about it (a back-off,
a learned batching rule, a log line) is `sending.PrimarySends`'s."""

from __future__ import annotations

from dataclasses import dataclass

from pairedbus.pairing.failures import RETRYABLE, Failure, failure_of

#: Dead-letter reasons for sends the primary refuses for good.
DEAD_LETTER_DESTINATION_NOT_FOUND = "DestinationNotFound"
DEAD_LETTER_MESSAGE_SIZE_EXCEEDED = "MessageSizeExceeded"
DEAD_LETTER_SEND_REJECTED = "SendRejected"
#: Dead-letter descriptions are application properties on the broker; keep them short.
DESCRIPTION_MAX = 1024


@dataclass(frozen=True, slots=True)
class Sent:
    """The primary acknowledged the send: its backlog messages can be completed."""


@dataclass(frozen=True, slots=True)
class Retry:
    """The destination failed in a way a later attempt can fix. `whole_destination`: the sender
    itself was shut down, so the destination backs off, not the unit's partition key."""

    whole_destination: bool = False


@dataclass(frozen=True, slots=True)
class Split:
    """The primary refused a batch: send its messages one at a time. `keyed_by_message_id`: the
    refusal says the destination keys its batches by message id (partitioning.md, "Partition keys")."""

    keyed_by_message_id: bool = False


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """The primary refuses for good: dead-letter the message (or, with `everything`, every message
    still bound for the destination, which does not exist)."""

    reason: str
    description: str
    everything: bool = False


SendOutcome = Sent | Retry | Split | DeadLetter


@dataclass(frozen=True, slots=True)
class KeysBackingOff:
    """Nothing was tried: every partition key left is backing off (a failed fragment) for at
    least `wait` seconds."""

    wait: float


@dataclass(frozen=True, slots=True)
class RoundEnd:
    """What one round of sends finished (the delivery's item indexes it completed or
    dead-lettered) and what stopped it: None when every unit was handled; the Retry or the
    destination-wide DeadLetter that stopped it; KeysBackingOff when nothing could be tried."""

    finished: frozenset[int]
    stop: SendOutcome | KeysBackingOff | None = None


#: A send's failures worth waiting out: what the SDK says a retry can help, timeouts, and a full
#: destination (the SDK does not retry it, but it drains: waiting beats dead-lettering everything
#: bound for it).
_WORTH_WAITING = RETRYABLE | {Failure.QUOTA_EXCEEDED}
#: The sender (or the whole client) is gone, not the destination: the SDK's own failure ("Handler
#: failed: ..."; over the wire a close tore the sender down under the send: it dead-lettered 29-118
#: messages a drill when read as a refusal), or its "handler has been shut down".
_SENDER_GONE = frozenset({Failure.HANDLER_FAILED, Failure.SHUT_DOWN, Failure.INVALID, Failure.ALREADY_SETTLED})
#: The primary refused the send for good, with its condition: e.g. a partitioned entity refusing a
#: batch of distinct keys.
_REFUSED = frozenset({Failure.REFUSED, Failure.LOCK_LOST, Failure.MESSAGE_NOT_FOUND})


def send_failure(exc: Exception, destination: str, count: int) -> SendOutcome:
    """What a failed send of `count` messages to `destination` means. Raises `exc` when it is no
    answer of Service Bus (a bug, not an outcome)."""
    failure = failure_of(exc)
    if failure is Failure.ENTITY_NOT_FOUND:
        return DeadLetter(
            DEAD_LETTER_DESTINATION_NOT_FOUND,
            f"{destination!r} does not exist in the primary namespace",
            everything=True,
        )
    if failure is Failure.TOO_LARGE:
        return Split() if count > 1 else DeadLetter(DEAD_LETTER_MESSAGE_SIZE_EXCEEDED, error_text(exc))
    if failure in _WORTH_WAITING:
        return Retry()
    if failure in _SENDER_GONE:
        return Retry(whole_destination=True)
    if failure in _REFUSED:
        return Split(keyed_by_message_id=True) if count > 1 else DeadLetter(DEAD_LETTER_SEND_REJECTED, error_text(exc))
    raise exc


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:DESCRIPTION_MAX]
