"""The backlog: the rotation of backlog queues a client sends to, and sending parked messages.

- Each sender picks one queue at random when it is created (load spreads over clients that do
  not know each other).
- A backlog send that fails in a way that makes the queue unusable (quota, not found, disabled,
  unauthorized, or any retryable error or timeout) takes the queue out of the rotation for every
  sender of the client, and the message goes to another queue. The queue comes back after
  `retry_after` seconds: a queue that recovers is used again. While every queue is out, each
  send still tries the existing ones once more (a queue that failed a moment ago beats none).
- At open the client learns which backlog queues exist (`discover`); a missing one is never
  picked (logged and counted) until a later discovery finds it.
- When no queue is usable, the caller gets one `NoBacklogQueueError` naming what was tried.
- A lost connection is not the queue's fault: the send waits for the replaced connection and is
  tried again on the same queue.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence

from pairedbus.pairing.connections import SECONDARY, is_connection_loss
from pairedbus.pairing.ports import Outgoing
from pairedbus.sender.connections import PairedConnections
from pairedbus.sender.errors import NoBacklogQueueError, may_be_a_closed_handler, takes_backlog_queue_out
from pairedbus.sender.failover import FailoverStats

_log = logging.getLogger("pairedbus.sender")


class BacklogRotation:
    """The backlog queues a client may send to now (shared by all its senders)."""

    def __init__(
        self,
        queue_names: Sequence[str],
        *,
        rng: random.Random | None = None,
        retry_after: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not queue_names:
            raise ValueError("a backlog rotation needs at least one backlog queue")
        self._all = tuple(queue_names)
        self._rng = rng or random.Random()
        self._retry_after = retry_after
        self._clock = clock
        #: Queue -> when it may be tried again (taken out after a failed send).
        self._out_until: dict[str, float] = {}
        #: Queues that did not exist at the last discovery.
        self.missing: frozenset[str] = frozenset()
        self.removals = 0

    @property
    def queues(self) -> tuple[str, ...]:
        return self._all

    def in_rotation(self) -> tuple[str, ...]:
        if self._out_until:
            now = self._clock()
            for queue in [q for q, until in self._out_until.items() if until <= now]:
                del self._out_until[queue]  # recovered queues come back
        return tuple(q for q in self._all if q not in self._out_until and q not in self.missing)

    def __contains__(self, name: object) -> bool:
        return name in self.in_rotation()

    def pick(self, *, exclude: Iterable[str] = ()) -> str | None:
        """A random queue in the rotation and not in `exclude`, or None if there is none."""
        excluded = set(exclude)
        candidates = [q for q in self.in_rotation() if q not in excluded]
        return self._rng.choice(candidates) if candidates else None

    def pick_any(self, *, exclude: Iterable[str] = ()) -> str | None:
        """When the rotation is empty: a random queue that exists, out of the rotation or not (a
        queue that failed a moment ago is a better bet than no queue at all)."""
        excluded = set(exclude)
        candidates = [q for q in self._all if q not in self.missing and q not in excluded]
        return self._rng.choice(candidates) if candidates else None

    def take_out(self, name: str) -> None:
        if name not in self._out_until:
            self.removals += 1
        self._out_until[name] = self._clock() + self._retry_after

    def set_existing(self, existing: Iterable[str]) -> frozenset[str]:
        """Record which queues exist; returns the configured ones that are missing."""
        present = set(existing)
        self.missing = frozenset(q for q in self._all if q not in present)
        return self.missing


class Backlog:
    """Sends parked messages to the backlog queues of the secondary, rotating on failure."""

    def __init__(
        self, rotation: BacklogRotation, connections: PairedConnections, stats: FailoverStats, *, timeout: float
    ) -> None:
        self.rotation = rotation
        self._connections = connections
        self._stats = stats
        self._timeout = timeout

    def pick(self) -> str:
        """A queue for a new sender (any configured one if none is usable now: its first send
        will look again)."""
        return self.rotation.pick() or self.rotation.queues[0]

    async def discover(self, list_queue_names: Callable[[], Awaitable[Iterable[str]]]) -> None:
        """Learn which backlog queues exist (`list_queue_names` is awaited for the secondary's
        queue names). A failure (e.g. no right to list) keeps every queue in the rotation."""
        try:
            names = await list_queue_names()
        except Exception as exc:
            _log.warning(
                "cannot list the secondary's queues (%r): every configured backlog queue stays in the rotation "
                "until a send to it fails",
                exc,
            )
            return
        missing = self.rotation.set_existing(names)
        self._stats.backlog_queues_missing = len(missing)
        if missing:
            _log.warning(
                "%d of %d backlog queues do not exist and are never picked: %s",
                len(missing),
                len(self.rotation.queues),
                ", ".join(sorted(missing)),
            )

    async def send(self, payload: Outgoing, queue: str, *, timeout: float | None) -> str:  # noqa: ASYNC109
        """Send `payload` to `queue` (or, once it fails, to another queue in the rotation);
        returns the queue that took it. Raises NoBacklogQueueError when none could."""
        rotation = self.rotation
        if queue not in rotation:
            following = rotation.pick() or rotation.pick_any()
            if following is None:
                raise NoBacklogQueueError([], len(rotation.queues))
            queue = following
        failures: list[tuple[str, BaseException]] = []
        renewed: set[str] = set()
        bound = self._timeout if timeout is None else timeout
        while True:
            connections = self._connections
            generation = connections.generation(SECONDARY)
            try:
                await connections.send_to_backlog(queue, payload, timeout=bound)
                connections.note_worked(SECONDARY)
                return queue
            except Exception as exc:
                # a closed handler's error (over the wire: a plain ServiceBusError or pyamqp's
                # AttributeError) is the connection's only if the secondary was closed or replaced
                if (is_connection_loss(exc) or may_be_a_closed_handler(exc)) and await connections.replaced(
                    SECONDARY, exc, since=generation, wait=bound
                ):
                    continue  # the same queue, on the fresh connection
                handler_dead = may_be_a_closed_handler(exc)  # never a refusal: those carry a condition
                if handler_dead and queue not in renewed and connections.forget_backlog_sender(queue):
                    renewed.add(queue)
                    continue  # the same queue, on a fresh SDK sender (once: then the queue is tried as failed)
                if not (takes_backlog_queue_out(exc) or handler_dead):
                    raise
                self._stats.backlog_send_failures += 1
                failures.append((queue, exc))
                rotation.take_out(queue)
                _log.warning("backlog queue %r left the rotation: %r", queue, exc)
                tried = [q for q, _ in failures]
                following = rotation.pick(exclude=tried) or rotation.pick_any(exclude=tried)
                if following is None:
                    raise NoBacklogQueueError(failures, len(rotation.queues) - len(rotation.in_rotation())) from exc
                queue = following
