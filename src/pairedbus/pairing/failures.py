"""What a failed call on Service Bus means: one table over every failure the SDK raises on send,
receive, open and settle, and the one function that reads it (`failure_of`).

Each judging site of the runtime (the failover sender's, the backlog sender's, the syphon's pump,
sends, settlements, lock renewals and closes) asks `failure_of` and matches on the `Failure` it
returns; none of them reads an exception's class, flag or text itself. The SDK's private flags
(`_retryable`, `_condition`) are read through `pairedbus.sdk`, the one module for SDK internals.

The table is ordered: the first row whose classes (and condition, if any) match decides. Classes
come before the generic rows below them because the SDK's classes overlap: `MessageSizeExceededError`
is a `ValueError` too, and every retryable class is also a `ServiceBusError`.
`tests/pairing/test_failures.py` pins each row with the exception as the unmodified SDK raises it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final

from azure.servicebus.exceptions import (
    MessageAlreadySettled,
    MessageLockLostError,
    MessageNotFoundError,
    MessageSizeExceededError,
    MessagingEntityDisabledError,
    MessagingEntityNotFoundError,
    OperationTimeoutError,
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusConnectionError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
    SessionLockLostError,
)

from pairedbus import sdk


class Failure(Enum):
    """What a failed call on Service Bus means."""

    #: The message is larger than the entity takes: the caller's to fix; a batch may be split.
    TOO_LARGE = "too large"
    #: The entity does not exist: final for the entity (no retry brings it back).
    ENTITY_NOT_FOUND = "entity not found"
    #: The entity is disabled (the SDK marks it retryable: someone may enable it).
    ENTITY_DISABLED = "entity disabled"
    #: The credential was refused (the SDK marks it retryable: a token may refresh), never the
    #: other namespace's to take over: the other would refuse the same credential.
    DENIED = "denied"
    #: The entity is full (the SDK does not retry it; it drains).
    QUOTA_EXCEEDED = "quota exceeded"
    #: The broker no longer holds the message's (or session's) lock: it redelivers the message.
    LOCK_LOST = "lock lost"
    #: The broker has no such message: it is gone (settled by an earlier attempt, or expired).
    MESSAGE_NOT_FOUND = "message not found"
    #: The SDK refused, locally, to settle a message it has settled already.
    ALREADY_SETTLED = "already settled"
    #: The namespace's connection is broken (the SDK's own retries spent): the close/fault rule's.
    CONNECTION_LOST = "connection lost"
    #: The call timed out: the SDK's operation timeout, or an asyncio bound. Its answer is unknown.
    TIMED_OUT = "timed out"
    #: The service is busy: a later try can succeed; it answered, so nothing was applied.
    BUSY = "busy"
    #: The SDK shut the handler down (closed by its owner or its client): every later call on it
    #: fails the same way, so it must be renewed.
    SHUT_DOWN = "handler shut down"
    #: The SDK refused the call before sending it (a ValueError of its argument checks).
    INVALID = "invalid call"
    #: pyamqp tripped over a handler torn down under the call (its own AttributeError, not wrapped
    #: by the SDK: "'NoneType' object has no attribute 'end'").
    TORN_DOWN = "torn down"
    #: Any other failure the SDK says a retry can help (communication, session cannot be locked, ...).
    RETRY = "retry"
    #: The SDK's own failure, wrapped without an AMQP condition ("Handler failed: ..."): no answer
    #: of the service; the SDK shuts the handler's link down after it.
    HANDLER_FAILED = "handler failed"
    #: The service refused the call for good, with its condition (a batch of distinct keys, a
    #: message without the session id a session entity requires, ...).
    REFUSED = "refused"
    #: Not a failure of Service Bus: a bug, to be raised.
    NOT_SERVICE_BUS = "not service bus"


def _shut_down(exc: BaseException) -> bool:
    return SHUT_DOWN_WORDS in str(exc).lower()


def _retryable(exc: BaseException) -> bool:
    return sdk.is_retryable(exc)


def _without_condition(exc: BaseException) -> bool:
    return not sdk.carries_condition(exc)


#: What every spelling of the SDK's "handler has been shut down" shares: the handlers' own
#: ("The handler has already been shutdown. Please use ServiceBusClient to create a new instance.")
#: and the receiver's settlement check ("Failed to complete the message as the handler has already
#: been shutdown.Please use ServiceBusClient to create a new instance."). A plain ValueError: its
#: text is the only signal.
SHUT_DOWN_WORDS: Final = "handler has already been shutdown"


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the table: an exception of one of `raised` (that `when` accepts) means `failure`."""

    raised: tuple[type[BaseException], ...]
    failure: Failure
    when: Callable[[BaseException], bool] | None = None


#: The table, first match wins (see the module's docstring for why the order matters).
FAILURES: Final[tuple[Row, ...]] = (
    Row((MessageSizeExceededError,), Failure.TOO_LARGE),  # a ValueError too: before the ValueError rows
    Row((MessagingEntityNotFoundError,), Failure.ENTITY_NOT_FOUND),
    Row((MessagingEntityDisabledError,), Failure.ENTITY_DISABLED),
    Row((ServiceBusAuthorizationError, ServiceBusAuthenticationError), Failure.DENIED),
    Row((ServiceBusQuotaExceededError,), Failure.QUOTA_EXCEEDED),
    Row((MessageLockLostError, SessionLockLostError), Failure.LOCK_LOST),
    Row((MessageNotFoundError,), Failure.MESSAGE_NOT_FOUND),
    Row((MessageAlreadySettled,), Failure.ALREADY_SETTLED),  # a ValueError: before the ValueError rows
    Row((ServiceBusConnectionError,), Failure.CONNECTION_LOST),
    Row((OperationTimeoutError, TimeoutError), Failure.TIMED_OUT),
    Row((ServiceBusServerBusyError,), Failure.BUSY),
    Row((ValueError,), Failure.SHUT_DOWN, when=_shut_down),
    Row((ValueError,), Failure.INVALID),
    Row((AttributeError,), Failure.TORN_DOWN),
    Row((ServiceBusError,), Failure.RETRY, when=_retryable),
    Row((ServiceBusError,), Failure.HANDLER_FAILED, when=_without_condition),
    Row((ServiceBusError,), Failure.REFUSED),
)


def failure_of(exc: BaseException) -> Failure:
    """What `exc`, raised by a call on Service Bus, means (the first row of `FAILURES` that matches)."""
    for row in FAILURES:
        if isinstance(exc, row.raised) and (row.when is None or row.when(exc)):
            return row.failure
    return Failure.NOT_SERVICE_BUS


#: The failures a later try can fix: the SDK's retryable classes, and timeouts, and a refused
#: credential: the SDK's transport raises that one not retryable (its class alone says retryable),
#: but a role assignment may still be propagating (the sender never fails over on it: `FAILS_OVER`).
RETRYABLE: Final = frozenset(
    {
        Failure.ENTITY_DISABLED,
        Failure.DENIED,
        Failure.CONNECTION_LOST,
        Failure.TIMED_OUT,
        Failure.BUSY,
        Failure.RETRY,
    }
)
#: What a call on Service Bus may fail with and the runtime handles (counts, backs off, settles
#: later); the rest is a bug of the runtime or of pyamqp, raised.
SERVICE_BUS: Final = frozenset(Failure) - {Failure.TORN_DOWN, Failure.NOT_SERVICE_BUS}
