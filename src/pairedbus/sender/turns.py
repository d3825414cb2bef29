"""Calls on one SDK handler take turns, and none outlives its bound.

Two facts of the unmodified SDK (azure-servicebus 7.15.0), seen over the wire:

- Its aio sender loses track of calls that overlap on it: pyamqp's `update_pending_deliveries`
  runs in every task waiting on a send and each assigns its own copy of the pending list, so a
  delivery another task added is dropped and its send never returns, whatever its `timeout=`
  (the timeout is checked only on deliveries still in the list; Azure/azure-sdk-for-python#36334).
  A caller sharing one failover sender between tasks, and every sender of a client parking
  through one backlog sender per queue, would overlap: calls on one handler take turns.
- A call the SDK lost track of for any other reason (inside its own retries pyamqp may re-open a
  connection with no deadline, and waits for the link in an unbounded loop) must not hold its caller
  either: each call is cut `CUT_SLACK` seconds after its bound if the SDK has not returned by then
  (its own timeout fires first when it works), and the handler it ran on is discarded (closed in the
  background, never used again), since its state is unknown.

The turn's wait and the call share one bound: a caller's `timeout` covers both.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from azure.servicebus.exceptions import OperationTimeoutError

_log = logging.getLogger("pairedbus.sender")

T = TypeVar("T")

#: How long after its bound a call the SDK has not returned from is cut: enough for the SDK's own
#: timeout (computed a moment later than ours) to fire first when it works.
CUT_SLACK = 1.0


class Turns:
    """The calls on one SDK handler, one at a time, each bounded. `on_cut(handler)` hears of a
    handler whose call was cut (its owner discards it)."""

    def __init__(self, on_cut: Callable[[Any], None]) -> None:
        self._lock = asyncio.Lock()
        self._on_cut = on_cut
        #: Calls cut at their bound (the SDK had not returned).
        self.cut = 0

    async def call(
        self, handler: Any, call: Callable[[float | None], Awaitable[T]], bound: float | None, *, what: str
    ) -> T:
        """`call(timeout)` on `handler` in its turn; `timeout` is what is left of `bound` (seconds,
        None: no bound) once the turn came. Raises OperationTimeoutError when the turn did not come
        within `bound`, or when the call was cut."""
        lock = self._lock
        if bound is None:
            async with lock:
                return await call(None)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bound
        try:
            async with asyncio.timeout_at(deadline):
                await lock.acquire()
        except TimeoutError:
            raise OperationTimeoutError(
                message=f"{what}: the turn on its SDK handler did not come within {bound:g} s"
            ) from None
        try:
            left = max(deadline - loop.time(), 0.001)
            try:
                async with asyncio.timeout(left + CUT_SLACK) as limit:
                    return await call(left)
            except TimeoutError as exc:
                if not limit.expired():
                    raise
                self.cut += 1
                _log.warning(
                    "%s did not return within %g s (+%g s): its SDK handler is discarded", what, left, CUT_SLACK
                )
                self._on_cut(handler)
                raise OperationTimeoutError(
                    message=f"{what}: the SDK did not return within {bound:g} s (+{CUT_SLACK:g} s); its handler was "
                    "discarded"
                ) from exc
        finally:
            lock.release()


async def close_within(handler: Any, seconds: float) -> None:
    """Close `handler`, waiting at most `seconds` (a handler whose call was cut may never answer)."""
    try:
        async with asyncio.timeout(seconds):
            await handler.close()
    except Exception as exc:  # TimeoutError included: it is abandoned either way
        _log.debug("closing a discarded SDK handler failed: %r", exc)
