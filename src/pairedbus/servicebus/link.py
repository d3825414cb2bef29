"""The fake's link model: what a connection's frames and bytes cost (off by default).

A real client holds one AMQP connection, one TCP stream: its frames are processed one after
another and its bytes share the stream's bandwidth, in each direction. With only a round-trip
latency, an operation costs nothing while it overlaps others, so a benchmark could win by
overlapping without limit. With a `Link` set on the world, an operation's frames and bytes occupy
its connection's direction for `frames * frame_cost + bytes / bandwidth` seconds, queued behind
what that direction already carries, before the round trip's latency applies.

Frames counted: a send is one transfer (a batch is one message on the wire) plus its bytes; a
receive is a flow frame out and one transfer per message in, plus their bytes; a settlement, a
lock renewal or any other operation is one frame out.
"""

from __future__ import annotations

from dataclasses import dataclass

OUTGOING = 0
INCOMING = 1


@dataclass(frozen=True, slots=True)
class Link:
    """The cost of one connection: seconds per frame, and bytes per second in each direction
    (None: unlimited)."""

    frame_cost: float = 0.0
    bandwidth: float | None = None

    def __post_init__(self) -> None:
        if self.frame_cost < 0:
            raise ValueError("frame_cost must be >= 0")
        if self.bandwidth is not None and self.bandwidth <= 0:
            raise ValueError("bandwidth must be > 0")

    def seconds(self, frames: int, nbytes: int) -> float:
        """How long `frames` frames carrying `nbytes` bytes occupy one direction."""
        busy = frames * self.frame_cost
        if self.bandwidth is not None:
            busy += nbytes / self.bandwidth
        return busy


class Wire:
    """One connection's two directions, each free again at some time on the loop's clock."""

    __slots__ = ("_free_at",)

    def __init__(self) -> None:
        self._free_at = [0.0, 0.0]

    def occupy(self, link: Link, direction: int, frames: int, nbytes: int, now: float) -> float:
        """Queue a transfer on `direction`; the seconds from `now` until it has left the wire."""
        start = max(now, self._free_at[direction])
        self._free_at[direction] = end = start + link.seconds(frames, nbytes)
        return end - now
