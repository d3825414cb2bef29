"""Calls on one SDK handler take turns, and none outlives its bound.

Two facts of the unmodified SDK (azure-servicebus 7.15.0), seen over the wire:

- Its aio sender cannot be opened by two tasks at once ("Handler failed: 'NoneType' object has no
  attribute 'client_ready_async'") and loses track of calls that overlap on it: pyamqp's
  `update_pending_deliveries` runs in every task waiting on a send and each assigns its own copy of
  the pending list, so a delivery another task added is dropped and its send never returns,
  whatever its `timeout=` (Azure/azure-sdk-for-python#36334). A caller sharing one failover sender
  between tasks, and every sender of a client parking through one backlog sender per queue, would
  overlap: calls on one handler take turns.
- A call the SDK lost track of for any other reason (inside its own retries pyamqp may re-open a
  connection with no deadline, and waits for the link in an unbounded loop) must not hold its
  caller either: a `Watchdog` (one task per client, waking every `WATCH_INTERVAL`) cuts a call still
  running `CUT_SLACK` after its bound (the SDK's own timeout fires first when it works), within one
  more interval, and the handler it ran on is discarded (closed in the background, never used
  again), since its state is unknown. The caller gets an `OperationTimeoutError`.

The healthy path pays for neither with a timer: an uncontended call sets a flag and a counter; only a
call that has to wait for its turn arms a timeout (the turn's wait and the call share one bound).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import sys
import weakref
from collections.abc import Awaitable, Callable
from typing import TypeVar

from azure.servicebus.exceptions import OperationTimeoutError

from pairedbus.pairing.ports import Closable

_log = logging.getLogger("pairedbus.sender")

T = TypeVar("T")

if sys.version_info >= (3, 12):
    current_task = asyncio.current_task
else:
    # 3.11's `asyncio.current_task` is Python, most of a healthy send's added work (docs/benchmarks.md,
    # benchmarks/sender_bench.py). It reads this dict of running tasks per loop, as 3.12's C version does.
    _running: dict[asyncio.AbstractEventLoop, asyncio.Task[object]] = asyncio.tasks._current_tasks  # type: ignore[attr-defined]  # private in typeshed

    def current_task() -> asyncio.Task[object] | None:
        return _running.get(asyncio.get_running_loop())


#: How long after its bound a call the SDK has not returned from is cut: enough for the SDK's own
#: timeout (computed a moment later than ours) to fire first when it works.
CUT_SLACK = 1.0
#: How often the watchdog looks at the calls under way (a call is cut within this much of its due time).
WATCH_INTERVAL = 1.0


class Turns:
    """The calls on one SDK handler, one at a time, each bounded. `on_cut(handler)` hears of a
    handler whose call was cut (its owner discards it). Watched by `watchdog` (None: never cut)."""

    def __init__(self, on_cut: Callable[[Closable], None], watchdog: Watchdog | None = None) -> None:
        self._on_cut = on_cut
        #: A call holds the turn (or it is being handed over to a waiter).
        self.busy = False
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        #: The call under way: its number, task, handler and bound (read by the watchdog).
        self.number = 0
        self.task: asyncio.Task[object] | None = None
        self.handler: Closable | None = None
        self.bound: float | None = None
        #: The number of the call the watchdog cut (its CancelledError becomes a timeout).
        self._cut_number = -1
        #: Calls cut at their bound (the SDK had not returned).
        self.cut = 0
        if watchdog is not None:
            watchdog.watch(self)

    async def call(
        self, handler: Closable, call: Callable[[float | None], Awaitable[T]], bound: float | None, *, what: str
    ) -> T:
        """`call(timeout)` on `handler` in its turn; `timeout` is what is left of `bound` (seconds,
        None: no bound) once the turn came. Raises OperationTimeoutError when the turn did not come
        within `bound`, or when the call was cut."""
        if self.busy:
            bound = await self._wait_for_turn(bound, what)  # the turn is handed over: still busy
        number = self.enter(handler, bound)
        try:
            return await call(bound)
        except asyncio.CancelledError:
            self.raise_if_cut(number, what)
            raise
        finally:
            self.leave()

    # The steps of `call`, for a hot path that inlines its uncontended case (PairedSender's send):
    # `if not turns.busy: number = turns.enter(...); try: ... except CancelledError: turns.raise_if_cut(...)
    # finally: turns.leave()`.

    def enter(self, handler: Closable, bound: float | None) -> int:
        """Take the (free, or handed-over) turn for a call on `handler`; returns the call's number."""
        self.busy = True
        self.number = number = self.number + 1
        self.task = current_task()
        self.handler = handler
        self.bound = bound
        return number

    def raise_if_cut(self, number: int, what: str) -> None:
        """In the call's `except CancelledError`: an OperationTimeoutError if the watchdog cut it."""
        if self._cut_number != number or self.task is None:
            return
        self.task.uncancel()
        raise OperationTimeoutError(
            message=f"{what}: the SDK did not return within {self.bound:g} s (+{CUT_SLACK:g} s); its handler was "
            "discarded"
        ) from None

    def leave(self) -> None:
        self.task = self.handler = None
        if self._waiters:
            self._pass_on()
        else:
            self.busy = False

    def _pass_on(self) -> None:
        """The turn goes to the first caller still waiting for it (it stays busy), or it is free."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.busy = False

    async def _wait_for_turn(self, bound: float | None, what: str) -> float | None:
        """Wait until the turn is handed to this caller (first come, first served); returns what is
        left of `bound`."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout_at(None if bound is None else started + bound):
                await waiter
        except TimeoutError:
            if waiter.done() and not waiter.cancelled():
                self._pass_on()  # handed over as the bound came: not taken, so passed on
            else:
                waiter.cancel()
            raise OperationTimeoutError(
                message=f"{what}: the turn on its SDK handler did not come within {bound:g} s"
            ) from None
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._pass_on()
            else:
                waiter.cancel()
            raise
        if bound is None:
            return None
        return max(bound - (loop.time() - started), 0.001)

    def cut_now(self) -> None:
        """The watchdog's verdict: the call under way outlived its bound."""
        task, handler = self.task, self.handler
        if task is None or handler is None or self._cut_number == self.number:  # set together by `enter`
            return
        self._cut_number = self.number
        self.cut += 1
        _log.warning("an SDK call did not return within %s s (+%g s): its handler is discarded", self.bound, CUT_SLACK)
        self._on_cut(handler)
        task.cancel()


class Watchdog:
    """One task per client that cuts calls outliving their bound (see the module's doc). A call's age
    is counted from when the watchdog first saw it, so the healthy path reads no clock."""

    def __init__(self, interval: float | None = None) -> None:
        self._interval = interval
        self._watched: weakref.WeakSet[Turns] = weakref.WeakSet()
        #: Per watched Turns: the call number last seen under way, and for how long it has been seen.
        self._seen: weakref.WeakKeyDictionary[Turns, tuple[int, float]] = weakref.WeakKeyDictionary()

    def watch(self, turns: Turns) -> None:
        self._watched.add(turns)

    async def run(self) -> None:
        """Look every interval until cancelled."""
        while True:
            interval = WATCH_INTERVAL if self._interval is None else self._interval
            await asyncio.sleep(interval)
            self.look(interval)

    def look(self, elapsed: float) -> None:
        for turns in list(self._watched):
            if turns.task is None or turns.bound is None:
                self._seen.pop(turns, None)
                continue
            number, age = self._seen.get(turns, (-1, 0.0))
            age = age + elapsed if number == turns.number else 0.0
            self._seen[turns] = (turns.number, age)
            if age >= turns.bound + CUT_SLACK:
                turns.cut_now()


async def close_within(handler: Closable, seconds: float) -> None:
    """Close `handler`, waiting at most `seconds` (a handler whose call was cut may never answer)."""
    try:
        async with asyncio.timeout(seconds):
            await handler.close()
    except Exception as exc:  # TimeoutError included: it is abandoned either way
        _log.debug("closing a discarded SDK handler failed: %r", exc)
