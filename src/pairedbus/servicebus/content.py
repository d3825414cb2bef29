"""What a send stores: a message as the model's own frozen record, `Content` (the AMQP sections as the
sender's client put them on the wire, byte for byte, when a wire front-end received it; the
properties the model's rules read), and the `Record` each entity wraps it in (sequence number, lock,
delivery count, state).

The model knows no SDK and no wire: each front-end builds a `Content` from what it receives and turns
a stored one back into what its client reads (`pairedbus.testing.content`: azure-servicebus's
messages; `pairedbus.emulator.messages`: AMQP sections).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, NamedTuple

#: Encoded AMQP overhead of a message with an empty body (measured against the SDK's encoder).
_BASE_OVERHEAD = 64


class BodyType(enum.Enum):
    """The AMQP body of a message: data sections (bytes), amqp-sequence sections, or one amqp-value."""

    DATA = "data"
    SEQUENCE = "sequence"
    VALUE = "value"


class MessageState(enum.IntEnum):
    """A stored message's state, by the number the service writes in `x-opt-message-state`."""

    ACTIVE = 0
    DEFERRED = 1
    SCHEDULED = 2


STATE_ACTIVE = MessageState.ACTIVE
STATE_DEFERRED = MessageState.DEFERRED
STATE_SCHEDULED = MessageState.SCHEDULED


def _text(value: Any) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class Content(NamedTuple):
    """What the sender put on the wire, frozen at send time. Shared by every copy of a message
    (topic fan-out, redeliveries); a changed message is a new record (`_replace`). A named tuple,
    not a frozen dataclass: one is built per send, and a frozen dataclass's `__init__` (a
    `object.__setattr__` per field) cost 2.5x as much (10 against 4 µs a message, busy machine)."""

    body_type: BodyType
    #: DATA: a tuple of the bytes sections; SEQUENCE: the sections' lists; VALUE: the value.
    body: Any
    message_id: str | None = None
    session_id: str | None = None
    partition_key: str | None = None
    #: Seconds, as set on the message (None: the entity's default).
    ttl: float | None = None
    #: Scheduled enqueue time, epoch seconds.
    scheduled: float | None = None
    #: Encoded size in bytes, as the front-end measured or estimated it (`estimate_size`).
    size: int = 0
    content_type: str | None = None
    correlation_id: str | None = None
    subject: str | None = None
    to: str | None = None
    reply_to: str | None = None
    reply_to_session_id: str | None = None
    #: Application properties as the sender gave them (keys str or bytes).
    props: Mapping[Any, Any] | None = None
    #: The message's AMQP sections as the sender's client encoded them (None: only the fields
    #: above are known, and a front-end encodes them itself); a delivery passes them on byte for byte.
    wire: bytes | None = None
    #: What the front-end that set `wire` cut of it once, to reuse on every delivery (opaque here).
    wire_cut: Any = None

    def filter_properties(self) -> dict[str, Any]:
        """Application properties keyed by str, for rule filters (typed AMQP values unwrapped)."""
        if not self.props:
            return {}
        return {
            _text(k): v["VALUE"] if isinstance(v, dict) and "TYPE" in v and "VALUE" in v else v
            for k, v in self.props.items()
        }


def estimate_size(content: Content) -> int:
    """Encoded size of a message from its fields, close to the SDK's (within a few bytes for typical
    messages): the one size rule both front-ends use where they hold no encoding."""
    texts = (
        content.message_id,
        content.session_id,
        content.content_type,
        content.correlation_id,
        content.subject,
        content.to,
        content.reply_to,
        content.reply_to_session_id,
        content.partition_key,
    )
    return estimate_parts(content.body_type, content.body, content.props, texts)


def estimate_parts(body_type: BodyType, body: Any, props: Mapping[Any, Any] | None, texts: tuple[Any, ...]) -> int:
    """`estimate_size` of the parts a `Content` is about to be built from: `texts` are its string
    properties (message id, session id, content type, correlation id, subject, to, reply-to,
    reply-to session id, partition key; ttl and scheduled add nothing)."""
    size = _BASE_OVERHEAD
    if body_type is BodyType.DATA:
        for section in body:
            size += len(section) + 3
    elif body is not None:
        size += len(repr(body))
    for value in texts:
        if value is not None:
            size += len(value) + 3
    if props:
        for key in props:
            value = props[key]
            size += len(key) + (len(value) + 7 if value.__class__ in (str, bytes) else 13)
    return size


class Record:
    """One message stored in one entity (queue, subscription or a dead-letter sub-queue)."""

    __slots__ = (
        "content",
        "deliveries",
        "dl_description",
        "dl_reason",
        "dl_source",
        "enqueued",
        "expires",
        "lock_owner",
        "lock_token",
        "locked_until",
        "sequence_number",
        "state",
    )

    def __init__(self, content: Content, sequence_number: int, enqueued: float, expires: float | None) -> None:
        self.content = content
        self.sequence_number = sequence_number
        self.enqueued = enqueued
        self.expires = expires
        self.deliveries = 0
        self.lock_token = 0  # 0: not locked
        self.locked_until = 0.0
        self.lock_owner: Any = None
        self.state = STATE_ACTIVE
        self.dl_reason: str | None = None
        self.dl_description: str | None = None
        self.dl_source: str | None = None
