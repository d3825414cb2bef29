"""The receiving side of a paired namespace: pings reach receivers and must never reach the
application (paired-namespaces.md, "Pings"; today's service delivers them like any message).

`ping_filtered(receiver)` / `PingSkippingReceiver` wrap an `azure.servicebus.aio`
`ServiceBusReceiver`: pings are completed (peek-lock) and dropped; every other message is handed
to the caller untouched, to settle as usual through the wrapped receiver.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from azure.servicebus import ServiceBusReceivedMessage, ServiceBusReceiveMode

from pairedbus.pairing.ping import is_ping


class PingSkippingReceiver:
    """A receiver that never returns a ping; attributes it does not define (settlement, session,
    close, peek...) are the wrapped receiver's."""

    def __init__(self, receiver: Any) -> None:
        self._receiver = receiver
        self.pings_skipped = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._receiver, name)

    async def __aenter__(self) -> PingSkippingReceiver:
        await self._receiver.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._receiver.__aexit__(*exc_info)

    async def _drop(self, ping: ServiceBusReceivedMessage) -> None:
        self.pings_skipped += 1
        # A receive-and-delete receiver already consumed it; the SDK keeps the mode private.
        mode = getattr(self._receiver, "_receive_mode", None) or getattr(self._receiver, "receive_mode", None)
        if mode != ServiceBusReceiveMode.RECEIVE_AND_DELETE:
            await self._receiver.complete_message(ping)

    async def receive_messages(
        self, max_message_count: int | None = 1, max_wait_time: float | None = None
    ) -> list[ServiceBusReceivedMessage]:
        """Like the SDK's: may return fewer messages than asked (or none) when pings were dropped."""
        received = await self._receiver.receive_messages(
            max_message_count=max_message_count, max_wait_time=max_wait_time
        )
        kept = []
        for message in received:
            if is_ping(message):
                await self._drop(message)
            else:
                kept.append(message)
        return kept

    def __aiter__(self) -> AsyncIterator[ServiceBusReceivedMessage]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ServiceBusReceivedMessage]:
        async for message in self._receiver:
            if is_ping(message):
                await self._drop(message)
                continue
            yield message


def ping_filtered(receiver: Any) -> PingSkippingReceiver:
    """Wrap a receiver so that pings are completed and skipped."""
    return PingSkippingReceiver(receiver)
