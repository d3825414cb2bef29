"""How a backlog pump sizes its receives: from the depth the listing reported, not a probe and a ramp.

The syphon lists the backlog queues anyway (`Syphon.list_backlog_queues`, through the data-plane
administration client's `active_message_count` or ARM's `countDetails.activeMessageCount`), so a
pump knows how much work its queue holds before its first receive. A queue with work starts with
as many receivers as its depth warrants (one per `batch_size` messages, at most `most`), each asking
for its share of what is still expected (never more than `batch_size`; the in-flight budget cuts
the grant to what is free and to the byte bound). Once the listed messages are received the pump
asks for a probe again: more may have arrived (then a full probe ramps up, as an unlisted queue
does), or the queue is empty and stays cheap. A queue listed empty starts idle: a probe, one
receiver, the long poll.

Pure arithmetic: the pump (`pump.BacklogPump`) owns the receives; tests pin the policy here.
"""

from __future__ import annotations

import math


class ReceivePlan:
    """What one pump expects its queue still holds (the listed depth less what it received since),
    and the receives and receivers that follow from it."""

    __slots__ = ("expected", "found_empty", "listed_received", "received_count")

    def __init__(self, depth: int = 0) -> None:
        #: Messages the listing reported and no receive has brought yet (0: nothing known).
        self.expected = max(0, depth)
        #: Messages every receive of the pump brought, in all.
        self.received_count = 0
        #: Whether receives brought at least the listed depth (an empty receive while some were
        #: still expected means they are held elsewhere: not received).
        self.listed_received = self.expected == 0
        #: Whether a receive found the queue empty after the listed depth was received.
        self.found_empty = False

    @property
    def emptied(self) -> bool:
        """The pump received at least what was listed, then found its queue empty: what `drain()`
        needs to end without listing the queues again (with every message settled)."""
        return self.listed_received and self.found_empty

    @property
    def starts_busy(self) -> bool:
        """A queue listed with work starts at full size: no probe first."""
        return self.expected > 0

    def receivers(self, *, batch_size: int, most: int) -> int:
        """Receivers the queue warrants now: one per `batch_size` expected messages, 1..`most`.
        With nothing expected (an unlisted or drained queue) up to `most`: whether to add one is
        then decided by full receives, as before the depth was known."""
        if not self.expected:
            return most
        return max(1, min(most, math.ceil(self.expected / batch_size)))

    def receive_size(self, *, batch_size: int, receivers: int) -> int:
        """What one of `receivers` receivers asks for: its share of what is expected, at most
        `batch_size` (with nothing expected, `batch_size`: the budget's probe rule then applies)."""
        if not self.expected:
            return batch_size
        return max(1, min(batch_size, math.ceil(self.expected / max(1, receivers))))

    def received(self, count: int, granted: int) -> bool:
        """Record a receive of `count` messages for `granted` slots; whether the queue is still busy.

        Busy while listed messages are still expected (a short receive does not mean empty: the
        service hands over what arrived within its wait). When the last expected ones arrive, not
        busy: the next receive is a probe. An empty receive means the listing was stale (messages
        locked by another receiver count as active): nothing more is expected. Without a listed
        depth, busy when the receive came back full (the ramp)."""
        if not count:
            self.found_empty = self.listed_received
            self.expected = 0
            return False
        self.received_count += count
        if self.expected:
            self.expected = max(0, self.expected - count)
            self.listed_received = not self.expected
            return self.expected > 0
        return count >= granted


class RestOfReceive:
    """Whether a receive that comes back short is followed at once by a receive of its rest, on the same
    slots and the same link credit (the pump's `_receive_loop`): decided once, when the receive returned
    (`follows`), so that the receive (which keeps its credit or takes it back) and the pump (which carries the
    slots or frees them) act on one answer though the queue's other receivers change the plan meanwhile.

    azure-servicebus 7.15 ends a receive 0.2 s after its first message (or at its wait), whether or not the
    transfers it asked for have come, and a transfer read after it ended is released by the SDK's own
    callback (prefetch 0, peek-lock), to be locked and sent again: over the wire, busy, a 2-queue drain of
    10,000 messages took 17,400-21,500 transfers, 7,300-11,400 of them released so (receives of 500, cut
    short or empty while their transfers were on their way; docs/benchmarks.md). While more listed messages
    are expected than the receive brought they are there: the rest is asked for at once, before the pump
    waits for its budget, so that what is on its way arrives during a receive. A rest that brought nothing
    ends it (the listing was stale, or the messages are held elsewhere), as does a receive that brought the
    last ones expected (the rest are another receiver's: on the fake, a rest waiting for them cost 4-8 % of a
    2-queue drain)."""

    __slots__ = ("_follows", "_is_rest", "_plan")

    def __init__(self, plan: ReceivePlan, *, is_rest: bool) -> None:
        self._plan = plan
        #: The receive is itself the rest of the one before.
        self._is_rest = is_rest
        self._follows: bool | None = None

    @property
    def is_rest(self) -> bool:
        return self._is_rest

    def follows(self, *, asked: int, received: int) -> bool:
        """Whether the rest of a receive of `asked` that brought `received` follows at once (asked before
        the plan counts them): the first answer stands."""
        if self._follows is None:
            expected_beyond = self._plan.expected > received
            self._follows = received < asked and expected_beyond and (received > 0 or not self._is_rest)
        return self._follows


def receivers_ahead(*, queues: int, capacity: int, batch_size: int, most: int) -> int:
    """Receivers to open on each of `queues` named backlog queues before the listing reports their depths
    (`warm_receivers`): what one would start with if every one of them had work, its share of the budget
    (`InFlightBudget.receivers_share` over `queues` busy queues), 1..`most`. More would only be closed
    unused; fewer leave the rest to be opened by the pump, a round trip later, as without the count."""
    return max(1, min(most, math.ceil(capacity / (max(1, batch_size) * max(1, queues)))))
