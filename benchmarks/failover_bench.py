"""How long from the primary going down to the first parked message, with the SDK's own retries.

The broker runs in a process of its own (`pairedbus emulator serve`); this process runs a
`PairedNamespaceClient` on connection strings and a caller that sends one message after another
and, as any caller does, sends again at once when a send raises. For each fault (the namespace
down: connections refused; server busy rejecting each transfer; server busy refusing each attach)
and each client setting (none: the policy the sender picks for the interval; the SDK's default
policy; `retry_total=0`), it prints the seconds from the fault to the first send that returned parked, how
many sends raised before it, and the failover interval set. Run: `.venv/bin/python
benchmarks/failover_bench.py [--interval S] [--repeats N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from datetime import timedelta
from typing import Any

from azure.servicebus import ServiceBusMessage

from pairedbus import contract
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions

FAULTS: dict[str, dict[str, Any]] = {
    "namespace down": {"down": True},
    "busy: transfer rejected": {"busy": ["reject"]},
    # a link that is already attached never meets this one: the sender's first send does
    "busy: attach refused": {"busy": ["attach"]},
}
#: Faults injected before the sender's first send (its link is not attached yet).
BEFORE_FIRST_SEND = {"busy: attach refused"}
#: A run that has not failed over by then is a bug, not a figure.
_GIVE_UP_SECONDS = 300.0
SETTINGS: dict[str, dict[str, Any]] = {
    # what a client given no retry_* keywords gets (sender.options.sdk_client_kwargs)
    "the sender's choice": {},
    # azure-servicebus 7.15.0's defaults, passed explicitly so that the sender keeps them
    "SDK default policy": {"retry_total": 3, "retry_backoff_factor": 0.8},
    "retry_total=0": {"retry_total": 0},
}


async def _once(
    brokers: EmulatorProcess,
    queue: str,
    fault: dict[str, Any],
    client_kwargs: dict[str, Any],
    interval: float,
    *,
    before_first_send: bool = False,
) -> tuple[float, int]:
    options = SendAvailabilityOptions(backlog_queue_count=2, failover_interval=timedelta(seconds=interval))
    client = PairedNamespaceClient.from_connection_strings(
        brokers.connection_string("primary"),
        brokers.connection_string("secondary"),
        primary_name="primary",
        connection_verify=brokers.ca_file,
        options=options,
        client_kwargs=client_kwargs,
    )
    async with client:
        sender = client.get_queue_sender(queue)
        if not before_first_send:
            await sender.send_messages(ServiceBusMessage("healthy"))
        brokers.faults("primary", **fault)
        start = time.monotonic()
        raised = 0
        while not sender.switched:
            if time.monotonic() - start > _GIVE_UP_SECONDS:
                raise SystemExit(f"no failover within {_GIVE_UP_SECONDS} s ({raised} sends raised)")
            try:
                await sender.send_messages(ServiceBusMessage("during"))
            except Exception:  # the caller's retry: send again at once
                raised += 1
        return time.monotonic() - start, raised


def main(argv: list[str] | None = None) -> dict[tuple[str, str], list[float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=1.0, help="failover_interval, seconds")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    results: dict[tuple[str, str], list[float]] = {}
    raised_counts: dict[tuple[str, str], list[int]] = {}
    with EmulatorProcess(["primary", "secondary"]) as brokers:
        for name in contract.backlog_queue_names("primary", 2):
            brokers.create_queue("secondary", name)
        n = 0
        for fault_name, fault in FAULTS.items():
            for setting_name, kwargs in SETTINGS.items():
                for _ in range(args.repeats):
                    n += 1
                    queue = f"q{n}"
                    brokers.create_queue("primary", queue)
                    seconds, raised = asyncio.run(
                        _once(
                            brokers,
                            queue,
                            fault,
                            kwargs,
                            args.interval,
                            before_first_send=fault_name in BEFORE_FIRST_SEND,
                        )
                    )
                    brokers.heal("primary")
                    results.setdefault((fault_name, setting_name), []).append(seconds)
                    raised_counts.setdefault((fault_name, setting_name), []).append(raised)
    print(f"failover_interval {args.interval:g} s, {args.repeats} runs each, the broker in its own process")
    print(f"{'fault':<26} {'client setting':<30} {'to first parked (s)':>22} {'sends raised':>13}")
    for (fault_name, setting_name), values in results.items():
        raised_each = raised_counts[(fault_name, setting_name)]
        print(
            f"{fault_name:<26} {setting_name:<30} {statistics.median(values):>10.2f} "
            f"({min(values):.2f}-{max(values):.2f}) {statistics.median(raised_each):>13g}"
        )
    return results


if __name__ == "__main__":
    main()
