"""What the failover sender adds to a healthy send: in µs, over the real SDK's AMQP encoding, and over the fake.

Seven ways of handling the same kind of message are timed in one run, in interleaved rounds (the order
rotates every round, so none always follows the same one; round 0 warms up and is dropped), each
round on freshly built messages (built before the clock starts), CPU time (process time) with the
garbage collector paused during a round:

- `reading no-op` / `failover over reading no-op`: a sender whose send only reads what every SDK
  send reads of the message before encoding it (`raw_amqp_message.properties` and each of their
  fields, as `to_outgoing_amqp_message` does), alone and under the failover sender. Their
  difference is **the added work per send** (goal <= 0.5 µs), free of the fake's cost.
- `no-op` / `failover over no-op`: the same over a sender that reads nothing, printed beside it.
  A round's messages are built before its clock starts, so most have left the CPU's caches when
  they are sent; over this base the failover sender's first look at a message (its AMQP
  properties: three objects, some six cache lines) is also charged the cache misses that a real
  send pays anyway, whoever reads first. That share is the message's, not the sender's (it is
  small when the round's messages still fit the caches), hence the reading base for the goal.
- `SDK encoding`: azure-servicebus turning the same `ServiceBusMessage` into the bytes of its AMQP
  transfer, as a send does: `to_outgoing_amqp_message(raw_amqp_message)` (the sender's
  `transform_outbound_messages`, `_common/utils.py`) then `encode_payload` (the link's
  `_outgoing_transfer`, `_pyamqp/aio/_sender_async.py`), through `pairedbus.sdk.encode_message`.
  The added work over it is the ratio to read (goal <= 1 %): a real send does at least this
  much, plus I/O.
- `fake plain` / `fake failover`: the plain SDK aio sender and the failover sender, both sending to the
  in-process fake (`pairedbus.testing`), with message ids and without (the id the SDK's constructor
  assigns taken away: then the failover sender generates a uuid4 id per message, which the plain
  sender does not). This is the figure earlier
  versions printed alone; the fake's send (~6 µs) is far cheaper than the SDK's real one, so a few
  hundred ns of the fake's own run-to-run drift move it by several points.

Each ratio is taken within a round (the two figures measured seconds apart) and the median over the
rounds is printed with its range. Run: `.venv/bin/python benchmarks/sender_bench.py [--messages N]
[--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import operator
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from azure.core.credentials import AzureNamedKeyCredential
from azure.servicebus import ServiceBusMessage

from pairedbus import contract, sdk

PRIMARY = "bench-primary.servicebus.windows.net"
SECONDARY = "bench-secondary.servicebus.windows.net"
QUEUE = "bench"
BODY = b"x" * 128

NOOP = "no-op"
NOOP_FAILOVER = "failover over no-op"
READING = "reading no-op"
READING_FAILOVER = "failover over reading no-op"
ENCODE = "SDK encoding"
FAKE = "fake plain"
FAKE_FAILOVER = "fake failover"
FAKE_NO_IDS = "fake plain, no ids"
FAKE_FAILOVER_NO_IDS = "fake failover, no ids"
MEASUREMENTS = (
    NOOP,
    NOOP_FAILOVER,
    READING,
    READING_FAILOVER,
    ENCODE,
    FAKE,
    FAKE_FAILOVER,
    FAKE_NO_IDS,
    FAKE_FAILOVER_NO_IDS,
)


def _messages(count: int, *, with_ids: bool, tag: str) -> list[ServiceBusMessage]:
    messages = [
        ServiceBusMessage(BODY, message_id=f"{tag}-{i}" if with_ids else None, application_properties={"n": i})
        for i in range(count)
    ]
    if not with_ids:
        for message in messages:
            # azure-servicebus 7.15's constructor gives every message a uuid4 id (its
            # `scheduled_enqueue_time_utc` setter, called with None): take it away, or "no ids"
            # would measure messages with ids.
            message.message_id = None
    return messages


def encode(message: ServiceBusMessage) -> bytes:
    """The message's AMQP transfer payload, built as the SDK's send builds it."""
    return sdk.encode_message(message.raw_amqp_message)


def _timed(run: Callable[[], None]) -> float:
    gc.collect()
    gc.disable()  # a collection would land on whichever measurement happens to run then
    try:
        started = time.process_time()
        run()
        return time.process_time() - started
    finally:
        gc.enable()


async def _timed_sends(sender: Any, messages: list[ServiceBusMessage]) -> float:
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        for message in messages:
            await sender.send_messages(message)
        return time.process_time() - started
    finally:
        gc.enable()


class _NoOpSender:
    """A sender whose send costs nothing: isolates the work the failover sender adds."""

    async def send_messages(self, message: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        return None


class _ReadingSender:
    """A no-op send that first reads what every SDK send reads of the message before it encodes
    it: `raw_amqp_message`, its `properties` and each of their fields (`to_outgoing_amqp_message`,
    `_transport/_pyamqp_transport.py`, copies each into the AMQP `Properties` it encodes). A round's
    messages are built before its clock starts, so most have left the CPU's caches when they are
    sent: over a base that reads nothing, the failover sender's first look at a message would be
    charged the cache misses a real send pays whoever reads first. Over this base, it is charged
    its own work, not the message's first touch."""

    async def send_messages(self, message: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        properties = message.raw_amqp_message.properties
        if properties is not None:
            _read_properties(properties)


#: Every field of the SDK's `AmqpMessageProperties`, in one C-level call.
_read_properties = operator.attrgetter(
    "message_id",
    "user_id",
    "to",
    "subject",
    "reply_to",
    "correlation_id",
    "content_type",
    "content_encoding",
    "creation_time",
    "absolute_expiry_time",
    "group_id",
    "group_sequence",
    "reply_to_group_id",
)


class _NoOpConnections:
    """The face of `PairedConnections` a sender uses on the healthy path, handing out the no-op sender."""

    def __init__(self, sender: Any) -> None:
        self._sender = sender
        self.generations = {"primary": 0, "secondary": 0}
        self.primary_generation = 0
        self.watchdog = None  # the client's watchdog of cut calls: never looks on the healthy path

    def generation(self, side: str) -> int:
        return 0

    def client(self, side: str) -> Any:
        return self

    def get_queue_sender(self, name: str) -> Any:
        return self._sender

    def note_worked(self, side: str) -> None:
        pass

    def note_error(self, side: str, exc: BaseException) -> None:
        pass


async def _never_pinged(failover: object, message: object) -> None:
    """The failover's ping: a healthy primary never fails over, so nothing pings."""
    raise AssertionError("the benchmark's primary never fails: nothing pings")


def _failover_over(plain: Any) -> Any:
    """The failover sender (`PairedSender`) with `plain` as its primary's sender, healthy."""
    from pairedbus.sender.backlog import Backlog, BacklogRotation
    from pairedbus.sender.failover import EntityFailover, EntityKind, FailoverStats
    from pairedbus.sender.failover_clock import FailoverClock
    from pairedbus.sender.sender import PairedSender

    connections: Any = _NoOpConnections(plain)
    stats = FailoverStats()
    failover = EntityFailover(
        QUEUE,
        EntityKind.QUEUE,
        FailoverClock(timedelta(0)),
        stats,
        ping=_never_pinged,
        ping_interval=60,
        sleep=asyncio.sleep,
    )
    backlog = Backlog(BacklogRotation(["unused"]), connections, stats, timeout=60)
    return PairedSender(failover, backlog, connections, stats, backlog_queue="unused", timeout=60)


@dataclass
class Samples:
    """Seconds per message of each measurement, one entry per measured round (in round order)."""

    count: int
    rounds: int
    per_send: dict[str, list[float]] = field(default_factory=dict)

    def added(self, base: str = READING) -> list[float]:
        """The failover sender's added work per send over `base` (its send under the failover
        sender, minus its send alone), per round."""
        paired = {NOOP: NOOP_FAILOVER, READING: READING_FAILOVER}[base]
        return [p - n for p, n in zip(self.per_send[paired], self.per_send[base], strict=True)]

    def over(self, reference: str, base: str = READING) -> list[float]:
        """The added work over `base` as a fraction of `reference`'s per-send time, per round."""
        return [a / b for a, b in zip(self.added(base), self.per_send[reference], strict=True)]

    def fake_overhead(self, plain: str, paired: str) -> list[float]:
        """The failover sender's send on the fake over the plain sender's, minus one, per round."""
        return [p / q - 1 for p, q in zip(self.per_send[paired], self.per_send[plain], strict=True)]


async def measure(count: int, rounds: int, world: Any) -> Samples:
    """Run every measurement `rounds + 1` times, interleaved; the first pass is dropped as warm-up."""
    from azure.servicebus.aio import ServiceBusClient

    from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions

    credential = AzureNamedKeyCredential("bench", "key")
    namespace = world.namespace(PRIMARY)
    noop = _NoOpSender()
    noop_failover = _failover_over(noop)
    reading = _ReadingSender()
    reading_failover = _failover_over(reading)
    samples = Samples(count, rounds)
    async with (
        ServiceBusClient(PRIMARY, credential) as plain_client,
        PairedNamespaceClient(
            PRIMARY, SECONDARY, credential, options=SendAvailabilityOptions(failover_interval=timedelta(0))
        ) as paired_client,
    ):
        fake = plain_client.get_queue_sender(QUEUE)
        fake_failover = paired_client.get_queue_sender(QUEUE)

        def sends(sender: Any, *, with_ids: bool, on_fake: bool) -> Callable[[str], Awaitable[float]]:
            async def run(tag: str) -> float:
                elapsed = await _timed_sends(sender, _messages(count, with_ids=with_ids, tag=tag))
                if on_fake:  # start every round with an empty queue: equal work for both senders
                    namespace.delete(QUEUE)
                    namespace.create_queue(QUEUE)
                return elapsed

            return run

        async def encoding(tag: str) -> float:
            messages = _messages(count, with_ids=True, tag=tag)

            def encode_all() -> None:
                for message in messages:
                    encode(message)

            return _timed(encode_all)

        runs = {
            NOOP: sends(noop, with_ids=True, on_fake=False),
            NOOP_FAILOVER: sends(noop_failover, with_ids=True, on_fake=False),
            READING: sends(reading, with_ids=True, on_fake=False),
            READING_FAILOVER: sends(reading_failover, with_ids=True, on_fake=False),
            ENCODE: encoding,
            FAKE: sends(fake, with_ids=True, on_fake=True),
            FAKE_FAILOVER: sends(fake_failover, with_ids=True, on_fake=True),
            FAKE_NO_IDS: sends(fake, with_ids=False, on_fake=True),
            FAKE_FAILOVER_NO_IDS: sends(fake_failover, with_ids=False, on_fake=True),
        }
        measurements: Sequence[tuple[str, Callable[[str], Awaitable[float]]]] = [(k, runs[k]) for k in MEASUREMENTS]
        for r in range(rounds + 1):
            shift = r % len(measurements)
            for label, run in (*measurements[shift:], *measurements[:shift]):
                elapsed = await run(f"{r}-{label}")
                if r:
                    samples.per_send.setdefault(label, []).append(elapsed / count)
        healthy = not any(sender.switched for sender in (fake_failover, noop_failover, reading_failover))
        assert healthy, "the primary must stay healthy throughout"
    return samples


def _median_range(values: list[float], scale: float, unit: str, fmt: str) -> str:
    return (
        f"{statistics.median(values) * scale:{fmt}} {unit} "
        f"(range {min(values) * scale:{fmt}} to {max(values) * scale:{fmt}})"
    )


def report(samples: Samples) -> list[str]:
    """The figures, one line each."""
    us = 1e6
    lines = [
        f"{samples.count} messages of {len(BODY)} B per round, {samples.rounds} measured rounds "
        "(+1 warm-up), interleaved; medians over the rounds, CPU time per send",
    ]
    for label in MEASUREMENTS:
        lines.append(f"  {label:<28} {_median_range(samples.per_send[label], us, 'µs', '7.3f')}")
    lines += [
        f"added work per send (failover over reading no-op): {_median_range(samples.added(), us, 'µs', '.3f')}"
        "   goal <= 0.5 µs",
        f"added work over the SDK's AMQP encoding:            {_median_range(samples.over(ENCODE), 100, '%', '.2f')}"
        "   goal <= 1 %",
        f"added work per send (failover over no-op):          {_median_range(samples.added(NOOP), us, 'µs', '.3f')}"
        "   (+ the message's first touch)",
        f"  the same over the SDK's AMQP encoding:            "
        f"{_median_range(samples.over(ENCODE, NOOP), 100, '%', '.2f')}",
        f"failover over plain on the fake, with ids:          "
        f"{_median_range(samples.fake_overhead(FAKE, FAKE_FAILOVER), 100, '%', '+.1f')}",
        f"failover over plain on the fake, without ids:       "
        f"{_median_range(samples.fake_overhead(FAKE_NO_IDS, FAKE_FAILOVER_NO_IDS), 100, '%', '+.1f')}",
    ]
    return lines


def main(argv: list[str] | None = None) -> Samples:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000, help="messages per round (default 10000)")
    parser.add_argument("--rounds", type=int, default=11, help="measured rounds (default 11)")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.rounds < 1:
        parser.error("--messages and --rounds must be at least 1")

    from pairedbus.testing import mock_servicebus

    with mock_servicebus() as world:
        world.namespace(PRIMARY).create_queue(QUEUE)
        for name in contract.backlog_queue_names("bench-primary", contract.DEFAULT_BACKLOG_QUEUE_COUNT):
            world.namespace(SECONDARY).create_queue(name)
        samples = asyncio.run(measure(args.messages, args.rounds, world))
    for line in report(samples):
        print(line)
    return samples


if __name__ == "__main__":
    main()
