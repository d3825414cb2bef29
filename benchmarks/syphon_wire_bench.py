"""The syphon against a broker in another process: drain time beside a pipelined mover, and CPU.

`pairedbus emulator serve` runs as a child process (primary and secondary namespaces on loopback
ports); this process moves with the unmodified SDK over the socket, so the broker's work is not
charged to the mover and the mover's event loop is its own (issue 38, item 3). Each round parks
`--messages` messages of `--size` bytes over `--queues` backlog queues (spread over
`syphon_bench.DESTINATIONS` destination queues, duplicate detection on), then drains them with one
mover: the syphon (`Syphon.drain`, the same in-flight bound as the fake's benchmark) or the
pipelined mover of `syphon_bench.py` (per queue: receive what the budget allows, restore, send to
each destination, complete; receive again at once). Movers alternate, round 0 of each warms up
and is dropped. Printed per mover: msg/s (median, range), this process's CPU per moved message
and the broker process's, and the syphon's ratio to the pipelined mover within each round pair.
Linux only (/proc). Run: `.venv/bin/python benchmarks/syphon_wire_bench.py [--messages N]
[--queues N] [--size B] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
import emulator_bench
import syphon_bench

from pairedbus import contract
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.pairing.aliasing import parked_copy
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.syphon import Syphon

PRIMARY_NAME = "primary"


def _endpoints(brokers: EmulatorProcess) -> tuple[NamespaceEndpoint, NamespaceEndpoint]:
    return tuple(  # type: ignore[return-value]
        NamespaceEndpoint.from_connection_string(
            brokers.connection_string(side), name=side, connection_verify=brokers.ca_file
        )
        for side in ("primary", "secondary")
    )


async def _park(brokers: EmulatorProcess, count: int, queues: int, size: int, tag: str) -> None:
    body = b"x" * size
    names = contract.backlog_queue_names(PRIMARY_NAME, queues)
    async with ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as client:
        for q, name in enumerate(names):
            mine = range(q, count, queues)
            async with client.get_queue_sender(name) as sender:
                batch: list[ServiceBusMessage] = []
                for i in mine:
                    message = ServiceBusMessage(body, message_id=f"{tag}-{i}")
                    batch.append(parked_copy(message, f"dest-{i % syphon_bench.DESTINATIONS}"))
                    if len(batch) == 100:
                        await sender.send_messages(batch)
                        batch = []
                if batch:
                    await sender.send_messages(batch)


async def _syphon(brokers: EmulatorProcess, queues: int, count: int, size: int) -> None:
    primary, secondary = _endpoints(brokers)
    async with Syphon(
        primary=primary,
        secondary=secondary,
        credential=None,
        drain_wait=timedelta(milliseconds=100),
        max_in_flight=syphon_bench.CAPACITY,
        max_in_flight_bytes=syphon_bench.CAPACITY_BYTES,
        backlog_queue_count=queues,
    ) as syphon:
        stats = await syphon.drain()
    if stats.moved != count:
        raise SystemExit(f"the syphon moved {stats.moved} of {count}")


async def _pipelined(brokers: EmulatorProcess, queues: int, count: int, size: int) -> None:
    budget = syphon_bench._Budget(
        min(syphon_bench.CAPACITY, syphon_bench.CAPACITY_BYTES // size), syphon_bench.CAPACITY_BYTES
    )
    names = contract.backlog_queue_names(PRIMARY_NAME, queues)
    async with (
        ServiceBusClient.from_connection_string(brokers.connection_string("primary")) as primary,
        ServiceBusClient.from_connection_string(brokers.connection_string("secondary")) as secondary,
    ):
        senders = {f"dest-{d}": primary.get_queue_sender(f"dest-{d}") for d in range(syphon_bench.DESTINATIONS)}

        async def move(receiver: Any, messages: list[Any], nbytes: int) -> None:
            restored = syphon_bench._restored_by_destination(messages)
            await asyncio.gather(*(syphon_bench._send_all(senders[d], out) for d, out in restored.items()))
            await asyncio.gather(*(receiver.complete_message(m) for m in messages))
            await budget.give(len(messages), nbytes)

        async def pump(name: str) -> None:
            receiver = secondary.get_queue_receiver(name)
            async with asyncio.TaskGroup() as moves:
                while True:
                    granted = await budget.take(syphon_bench.BATCH)
                    messages = await receiver.receive_messages(max_message_count=granted, max_wait_time=0.5)
                    if not messages:
                        await budget.give(granted)
                        return
                    nbytes = len(messages) * size
                    budget.bytes += nbytes
                    await budget.give(granted - len(messages))
                    moves.create_task(move(receiver, messages, nbytes))

        await asyncio.gather(*(pump(n) for n in names))


MOVERS = {"syphon": _syphon, "pipelined": _pipelined}


def main(argv: list[str] | None = None) -> dict[str, dict[str, list[float]]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--queues", type=int, default=10)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per mover (a warm-up runs first)")
    args = parser.parse_args(argv)
    figures: dict[str, dict[str, list[float]]] = {m: {"rate": [], "cpu": [], "broker": []} for m in MOVERS}
    with EmulatorProcess(["primary", "secondary"]) as brokers:
        for name in contract.backlog_queue_names(PRIMARY_NAME, args.queues):
            brokers.create_queue("secondary", name, lock_duration="PT1M")
        for d in range(syphon_bench.DESTINATIONS):
            brokers.create_queue("primary", f"dest-{d}", requires_duplicate_detection=True)
        for i in range(args.rounds + 1):
            for mover_name, mover in MOVERS.items():
                asyncio.run(_park(brokers, args.messages, args.queues, args.size, f"{mover_name}{i}"))
                cpu, broker = time.process_time(), emulator_bench._cpu_seconds(brokers.pid)
                start = time.perf_counter()
                asyncio.run(mover(brokers, args.queues, args.messages, args.size))
                seconds = time.perf_counter() - start
                if i == 0:
                    continue
                figures[mover_name]["rate"].append(args.messages / seconds)
                figures[mover_name]["cpu"].append((time.process_time() - cpu) / args.messages * 1e6)
                figures[mover_name]["broker"].append(
                    (emulator_bench._cpu_seconds(brokers.pid) - broker) / args.messages * 1e6
                )
    print(
        f"{args.messages} messages of {args.size} B over {args.queues} backlog queues per round, "
        f"{args.rounds} measured rounds per mover, alternating; the broker in its own process"
    )
    for mover_name, values in figures.items():
        rate, cpu, broker = values["rate"], values["cpu"], values["broker"]
        print(
            f"{mover_name:<10} {statistics.median(rate):>8,.0f} msg/s (range {min(rate):,.0f}-{max(rate):,.0f}); "
            f"mover CPU {statistics.median(cpu):,.0f} µs/msg; broker CPU {statistics.median(broker):,.0f} µs/msg"
        )
    ratios = [s / p for s, p in zip(figures["syphon"]["rate"], figures["pipelined"]["rate"], strict=True)]
    print(f"syphon / pipelined, round by round: {', '.join(f'{r:.2f}' for r in ratios)}")
    return figures


if __name__ == "__main__":
    main()
