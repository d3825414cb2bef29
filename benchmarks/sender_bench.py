"""Healthy-path cost of the failover sender against the plain azure-servicebus aio sender.

Both send to the same in-process fake (`pairedbus.testing`), in the same run, in alternating
rounds; the figure is CPU time per send (process time, the best of the rounds, garbage collector
paused during a round) and messages/s. The fake's send costs ~10 µs where the real SDK's costs far
more (AMQP encoding and I/O), so the percentage here is the harshest view of the added work.
Messages are built before the clock starts. Two cases:

- `with ids`: messages carry their own message id (the settlement spec's advice), so the failover
  sender adds only its checks;
- `without ids`: the failover sender also generates a uuid4 id per message, which the plain
  sender does not do (it sends the message without one).

Goal: <= 5 % overhead with ids. Run: `.venv/bin/python benchmarks/sender_bench.py [--messages N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus import ServiceBusMessage

from pairedbus import contract

PRIMARY = "bench-primary.servicebus.windows.net"
SECONDARY = "bench-secondary.servicebus.windows.net"
QUEUE = "bench"


def _messages(count: int, *, with_ids: bool, tag: str) -> list[ServiceBusMessage]:
    return [
        ServiceBusMessage(
            b"x" * 128,
            message_id=f"{tag}-{i}" if with_ids else None,
            application_properties={"n": i},
        )
        for i in range(count)
    ]


async def _round(sender: Any, messages: list[ServiceBusMessage]) -> float:
    gc.collect()
    gc.disable()  # a collection would land on whichever sender happens to run then
    try:
        started = time.process_time()
        for message in messages:
            await sender.send_messages(message)
        return time.process_time() - started
    finally:
        gc.enable()


async def _bench(count: int, rounds: int, with_ids: bool, world: Any) -> tuple[float, float]:
    from azure.servicebus.aio import ServiceBusClient

    from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions

    credential = AzureNamedKeyCredential("bench", "key")
    plain_times: list[float] = []
    paired_times: list[float] = []
    namespace = world.namespace(PRIMARY)
    async with (
        ServiceBusClient(PRIMARY, credential) as plain_client,
        PairedNamespaceClient(
            PRIMARY, SECONDARY, credential, options=SendAvailabilityOptions(failover_interval=timedelta(0))
        ) as paired_client,
    ):
        plain = plain_client.get_queue_sender(QUEUE)
        paired = paired_client.get_queue_sender(QUEUE)
        runs: list[tuple[list[float], Any]] = [(plain_times, plain), (paired_times, paired)]
        for r in range(rounds + 1):  # round 0 warms up
            for times, sender in runs if r % 2 else reversed(runs):
                messages = _messages(count, with_ids=with_ids, tag=f"{r}-{id(sender)}")
                elapsed = await _round(sender, messages)
                if r:
                    times.append(elapsed)
                namespace.delete(QUEUE)  # start every round with an empty queue: equal work
                namespace.create_queue(QUEUE)
        assert not paired.switched, "the primary must stay healthy during the benchmark"
    # The minimum over rounds: other processes on the machine only ever add time.
    return min(plain_times) / count, min(paired_times) / count


class _NoOpSender:
    """A sender whose send costs nothing: isolates the work the failover sender adds."""

    async def send_messages(self, message: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        return None


class _NoOpConnections:
    """The face of `PairedConnections` a sender uses on the healthy path, handing out the no-op sender."""

    def __init__(self, sender: Any) -> None:
        self._sender = sender
        self.generations = {"primary": 0, "secondary": 0}
        self.primary_generation = 0

    def generation(self, side: str) -> int:
        return 0

    def client(self, side: str) -> Any:
        return self

    def get_queue_sender(self, name: str) -> Any:
        return self._sender

    def note_error(self, side: str, exc: BaseException) -> None:
        pass


async def _bench_isolated(count: int, rounds: int) -> tuple[float, float]:
    from pairedbus.sender.backlog import Backlog, BacklogRotation
    from pairedbus.sender.failover import EntityFailover, EntityKind, FailoverStats
    from pairedbus.sender.failover_clock import FailoverClock
    from pairedbus.sender.sender import PairedSender

    plain = _NoOpSender()
    connections: Any = _NoOpConnections(plain)
    stats = FailoverStats()
    failover = EntityFailover(
        QUEUE,
        EntityKind.QUEUE,
        FailoverClock(timedelta(0)),
        stats,
        ping=None,
        ping_interval=60,
        sleep=asyncio.sleep,  # type: ignore[arg-type]
    )
    backlog = Backlog(BacklogRotation(["unused"]), connections, stats, timeout=60)
    paired = PairedSender(failover, backlog, connections, stats, backlog_queue="unused", timeout=60)
    plain_times: list[float] = []
    paired_times: list[float] = []
    for r in range(rounds + 1):
        for times, sender in ((plain_times, plain), (paired_times, paired)):
            elapsed = await _round(sender, _messages(count, with_ids=True, tag=str(r)))
            if r:
                times.append(elapsed)
    return min(plain_times) / count, min(paired_times) / count


def _line(label: str, plain: float, paired: float) -> str:
    overhead = (paired - plain) / plain * 100
    return (
        f"{label:<12} plain {plain * 1e6:7.2f} µs/send ({1 / plain:9.0f} msg/s)   "
        f"failover {paired * 1e6:7.2f} µs/send ({1 / paired:9.0f} msg/s)   overhead {overhead:+5.1f} %"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000, help="sends per round (default 20000)")
    parser.add_argument("--rounds", type=int, default=7, help="measured rounds per sender (default 7)")
    args = parser.parse_args(argv)

    from pairedbus.testing import mock_servicebus

    report: Callable[[str], None] = print
    with mock_servicebus() as world:
        world.namespace(PRIMARY).create_queue(QUEUE)
        for name in contract.backlog_queue_names("bench-primary", contract.DEFAULT_BACKLOG_QUEUE_COUNT):
            world.namespace(SECONDARY).create_queue(name)
        for with_ids, label in ((True, "with ids"), (False, "without ids")):
            plain, paired = asyncio.run(_bench(args.messages, args.rounds, with_ids, world))
            report(_line(label, plain, paired))
    plain, paired = asyncio.run(_bench_isolated(args.messages, args.rounds))
    report(
        f"{'added work':<12} {(paired - plain) * 1e6:.2f} µs per send (failover sender over a no-op sender, with ids)"
    )


if __name__ == "__main__":
    main()
