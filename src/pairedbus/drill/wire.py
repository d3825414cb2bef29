"""The drill's wire world: each namespace an emulator in a process of its own, the unmodified SDK
over connection strings, every fault injected on the wire through the emulators' control endpoint.

What it injects, and how the clients meet it:
- an outage: the primary's broker refuses connections and cuts the open ones (`down`); the SDK
  sees refused and dropped sockets, after its own retries;
- random faults (`--fault-rate`): the broker answers that share of attaches, transfers, receives
  and dispositions with `com.microsoft:server-busy`;
- ambiguous sends: the broker stores the message, then cuts the sender's connection before its
  answer (every other link on that connection is cut with it);
- late lock loss: the broker refuses a complete with a lost lock and makes the message available;
- syphon restarts: the task is cancelled, as in-process, and the secondary's connections are cut
  (a crashed process's sockets die with it: its locks are lost, and the messages come back when
  they expire).

The audit reads the brokers' stores through the control endpoint (`entities?messages=true`).
`--rtt-ms` is refused: the emulator's latency holds each frame of a connection in turn, a
throttle rather than a round trip (`WIRE_REFUSALS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from types import SimpleNamespace
from typing import Any, TypeVar

from pairedbus import contract
from pairedbus.drill.progress import DrillProgress
from pairedbus.drill.report import DrillReport
from pairedbus.drill.scenario import PRIMARY_FQDN, SECONDARY_FQDN, DrillConfig, DrillEntity
from pairedbus.drill.world import Contents, Creation, Held, InFlight, RandomFaults, Seen, receivable_paths
from pairedbus.emulator.remote import EmulatorProcess
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.pairing.ping import is_ping

__all__ = ["WIRE_REFUSALS", "WireWorld", "refusal", "run_drill_on_wire", "wire_world"]

PRIMARY = contract.namespace_from_fqdn(PRIMARY_FQDN)
SECONDARY = contract.namespace_from_fqdn(SECONDARY_FQDN)
#: Settings the wire drill cannot honour, each with why: (the config field, its value is refused
#: when this says so, the reason).
WIRE_REFUSALS: dict[str, tuple[Callable[[DrillConfig], bool], str]] = {
    "rtt_ms": (
        lambda config: config.rtt_ms > 0,
        "not with --wire: the emulator's latency holds each frame of a connection in turn (a throttle, "
        "not a round trip); the wire drill's round trips are the loopback's",
    ),
}
#: Loggers whose every failover, retry and dropped socket the wire drill makes by the hundred.
_NOISY = ("pairedbus", "azure")

T = TypeVar("T")


def refusal(config: DrillConfig) -> tuple[str, str] | None:
    """(field, why) of the first setting the wire drill refuses, or None."""
    for name, (refused, why) in WIRE_REFUSALS.items():
        if refused(config):
            return name, why
    return None


class WireWorld:
    """A `DrillWorld` on two emulator processes (primary, secondary), driven through their control
    endpoints; every call runs on a thread, so the drill's event loop (its SDK clients) never waits
    on one."""

    name = "wire"

    def __init__(self, primary: EmulatorProcess, secondary: EmulatorProcess) -> None:
        self._processes = {"primary": (primary, PRIMARY), "secondary": (secondary, SECONDARY)}
        self.primary = NamespaceEndpoint.from_connection_string(
            primary.connection_string(PRIMARY), name=PRIMARY, source="primary", connection_verify=primary.ca_file
        )
        self.secondary = NamespaceEndpoint.from_connection_string(
            secondary.connection_string(SECONDARY),
            name=SECONDARY,
            source="secondary",
            connection_verify=secondary.ca_file,
        )
        self.credential: Any = None
        self.connections_dropped = 0

    async def _on(self, side: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        process, namespace = self._processes[side]
        return await asyncio.to_thread(call, process, namespace, *args, **kwargs)

    def now(self) -> float:
        return time.time()  # the emulators run on this machine's clock

    async def create(self, creations: list[Creation]) -> None:
        for made in creations:
            if made.kind == "topic":
                await self._on(made.side, EmulatorProcess.create_topic, made.name, **made.properties)
            elif made.kind == "subscription":
                assert made.topic is not None
                await self._on(made.side, EmulatorProcess.create_subscription, made.topic, made.name, **made.properties)
            else:
                await self._on(made.side, EmulatorProcess.create_queue, made.name, **made.properties)

    async def inject(self, faults: RandomFaults) -> None:
        settings = {
            "fault_rate": faults.fault_rate,
            "ambiguous_send_rate": faults.ambiguous_send_rate,
            "late_lock_loss_rate": faults.late_lock_loss_rate,
        }
        # each process draws from its own generator: seeded apart, so the two do not fault in step
        await asyncio.gather(
            *(
                asyncio.to_thread(process.world, seed=faults.seed * 2 + i, **settings)
                for i, (process, _) in enumerate(self._processes.values())
            )
        )

    async def calm(self) -> None:
        rates = {"fault_rate": 0.0, "ambiguous_send_rate": 0.0, "late_lock_loss_rate": 0.0}
        for side in self._processes:
            await self._on(side, lambda process, _ns: process.world(**rates))
            await self._on(side, EmulatorProcess.heal)

    async def outage(self, *, down: bool) -> None:
        await self._on("primary", EmulatorProcess.faults, down=down)

    async def syphon_killed(self) -> None:
        answer = await self._on("secondary", EmulatorProcess.faults, drop=True)
        self.connections_dropped += int(answer.get("dropped", 0))

    async def _entities(self, *, messages: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        primary, secondary = await asyncio.gather(
            self._on("primary", EmulatorProcess.entities, messages=messages),
            self._on("secondary", EmulatorProcess.entities, messages=messages),
        )
        return primary, secondary

    async def in_flight(self, entities: list[DrillEntity]) -> InFlight:
        primary, secondary = await self._entities(messages=False)
        return InFlight(
            destinations=sum(_unsettled(view["counts"]) for _, view in _destinations(primary, entities)),
            backlog=sum(_unsettled(view["counts"]) for view in _backlog(secondary).values()),
        )

    async def contents(self, entities: list[DrillEntity]) -> Contents:
        primary, secondary = await self._entities(messages=True)
        injected: dict[str, int] = {}
        for side in self._processes:
            state = await self._on(side, lambda process, _ns: process.world())
            for kind, count in state["injected"].items():
                injected[kind] = injected.get(kind, 0) + int(count)
        sendables = {**primary["queues"], **primary["topics"]}
        return Contents(
            destinations={destination: _held(view) for destination, view in _destinations(primary, entities)},
            backlog={name: _held(view) for name, view in _backlog(secondary).items()},
            duplicates_dropped=sum(int(sendables[e.name]["duplicates_dropped"]) for e in entities),
            injected=injected,
            connections_dropped=self.connections_dropped,
        )


def _destinations(primary: dict[str, Any], entities: list[DrillEntity]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (destination, primary["topics"][name]["subscriptions"][sub] if sub else primary["queues"][name])
        for destination, name, sub in receivable_paths(entities)
    ]


def _backlog(secondary: dict[str, Any]) -> dict[str, Any]:
    prefix = PRIMARY + "/"
    return {name: view for name, view in secondary["queues"].items() if name.startswith(prefix)}


def _unsettled(counts: dict[str, int]) -> int:
    return counts["active"] + counts["scheduled"] + counts["deferred"]


def _held(view: dict[str, Any]) -> Held:
    return Held([_seen(m) for m in view["waiting"]], [_seen(m) for m in view["dead_letter"]])


def _seen(message: dict[str, Any]) -> Seen:
    return Seen(
        str(message["message_id"]),
        ping=is_ping(SimpleNamespace(content_type=message["content_type"])),
        path=message["application_properties"].get(contract.ALIAS_PATH),
        dead_letter_reason=message["dead_letter_reason"],
        sequence_number=int(message["sequence_number"]),
    )


@contextlib.asynccontextmanager
async def wire_world() -> AsyncIterator[WireWorld]:
    """The primary and the secondary, each an emulator in a process of its own (started side by
    side), stopped at the end."""
    primary, secondary = EmulatorProcess([PRIMARY]), EmulatorProcess([SECONDARY])
    try:
        await asyncio.gather(asyncio.to_thread(primary.start), asyncio.to_thread(secondary.start))
        yield WireWorld(primary, secondary)
    finally:
        await asyncio.gather(asyncio.to_thread(primary.stop), asyncio.to_thread(secondary.stop))


def run_drill_on_wire(
    config: DrillConfig, *, progress: DrillProgress | None = None, started: float | None = None
) -> DrillReport:
    """Run a drill against two emulator processes with the unmodified SDK and return its report.
    `started`: the perf_counter time the caller's `timeout` counts from (default: now); the
    emulators' start (a few seconds) counts against it."""
    refused = refusal(config)
    if refused is not None:
        raise ValueError(f"{refused[0]}: {refused[1]}")
    started = time.perf_counter() if started is None else started
    from pairedbus.drill.run import run_drill

    async def drill() -> DrillReport:
        # SIGTERM cancels the drill, so that its emulator processes are stopped on the way out
        # (killed outright, they outlived the drill)
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        async with wire_world() as world:
            return await run_drill(config, world, progress=progress, started=started)

    levels = {name: logging.getLogger(name).level for name in _NOISY}
    for name in _NOISY:
        logging.getLogger(name).setLevel(logging.CRITICAL if name == "azure" else logging.ERROR)
    try:
        return run_leaving_stragglers(drill())
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def run_leaving_stragglers(main: Coroutine[Any, Any, T], *, grace: float = 5.0) -> T:
    """`asyncio.run(main)`, except that the tasks still running at the end are cancelled and waited for at
    most `grace` seconds: `asyncio.run` waits for ever, and a task left behind because it ignored its
    cancellation (drill/run.py, `_finished`) held the wire drill's verdict back until it was killed."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=grace))
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), grace))
            loop.run_until_complete(loop.shutdown_default_executor())
        except Exception as exc:  # the verdict is made: nothing here may lose it
            logging.getLogger("pairedbus.drill").warning("the drill's event loop did not shut down cleanly: %r", exc)
        finally:
            loop.close()
