"""What goes wrong on one namespace's sockets (`WireFaults`), changed at any time while it runs."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pairedbus.emulator import conditions
from pairedbus.servicebus.errors import ServiceError, server_busy

__all__ = ["WireFaults"]


#: How long the sliding window of `throttle` is: the service's limits are per second.
THROTTLE_WINDOW_SECONDS = 1.0


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
    - `busy_dispositions`: the next n dispositions on receive links are answered
      `com.microsoft:server-busy`; the message keeps its lock (nothing was applied).
    - `throttle(rate)`: at most `rate` operations (attaches, sends, receives' credit) in any
      sliding second; above it each is refused with `com.microsoft:server-busy` and the text the
      service sends when it throttles (error code 50009). Refused operations do not count, so
      a client that waits gets through again, as on the service.
    """

    is_down: bool = False
    busy: set[str] = field(default_factory=set)
    latency: float = 0.0
    lost_renewals: int = 0
    busy_dispositions: int = 0
    broker: _Droppable | None = None
    #: Operations allowed in any sliding second (None: no throttling).
    throttle_rate: float | None = None
    #: The clock the throttle's window slides on (a test gives its own: nothing waits on it).
    clock: Callable[[], float] = time.monotonic
    _admitted: deque[float] = field(default_factory=deque, repr=False)

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
        self.busy_dispositions = 0
        self.throttle_rate = None
        self._admitted.clear()

    def throttle(self, rate: float) -> None:
        """At most `rate` operations in any sliding second from now on."""
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
            raise ValueError(f"rate: expected operations per second above 0, got {rate!r}")
        self.throttle_rate = float(rate)
        self._admitted.clear()

    def _check_throttle(self) -> None:
        if self.throttle_rate is None:
            return
        now = self.clock()
        while self._admitted and self._admitted[0] <= now - THROTTLE_WINDOW_SECONDS:
            self._admitted.popleft()
        if len(self._admitted) >= self.throttle_rate:
            raise _throttled(getattr(self.broker, "fqdn", "") or "")
        self._admitted.append(now)

    def take_lost_renewal(self) -> bool:
        """Whether this renewal finds its lock lost (one of the `lost_renewals` left)."""
        if self.lost_renewals <= 0:
            return False
        self.lost_renewals -= 1
        return True

    def check_disposition(self) -> None:
        """Raise server-busy for one of the `busy_dispositions` left."""
        if self.busy_dispositions > 0:
            self.busy_dispositions -= 1
            raise _busy()

    def check_attach(self) -> None:
        if "attach" in self.busy:
            raise _busy()
        self._check_throttle()

    def check_receive(self) -> None:
        if "receive" in self.busy:
            raise _busy()
        self._check_throttle()

    def check_send(self, link: Any) -> None:
        if "reject" in self.busy:
            raise _busy()
        if "detach" in self.busy:
            link.detach(conditions.error_of(_busy()))
            raise _busy()
        self._check_throttle()


def _busy() -> ServiceError:
    return server_busy("The server is busy (injected on the wire).")


def _throttled(fqdn: str) -> ServiceError:
    # The service's throttling text (learn.microsoft.com, "Throttling operations on Azure Service Bus";
    # seen in the field as "... the namespace <name> is being throttled. Error code : 50009 ...").
    name = fqdn.split(".", 1)[0]
    return server_busy(
        f"The request was terminated because the namespace {name} is being throttled. Error code : 50009. "
        "Please wait 2 seconds and try again. To know more visit https://aka.ms/sbResourceMgrExceptions"
    )
