"""Aliasing: how a message is parked in a backlog queue and restored for its destination.

Messages for every queue and topic share the backlog queues, so a parked message carries its
routing in application properties (paired-namespaces.md, "The failover sender"):

* `contract.ALIAS_PATH` — the destination queue or topic in the primary namespace;
* `contract.ALIAS_SESSION_ID` — the session id (the parked message has none of its own);
* `contract.ALIAS_TIME_TO_LIVE` — the time to live in integer milliseconds (the parked message has
  none of its own, so it lives as long as the backlog queue lets it: TimeSpan.MaxValue). The SDK
  encodes a Python int property as a 32-bit AMQP int, so a TTL beyond 24.8 days is sent as an AMQP
  long; either comes back as an int;
* `contract.ALIAS_SCHEDULED_ENQUEUE_TIME` — the scheduled enqueue time as an AMQP timestamp
  (milliseconds since the Unix epoch, UTC; a .NET reader sees a DateTime). That is exactly the
  precision of the annotation the service schedules by, so the encoding is lossless. The SDK
  returns a received timestamp as its integer milliseconds; `restore_message` reads an int, a
  datetime or an ISO 8601 string there.

A partition key that only mirrored the session id is dropped from the parked message (it would
pin the backlog message to one fragment for nothing) and comes back as the session id: the
service keys a session's messages by session id either way, and the SDK rejects any other value.
A partition key without a session id is kept as it is.

What the AMQP round trip cannot tell apart, and how `restore_message` reads it (the SDK returns
application-property keys and string values as bytes): keys and bytes values are decoded as UTF-8,
as the SDK itself does to bytes values when it sends (so a binary value could never be sent by this
SDK, and one that is not UTF-8 makes the message unrestorable). An AMQP timestamp value arrives as
its integer milliseconds, the same as a direct receive would show.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.servicebus import ServiceBusMessage
from azure.servicebus.amqp import AmqpMessageBodyType, AmqpMessageHeader, AmqpMessageProperties
from azure.servicebus.exceptions import MessageSizeExceededError

from pairedbus import contract, sdk
from pairedbus.pairing.ports import MessageBody, Restorable

#: Dead-letter reasons for backlog messages the syphon can never deliver (besides the spec's
#: `contract.DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG`).
DEAD_LETTER_MISSING_PATH = "MissingPath"
DEAD_LETTER_MALFORMED_ALIAS = "MalformedAlias"
DEAD_LETTER_UNSUPPORTED_BODY = "UnsupportedBody"
DEAD_LETTER_UNSUPPORTED_PROPERTY = "UnsupportedApplicationProperty"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: The SDK's and the service's limit on a session id (MESSAGE_PROPERTY_MAX_LENGTH).
_SESSION_ID_MAX_LENGTH = 128
#: The service's ceiling for an absolute expiry (the SDK clamps to the same value).
_MAX_ABSOLUTE_EXPIRY_MS = 253_402_243_199_000


class ParkedMessageTooLargeError(MessageSizeExceededError):
    """The message would exceed the size limit once the aliases are added to park it."""

    def __init__(self, *, destination: str, size: int, added: int, limit: int) -> None:
        super().__init__(
            message=(
                f"message for {destination!r} is {size} bytes once parked ({added} bytes of failover "
                f"aliases added), over the {limit}-byte limit: it cannot fail over to a backlog queue"
            )
        )
        self.destination = destination
        self.size = size
        self.added = added
        self.limit = limit


class UnrestorableMessage(Exception):
    """A backlog message that can never reach its destination: the syphon dead-letters it with
    `reason` and `description` (both fit the dead-letter fields)."""

    def __init__(self, reason: str, description: str) -> None:
        super().__init__(f"{reason}: {description}")
        self.reason = reason
        self.description = description


class MalformedAliasError(UnrestorableMessage):
    """A missing destination path, or an alias whose value cannot be read back."""


class ExpiredInBacklogError(UnrestorableMessage):
    """The message's time to live ran out while it waited in the backlog."""

    def __init__(self, description: str) -> None:
        super().__init__(contract.DEAD_LETTER_TTL_EXPIRED_IN_BACKLOG, description)


@dataclass(frozen=True, slots=True)
class RestoredMessage:
    """Where a backlog message goes in the primary namespace, and the message to send there."""

    destination: str
    message: ServiceBusMessage
    #: The message's content type, as received (and restored): what `pairing.ping.is_ping` reads,
    #: here without the SDK's property, which walks the AMQP properties on every read.
    content_type: str | None = None


# --- parking -------------------------------------------------------------------------------


def park_message(message: ServiceBusMessage, destination: str) -> ServiceBusMessage:
    """The copy of `message` to send to a backlog queue on its way to `destination`.

    Session id, time to live and scheduled enqueue time move into their aliases; the destination
    goes into `contract.ALIAS_PATH`; everything else is kept. Raises ValueError for an empty
    destination, a body a ServiceBusMessage cannot carry, or application properties already using
    an alias name (they would be overwritten and misroute the message).
    """
    if not destination:
        raise ValueError("destination must be a non-empty queue or topic name")
    properties = dict(message.application_properties or {})
    taken = sorted(name for name in map(_text_key, properties) if name in contract.ALIASES)
    if taken:
        raise ValueError(f"application properties {taken} are reserved for failover aliases")

    aliases: dict[str | bytes, Any] = {contract.ALIAS_PATH: destination}
    session_id = message.session_id
    if session_id is not None:
        aliases[contract.ALIAS_SESSION_ID] = session_id
    ttl_ms = _time_to_live_ms(message)
    if ttl_ms is not None:
        aliases[contract.ALIAS_TIME_TO_LIVE] = ttl_ms if ttl_ms <= contract.INT32_MAX else sdk.amqp_long(ttl_ms)
    scheduled = message.scheduled_enqueue_time_utc
    if scheduled is not None:
        # Whole milliseconds, as on the wire: the alias then equals the annotation it replaces.
        aliases[contract.ALIAS_SCHEDULED_ENQUEUE_TIME] = from_epoch_ms(epoch_ms(scheduled))

    partition_key = message.partition_key
    if session_id is not None and partition_key == session_id:
        partition_key = None  # only mirrored the session id; restored from it
    return build_message(
        _body_of(message),
        application_properties={**properties, **aliases},
        message_id=message.message_id,
        content_type=message.content_type,
        correlation_id=message.correlation_id,
        subject=message.subject,
        partition_key=partition_key,
        to=message.to,
        reply_to=message.reply_to,
        reply_to_session_id=message.reply_to_session_id,
    )


def parked_copy(
    message: ServiceBusMessage, destination: str, *, limit: int = contract.MAX_MESSAGE_SIZE_BYTES
) -> ServiceBusMessage:
    """`park_message`, checked against the message-size limit: the one size check of the failover
    path. Raises ParkedMessageTooLargeError (a MessageSizeExceededError) when the aliases push the
    message over `limit`, so the caller sees a clear error before anything is sent."""
    parked = park_message(message, destination)
    size = sdk.encoded_size(parked)
    if size > limit:
        raise ParkedMessageTooLargeError(
            destination=destination, size=size, added=size - sdk.encoded_size(message), limit=limit
        )
    return parked


# --- restoring -----------------------------------------------------------------------------


def restore_message(received: Restorable, *, now: datetime) -> RestoredMessage:
    """The message to send to the primary for a message received from a backlog queue.

    The time to live becomes what is left of it: the original minus the time spent in the backlog,
    counted from the backlog message's enqueued time (or from its scheduled enqueue time, if that
    is later: the service starts a scheduled message's clock when it becomes visible). Raises
    ExpiredInBacklogError when nothing is left, MalformedAliasError when the destination path is
    missing or an alias cannot be read.
    """
    now = _aware(now)
    properties: dict[str | bytes, Any] = {}  # the keys decoded; the SDK's type for application properties
    aliases: dict[str, Any] = {}
    try:
        for key, value in (received.application_properties or {}).items():
            name = _text_key(key)
            (aliases if name in contract.ALIASES else properties)[name] = _text_value(value)
    except UnicodeDecodeError as exc:
        # The SDK decodes bytes values as UTF-8 on send, so such a property cannot be re-sent.
        raise MalformedAliasError(
            DEAD_LETTER_UNSUPPORTED_PROPERTY, f"application property is not UTF-8 text: {exc}"
        ) from None

    destination = aliases.get(contract.ALIAS_PATH)
    if destination is None:
        raise MalformedAliasError(DEAD_LETTER_MISSING_PATH, f"no {contract.ALIAS_PATH} application property")
    if not isinstance(destination, str) or not destination:
        raise MalformedAliasError(
            DEAD_LETTER_MALFORMED_ALIAS, f"{contract.ALIAS_PATH} must be a non-empty string, got {destination!r}"
        )
    session_id = aliases.get(contract.ALIAS_SESSION_ID)
    if session_id is not None and (
        not isinstance(session_id, str) or not 0 < len(session_id) <= _SESSION_ID_MAX_LENGTH
    ):
        raise MalformedAliasError(
            DEAD_LETTER_MALFORMED_ALIAS,
            f"{contract.ALIAS_SESSION_ID} must be a string of 1 to {_SESSION_ID_MAX_LENGTH} characters, got {session_id!r}",
        )
    scheduled = _read_scheduled(aliases.get(contract.ALIAS_SCHEDULED_ENQUEUE_TIME))
    remaining_ms = _remaining_ttl_ms(received, aliases.get(contract.ALIAS_TIME_TO_LIVE), scheduled, now)

    try:
        body = _body_of(received)
    except ValueError as exc:
        raise MalformedAliasError(DEAD_LETTER_UNSUPPORTED_BODY, str(exc)) from None
    partition_key = received.partition_key
    if session_id is not None:
        partition_key = session_id
    content_type = received.content_type
    message = build_message(
        body,
        application_properties=properties or None,
        session_id=session_id,
        message_id=received.message_id,
        content_type=content_type,
        correlation_id=received.correlation_id,
        subject=received.subject,
        partition_key=partition_key,
        to=received.to,
        reply_to=received.reply_to,
        reply_to_session_id=received.reply_to_session_id,
        scheduled_enqueue_time_utc=scheduled,
        time_to_live_ms=remaining_ms,
    )
    return RestoredMessage(destination=destination, message=message, content_type=content_type)


def build_message(
    body: bytes | None,
    *,
    application_properties: dict[str | bytes, Any] | None = None,
    session_id: str | None = None,
    message_id: str | None = None,
    content_type: str | None = None,
    correlation_id: str | None = None,
    subject: str | None = None,
    partition_key: str | None = None,
    to: str | None = None,
    reply_to: str | None = None,
    reply_to_session_id: str | None = None,
    scheduled_enqueue_time_utc: datetime | None = None,
    time_to_live_ms: int | None = None,
) -> ServiceBusMessage:
    """The ServiceBusMessage its constructor would build from these fields (with the time to live
    to the millisecond), assembled directly: the constructor's per-field setters re-inspect the
    AMQP properties a dozen times per message, the bulk of the syphon's CPU per message. Values
    are taken as valid: they come from a message the SDK or the broker already accepted."""
    raw = sdk.bare_annotated_message(body)
    if scheduled_enqueue_time_utc is not None and message_id is None:
        message_id = str(uuid.uuid4())  # as the SDK's scheduled_enqueue_time_utc setter does
    raw.header = AmqpMessageHeader(time_to_live=time_to_live_ms)
    raw.properties = AmqpMessageProperties(
        message_id=message_id,
        to=to,
        subject=subject,
        reply_to=reply_to,
        correlation_id=correlation_id,
        content_type=content_type,
        group_id=session_id,
        reply_to_group_id=reply_to_session_id,
    )
    annotations: dict[str | bytes, Any] = {}  # in the order the constructor adds them
    if scheduled_enqueue_time_utc is not None:
        annotations[sdk.ANNOTATION_SCHEDULED_ENQUEUE_TIME] = scheduled_enqueue_time_utc
    if partition_key:
        annotations[sdk.ANNOTATION_PARTITION_KEY] = partition_key
    raw.annotations = annotations
    raw.application_properties = application_properties
    message = ServiceBusMessage(None, message=None, raw_amqp_message=raw)
    if time_to_live_ms is not None:
        set_time_to_live_ms(message, time_to_live_ms)
    return message


def set_time_to_live_ms(message: ServiceBusMessage, ttl_ms: int) -> None:
    """Set a time to live to the millisecond. The SDK's `time_to_live` setter truncates to whole
    seconds, which would turn a remaining 0.4 s into 0, and 0 means "no time to live"."""
    if ttl_ms <= 0:
        raise ValueError(f"time to live must be positive, got {ttl_ms} ms")
    raw = message.raw_amqp_message
    header = raw.header
    if header is None:  # as the SDK's setter does
        raw.header = header = AmqpMessageHeader()
    header.time_to_live = ttl_ms
    properties = raw.properties
    if properties is None:
        raw.properties = properties = AmqpMessageProperties()
    # Same bookkeeping as the SDK's setter: creation time plus TTL as the absolute expiry.
    created = epoch_ms(datetime.now(UTC))
    properties.creation_time = created
    properties.absolute_expiry_time = min(_MAX_ABSOLUTE_EXPIRY_MS, created + ttl_ms)


def epoch_ms(moment: datetime) -> int:
    """Milliseconds since the Unix epoch; a naive datetime is read as UTC (the SDK's convention)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def from_epoch_ms(value: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=value)


# --- helpers -------------------------------------------------------------------------------


def _time_to_live_ms(message: ServiceBusMessage) -> int | None:
    # The raw header keeps milliseconds; `message.time_to_live` is rebuilt from it.
    header = message.raw_amqp_message.header
    ttl = header.time_to_live if header is not None else None
    return int(ttl) if ttl else None


def _body_of(message: MessageBody) -> bytes | None:
    body_type = message.body_type
    if body_type == AmqpMessageBodyType.DATA:
        body = message.body
        return body if isinstance(body, bytes) else b"".join(body)
    if body_type == AmqpMessageBodyType.VALUE and message.body is None:
        return None
    raise ValueError(f"only data bodies and empty bodies can be parked and restored, got a {body_type} body")


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _text_key(key: str | bytes) -> str:
    return key.decode("utf-8") if isinstance(key, bytes) else key


def _text_value(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict) and sdk.AMQP_TYPE in value:  # an explicitly typed value not yet on the wire
        return value[sdk.AMQP_VALUE]
    return value


def _read_scheduled(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        if isinstance(value, datetime):
            return _aware(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return from_epoch_ms(value)
        if isinstance(value, str):
            return _aware(datetime.fromisoformat(value))
    except (ValueError, OverflowError):
        pass
    raise MalformedAliasError(
        DEAD_LETTER_MALFORMED_ALIAS,
        f"{contract.ALIAS_SCHEDULED_ENQUEUE_TIME} must be epoch milliseconds or an ISO 8601 time, got {value!r}",
    )


def _remaining_ttl_ms(received: Restorable, value: Any, scheduled: datetime | None, now: datetime) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MalformedAliasError(
            DEAD_LETTER_MALFORMED_ALIAS,
            f"{contract.ALIAS_TIME_TO_LIVE} must be a positive integer of milliseconds, got {value!r}",
        )
    # A received message always has an enqueued time; without one, count nothing as waited.
    starts = [_aware(t) for t in (getattr(received, "enqueued_time_utc", None), scheduled) if t is not None]
    started = max(starts) if starts else now
    waited_ms = max(0, (now - started) // timedelta(milliseconds=1))
    remaining = value - waited_ms
    if remaining <= 0:
        raise ExpiredInBacklogError(
            f"time to live {value} ms ran out in the backlog (waited {waited_ms} ms since {started.isoformat()})"
        )
    return remaining
