"""The bound on received-but-unsettled messages, shared by every backlog queue's pump."""

from __future__ import annotations

import asyncio


class InFlightBudget:
    """A counting semaphore that grants as many slots as are free (at least one, at most asked),
    so a pump receives a batch sized to what the syphon may still hold.

    A receive holds its grant while it waits (a long poll: up to 15 minutes), so no pump may ask
    for more than its `share`, or idle long polls on a few queues would starve the others of
    slots and their messages would never be received. The shares of all pumps add up to half the
    capacity: the other half is for batches being sent, and keeps room for a backlog queue that
    appears while the others are long-polling.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._free = capacity
        #: Messages received and not yet settled or let go (the rest of the taken slots are
        #: reserved by receives still waiting).
        self.held = 0
        self._pumps = 0
        self._changed = asyncio.Condition()

    def join(self) -> None:
        """A pump will draw on the budget (joined when made, so pumps started together share)."""
        self._pumps += 1

    def leave(self) -> None:
        self._pumps -= 1

    @property
    def share(self) -> int:
        """The most one pump may ask for at once (at least 1)."""
        return max(1, self.capacity // (2 * max(1, self._pumps)))

    @property
    def taken(self) -> int:
        return self.capacity - self._free

    async def acquire(self, wanted: int) -> int:
        """Wait until at least one slot is free; take up to `wanted` of them."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._free > 0)
            granted = min(wanted, self._free)
            self._free -= granted
            return granted

    async def received(self, granted: int, count: int) -> None:
        """A receive that was granted `granted` slots got `count` messages: keep those, free the rest."""
        self.held += count
        await self.release(granted - count)

    async def settled(self, count: int) -> None:
        """`count` held messages are settled or let go."""
        self.held -= count
        await self.release(count)

    async def release(self, count: int) -> None:
        if count <= 0:
            return
        async with self._changed:
            self._free += count
            if self._free > self.capacity:
                raise RuntimeError("released more in-flight slots than were acquired")
            self._changed.notify_all()

    async def idle(self) -> None:
        """Wait until nothing is in flight."""
        async with self._changed:
            await self._changed.wait_for(lambda: self._free == self.capacity)
