"""Syphon drain time end to end beside two honest baselines, steady-state utilization, and CPU per hop.

On the in-process fake with a simulated round trip R (`world.latency`, 70 ms by default), with and
without a link model (`world.link`: each connection's frames cost 50 µs and its bytes share 1 Gbit/s
per direction, so no mover wins by overlapping without limit), each mover drains the same parked
backlog to 10 destination queues:

- `syphon`: `pairedbus.syphon.Syphon.drain()`, in-flight bound C messages (`max_in_flight`) and
  `max_in_flight_bytes`, told the backlog queue count (`backlog_queue_count`, the pair's setting);
- `pipelined`: a simple pipelined mover with the same bounds, told the backlog queue names (the same
  information: the names follow from the count): one receive loop per queue taking
  what the shared budget allows (up to 250), each received batch restored, sent to every
  destination at once and completed in its own task;
- `sequential`: a plain sequential batch mover (receive up to 250; send them, all destinations at
  once; complete them; next queue): the honest baseline, three round trips per batch.

**The headline is the end-to-end drain table**: msg/s from the moment the mover starts (the syphon's
listing, which its receivers' opens overlap, and client set-up included) until the last message is
delivered and the mover returned, at 1,000 / 10,000 / 100,000 parked messages over 1 / 10 / 50
backlog queues, 256 B and 200 KB, link model off and on; the ratio syphon / pipelined of the same run.
What an operator watches after an outage is the time until the backlog is empty.

Scaled, and said so in the output:
- 200 KB backlogs hold a tenth of the messages (100 / 1,000 / 10,000): 100,000 of them are 20 GB of
  deliveries held by the fake (the parked bodies share one bytes object; what is delivered does
  too, but the fake's copies of each message's fields are not free), and at the link's 592 msg/s a
  single mover would take 170 s per cell.
- The sequential mover drains at most `--sequential-cap` messages (5,000 at 256 B, 500 at
  200 KB): it moves one batch at a time, so its rate does not depend on how deep the backlog is
  past a few batches (20 of 250), and at ~1,000 msg/s a 100,000 backlog would take it 100 s per cell.
- Rounds: best of `--rounds` (3) interleaved runs where the backlog is at most 1,000 messages, 2 up
  to 10,000, 1 beyond (a short run is the noisiest; other processes only ever slow a run down).

Steady state: msg/s between 10 % and 90 % delivered (start-up and the final empty receive do not
count) of the deepest 256 B backlog with the link model on, over the most any mover can do here,
the smaller of:
- the bound: a message holds its slot for its receive, its send and its complete, three round
  trips, because a receive must reserve the slots of what it may bring back: C_eff / 3R
  (C_eff = C, or the byte bound over the message size when that is smaller);
- the link: the busiest direction carries one frame and the message's bytes per message.

Every run starts with a full garbage collection, and what exists then (the parked backlog held by
the fake, the imports) is frozen out of the collector's passes (`gc.freeze`) until the run ends: a
real mover's heap does not hold the broker's messages.

CPU per hop (decode, restore, add to a batch, encode) is measured on the SDK's real AMQP encoding,
no network and no fake.

Run: `.venv/bin/python benchmarks/syphon_bench.py [--counts 1000 10000 100000] [--queues 1 10 50]
[--sizes 256 204800] [--links off on] [--movers syphon pipelined sequential]`; `--quick` for a
seconds-long smoke run (tests/benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from azure.servicebus import ServiceBusMessage

from pairedbus import contract, durations
from pairedbus.pairing.aliasing import park_message, restore_message
from pairedbus.servicebus.link import Link

PRIMARY = contract.service_bus_fqdn("bench-primary")
SECONDARY = contract.service_bus_fqdn("bench-secondary")
PREFIX = "bench-primary"
CREDENTIAL: Any = object()  # the fake's clients take any credential
DESTINATIONS = 10
CAPACITY = 2_000
CAPACITY_BYTES = 64 * 1024 * 1024
BATCH = 250
#: Bodies this large or larger make a large-message backlog (a tenth of the counts; see above).
LARGE = 200 * 1024
#: The link model of the "on" cells: 50 µs per frame, 1 Gbit/s per connection and direction.
LINK_BANDWIDTH = 125e6  # bytes/s
LINK = Link(frame_cost=50e-6, bandwidth=LINK_BANDWIDTH)
#: Extra Syphon options from the command line (`--syphon-option name=value`).
SYPHON_OPTIONS: dict[str, Any] = {}


def _backlog_settings() -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for prop, value in contract.BACKLOG_QUEUE_PROPERTIES.items():
        field = contract.ARM_TO_SDK_QUEUE_FIELD[prop]
        settings[field] = durations.duration_timedelta(value) if prop in contract.DURATION_PROPERTIES else value  # type: ignore[arg-type]
    return settings


def _queue(q: int) -> str:
    return contract.backlog_queue_name(PREFIX, q)


#: The last two backlogs built (by key: per queue, its sends): every mover of a cell drains the same
#: messages, built once (building a parked message, its size checked by encoding it, took 143 µs of CPU here:
#: more than moving it).
_PARKED: dict[tuple[int, int, int], list[list[list[ServiceBusMessage]]]] = {}


def _parked(count: int, queues: int, size: int) -> list[list[list[ServiceBusMessage]]]:
    key = (count, queues, size)
    if key not in _PARKED:
        if len(_PARKED) > 1:  # the cell's full backlog and the sequential mover's capped one
            del _PARKED[next(iter(_PARKED))]
        body = b"x" * size  # one object: the fake keeps references to it, not copies
        per_send = max(1, 200_000 // (size + 600))  # under the 256 KB a send may carry, aliases included
        sends = []
        for q in range(queues):
            ids = range(q, count, queues)
            sends.append(
                [
                    [
                        park_message(ServiceBusMessage(body, message_id=f"{q}-{i}"), f"dest-{i % DESTINATIONS}")
                        for i in ids[start : start + per_send]
                    ]
                    for start in range(0, len(ids), per_send)
                ]
            )
        _PARKED[key] = sends
    return _PARKED[key]


async def _park(world: Any, count: int, queues: int, size: int) -> None:
    """Fill the backlog as failover senders would (no latency while arranging), a send per few
    hundred KB (the fake snapshots each message as it is sent, so the same ones can be sent again)."""
    from azure.servicebus.aio import ServiceBusClient

    (latency, world.latency), (link, world.link) = (world.latency, 0.0), (world.link, None)
    async with ServiceBusClient(SECONDARY, CREDENTIAL) as client:
        for q, sends in enumerate(_parked(count, queues, size)):
            async with client.get_queue_sender(_queue(q)) as sender:
                for messages in sends:
                    await sender.send_messages(messages)
    world.latency, world.link = latency, link


def _reset(world: Any, queues: int) -> None:
    secondary, primary = world.namespace(SECONDARY), world.namespace(PRIMARY)
    for name in [q.name for q in secondary.queues()]:
        secondary.delete(name)
    for name in [q.name for q in primary.queues()]:
        primary.delete(name)
    for q in range(queues):
        secondary.create_queue(_queue(q), **_backlog_settings())
    for d in range(DESTINATIONS):
        primary.create_queue(f"dest-{d}")


def _delivered(world: Any) -> int:
    return sum(world.namespace(PRIMARY).queue(f"dest-{d}").message_counts()["active"] for d in range(DESTINATIONS))


# --- the movers ---------------------------------------------------------------------------------


async def _syphon(world: Any, queues: int, count: int) -> None:
    from pairedbus.syphon import Syphon

    async with Syphon(
        primary=PRIMARY,
        secondary=SECONDARY,
        credential=CREDENTIAL,
        clock=world.clock.now,
        drain_wait=timedelta(milliseconds=100),
        max_in_flight=CAPACITY,
        max_in_flight_bytes=CAPACITY_BYTES,
        backlog_queue_count=queues,
        **SYPHON_OPTIONS,
    ) as syphon:
        stats = await syphon.drain()
    assert stats.moved == count, stats


class _Budget:
    """The pipelined mover's bound: messages and bytes in flight, shared by every queue."""

    def __init__(self, capacity: int, capacity_bytes: int) -> None:
        self.free, self.bytes, self.capacity_bytes = capacity, 0, capacity_bytes
        self.changed = asyncio.Condition()

    async def take(self, wanted: int) -> int:
        async with self.changed:
            await self.changed.wait_for(lambda: self.free > 0 and self.bytes < self.capacity_bytes)
            granted = min(wanted, self.free)
            self.free -= granted
            return granted

    async def give(self, count: int, nbytes: int = 0) -> None:
        async with self.changed:
            self.free += count
            self.bytes -= nbytes
            self.changed.notify_all()


async def _pipelined(world: Any, queues: int, count: int, size: int) -> None:
    """Per queue: take what the budget allows, receive, hand the batch to a task that restores,
    sends to each destination and completes; receive again at once."""
    from azure.servicebus.aio import ServiceBusClient

    # The same bound as the syphon's: by count, and by bytes at this run's message size.
    budget = _Budget(min(CAPACITY, CAPACITY_BYTES // size), CAPACITY_BYTES)
    async with ServiceBusClient(PRIMARY, CREDENTIAL) as primary, ServiceBusClient(SECONDARY, CREDENTIAL) as secondary:
        senders = {f"dest-{d}": primary.get_queue_sender(f"dest-{d}") for d in range(DESTINATIONS)}

        async def move(receiver: Any, messages: list[Any], nbytes: int) -> None:
            await asyncio.gather(
                *(
                    _send_all(senders[destination], outgoing)
                    for destination, outgoing in _restored_by_destination(messages).items()
                )
            )
            await asyncio.gather(*(receiver.complete_message(m) for m in messages))
            await budget.give(len(messages), nbytes)

        async def pump(q: int) -> None:
            receiver = secondary.get_queue_receiver(_queue(q))
            async with asyncio.TaskGroup() as moves:
                while True:
                    granted = await budget.take(BATCH)
                    messages = await receiver.receive_messages(max_message_count=granted, max_wait_time=0.1)
                    if not messages:
                        await budget.give(granted)
                        return
                    nbytes = len(messages) * size
                    budget.bytes += nbytes
                    await budget.give(granted - len(messages))
                    moves.create_task(move(receiver, messages, nbytes))

        await asyncio.gather(*(pump(q) for q in range(queues)))


async def _sequential(world: Any, queues: int, count: int, size: int) -> None:
    """One batch at a time: receive up to 250 from the next queue, send them, complete them."""
    from azure.servicebus.aio import ServiceBusClient

    async with ServiceBusClient(PRIMARY, CREDENTIAL) as primary, ServiceBusClient(SECONDARY, CREDENTIAL) as secondary:
        senders = {f"dest-{d}": primary.get_queue_sender(f"dest-{d}") for d in range(DESTINATIONS)}
        receivers = [secondary.get_queue_receiver(_queue(q)) for q in range(queues)]
        moved, turn = 0, 0
        while moved < count:
            receiver = receivers[turn % queues]
            turn += 1
            messages = await receiver.receive_messages(max_message_count=BATCH, max_wait_time=0.1)
            await asyncio.gather(
                *(
                    _send_all(senders[destination], outgoing)
                    for destination, outgoing in _restored_by_destination(messages).items()
                )
            )
            await asyncio.gather(*(receiver.complete_message(m) for m in messages))
            moved += len(messages)


def _restored_by_destination(messages: list[Any]) -> dict[str, list[Any]]:
    now = datetime.now(UTC)
    by_destination: dict[str, list[Any]] = {}
    for message in messages:
        restored = restore_message(message, now=now)
        by_destination.setdefault(restored.destination, []).append(restored.message)
    return by_destination


async def _send_all(sender: Any, messages: list[Any]) -> None:
    """As few batches as fit, sent all at once."""
    from azure.servicebus.exceptions import MessageSizeExceededError

    batches = [await sender.create_message_batch()]
    for message in messages:
        try:
            batches[-1].add_message(message)
        except MessageSizeExceededError:
            batches.append(await sender.create_message_batch())
            batches[-1].add_message(message)
    await asyncio.gather(*(sender.send_messages(batch) for batch in batches))


async def _floor(world: Any, queues: int, count: int, size: int) -> None:
    """The least any pipelined mover does with the fake, uncapped: receive batches, send each as
    it came (to one queue, no restoring or grouping), complete every message."""
    from azure.servicebus.aio import ServiceBusClient

    async with ServiceBusClient(PRIMARY, CREDENTIAL) as primary, ServiceBusClient(SECONDARY, CREDENTIAL) as secondary:
        sender = primary.get_queue_sender("dest-0")

        async def pump(q: int) -> None:
            receiver = secondary.get_queue_receiver(_queue(q))
            while messages := await receiver.receive_messages(max_message_count=BATCH, max_wait_time=0.1):
                for start in range(0, len(messages), max(1, 200_000 // (size + 200))):
                    chunk = messages[start : start + max(1, 200_000 // (size + 200))]
                    batch = await sender.create_message_batch()
                    for message in chunk:
                        batch.add_message(message)
                    await sender.send_messages(batch)
                await asyncio.gather(*(receiver.complete_message(m) for m in messages))

        await asyncio.gather(*(pump(q) for q in range(queues)))


def ceiling(size: int, latency: float, link: Link | None) -> float:
    """The most any mover can do here (see the module's docstring)."""
    c_eff = min(CAPACITY, CAPACITY_BYTES // size)
    bound = c_eff / (3 * latency)
    return bound if link is None else min(bound, 1 / link.seconds(1, size))


Mover = Callable[..., Awaitable[None]]
MOVERS: dict[str, Mover] = {}  # filled below, once every mover is defined


class Result(NamedTuple):
    rate: float  # msg/s end to end
    steady: float  # msg/s between 10 % and 90 % delivered
    cpu_us: float  # CPU µs per message, the whole process
    messages: int  # messages this mover drained (the sequential one may drain fewer than parked)


class Cell(NamedTuple):
    size: int
    link: bool
    queues: int
    messages: int


def _measure(world: Any, mover: Mover, queues: int, count: int, size: int) -> Result:
    """One mover on a freshly parked backlog."""
    _reset(world, queues)
    asyncio.run(_park(world, count, queues, size))
    samples: list[tuple[float, int]] = []

    async def run() -> None:
        work = asyncio.ensure_future(
            _syphon(world, queues, count) if mover is _syphon else mover(world, queues, count, size)
        )
        while not work.done():
            samples.append((time.perf_counter(), _delivered(world)))
            await asyncio.wait((work,), timeout=0.02)
        await work

    # The broker's state (the parked backlog, what earlier runs delivered) and the imports are not the
    # mover's heap: frozen, so the collector's full passes do not walk them. Unfrozen, one full
    # collection (~0.2 s here) landed on whichever mover happened to cross the threshold: a quarter
    # of a 1,000-message 200 KB run. What the run itself allocates is still collected, and counted.
    gc.collect()
    gc.freeze()
    try:
        started, cpu = time.perf_counter(), time.process_time()
        asyncio.run(run())
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    finally:
        gc.unfreeze()
    samples.append((time.perf_counter(), _delivered(world)))
    delivered = _delivered(world)
    assert delivered == count, (mover.__name__, delivered, count)
    return Result(count / seconds, _steady_rate(samples, count), cpu_seconds / count * 1e6, count)


def _steady_rate(samples: list[tuple[float, int]], count: int) -> float:
    """msg/s between the first samples at or past 10 % and 90 % delivered."""
    low = next((t, n) for t, n in samples if n >= count // 10)
    high = next(((t, n) for t, n in samples if n >= count * 9 // 10), samples[-1])
    return (high[1] - low[1]) / (high[0] - low[0]) if high[0] > low[0] else float("nan")


def rounds_for(count: int, rounds: int) -> int:
    """Runs per mover of a cell: short runs are the noisiest, long ones the dearest."""
    return max(1, min(rounds, 3 if count <= 1_000 else 2 if count <= 10_000 else 1))


def drain_cell(world: Any, cell: Cell, movers: list[str], *, rounds: int, sequential_cap: int) -> dict[str, Result]:
    """Every mover on the cell's backlog, `rounds_for` interleaved runs each; the fastest end to
    end counts (its CPU per message: the least seen)."""
    world.link = LINK if cell.link else None
    best: dict[str, Result] = {}
    for _ in range(rounds_for(cell.messages, rounds)):
        for name in movers:
            count = min(cell.messages, sequential_cap) if name == "sequential" else cell.messages
            result = _measure(world, MOVERS[name], cell.queues, count, cell.size)
            kept = best.get(name)
            if kept is None or result.rate > kept.rate:
                best[name] = result._replace(cpu_us=min(result.cpu_us, kept.cpu_us if kept else result.cpu_us))
    return best


# --- CPU per hop on the SDK's real encoding -------------------------------------------------------


def hop_cpu(count: int = 5_000, size: int = 256) -> dict[str, float]:
    """µs of CPU per message for decode (SDK), restore, add to a batch, encode the batch; with the
    SDK's `add_message` (encodes every message twice) and with `pairedbus.sdk.add_to_batch` (once)."""
    from azure.servicebus import ServiceBusMessageBatch, ServiceBusReceivedMessage
    from azure.servicebus._common.constants import _X_OPT_ENQUEUED_TIME
    from azure.servicebus._pyamqp._encode import encode_payload
    from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

    from pairedbus import sdk

    def wire(i: int) -> bytes:
        parked = park_message(ServiceBusMessage(b"x" * size, message_id=f"m-{i}", application_properties={"n": i}), "d")
        raw = parked.raw_amqp_message
        raw.annotations = {**(raw.annotations or {}), _X_OPT_ENQUEUED_TIME: datetime.now(UTC)}
        return bytes(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(raw)))

    payloads = [wire(i) for i in range(count)]
    now = datetime.now(UTC)
    results = {}
    for label, add in (("sdk add_message", None), ("pairedbus add_to_batch", sdk.add_to_batch)):
        started = time.process_time()
        batch = ServiceBusMessageBatch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES)
        for payload in payloads:
            outgoing = restore_message(ServiceBusReceivedMessage.from_bytes(payload), now=now).message
            fits = add(batch, outgoing) if add else _sdk_add(batch, outgoing)
            if not fits:
                encode_payload(bytearray(), batch._message)
                batch = ServiceBusMessageBatch(max_size_in_bytes=contract.MAX_MESSAGE_SIZE_BYTES)
                fits = add(batch, outgoing) if add else _sdk_add(batch, outgoing)
        encode_payload(bytearray(), batch._message)
        results[label] = (time.process_time() - started) / count * 1e6
    return results


def _sdk_add(batch: Any, message: Any) -> bool:
    from azure.servicebus.exceptions import MessageSizeExceededError

    try:
        batch.add_message(message)
        return True
    except MessageSizeExceededError:
        return False


def _cells(args: argparse.Namespace) -> list[Cell]:
    cells: list[Cell] = []
    for size in args.sizes:
        counts = [max(1, c // 10) for c in args.counts] if size >= LARGE else args.counts
        for link in args.links:
            for queues in args.queues:
                cells.extend(Cell(size, link == "on", queues, count) for count in counts)
    return cells


def _size_label(size: int) -> str:
    return f"{size // 1024} KB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def header(movers: list[str]) -> list[str]:
    """The headline table's title and column heads."""
    return [
        "end to end, msg/s (parked to delivered, the mover's set-up included); ratio = syphon / pipelined",
        f"{'size':>7} {'link':>4} {'queues':>6} {'parked':>8} "
        + "".join(f"{name:>12}" for name in movers)
        + ("   ratio" if {"syphon", "pipelined"} <= set(movers) else ""),
    ]


def row(cell: Cell, results: dict[str, Result]) -> str:
    """One cell of the headline table; `*`: a capped backlog; `<`: the syphon slower than pipelined."""
    line = f"{_size_label(cell.size):>7} {'on' if cell.link else 'off':>4} {cell.queues:>6} {cell.messages:>8,}"
    for r in results.values():
        line += f"{r.rate:>11,.0f}" + ("*" if r.messages < cell.messages else " ")
    if "syphon" in results and "pipelined" in results:
        ratio = results["syphon"].rate / results["pipelined"].rate
        line += f"{ratio:>7.2f}" + ("" if ratio >= 1 else "  <")
    return line


def report(table: dict[Cell, dict[str, Result]], latency: float) -> list[str]:
    """The headline table, then steady state against the ceiling."""
    movers = list(next(iter(table.values()))) if table else []
    lines = header(movers) + [row(cell, results) for cell, results in table.items()]
    lines.extend(footer(table, latency))
    return lines


def footer(table: dict[Cell, dict[str, Result]], latency: float) -> list[str]:
    """What the marks mean, the cells the syphon lost, and steady state against the ceiling."""
    lines = []
    if any(r.messages < cell.messages for cell, results in table.items() for r in results.values()):
        lines.append(
            "* drained a capped backlog (--sequential-cap): one batch at a time, its rate does not grow with depth"
        )
    ratios = [
        results["syphon"].rate / results["pipelined"].rate
        for results in table.values()
        if "syphon" in results and "pipelined" in results
    ]
    if ratios:
        lost = sum(r < 1 for r in ratios)
        lines.append(
            f"syphon >= pipelined in {len(ratios) - lost} of {len(ratios)} cells; lowest ratio {min(ratios):.2f}"
        )
    steady = _steady_cells(table)
    if steady:
        lines.append("")
        lines.append(
            "steady state (10-90 % delivered) of the deepest backlog of the smallest size, link model on if measured:"
        )
        for cell in steady:
            most = ceiling(cell.size, latency, LINK if cell.link else None)
            parts = [
                f"{name} {r.steady:,.0f} msg/s = {r.steady / most:.0%} ({r.cpu_us:.0f} µs CPU/msg)"
                for name, r in table[cell].items()
                if r.messages == cell.messages
            ]
            lines.append(
                f"  {cell.queues:>2} queues, {cell.messages:,} x {_size_label(cell.size)}, ceiling {most:,.0f} msg/s: "
                + "; ".join(parts)
            )
    return lines


def _steady_cells(table: dict[Cell, dict[str, Result]]) -> list[Cell]:
    """Per queue count: the deepest backlog of the smallest size, link on if measured."""
    chosen: dict[int, Cell] = {}
    for cell in table:
        kept = chosen.get(cell.queues)
        if kept is None or (cell.size, not cell.link, -cell.messages) < (kept.size, not kept.link, -kept.messages):
            chosen[cell.queues] = cell
    return [chosen[q] for q in sorted(chosen)]


def main(argv: list[str] | None = None) -> dict[Cell, dict[str, Result]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1_000, 10_000, 100_000], help="parked messages")
    parser.add_argument("--queues", type=int, nargs="+", default=[1, 10, 50], help="backlog queue counts")
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, LARGE], help="message body sizes (bytes)")
    parser.add_argument("--links", nargs="+", choices=["off", "on"], default=["off", "on"], help="link model")
    parser.add_argument("--movers", nargs="+", choices=["syphon", "pipelined", "sequential", "floor"])
    parser.add_argument("--rounds", type=int, default=3, help="at most this many runs per mover and cell (default 3)")
    parser.add_argument("--sequential-cap", type=int, default=5_000, help="most the sequential mover drains (256 B)")
    parser.add_argument("--latency", type=float, default=0.07, help="simulated round trip in seconds (default 0.07)")
    parser.add_argument("--no-hop-cpu", action="store_true", help="skip CPU per hop on the SDK's real encoding")
    parser.add_argument("--quick", action="store_true", help="a smoke run: tiny backlogs, 1 and 3 queues, 1 round")
    parser.add_argument("--syphon-option", action="append", default=[], help="NAME=INT, e.g. receive_batch_size=1000")
    args = parser.parse_args(argv)
    args.movers = args.movers or ["syphon", "pipelined", "sequential"]
    if args.quick:
        args.counts, args.queues, args.rounds, args.no_hop_cpu = [60], [1, 3], 1, True
    if min(args.counts) < 1 or min(args.queues) < 1 or min(args.sizes) < 1 or args.rounds < 1:
        parser.error("--counts, --queues, --sizes and --rounds must be at least 1")
    if args.sequential_cap < 1:
        parser.error("--sequential-cap must be at least 1")
    SYPHON_OPTIONS.clear()
    for option in args.syphon_option:
        name, _, value = option.partition("=")
        SYPHON_OPTIONS[name] = int(value)

    # Imported before any clock starts: a first import inside a measured run would count.
    import azure.servicebus.aio.management  # noqa: F401

    import pairedbus.syphon  # noqa: F401
    from pairedbus.testing.patching import mock_servicebus

    print(
        f"round trip {args.latency * 1000:.0f} ms; link model (on): {LINK.frame_cost * 1e6:g} µs/frame, "
        f"{LINK_BANDWIDTH / 1e6:g} MB/s per connection and direction; bound C = {CAPACITY} messages, "
        f"{CAPACITY_BYTES >> 20} MiB; {_size_label(LARGE)}-class backlogs hold a tenth of --counts",
        flush=True,
    )
    table: dict[Cell, dict[str, Result]] = {}
    started, load = time.perf_counter(), os.getloadavg()[0]
    for line in header(args.movers):
        print(line, flush=True)
    with mock_servicebus() as world:
        world.latency = args.latency
        for cell in _cells(args):
            cap = args.sequential_cap if cell.size < LARGE else max(1, args.sequential_cap // 10)
            table[cell] = drain_cell(world, cell, args.movers, rounds=args.rounds, sequential_cap=cap)
            print(row(cell, table[cell]), flush=True)
    for line in footer(table, args.latency):
        print(line)
    print(
        f"measured in {time.perf_counter() - started:.0f} s; load average {load:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores (more than the mover's 1: a busy machine)"
    )
    if not args.no_hop_cpu:
        for label, us in hop_cpu().items():
            print(f"CPU per hop, real encoding, 256 B ({label}): {us:.1f} µs")
    return table


MOVERS.update(syphon=_syphon, pipelined=_pipelined, sequential=_sequential, floor=_floor)


if __name__ == "__main__":
    main()
