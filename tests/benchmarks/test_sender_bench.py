"""`benchmarks/sender_bench.py` runs end to end on a tiny size (so it cannot rot); nothing here times anything."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest
from azure.servicebus import ServiceBusMessage, ServiceBusReceivedMessage

from tests.benchmarks.loading import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("sender_bench")


@pytest.mark.slow  # a whole benchmark run, every round
def test_bench_runs_every_measurement_for_every_round_and_prints_both_goals(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = bench.main(["--messages", "3", "--rounds", "2"])

    assert set(samples.per_send) == {
        "no-op",
        "failover over no-op",
        "reading no-op",
        "failover over reading no-op",
        "SDK encoding",
        "fake plain",
        "fake failover",
        "fake plain, no ids",
        "fake failover, no ids",
    }
    assert all(len(times) == 2 and min(times) >= 0 for times in samples.per_send.values())
    assert len(samples.added()) == len(samples.over("SDK encoding")) == 2
    assert len(samples.added("no-op")) == len(samples.over("SDK encoding", "no-op")) == 2
    out = capsys.readouterr().out
    assert "3 messages of 128 B per round, 2 measured rounds" in out
    assert "added work per send (failover over no-op):" in out and "goal <= 0.5 µs" in out
    assert "added work per send (failover over reading no-op):" in out
    assert "added work over the SDK's AMQP encoding:" in out and "goal <= 1 %" in out
    assert "failover over plain on the fake, with ids:" in out
    assert "failover over plain on the fake, without ids:" in out


def test_bench_measures_the_sdks_own_wire_encoding_of_the_benchmark_message(bench: ModuleType) -> None:
    (message,) = bench._messages(1, with_ids=True, tag="t")

    wire = bench.encode(message)

    with pytest.warns(DeprecationWarning):
        legacy = message.message  # the SDK's public (deprecated) encoder of an outgoing message
    assert wire == legacy.encode_message()
    received = ServiceBusReceivedMessage.from_bytes(wire)
    assert (received.message_id, b"".join(received.body), received.application_properties) == (
        "t-0",
        b"x" * 128,
        {b"n": 0},
    )


def test_failover_sender_under_test_forwards_every_message_to_the_no_op_sender(bench: ModuleType) -> None:
    sent: list[Any] = []

    class Recording:
        async def send_messages(self, message: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
            sent.append(message)

    messages = [ServiceBusMessage(b"a", message_id="a"), ServiceBusMessage(b"b", message_id="b")]
    paired = bench._failover_over(Recording())

    async def run() -> None:
        for message in messages:
            await paired.send_messages(message)

    asyncio.run(run())
    assert [m.message_id for m in sent] == ["a", "b"]
    assert not paired.switched


@pytest.mark.parametrize("argv", [["--messages", "0"], ["--rounds", "0"]])
def test_bench_refuses_an_empty_run(bench: ModuleType, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        bench.main(argv)
    assert exited.value.code == 2


def test_the_reading_base_reads_every_property_a_send_encodes_and_changes_nothing(bench: ModuleType) -> None:
    (message,) = bench._messages(1, with_ids=True, tag="r")
    before = bench.encode(message)
    properties = message.raw_amqp_message.properties
    read: list[str] = []

    class Watched(type(properties)):  # type: ignore[misc]
        def __getattribute__(self, name: str) -> Any:
            read.append(name)
            return super().__getattribute__(name)

    properties.__class__ = Watched
    asyncio.run(bench._ReadingSender().send_messages(message))
    properties.__class__ = Watched.__mro__[1]

    fields = {name for name in vars(properties) if not name.startswith("_")}  # the SDK's own list
    assert len(fields) == 13 and set(read) == fields
    assert bench.encode(message) == before


def test_messages_without_ids_have_none_although_the_sdks_constructor_assigns_one(bench: ModuleType) -> None:
    assert ServiceBusMessage(b"x").message_id is not None  # azure-servicebus 7.15 assigns a uuid4 id
    assert [m.message_id for m in bench._messages(2, with_ids=False, tag="n")] == [None, None]
    assert [m.message_id for m in bench._messages(2, with_ids=True, tag="w")] == ["w-0", "w-1"]
