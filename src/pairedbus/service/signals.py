"""Stop signals for a long-running process: SIGTERM (the platform) and SIGINT (a terminal) request a stop."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def install_stop_signals(stop: asyncio.Event, log: logging.Logger) -> Callable[[], None]:
    """SIGTERM/SIGINT set `stop`; returns the function that puts the previous handlers back."""
    loop = asyncio.get_running_loop()
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def request_stop(signum: signal.Signals) -> None:
        log.info("stop requested", extra={"signal": signum.name})
        stop.set()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, request_stop, signum)

    def restore() -> None:
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)

    return restore
