"""The order of one backlog queue's keyed messages to each destination, kept key by key."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager


class KeyOrder:
    """One first-come-first-served turn per (destination, partition key): a key's messages are
    sent in the order they were received, and a key that waits (backing off) holds up only the
    later messages of that same key, never another key's or another destination's.

    A turn exists only while someone holds or waits for it: session ids are unbounded."""

    def __init__(self) -> None:
        self._turns: dict[Hashable, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def turn(self, key: Hashable) -> AsyncIterator[None]:
        """Wait for every earlier holder of `key` to finish; hold the turn inside the block."""
        lock, users = self._turns.get(key) or (asyncio.Lock(), 0)
        self._turns[key] = (lock, users + 1)
        try:
            async with lock:  # asyncio.Lock wakes its waiters in order
                yield
        finally:
            lock, users = self._turns[key]
            if users == 1:
                del self._turns[key]
            else:
                self._turns[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._turns)
