"""The emulator's throughput with the unmodified SDK: send + receive + complete per second, and the
broker's CPU per message, the broker in a process of its own.

`pairedbus emulator serve` runs as a child process on free loopback ports; this process is the
client (azure-servicebus aio, `retry_total=0`). Each round sends `--messages` messages of
`--size` bytes in batches of `--batch`, then receives them in `receive_messages` calls of up to
`--batch` and completes each (concurrently, as the syphon does). Figures per round: send msg/s,
receive+complete msg/s, end-to-end msg/s, and the broker process's CPU time (user + system from
/proc/PID/stat) per message moved. Round 0 warms up and is dropped; the median and range over the
rest are printed. Linux only (/proc). Run: `.venv/bin/python benchmarks/emulator_bench.py
[--messages N] [--rounds N] [--size B] [--batch N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from azure.servicebus import ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient

QUEUE = "bench"
_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (fields 14 and 15 of /proc/PID/stat, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


@dataclass
class Rounds:
    send: list[float] = field(default_factory=list)
    receive: list[float] = field(default_factory=list)
    end_to_end: list[float] = field(default_factory=list)
    broker_cpu_us: list[float] = field(default_factory=list)


def _start_broker(config: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "pairedbus", "emulator", "serve", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise SystemExit("the emulator did not start")
    return process, line.rstrip("\n").split("\t", 1)[1]


async def _round(connection_string: str, messages: int, size: int, batch: int) -> tuple[float, float]:
    body = b"x" * size
    async with ServiceBusClient.from_connection_string(connection_string, retry_total=0) as client:
        async with client.get_queue_sender(QUEUE) as sender:
            start = time.perf_counter()
            for first in range(0, messages, batch):
                await sender.send_messages([ServiceBusMessage(body) for _ in range(min(batch, messages - first))])
            sent = time.perf_counter() - start
        async with client.get_queue_receiver(QUEUE, prefetch_count=batch) as receiver:
            start = time.perf_counter()
            got = 0
            while got < messages:
                received = await receiver.receive_messages(max_message_count=batch, max_wait_time=10)
                if not received:
                    raise SystemExit(f"received {got} of {messages}: the broker stopped delivering")
                await asyncio.gather(*(receiver.complete_message(m) for m in received))
                got += len(received)
            taken = time.perf_counter() - start
    return sent, taken


def main(argv: list[str] | None = None) -> Rounds:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=4, help="measured rounds (a warm-up round runs first)")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args(argv)
    config = {"UserConfig": {"Namespaces": [{"Name": "bench", "Queues": [{"Name": QUEUE, "Properties": {}}]}]}}
    rounds = Rounds()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "Config.json"
        path.write_text(json.dumps(config))
        process, connection_string = _start_broker(path)
        try:
            for i in range(args.rounds + 1):
                cpu_before = _cpu_seconds(process.pid)
                sent, taken = asyncio.run(_round(connection_string, args.messages, args.size, args.batch))
                cpu = _cpu_seconds(process.pid) - cpu_before
                if i == 0:
                    continue
                rounds.send.append(args.messages / sent)
                rounds.receive.append(args.messages / taken)
                rounds.end_to_end.append(args.messages / (sent + taken))
                rounds.broker_cpu_us.append(cpu / args.messages * 1e6)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)
    print(
        f"{args.messages} messages of {args.size} B per round in batches of {args.batch}, "
        f"{args.rounds} measured rounds, the broker in process {process.pid}"
    )
    for name, values, unit in (
        ("send", rounds.send, "msg/s"),
        ("receive + complete", rounds.receive, "msg/s"),
        ("end to end", rounds.end_to_end, "msg/s"),
        ("broker CPU per message", rounds.broker_cpu_us, "µs"),
    ):
        print(f"{name}: median {statistics.median(values):,.0f} {unit} (range {min(values):,.0f}-{max(values):,.0f})")
    return rounds


if __name__ == "__main__":
    main()
