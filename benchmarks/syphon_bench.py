"""Throughput and CPU cost of the syphon against a naive mover, on the in-process fake.

Both movers drain parked messages spread over 10 backlog queues (to 10 destination queues) in the
same run, with a simulated round trip of 70 ms per operation (`world.latency`). The naive mover
receives one message, sends it, completes it, and repeats; it is measured on a smaller count
(`--naive-messages`) since it is ~200 ms per message, and compared per message. The syphon's CPU
figure is `time.process_time()` per message for the whole drain, which includes the fake's own
work (it runs in the same process).

Goals: syphon/naive rate >= 500, <= 50 us CPU per message.
Run: `.venv/bin/python benchmarks/syphon_bench.py [--messages 20000] [--naive-messages 100]`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.aliasing import UnrestorableMessage, park_message, restore_message

PRIMARY = contract.service_bus_fqdn("bench-primary")
SECONDARY = contract.service_bus_fqdn("bench-secondary")
PREFIX = "bench-primary"
CREDENTIAL = object()


def _backlog_settings() -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for prop, value in contract.BACKLOG_QUEUE_PROPERTIES.items():
        field = contract.ARM_TO_SDK_QUEUE_FIELD[prop]
        settings[field] = contract.duration_timedelta(value) if prop in contract.DURATION_PROPERTIES else value  # type: ignore[arg-type]
    return settings


async def _park(world: Any, count: int, queues: int, destinations: int) -> None:
    """Fill the backlog as failover senders would (no latency while arranging)."""
    from azure.servicebus.aio import ServiceBusClient

    latency, world.latency = world.latency, 0.0
    async with ServiceBusClient(SECONDARY, CREDENTIAL) as client:
        for q in range(queues):
            parked = [
                park_message(
                    ServiceBusMessage(b"x" * 256, message_id=f"{q}-{i}", application_properties={"n": i}),
                    f"dest-{i % destinations}",
                )
                for i in range(q, count, queues)
            ]
            async with client.get_queue_sender(contract.backlog_queue_name(PREFIX, q)) as sender:
                for start in range(0, len(parked), 500):
                    await sender.send_messages(parked[start : start + 500])
    world.latency = latency


def _arrange(world: Any, queues: int, destinations: int) -> None:
    for q in range(queues):
        world.namespace(SECONDARY).create_queue(contract.backlog_queue_name(PREFIX, q), **_backlog_settings())
    for d in range(destinations):
        world.namespace(PRIMARY).create_queue(f"dest-{d}")


def _delivered(world: Any, destinations: int) -> int:
    return sum(world.namespace(PRIMARY).queue(f"dest-{d}").message_counts()["active"] for d in range(destinations))


async def _naive(count: int, queues: int) -> None:
    """Receive one, send one, complete one: every message costs three sequential round trips."""
    from azure.servicebus.aio import ServiceBusClient

    async with ServiceBusClient(PRIMARY, CREDENTIAL) as primary, ServiceBusClient(SECONDARY, CREDENTIAL) as secondary:
        receivers = [secondary.get_queue_receiver(contract.backlog_queue_name(PREFIX, q)) for q in range(queues)]
        senders: dict[str, Any] = {}
        moved = 0
        while moved < count:
            receiver = receivers[moved % queues]
            (message,) = await receiver.receive_messages(max_message_count=1, max_wait_time=5)
            try:
                restored = restore_message(message, now=datetime.now(UTC))
            except UnrestorableMessage:
                await receiver.dead_letter_message(message)
                continue
            sender = senders.get(restored.destination)
            if sender is None:
                sender = senders[restored.destination] = primary.get_queue_sender(restored.destination)
            await sender.send_messages(restored.message)
            await receiver.complete_message(message)
            moved += 1


async def _floor(queues: int) -> None:
    """The least any pipelined mover does with the fake: receive batches, send each batch as it
    came (to one queue, no restoring or grouping), complete every message. Its CPU is the fake's
    and asyncio's share, which the syphon's figure includes."""
    from azure.servicebus.aio import ServiceBusClient

    async with ServiceBusClient(PRIMARY, CREDENTIAL) as primary, ServiceBusClient(SECONDARY, CREDENTIAL) as secondary:
        sender = primary.get_queue_sender("dest-0")

        async def pump(q: int) -> None:
            receiver = secondary.get_queue_receiver(contract.backlog_queue_name(PREFIX, q))
            while messages := await receiver.receive_messages(max_message_count=250, max_wait_time=0.1):
                batch = await sender.create_message_batch()
                for message in messages:
                    batch.add_message(message)
                await sender.send_messages(batch)
                await asyncio.gather(*(receiver.complete_message(m) for m in messages))

        await asyncio.gather(*(pump(q) for q in range(queues)))


async def _syphon(world: Any, options: dict[str, Any]) -> Any:
    from pairedbus.syphon import Syphon

    async with Syphon(
        primary=PRIMARY, secondary=SECONDARY, credential=CREDENTIAL, clock=world.clock.now, **options
    ) as syphon:
        return await syphon.drain()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000, help="messages the syphon drains (default 20000)")
    parser.add_argument("--naive-messages", type=int, default=100, help="messages the naive mover moves (default 100)")
    parser.add_argument("--latency", type=float, default=0.07, help="simulated round trip in seconds (default 0.07)")
    parser.add_argument("--queues", type=int, default=10, help="backlog queues (default 10)")
    parser.add_argument("--destinations", type=int, default=10, help="destination queues (default 10)")
    parser.add_argument("--max-in-flight", type=int, default=None, help="Syphon max_in_flight (default: its own)")
    parser.add_argument("--receive-batch-size", type=int, default=None, help="Syphon receive_batch_size")
    args = parser.parse_args()

    from pairedbus.testing.patching import mock_servicebus

    options: dict[str, Any] = {"drain_wait": timedelta(milliseconds=100)}
    if args.max_in_flight:
        options["max_in_flight"] = args.max_in_flight
    if args.receive_batch_size:
        options["receive_batch_size"] = args.receive_batch_size

    with mock_servicebus() as world:
        world.latency = args.latency
        _arrange(world, args.queues, args.destinations)

        asyncio.run(_park(world, args.naive_messages, args.queues, args.destinations))
        started = time.perf_counter()
        asyncio.run(_naive(args.naive_messages, args.queues))
        naive_seconds = time.perf_counter() - started
        assert _delivered(world, args.destinations) == args.naive_messages

        asyncio.run(_park(world, args.messages, args.queues, args.destinations))
        started, cpu_started = time.perf_counter(), time.process_time()
        stats = asyncio.run(_syphon(world, options))
        syphon_seconds, syphon_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        delivered = _delivered(world, args.destinations) - args.naive_messages
        assert stats.moved == args.messages == delivered, (stats, delivered)

        asyncio.run(_park(world, args.messages, args.queues, args.destinations))
        cpu_started = time.process_time()
        asyncio.run(_floor(args.queues))
        floor_cpu = time.process_time() - cpu_started

    naive_rate = args.naive_messages / naive_seconds
    syphon_rate = args.messages / syphon_seconds
    print(f"round trip {args.latency * 1000:.0f} ms, {args.queues} backlog queues, {args.destinations} destinations")
    print(f"naive mover : {args.naive_messages:>7} messages in {naive_seconds:7.2f} s = {naive_rate:9.1f} msg/s")
    print(f"syphon      : {args.messages:>7} messages in {syphon_seconds:7.2f} s = {syphon_rate:9.1f} msg/s")
    print(f"ratio       : {syphon_rate / naive_rate:9.1f} x   (goal >= 500)")
    syphon_us, floor_us = syphon_cpu / args.messages * 1e6, floor_cpu / args.messages * 1e6
    print(f"syphon CPU  : {syphon_us:9.1f} us per message, fake included   (goal <= 50)")
    print(
        f"  of which the fake and asyncio (floor mover): {floor_us:.1f} us; the syphon's own: {syphon_us - floor_us:.1f} us"
    )
    print(f"syphon stats: moved={stats.moved} dead_lettered={stats.dead_lettered} errors={dict(stats.errors)}")


if __name__ == "__main__":
    main()
