"""What goes wrong on one namespace's sockets (`WireFaults`), changed at any time while it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pairedbus.emulator import conditions
from pairedbus.servicebus.errors import ServiceError, server_busy

__all__ = ["WireFaults"]


class _Droppable(Protocol):
    def drop_connections(self) -> int: ...


@dataclass
class WireFaults:
    """What goes wrong on one namespace's sockets, changed at any time while it runs.

    - `down()`: new connections are closed at once, open ones cut (a regional outage).
    - `busy`: "attach" refuses links, "reject" rejects each sent message, "detach" detaches a
      sender link with a send pending, each with `com.microsoft:server-busy`.
    - `latency`: seconds slept before each frame is handled.
    - `lost_renewals`: the next n renew-lock requests find the lock lost: the message is
      available again (as when the service loses a lock: an update, a failover of its node) and
      the answer is `com.microsoft:message-lock-lost`.
    """

    is_down: bool = False
    busy: set[str] = field(default_factory=set)
    latency: float = 0.0
    lost_renewals: int = 0
    broker: _Droppable | None = None

    def down(self) -> None:
        self.is_down = True
        if self.broker is not None:
            self.broker.drop_connections()

    def up(self) -> None:
        self.is_down = False

    def heal(self) -> None:
        self.is_down = False
        self.busy.clear()
        self.latency = 0.0
        self.lost_renewals = 0

    def take_lost_renewal(self) -> bool:
        """Whether this renewal finds its lock lost (one of the `lost_renewals` left)."""
        if self.lost_renewals <= 0:
            return False
        self.lost_renewals -= 1
        return True

    def check_attach(self) -> None:
        if "attach" in self.busy:
            raise _busy()

    def check_receive(self) -> None:
        if "receive" in self.busy:
            raise _busy()

    def check_send(self, link: Any) -> None:
        if "reject" in self.busy:
            raise _busy()
        if "detach" in self.busy:
            link.detach(conditions.error_of(_busy()))
            raise _busy()


def _busy() -> ServiceError:
    return server_busy("The server is busy (injected on the wire).")
