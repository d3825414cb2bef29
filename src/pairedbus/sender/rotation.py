"""The backlog rotation: the backlog queues a client still sends to, shared by all its senders.

Each sender picks one queue at random when it is created (load spreads over clients that do
not know each other). A failed send takes a queue out of the rotation for every sender of the
client. When the last queue would leave, the rotation is refilled instead: the caller gets the
last error, and later sends try every queue again rather than failing forever.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


class BacklogRotation:
    def __init__(self, queue_names: Sequence[str], *, rng: random.Random | None = None) -> None:
        if not queue_names:
            raise ValueError("a backlog rotation needs at least one backlog queue")
        self._all = tuple(queue_names)
        self._in_rotation: list[str] = list(self._all)
        self._rng = rng or random.Random()
        self.removals = 0

    @property
    def queues(self) -> tuple[str, ...]:
        return self._all

    def in_rotation(self) -> tuple[str, ...]:
        return tuple(self._in_rotation)

    def __contains__(self, name: object) -> bool:
        return name in self._in_rotation

    def pick(self, *, exclude: frozenset[str] | set[str] = frozenset()) -> str | None:
        """A random queue still in rotation and not in `exclude`, or None if there is none."""
        candidates = [q for q in self._in_rotation if q not in exclude] if exclude else self._in_rotation
        return self._rng.choice(candidates) if candidates else None

    def take_out(self, name: str) -> None:
        if name in self._in_rotation:
            self._in_rotation.remove(name)
            self.removals += 1
        if not self._in_rotation:
            self._in_rotation = list(self._all)
