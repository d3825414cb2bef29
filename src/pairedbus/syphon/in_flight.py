"""The bound on received-but-unsettled messages, shared by every backlog queue's pump: by count
and by bytes (settlement.md: "unbounded in-flight sends exhaust memory: cap them")."""

from __future__ import annotations

import asyncio
from collections import deque

#: What an idle pump asks for: enough to notice that its queue has work, little enough that
#: long polls on many idle queues leave the budget to the busy ones.
PROBE = 16


#: A receive may expect at most this fraction of the byte bound (1/4): with messages of 200 KB and
#: a 64 MiB bound one receive then brings 81, not all 327 at once.
_RECEIVES_PER_BYTE_BOUND = 4

#: While several queues listed with work share the budget, a receive asks for at most this fraction
#: of the capacity (1/64: 31 of 2,000), and never less than a probe. A receive's messages are handed
#: over together once the last of them has arrived (one transfer after another on the connection),
#: and its batch is restored and packed in one turn of the loop before its first send: every message
#: of a receive of 500 waits for 500 transfers and 500 restores while holding its slot (smaller
#: receives kept more of C/3R: docs/benchmarks.md, "Figures behind the code's comments").
_RECEIVES_PER_CAPACITY = 64


class InFlightBudget:
    """A counting semaphore that grants as many slots as are free (at least one, at most asked),
    so a pump receives a batch sized to what the syphon may still hold; and a byte bound: while
    the messages held, plus what the receives still waiting are expected to bring at the typical
    message size, add up to `max_bytes` or more, no receive starts, and a grant is cut to what
    fits (a receive of 500 slots could otherwise bring 500 messages of 256 KB past a 64 MiB bound).

    A receive holds its grant while it waits (a long poll: up to 15 minutes). So a pump asks by
    how its queue behaves (`ask`): an idle one (its last receive came back short) only a small
    probe; a busy one (its last receive came back full) whatever is free now, up to its receive
    size. Long polls on idle queues then cannot starve a busy one, and one busy queue can use the
    whole budget. Splitting what is free evenly among busy pumps was measured slower: it turns a
    nearly full budget into many small receives, each paying a round trip.

    Waiters are served first come, first served, and a release wakes only those it can serve (a
    condition variable woke every waiting receiver on every settlement: with 50 queues and
    several receivers each, most of the syphon's CPU went to re-checking). Waiters are served once
    per turn of the event loop, after every release of that turn: completions of one batch arrive
    together but are given back one send at a time (200 KB messages: one per send), and serving
    each release at once handed every waiting receiver a slot or two, each then holding a receive
    (and a round trip) for almost nothing while the rest of the slots sat free.
    """

    def __init__(self, capacity: int, *, max_bytes: int | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._free = capacity
        #: Messages received and not yet settled or let go (the rest of the taken slots are
        #: reserved by receives still waiting).
        self.held = 0
        self.held_bytes = 0
        #: The body size of recent messages (0: none seen yet): what a receive's slots are expected
        #: to bring, so grants respect the byte bound before the bytes arrive.
        self._typical_size = 0.0
        self._pumps = 0
        #: Pumps whose queue was listed with work (`join(busy=True)`): they share the receivers.
        self._busy_pumps = 0
        #: Acquirers waiting, in order: (slots wanted, the future their grant is set on).
        self._waiters: deque[tuple[int, asyncio.Future[int]]] = deque()
        self._idle_waiters: list[asyncio.Future[None]] = []
        #: A serve is scheduled for the next turn of the loop (releases of this turn wait for it).
        self._serving = False

    def join(self, *, busy: bool = False) -> None:
        """A pump will draw on the budget (joined when made, so pumps started together share);
        `busy`: its queue was listed with work."""
        self._pumps += 1
        self._busy_pumps += busy

    def leave(self, *, busy: bool = False) -> None:
        self._pumps -= 1
        self._busy_pumps -= busy

    def receivers_share(self, batch_size: int) -> int:
        """Receivers one queue listed with work may open so that the busy queues' receives, each
        of `batch_size`, together ask for about the capacity (at least 1). More receivers than that
        split the slots freed each round trip into smaller receives: with 10 busy queues of 4
        receivers each, 40 receives of some 30 messages where 10 of 100 or more do the same work,
        each paying a receive, a send and its tasks."""
        return max(1, -(-self.capacity // (max(1, batch_size) * max(1, self._busy_pumps))))

    def receive_share(self, receivers_per_queue: int, *, busy: int | None = None) -> int:
        """The most one receive asks for while queues listed with work share the budget: a 64th of
        the capacity (`_RECEIVES_PER_CAPACITY`) and at least a probe (PROBE), or more when the busy
        queues' receivers could not otherwise ask for the capacity between them: a single busy queue's
        `receivers_per_queue` (4: 2,000 slots in receives of 500), several busy queues one receiver
        each (10 queues: receives of 200, not 4 receivers of 50 each). Each receiver is a connection
        of its own over the wire, whose completes and receives take turns reading it; with 10 busy
        queues one receiver each moved 1.44x as fast at two thirds of the CPU a message over the
        emulator, and 1.23x as fast on the fake (docs/benchmarks.md, round 4).
        `busy`: that many queues with work instead of those joined now (for a plan made before they join)."""
        queues = max(1, self._busy_pumps if busy is None else busy)
        receivers = max(1, receivers_per_queue) if queues == 1 else queues
        least = max(PROBE, self.capacity // _RECEIVES_PER_CAPACITY)
        return min(self.capacity, max(least, -(-self.capacity // receivers)))

    @property
    def probe(self) -> int:
        """What an idle pump asks for: PROBE, less when the pumps are many for the capacity."""
        return max(1, min(PROBE, self.capacity // (2 * max(1, self._pumps))))

    def ask(self, *, busy: bool, limit: int) -> int:
        """How many slots a pump asks for (at most `limit`, its receive size)."""
        if not busy:
            return min(limit, self.probe)
        if self._free <= 0:
            # Nothing free: the grant comes from later releases (served together, once a turn), so
            # ask for a whole receive; a probe's worth here made the busiest queues receive 16 at a time.
            return limit
        return max(1, min(limit, max(self.probe, self._free)))  # a busy pump: what is free

    @property
    def receive_limit(self) -> int:
        """The most one receive is granted under the byte bound at the typical message size (a
        quarter of the bound); the capacity while no size is known or without a byte bound."""
        if self.max_bytes is None or not self._typical_size:
            return self.capacity
        return max(1, int(self.max_bytes / _RECEIVES_PER_BYTE_BOUND // self._typical_size))

    @property
    def taken(self) -> int:
        return self.capacity - self._free

    @property
    def free(self) -> int:
        return self._free

    async def acquire(self, wanted: int) -> int:
        """Wait until at least one slot is free and the held bytes are under the byte bound (and
        every earlier acquirer was served); take up to `wanted` slots."""
        if not self._waiters and self._open():
            return self._take(wanted)
        grant: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        entry = (wanted, grant)
        self._waiters.append(entry)
        try:
            return await grant
        except asyncio.CancelledError:
            if grant.done() and not grant.cancelled():
                self._give(grant.result())  # granted as it was cancelled: give it back
            else:
                if entry in self._waiters:  # a serve of this turn may have dropped it already
                    self._waiters.remove(entry)
                self._serve_soon()
            raise

    def take_free(self, wanted: int) -> int:
        """Up to `wanted` slots that are free now, without waiting: none while others wait (they come first)
        or the budget is closed (`acquire`'s rule)."""
        if wanted <= 0 or self._waiters or not self._open():
            return 0
        return self._take(wanted)

    def _open(self) -> bool:
        if self._free <= 0:
            return False
        if self._free == self.capacity:
            return True  # an empty budget lets a receive start, however large the typical message
        return self._byte_room() >= max(1.0, self._typical_size)  # room for one more message

    def _byte_room(self) -> float:
        """Bytes the byte bound still allows: the bound, less what is held, less what the receives
        still waiting are expected to bring (their slots at the typical message size)."""
        if self.max_bytes is None:
            return float("inf")
        waiting = self.capacity - self._free - self.held
        return self.max_bytes - self.held_bytes - waiting * self._typical_size

    def _take(self, wanted: int) -> int:
        granted = min(wanted, self._free)
        if self.max_bytes is not None and self._typical_size:
            # Sized so the receive's messages, at the typical size, fit under the byte bound, and
            # no receive takes more than a share of it: large messages then arrive in several
            # receives whose transfers overlap the sends of the ones before.
            room = min(self._byte_room(), self.max_bytes / _RECEIVES_PER_BYTE_BOUND)
            granted = min(granted, max(1, int(room // self._typical_size)))
        self._free -= granted
        return granted

    def _serve_soon(self) -> None:
        """Serve the waiters once this turn's releases are all in (`_serve`)."""
        if not self._serving:
            self._serving = True
            asyncio.get_running_loop().call_soon(self._serve)

    def _serve(self) -> None:
        """Grant waiters in order while the budget is open."""
        self._serving = False
        waiters = self._waiters
        while waiters and self._open():
            wanted, grant = waiters.popleft()
            if not grant.done():
                grant.set_result(self._take(wanted))
        if self._free == self.capacity and self._idle_waiters:
            for idle in self._idle_waiters:
                if not idle.done():
                    idle.set_result(None)
            self._idle_waiters.clear()

    def _give(self, count: int) -> None:
        self._free += count
        if self._free > self.capacity:
            raise RuntimeError("released more in-flight slots than were acquired")
        self._serve_soon()

    def expect_message_size(self, nbytes: float) -> None:
        """What the listing says a backlog message weighs (its queue's bytes over its depth): the
        typical size until a receive has measured one, so the first receives of a deep queue of
        large messages already keep the byte bound."""
        if not self._typical_size and nbytes > 0:
            self._typical_size = float(nbytes)

    async def received(self, granted: int, count: int, nbytes: int = 0) -> None:
        """A receive that was granted `granted` slots got `count` messages of `nbytes` bytes in
        all: keep those, free the rest."""
        self.held += count
        self.held_bytes += nbytes
        if count:
            # The typical body size, weighted toward recent receives.
            size = nbytes / count
            self._typical_size = size if not self._typical_size else 0.75 * self._typical_size + 0.25 * size
        await self.release(granted - count)

    async def settled(self, count: int, nbytes: int = 0) -> None:
        """`count` held messages (`nbytes` bytes) are settled or let go."""
        self.held -= count
        self.held_bytes -= nbytes
        if count > 0:
            self._give(count)
        elif nbytes:
            self._serve_soon()

    async def release(self, count: int) -> None:
        if count > 0:
            self._give(count)

    async def idle(self) -> None:
        """Wait until nothing is in flight."""
        if self._free == self.capacity:
            return
        idle: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle_waiters.append(idle)
        await idle


class Hold:
    """The slots and bytes one received batch holds, given back as its messages are settled (not
    all at once when the slowest of them is), so the next receives start sooner."""

    def __init__(self, budget: InFlightBudget, count: int, nbytes: int) -> None:
        self._budget = budget
        self._count = count
        self._nbytes = nbytes
        self._per_message = nbytes // count if count else 0

    async def give_back(self, count: int) -> None:
        count = min(count, self._count)
        nbytes = min(self._nbytes, count * self._per_message)
        self._count -= count
        self._nbytes -= nbytes
        await self._budget.settled(count, nbytes)

    async def give_back_rest(self) -> None:
        count, nbytes = self._count, self._nbytes
        self._count = self._nbytes = 0
        await self._budget.settled(count, nbytes)
