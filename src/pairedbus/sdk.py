"""The one place that reads private attributes of azure-servicebus (and, at the end, of Pulumi).

Checked against azure-servicebus 7.15.0 (`SDK_VERSION_CHECKED`). Each name below is private to the
SDK and may change in any release; `tests/test_sdk.py` fails when one of them no longer exists or
behaves as relied on here, so an SDK upgrade is noticed before the runtime misbehaves. Everything
else in the runtime uses the SDK's public surface. The fake (`pairedbus.testing`) reads the SDK's
internals only through this module too (the second group below): it imitates what the SDK does
with them (encodes, decodes, sizes, builds runtime properties), so it cannot use the public surface.

Three private names of Pulumi's Python SDK and policy SDK are read here too (the last group below),
checked against `PULUMI_VERSION_CHECKED` / `PULUMI_POLICY_VERSION_CHECKED`. Pulumi is an extra the
runtime does not install, so each is imported inside the function that reads it.

One reading of azure-mgmt-servicebus's generated models (the ARM field names) is here too, checked
against `MGMT_SDK_VERSION_CHECKED`.

Every private module imported at module level here is one `import azure.servicebus` has already
loaded, so importing this module costs next to nothing; names the fake used to import lazily are
imported inside the function that needs them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import logging
import operator
import ssl
import sys
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

import certifi
from azure.servicebus import ServiceBusMessage, ServiceBusMessageBatch
from azure.servicebus._common._connection_string_parser import parse_connection_string
from azure.servicebus._common.constants import (
    _BATCH_MESSAGE_OVERHEAD_COST,
    _X_OPT_ENQUEUED_TIME,
    _X_OPT_LOCKED_UNTIL,
    _X_OPT_PARTITION_KEY,
    _X_OPT_SCHEDULED_ENQUEUE_TIME,
    _X_OPT_SEQUENCE_NUMBER,
)
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._pyamqp.types import TYPE, VALUE
from azure.servicebus._pyamqp.utils import amqp_long_value
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType, AmqpMessageProperties
from azure.servicebus.exceptions import ServiceBusError

if TYPE_CHECKING:
    from azure.servicebus.management import (
        QueueRuntimeProperties,
        SubscriptionRuntimeProperties,
        TopicRuntimeProperties,
    )

T = TypeVar("T")

SDK_VERSION_CHECKED: Final = "7.15.0"
#: The azure-mgmt-servicebus release `rest_names` was checked against.
MGMT_SDK_VERSION_CHECKED: Final = "10.0.0"
#: The pulumi and pulumi-policy releases the Pulumi group below was checked against.
PULUMI_VERSION_CHECKED: Final = "3.272.0"
PULUMI_POLICY_VERSION_CHECKED: Final = "1.21.0"

#: Message-annotation keys the service routes by (bytes, as the SDK encodes them).
ANNOTATION_PARTITION_KEY: Final[bytes] = _X_OPT_PARTITION_KEY
ANNOTATION_SCHEDULED_ENQUEUE_TIME: Final[bytes] = _X_OPT_SCHEDULED_ENQUEUE_TIME
#: Message-annotation keys the broker sets on delivery (a received message's broker-assigned values).
ANNOTATION_SEQUENCE_NUMBER: Final[bytes] = _X_OPT_SEQUENCE_NUMBER
ANNOTATION_ENQUEUED_TIME: Final[bytes] = _X_OPT_ENQUEUED_TIME
ANNOTATION_LOCKED_UNTIL: Final[bytes] = _X_OPT_LOCKED_UNTIL
#: Keys of an explicitly typed AMQP value (`{TYPE: ..., VALUE: ...}`) before it is encoded.
AMQP_TYPE: Final = TYPE
AMQP_VALUE: Final = VALUE

__all__ = [
    "ABANDON",
    "AMQP_TYPE",
    "AMQP_VALUE",
    "ANNOTATION_ENQUEUED_TIME",
    "ANNOTATION_LOCKED_UNTIL",
    "ANNOTATION_PARTITION_KEY",
    "ANNOTATION_SCHEDULED_ENQUEUE_TIME",
    "ANNOTATION_SEQUENCE_NUMBER",
    "COMPLETE",
    "MESSAGE_BATCH_FIELDS",
    "MGMT_SDK_VERSION_CHECKED",
    "PULUMI_POLICY_VERSION_CHECKED",
    "PULUMI_VERSION_CHECKED",
    "RECEIVED_MESSAGE_FIELDS",
    "SDK_VERSION_CHECKED",
    "SESSION_FIELDS",
    "Disposition",
    "PyamqpTransport",
    "add_to_batch",
    "amqp_long",
    "amqp_properties",
    "amqp_ssl_context",
    "annotated_message_parts",
    "bare_annotated_message",
    "batch_messages",
    "batch_transport",
    "carries_condition",
    "close_link_credit",
    "complete_together",
    "condition_of",
    "dead_letter",
    "decode_message",
    "encode_message",
    "encoded_size",
    "error_for_condition",
    "error_for_own_failure",
    "is_pulumi_secret",
    "is_retryable",
    "keep_cancellations",
    "legacy_message",
    "message_count_details",
    "parse_connection_string",
    "parse_message",
    "policy_not_applicable_error",
    "pulumi_sync_await",
    "queue_runtime_properties",
    "raw_amqp_message",
    "release_in_flight",
    "rest_names",
    "sendable_as_is",
    "settle_together",
    "subscription_runtime_properties",
    "topic_runtime_properties",
]


#: The SDK's aio modules that call `asyncio.wait_for` (azure-servicebus 7.15.0): every frame read
#: (`_transport_async.receive_frame`), every bounded call (`_async_utils.await_with_deadline`), receives
#: and connection waits.
WAIT_FOR_CALLERS: Final = (
    "azure.servicebus._pyamqp.aio._client_async",
    "azure.servicebus._pyamqp.aio._connection_async",
    "azure.servicebus._pyamqp.aio._transport_async",
    "azure.servicebus.aio._async_utils",
)


async def wait_for(awaitable: Awaitable[T], timeout: float | None) -> T:  # noqa: ASYNC109 (asyncio.wait_for's signature)
    """`asyncio.wait_for` as Python 3.12 has it (on `asyncio.timeout`): a cancellation that arrives
    after the awaited call completed, before the caller ran again, is raised, not dropped."""
    if timeout is not None and timeout <= 0:
        future = asyncio.ensure_future(awaitable)
        if not future.done():
            future.cancel()
            await asyncio.wait({future})
        try:
            return future.result()
        except asyncio.CancelledError as exc:
            raise TimeoutError from exc
    async with asyncio.timeout(timeout):
        return await awaitable


class _AsyncioKeepingCancellations(types.ModuleType):
    """`asyncio` as the SDK's modules see it after `keep_cancellations`: itself, but `wait_for`."""

    wait_for = staticmethod(wait_for)

    def __init__(self) -> None:
        super().__init__("asyncio")

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)


def amqp_ssl_context(connection_verify: str | None = None) -> ssl.SSLContext:
    """The SSL context each AMQP connection of azure-servicebus builds for itself, built once a process.

    Every sender and receiver is its own connection, and without a client's `ssl_context` each one
    builds a context and loads the CA bundle into it (7.15.0: `connection_verify`, else certifi's;
    pyamqp's `_build_ssl_opts`), even for plain AMQP to an emulator, where the context goes unused:
    0.05-0.1 s of CPU a connection, 107 of them in one 2,000-message drain (docs/benchmarks.md).
    Given to `ServiceBusClient(ssl_context=...)`, one context is shared by every connection and
    verifies as theirs would: the same bundle, `PROTOCOL_TLS_CLIENT` (certificate and host name
    required). Kept per bundle path for the process (a CA bundle does not change under a running
    process; a syphon restarted after a fault reads it no more)."""
    return _ssl_context(connection_verify or certifi.where())


@functools.cache
def _ssl_context(ca_file: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(ca_file)
    return context


def keep_cancellations() -> None:
    """Give the SDK's aio modules (`WAIT_FOR_CALLERS`) Python 3.12's `asyncio.wait_for` on 3.11; idempotent,
    nothing on 3.12 and later.

    Python 3.11's `wait_for` returns the awaited result and drops a cancellation that arrives after it
    completed but before the waiting task ran again (CPython gh-86296, fixed in 3.12 by building it on
    `asyncio.timeout`). The SDK reads every frame through it, so a task cancelled while frames arrive
    often lost its cancellation and ran on. Over the wire, of 80 syphons cancelled mid-work (issue 34's
    probe: 100 parked messages, killed 1-4 s into the service loop, half with the connections cut),
    19 ran on over 5 s and 4 over 15 s (a receive into its 15-minute long poll, a settlement into the
    SDK's retries); with this and the pump's `cancel_until_done`, 2 of 20 over 5 s, 1 over 15 s (its
    settlements' gather still waiting, not explained). Only these modules' name `asyncio` changes (the
    process's `asyncio` is left alone)."""
    if sys.version_info >= (3, 12):
        return
    for name in WAIT_FOR_CALLERS:
        module = importlib.import_module(name)
        if not isinstance(getattr(module, "asyncio", None), _AsyncioKeepingCancellations):
            setattr(module, "asyncio", _AsyncioKeepingCancellations())  # noqa: B010 (a module's global, by name)


async def close_link_credit(receiver: object) -> None:
    """Take back the link credit a receive left open (`prefetch_count=0`): a no-op for a receiver that is not
    the SDK's pyamqp one (the in-process fake's) or has no credit left.

    With prefetch 0 the SDK grants the link `max_message_count` credits per receive
    (`ServiceBusReceiver._receive`: `reset_link_credit_async`) and leaves what a receive that returned early
    did not use: the broker goes on locking messages into a link nobody receives from, until the SDK's
    keep-alive (every 5 s) reads and releases them, and each release frees them to be locked again on the
    same credit. Over the wire, 5 messages sent after a receive that returned 3 of 10 were all locked
    (peeked with a delivery count of 1) though none had reached anyone. The SDK's own call
    (`reset_link_credit_async`) with 0: a flow with no credit, which ends the broker's credit for the link
    (AMQP 1.0 part 2, 2.6.7); the next receive grants it again. What was in flight meanwhile is the next
    receive's, or released by the keep-alive, as before."""
    handler = getattr(receiver, "_handler", None)
    link = getattr(handler, "_link", None)
    transport = getattr(receiver, "_amqp_transport", None)
    if link is None or transport is None or getattr(link, "current_link_credit", 0) <= 0:
        return
    try:
        await transport.reset_link_credit_async(handler, 0)
    except Exception as exc:  # the link or connection is gone: the next receive finds out and says so
        _ERRORS_LOG.debug("taking back a receive link's credit failed: %r", exc)


#: How long `release_in_flight` reads a closing receiver's connection at most (seconds; the SDK's own drain on
#: close is bounded by 5 s, `RECEIVE_LINK_DRAIN_TIMEOUT`).
RELEASE_IN_FLIGHT_BOUND: Final = 5.0
#: Reads in a row that bring no transfer before `release_in_flight` stops (the SDK's drain on close stops after 2).
_IDLE_READS: Final = 2


async def release_in_flight(receiver: object) -> None:
    """Read the transfers still on their way to a receiver whose credit was taken back (`close_link_credit`),
    before it closes, so that the SDK releases them: a no-op for a receiver that is not the SDK's pyamqp one,
    or whose link still has credit (the SDK's close then drains and releases it itself).

    A receive that returned before the broker's transfers arrived (under load, a drain's short wait ran out
    first) leaves them on the wire; `close_link_credit` then leaves the link no credit, and the SDK's close
    drains and releases only a link with credit left (7.15.0, `drain_and_release_messages_async`), so the
    transfers were never read and their messages stayed locked, delivered to a link that was gone, for the
    whole lock duration: over the wire, 250 of 300 messages after one receive that returned none, and 5-minute
    stalls of the syphon's drains (docs/benchmarks.md, round 3). Transfers read outside a receive are released
    by the SDK's own callback (prefetch 0, peek-lock); this reads until two reads in a row bring none, as the
    SDK's drain does, bounded by `RELEASE_IN_FLIGHT_BOUND`."""
    handler = getattr(receiver, "_handler", None)
    link = getattr(handler, "_link", None)
    connection = getattr(handler, "_connection", None)
    if link is None or connection is None or getattr(link, "_is_closed", True):
        return
    if getattr(link, "current_link_credit", 0) > 0:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RELEASE_IN_FLIGHT_BOUND
    read_wait = getattr(handler, "_socket_timeout", None) or 0.2
    idle = 0
    try:
        while idle < _IDLE_READS and (left := deadline - loop.time()) > 0:
            before = link.delivery_count
            await connection.listen(wait=min(read_wait, left), batch=64)
            idle = idle + 1 if link.delivery_count == before else 0
    except Exception as exc:  # the link or connection is gone: nothing more can be read or released on it
        _ERRORS_LOG.debug("reading a closing receiver's transfers failed: %r", exc)


@dataclasses.dataclass(frozen=True)
class Disposition:
    """What `settle_together` asks of the broker for every message of a group: the SDK's settle operation
    (`complete`, `abandon` or `dead-letter`, its `MESSAGE_*` names) and, for a dead-letter, the reason and
    description the SDK's `dead_letter_message` sends. Build them with `COMPLETE`, `ABANDON`, `dead_letter`."""

    operation: str
    reason: str | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        if self.operation not in _SETTLE_OPERATIONS:
            raise ValueError(f"no settlement {self.operation!r}: one of {sorted(_SETTLE_OPERATIONS)}")

    def link_state(self) -> Any:
        """The delivery state the SDK puts on the receive link's disposition for this operation (7.15.0,
        `PyamqpTransport.settle_message_via_receiver_link`): accepted; modified, delivery failed, deliverable
        here; rejected with the dead-letter error carrying reason and description."""
        from azure.servicebus._common.constants import (
            DEADLETTERNAME,
            MESSAGE_ABANDON,
            MESSAGE_COMPLETE,
            RECEIVER_LINK_DEAD_LETTER_ERROR_DESCRIPTION,
            RECEIVER_LINK_DEAD_LETTER_REASON,
        )
        from azure.servicebus._pyamqp.error import AMQPError
        from azure.servicebus._pyamqp.outcomes import Accepted, Modified, Rejected

        if self.operation == MESSAGE_COMPLETE:
            return Accepted()
        if self.operation == MESSAGE_ABANDON:
            return Modified(delivery_failed=True, undeliverable_here=False, message_annotations=None)
        info = {
            RECEIVER_LINK_DEAD_LETTER_REASON: self.reason,
            RECEIVER_LINK_DEAD_LETTER_ERROR_DESCRIPTION: self.description,
        }
        return Rejected(error=AMQPError(condition=DEADLETTERNAME, description=self.description, info=info))

    def by_lock_token(self) -> tuple[str, dict[str, str] | None]:
        """The management request's `disposition-status` and dead-letter fields, as the SDK's `_settle_message`
        builds them for its own fallback by lock token (7.15.0): `completed`, `abandoned`, `suspended` with
        `deadletter-reason` and `deadletter-description` ("" for a None)."""
        from azure.servicebus._common.constants import (
            MESSAGE_DEAD_LETTER,
            MESSAGE_MGMT_SETTLEMENT_TERM_MAP,
            MGMT_REQUEST_DEAD_LETTER_ERROR_DESCRIPTION,
            MGMT_REQUEST_DEAD_LETTER_REASON,
        )

        details = (
            {
                MGMT_REQUEST_DEAD_LETTER_REASON: self.reason or "",
                MGMT_REQUEST_DEAD_LETTER_ERROR_DESCRIPTION: self.description or "",
            }
            if self.operation == MESSAGE_DEAD_LETTER
            else None
        )
        return MESSAGE_MGMT_SETTLEMENT_TERM_MAP[self.operation], details


#: The settle operations `Disposition` takes (the SDK's `MESSAGE_COMPLETE`, `MESSAGE_ABANDON`, `MESSAGE_DEAD_LETTER`).
_SETTLE_OPERATIONS: Final = frozenset({"complete", "abandon", "dead-letter"})
COMPLETE: Final = Disposition("complete")
ABANDON: Final = Disposition("abandon")


def dead_letter(reason: str | None, description: str | None) -> Disposition:
    """A dead-letter with the reason and description `dead_letter_message(reason=..., error_description=...)` sends."""
    return Disposition("dead-letter", reason, description)


async def complete_together(
    receiver: object, messages: list[Any], outcome_timeout: float
) -> list[Exception | None] | None:
    """`settle_together` with `COMPLETE`."""
    return await settle_together(receiver, messages, outcome_timeout, COMPLETE)


async def settle_together(
    receiver: object, messages: list[Any], outcome_timeout: float, disposition: Disposition
) -> list[Exception | None] | None:
    """Settle `messages` (received by `receiver`, peek-lock) as `disposition` says, with one wait for all their
    outcomes: each message's disposition frame is sent, then the connection is read until the broker has answered
    every one or `outcome_timeout` passed. None when `receiver` is not the SDK's pyamqp receiver awaiting outcomes
    (the in-process fake's): the caller settles them one by one. Otherwise each message's result: None (confirmed,
    and the message marked settled as `complete_message` marks it), or the SDK's error for it (what
    `complete_message` / `abandon_message` / `dead_letter_message` would raise: `MessageSettlementUnconfirmed`
    mapped as the SDK maps it when no answer came).

    `complete_message` waits for its own outcome (azure-servicebus 7.15.0, `_wait_for_disposition_outcome`) by
    reading the connection one frame at a time under the connection's socket lock, which its writes take too:
    n completes outstanding on one receiver are n readers taking turns, and each that finds nothing to read holds
    the lock for the socket timeout (0.2 s) while the others' frames wait. Over the wire a 10-queue drain of
    10,000 messages read its connections 53,511 times, 24,800 of them empty; with this, 523 empty
    (docs/benchmarks.md, round 4). One reader for a whole group reads what comes.

    A message the receive link can no longer settle is settled by its lock token on the management link
    (`update-disposition`, `_by_lock_token`), as the SDK falls back when an outcome goes unconfirmed: one whose
    delivery was answered already (a retry after the broker answered busy: pyamqp forgets a delivery tag once
    its disposition is sent, and a second one raises "Delivery tag not found"), and every one once the broker
    detached the link (it does so to a busy receive: pyamqp then closes the link, and the SDK's per-message
    settlement raises `ValueError('Link already closed.')`, which the SDK calls "Handler failed" and shuts the
    whole receiver's handler down for, failing every other settlement in flight on it)."""
    from azure.servicebus._pyamqp.error import AMQPException, ErrorCondition, MessageSettlementUnconfirmed
    from azure.servicebus._pyamqp.receiver import check_disposition_outcome, outcome_name

    link = getattr(getattr(receiver, "_handler", None), "_link", None)
    transport = getattr(receiver, "_amqp_transport", None)
    pending = getattr(link, "_pending_dispositions", None)
    if link is None or transport is None or pending is None or not getattr(receiver, "_await_settlement_outcome", 0):
        return None
    if getattr(receiver, "_session", None) is not None:
        return None

    def sdk_error(exc: Exception) -> Exception:
        if not isinstance(exc, AMQPException):
            return exc
        error: Exception = transport.create_servicebus_exception(
            _ERRORS_LOG,
            exc,
            custom_endpoint_address=getattr(getattr(receiver, "_config", None), "custom_endpoint_address", None),
        )
        return error

    loop = asyncio.get_running_loop()
    deadline = loop.time() + outcome_timeout
    state = disposition.link_state()
    expected = outcome_name(state)
    results: list[Exception | None] = [None] * len(messages)
    sent: dict[int, int] = {}  # delivery id -> index in messages
    by_token: list[int] = []  # indexes the receive link cannot settle
    unsure: set[int] = set()  # of those, the ones whose disposition went out unanswered: it may have been applied
    try:
        usable = _link_usable(link)
        on_link = [i for i, m in enumerate(messages) if usable and m._delivery_tag in link._received_delivery_tags]
        by_token = sorted(set(range(len(messages))) - set(on_link))
        await _send_dispositions(link, pending, messages, on_link, state, results, sent, sdk_error)
        lost = await _await_outcomes(link, pending, sent, deadline - loop.time())
        for delivery_id, index in sent.items():
            answer = pending[delivery_id]
            try:
                if not answer["settled"]:
                    if not _link_usable(link):
                        by_token.append(index)
                        unsure.add(index)
                        continue
                    raise MessageSettlementUnconfirmed(condition=ErrorCondition.ClientError, description=lost)
                check_disposition_outcome(delivery_id, answer["outcome"], expected)
            except AMQPException as exc:
                results[index] = sdk_error(exc)
            else:
                messages[index]._settled = True
    except Exception as exc:  # the connection failed under the reads: none of the unanswered is known
        for index in [*sent.values(), *by_token]:
            if results[index] is None and not messages[index]._settled:
                results[index] = sdk_error(exc)
        return results
    finally:
        for delivery_id in sent:
            pending.pop(delivery_id, None)
    if by_token:
        await _by_lock_token(receiver, messages, by_token, unsure, results, deadline - loop.time(), disposition)
    return results


def _shut_down_text(operation: str) -> str:
    """The SDK's text for a settlement on a receiver whose handler it shut down (7.15.0, `_check_message_alive`)."""
    return (
        f"Failed to {operation} the message as the handler has already been shutdown."
        "Please use ServiceBusClient to create a new instance."
    )


def _link_usable(link: Any) -> bool:
    """Whether a receive link can still carry a disposition: attached, and not closed by a detach."""
    from azure.servicebus._pyamqp.constants import LinkState

    return not link._is_closed and link.state == LinkState.ATTACHED


async def _by_lock_token(
    receiver: Any,
    messages: list[Any],
    indexes: list[int],
    unsure: set[int],
    results: list[Exception | None],
    timeout: float,  # noqa: ASYNC109
    disposition: Disposition = COMPLETE,
) -> None:
    """Settle `messages[i]` for each of `indexes` as `disposition` says, by its lock token on the receiver's
    management link, all at once within `timeout`; each one's result in `results`. Only while the receiver's
    handler runs: opening a new one here would race the receiver's own use of it (the SDK's "Handler failed:
    'NoneType' ..."), so a receiver the SDK shut down leaves these messages to their lock. A lock-lost answer to
    one of `unsure` (its disposition went out unanswered) is that it may have been applied: the unconfirmed error
    stands."""
    from azure.servicebus._pyamqp.error import ErrorCondition, MessageSettlementUnconfirmed
    from azure.servicebus.exceptions import MessageLockLostError

    def unconfirmed() -> Exception:
        # Made where it is the answer only: the SDK's conversion logs an "AMQP error occurred" line.
        error: Exception = receiver._amqp_transport.create_servicebus_exception(
            _ERRORS_LOG,
            MessageSettlementUnconfirmed(
                condition=ErrorCondition.ClientError,
                description="The link detached before the settlement was confirmed; it may have been applied.",
            ),
        )
        return error

    handler = receiver._handler
    if not receiver._running or handler is None or handler._shutdown or timeout <= 0:
        for index in indexes:
            if results[index] is None:
                # what the SDK raises on a handler shut down: nothing was sent, so nothing applied
                results[index] = (
                    unconfirmed() if index in unsure else ValueError(_shut_down_text(disposition.operation))
                )
        return
    term, details = disposition.by_lock_token()

    async def settle(message: Any) -> None:
        await receiver._settle_message_via_mgmt_link(term, [message.lock_token], dead_letter_details=details)

    try:
        async with asyncio.timeout(timeout):
            answers = await asyncio.gather(*(settle(messages[i]) for i in indexes), return_exceptions=True)
    except TimeoutError as exc:
        answers = [exc] * len(indexes)
    for index, answer in zip(indexes, answers, strict=True):
        if not isinstance(answer, BaseException):
            messages[index]._settled = True
            results[index] = None
        elif isinstance(answer, MessageLockLostError) and index in unsure:
            results[index] = unconfirmed()
        elif isinstance(answer, Exception):
            results[index] = error_for_own_failure(answer) if not isinstance(answer, ServiceBusError) else answer
        else:
            raise answer


async def _send_dispositions(
    link: Any,
    pending: dict[int, Any],
    messages: list[Any],
    indexes: list[int],
    state: Any,
    results: list[Exception | None],
    sent: dict[int, int],
    sdk_error: Callable[[Exception], Exception],
) -> None:
    """`settle_together`'s first half: the disposition frame (`state`) of each of `messages[i]` for `indexes`
    sent, its delivery id awaited in `pending` and recorded in `sent`; a frame that could not be sent is that
    message's error."""
    for index in indexes:
        message = messages[index]
        delivery_id = message._delivery_id
        pending[delivery_id] = {"settled": False, "outcome": None}
        try:
            await link._outgoing_disposition(delivery_id, None, message._delivery_tag, False, state, None)
        except Exception as exc:
            pending.pop(delivery_id, None)
            results[index] = sdk_error(exc)
        else:
            sent[delivery_id] = index


async def _await_outcomes(link: Any, pending: dict[int, Any], sent: dict[int, int], timeout: float) -> str | None:  # noqa: ASYNC109
    """`settle_together`'s second half: the connection read, one reader, until every delivery in `sent`
    is answered; why not, if not (the wait ran out, or the link detached)."""
    from azure.servicebus._pyamqp.constants import LinkState

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    connection = link._session._connection
    while not all(pending[d]["settled"] for d in sent):
        if loop.time() >= deadline:
            return "Timed out waiting for the settlement outcome; it may have been applied."
        await connection.listen(wait=False)
        if link.state in (LinkState.DETACHED, LinkState.ERROR):
            return "The link detached before the settlement was confirmed; it may have been applied."
    return None


def is_retryable(exc: BaseException) -> bool:
    """Whether azure-servicebus says a retry can help. Each of its exception classes sets the flag,
    but the SDK keeps it private (`_retryable`) and branches on it in its own retry policy."""
    return bool(getattr(exc, "_retryable", False))


def carries_condition(exc: BaseException) -> bool:
    """Whether a `ServiceBusError` carries an AMQP error condition: the service's answer (or its AMQP
    stack's). Without one the SDK wrapped a failure of its own ("Handler failed: 'NoneType' object has
    no attribute 'create_sender_link'", seen over the wire when a close tore the handler down under an
    operation): no refusal by the service. The SDK keeps the condition private (`_condition`)."""
    return getattr(exc, "_condition", None) is not None


def condition_of(exc: BaseException) -> str | None:
    """The AMQP error condition a `ServiceBusError` carries (`amqp:link:detach-forced`,
    `com.microsoft:server-busy`, ...), or None (see `carries_condition`). The SDK keeps it private
    (`_condition`), as pyamqp's `ErrorCondition` or the text it decoded."""
    condition = getattr(exc, "_condition", None)
    if condition is None:
        return None
    return str(getattr(condition, "value", condition))


#: Where the SDK's transport logs the errors `error_for_condition` has it make.
_ERRORS_LOG = logging.getLogger("pairedbus.sdk")


def error_for_condition(
    condition: str, description: str | None = None, *, on_connection: bool = False
) -> ServiceBusError:
    """The exception the SDK raises when the service answers with the AMQP error `condition` on a link
    (or, `on_connection`, on the connection): its class, condition and retryable flag as the SDK's
    transport sets them (`PyamqpTransport.create_servicebus_exception`). The flag is the transport's,
    not the class constructor's: `amqp:unauthorized-access` is a ServiceBusAuthorizationError the SDK
    does not retry, though the class alone marks itself retryable."""
    from azure.servicebus._pyamqp.error import AMQPConnectionError, AMQPLinkError

    encoded = condition.encode()
    error_class = AMQPConnectionError if on_connection else AMQPLinkError
    amqp_error = error_class(_error_conditions().get(encoded, encoded), description=description)
    return PyamqpTransport.create_servicebus_exception(_ERRORS_LOG, amqp_error)


@functools.cache
def _error_conditions() -> dict[bytes, bytes]:
    """pyamqp's `ErrorCondition` members by their encoded value, built once: the in-process fake makes
    every error it raises through `error_for_condition`, and building this was most of its cost."""
    from azure.servicebus._pyamqp.error import ErrorCondition

    return {member.value: member for member in ErrorCondition}


def error_for_own_failure(error: Exception) -> ServiceBusError:
    """What the SDK raises when its own code fails under a call (pyamqp's `AttributeError` on a handler
    torn down, ...): `error` wrapped in a plain ServiceBusError ("Handler failed: ...") with no AMQP
    condition, not retryable."""
    return PyamqpTransport.create_servicebus_exception(_ERRORS_LOG, error)


#: `message.raw_amqp_message` without the property's Python call (read on every healthy send):
#: a C-level attribute getter of the SDK's private field.
raw_amqp_message: Callable[[ServiceBusMessage], AmqpAnnotatedMessage] = operator.attrgetter("_raw_amqp_message")
#: `message.raw_amqp_message.properties` in one C-level call: neither property's Python call.
amqp_properties: Callable[[ServiceBusMessage], AmqpMessageProperties | None] = operator.attrgetter(
    "_raw_amqp_message._properties"
)


def sendable_as_is(message: ServiceBusMessage) -> bool:
    """Whether `message` has a message id and no session id (its `raw_amqp_message.properties`
    carry a `message_id` and no `group_id`): the failover sender's healthy send then adds nothing to
    it. Asked on every healthy send, so read through the private fields, whose attribute loads
    Python specializes (the public properties are two Python calls; an attrgetter's generic lookups
    and a call cost as much as this whole function)."""
    properties = message._raw_amqp_message._properties
    return properties is not None and properties.message_id is not None and properties.group_id is None


def batch_messages(batch: ServiceBusMessageBatch) -> list[ServiceBusMessage]:
    """The messages added to a batch (the SDK keeps them in `_messages`)."""
    return list(batch._messages)


def batch_transport(batch: Any) -> dict[str, Any]:
    """Keyword arguments that make a new batch use the same AMQP transport as `batch`."""
    transport = getattr(batch, "_amqp_transport", None)
    return {"amqp_transport": transport} if transport is not None else {}


def amqp_long(value: int) -> Any:
    """An int the SDK encodes as an AMQP long (a plain int above 2**31-1 would not encode)."""
    return amqp_long_value(value)  # type: ignore[no-untyped-call]  # _pyamqp.utils carries no annotations


def encoded_size(message: ServiceBusMessage) -> int:
    """The message's size on the wire, as the SDK measures it against the size limit."""
    amqp_message = PyamqpTransport.to_outgoing_amqp_message(message.raw_amqp_message)
    return PyamqpTransport.get_message_encoded_size(amqp_message)


def bare_annotated_message(body: bytes | None) -> AmqpAnnotatedMessage:
    """`AmqpAnnotatedMessage(data_body=body)` (or `value_body=None`) without its constructor, which
    evaluates typing casts at run time (half of `restore_message`'s CPU); the byte-for-byte
    equality with the public constructor is pinned by the tests."""
    raw = AmqpAnnotatedMessage.__new__(AmqpAnnotatedMessage)
    raw._encoding = "UTF-8"
    raw._data_body = None if body is None else [body]
    raw._sequence_body = None
    raw._value_body = None
    raw._body_type = AmqpMessageBodyType.VALUE if body is None else AmqpMessageBodyType.DATA
    raw._header = None
    raw._footer = None
    raw._properties = None
    raw._application_properties = None
    raw._annotations = None
    raw._delivery_annotations = None
    return raw


def data_body_size(message: ServiceBusMessage) -> int:
    """The bytes of the message's data sections (0 for any other body): no encoding of the message
    is smaller, so a batch with less room than this cannot take it."""
    sections: list[bytes] | None = message.raw_amqp_message._data_body  # type: ignore[assignment]  # AMQP data sections are binary; the SDK types them list[int | str | bytes]
    return sum(map(len, sections)) if sections else 0


def add_to_batch(batch: ServiceBusMessageBatch, message: ServiceBusMessage) -> bool:
    """Add `message` to `batch`; False when it does not fit (the batch is unchanged).

    `ServiceBusMessageBatch.add_message` encodes each message twice (once to measure it, once
    into the batch): on the syphon's hop that is a quarter of the CPU. This encodes it once and
    appends the bytes as `add_message` does (`_pyamqp.utils.add_batch`), with the same size
    arithmetic. Distributed tracing attributes (`trace_message`) are not added. Any other batch
    (another transport, a test double) goes through its own `add_message`.
    """
    if type(batch) is not ServiceBusMessageBatch or batch._amqp_transport is not PyamqpTransport:
        from azure.servicebus.exceptions import MessageSizeExceededError

        try:
            batch.add_message(message)
        except MessageSizeExceededError:
            return False
        return True
    outgoing = PyamqpTransport.to_outgoing_amqp_message(message.raw_amqp_message)
    payload = bytearray()
    encode_payload(payload, outgoing)
    size = len(payload)
    size_after = batch._size + size + _BATCH_MESSAGE_OVERHEAD_COST[0 if size < 256 else 1]
    if size_after > batch.max_size_in_bytes:
        return False
    message._message = outgoing
    batch._message[5].append(payload)  # the batch message's data sections
    batch._size = size_after
    batch._count += 1
    batch._messages.append(message)
    if batch._count == 1:  # the envelope takes the first message's routing, as add_message does
        PyamqpTransport.set_batch_envelope_properties(
            batch._message, message.message_id, message.session_id, message.partition_key
        )
    return True


# --- what the fake (`pairedbus.testing`) reads ------------------------------------------------------
# `PyamqpTransport` (imported above) is re-exported: the fake's batch names it as its transport, as a
# real batch does, so the SDK's code that branches on `batch._amqp_transport` treats it as its own.
# `parse_connection_string` (imported above) is re-exported: the fake's `from_connection_string`
# reads a connection string exactly as the SDK's clients do (the SDK has no public parser).

#: An `AmqpAnnotatedMessage`'s parts in one C-level call (the fake snapshots every sent message; the
#: public properties are Python calls and `body` is a generator): `(body_type, data_body,
#: sequence_body, value_body, properties, header, annotations, application_properties, footer,
#: delivery_annotations)`.
annotated_message_parts: Callable[[AmqpAnnotatedMessage], tuple[Any, ...]] = operator.attrgetter(
    "_body_type",
    "_data_body",
    "_sequence_body",
    "_value_body",
    "_properties",
    "_header",
    "_annotations",
    "_application_properties",
    "_footer",
    "_delivery_annotations",
)


# The fake's subclasses of SDK classes set or override these private fields of their SDK base class,
# because the SDK's own code (its properties, AutoLockRenewer, pickling, the senders) reads them.
# Listed to be pinned: tests/test_sdk.py checks each still exists on the SDK class and that the
# fake's classes override no other private SDK field.
#: ...of `ServiceBusReceivedMessage`, set by `testing.messages.FakeReceivedMessage`.
RECEIVED_MESSAGE_FIELDS: Final = frozenset(
    {
        "_expiry",
        "_is_deferred_message",
        "_is_peeked_message",
        "_lock_expired",
        "_message",
        "_raw_amqp_message",
        "_received_timestamp_utc",
        "_receiver",
        "_settled",
        "_uamqp_message",
    }
)
#: ...of `ServiceBusMessageBatch`, set by `testing.messages.FakeMessageBatch`.
MESSAGE_BATCH_FIELDS: Final = frozenset(
    {
        "_add",
        "_amqp_transport",
        "_count",
        "_from_list",
        "_max_size_in_bytes",
        "_messages",
        "_size",
        "_tracing_attributes",
        "_uamqp_message",
    }
)
#: ...of the (aio and sync) `ServiceBusSession`, set by `testing.servicebus_session.ServiceBusSession`.
SESSION_FIELDS: Final = frozenset(
    {"_encoding", "_lock_expired", "_lock_lost", "_locked_until_utc", "_receiver", "_session_id", "_session_start"}
)


def encode_message(raw: AmqpAnnotatedMessage) -> bytes:
    """The message as the SDK's AMQP encoder puts it on the wire (the bytes a send transfers)."""
    return bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw)))


def decode_message(wire: bytes, *, delivery_count: int, annotations: Mapping[Any, Any]) -> AmqpAnnotatedMessage:
    """What a receiver decodes from `wire` (bytes `encode_message` made) after the broker stamped
    its header's delivery count and added its message annotations (`annotations` win)."""
    from azure.servicebus._pyamqp._decode import decode_payload
    from azure.servicebus._pyamqp.message import Header

    decoded = decode_payload(memoryview(wire))
    header = decoded.header
    header = Header(delivery_count=delivery_count) if header is None else header._replace(delivery_count=delivery_count)
    merged = dict(decoded.message_annotations or {})
    merged.update(annotations)
    return AmqpAnnotatedMessage(message=decoded._replace(header=header, message_annotations=merged))


def parse_message(wire: bytes) -> AmqpAnnotatedMessage:
    """What the SDK decodes from a message's bytes, as sent (no broker fields added)."""
    from azure.servicebus._pyamqp._decode import decode_payload

    return AmqpAnnotatedMessage(message=decode_payload(memoryview(wire)))


def legacy_message(raw: AmqpAnnotatedMessage) -> Any:
    """The SDK's deprecated `ServiceBusReceivedMessage.message` view (`LegacyMessage`) of `raw`."""
    from azure.servicebus._pyamqp._message_backcompat import LegacyMessage

    return LegacyMessage(raw, to_outgoing_amqp_message=PyamqpTransport.to_outgoing_amqp_message)


def message_count_details(active: int, dead_letter: int, scheduled: int) -> Any:
    """The generated `MessageCountDetails` the runtime-properties builders below take (no transfers)."""
    from azure.servicebus.management._generated.models import MessageCountDetails

    return MessageCountDetails(
        active_message_count=active,
        dead_letter_message_count=dead_letter,
        scheduled_message_count=scheduled,
        transfer_dead_letter_message_count=0,
        transfer_message_count=0,
    )


def queue_runtime_properties(name: str, **description: Any) -> QueueRuntimeProperties:
    """`QueueRuntimeProperties` built as the SDK builds it from the service's answer (its private
    `_from_internal_entity` of a generated `QueueDescription` with these fields)."""
    from azure.servicebus.management import QueueRuntimeProperties
    from azure.servicebus.management._generated.models import QueueDescription

    return QueueRuntimeProperties._from_internal_entity(name, QueueDescription(**description))


def topic_runtime_properties(name: str, **description: Any) -> TopicRuntimeProperties:
    """`TopicRuntimeProperties` from a generated `TopicDescription`, as `queue_runtime_properties`."""
    from azure.servicebus.management import TopicRuntimeProperties
    from azure.servicebus.management._generated.models import TopicDescription

    return TopicRuntimeProperties._from_internal_entity(name, TopicDescription(**description))


def subscription_runtime_properties(name: str, **description: Any) -> SubscriptionRuntimeProperties:
    """`SubscriptionRuntimeProperties` from a generated `SubscriptionDescription`, as above."""
    from azure.servicebus.management import SubscriptionRuntimeProperties
    from azure.servicebus.management._generated.models import SubscriptionDescription

    return SubscriptionRuntimeProperties._from_internal_entity(name, SubscriptionDescription(**description))


def rest_names(model: type) -> dict[str, str]:
    """Python attribute -> ARM JSON name of an azure-mgmt-servicebus generated model (the fake's ARM
    plane reads and writes resource bodies by these names): the model's private field table
    (`_attr_to_rest_field`, each field's `_rest_name`), which it fills on first construction."""
    model()
    return {attr: field._rest_name for attr, field in model._attr_to_rest_field.items()}  # type: ignore[attr-defined]  # the generated model's private field table, which this function exists to read


# --- Pulumi (an extra: imported inside each function) --------------------------------------------


def pulumi_sync_await(awaitable: Awaitable[T]) -> T:
    """Run `awaitable` to completion on Pulumi's own event loop, from synchronous code.

    Private name: `pulumi.runtime.sync_await._sync_await`. Why: the offline plan runs a Pulumi program
    in-process under mocks, outside the CLI and its language host; the program's outputs resolve on
    the loop Pulumi keeps for the process, and `_sync_await` is the SDK's own way to drive that loop
    from synchronous code (its public `pulumi.runtime.test` wraps the same call)."""
    from pulumi.runtime.sync_await import _sync_await

    return _sync_await(awaitable)


def is_pulumi_secret(value: Mapping[Any, Any]) -> bool:
    """Whether a plain resolved value is Pulumi's wire form of a secret (a map carrying the secret signature).

    Private names: `pulumi.runtime.rpc._special_sig_key` and `_special_secret_sig`. Why: a mock
    provider's inputs arrive serialised, with secrets still wrapped; the plan masks them, and the
    signature that marks them is only defined privately in the SDK (it is the engine's wire constant)."""
    from pulumi.runtime import rpc

    return bool(value.get(rpc._special_sig_key) == rpc._special_secret_sig)


def policy_not_applicable_error() -> type[Exception]:
    """The exception a CrossGuard policy raises through `args.not_applicable()`.

    Private name: `pulumi_policy.policy._NotApplicableError`. Why: the offline gate runs the pack's
    validators itself, outside the policy analyzer, and must skip a policy that declared itself not
    applicable the way the analyzer does; the SDK raises this class and exports no public name for it."""
    from pulumi_policy.policy import _NotApplicableError

    return _NotApplicableError
