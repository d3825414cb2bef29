"""SIGTERM (the platform) and SIGINT (a terminal) request a stop; restoring puts the previous handlers back."""

from __future__ import annotations

import asyncio
import logging
import os
import signal

import pytest

from pairedbus.service.signals import STOP_SIGNALS, install_stop_signals
from tests.load import guard


def test_the_stop_signals_are_sigterm_and_sigint() -> None:
    assert STOP_SIGNALS == (signal.SIGTERM, signal.SIGINT)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_stop_signal_sets_the_event_and_is_logged(signum: signal.Signals, caplog) -> None:
    stop = asyncio.Event()
    restore = install_stop_signals(stop, logging.getLogger("test.signals"))
    try:
        with caplog.at_level(logging.INFO, logger="test.signals"):
            os.kill(os.getpid(), signum)
            await asyncio.wait_for(stop.wait(), guard(30))
    finally:
        restore()
    assert stop.is_set()
    (record,) = [r for r in caplog.records if r.name == "test.signals"]
    assert record.getMessage() == "stop requested" and record.signal == signum.name


async def test_restore_puts_the_previous_handlers_back() -> None:
    def previous(signum, frame) -> None:  # pragma: no cover - never delivered
        raise AssertionError

    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    signal.signal(signal.SIGTERM, previous)
    try:
        restore = install_stop_signals(asyncio.Event(), logging.getLogger("test.signals"))
        restore()
        assert signal.getsignal(signal.SIGTERM) is previous
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
