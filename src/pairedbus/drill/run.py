"""The failover drill's one sequence, on either world (world.py: in-process fake or the wire).

Sequence: create the primary entities (duplicate detection on, dead-lettering on expiry) and the
backlog queues; start consumers on the primary and a syphon; send every planned message from
concurrent failover senders (two clients, so rotation and pings are per client) while the
dispatcher opens and closes the primary's outage windows and kills the syphon at its kill points
(task cancelled: crash semantics, its locks run out and the messages come back); random
retryable faults hit every operation of both namespaces throughout. Then wait until nothing is
left in flight, stop everything, read every dead-letter queue, and account.

Crash semantics: a killed syphon's receivers do not settle or release anything (on the wire its
world also cuts the secondary's connections: a crashed process's sockets die with it); the messages it
had locked come back when their lock expires (the drill's backlog queues lock for
`DrillConfig.backlog_lock_duration`, 20 s, instead of the table's minute: see there why not less).

Time: the drill runs in real time; failover interval and ping interval come from the config
(50 ms and the option's 1 s minimum by default). A config ping interval under 1 s is applied
through the client's injectable `sleep` (a private override: the option itself stays >= 1 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.servicebus import ServiceBusMessage

from pairedbus import contract, sdk
from pairedbus.drill.consumers import Sabotage, consume
from pairedbus.drill.ledger import Ledger
from pairedbus.drill.park_clock import ParkClock
from pairedbus.drill.plan import CLIENTS, drill_plan
from pairedbus.drill.progress import DrillProgress
from pairedbus.drill.report import DrillReport
from pairedbus.drill.scenario import (
    PRIMARY_FQDN,
    SECONDARY_FQDN,
    SUBSCRIPTIONS,
    DrillConfig,
    DrillEntity,
    DrillEntityKind,
    PlannedMessage,
)
from pairedbus.drill.world import Contents, DrillWorld, Seen, creations
from pairedbus.pairing.endpoints import NamespaceEndpoint
from pairedbus.sender import PairedNamespaceClient, SendAvailabilityOptions, starts_failover_clock

CONSUMERS_PER_DESTINATION = 2
CONSUMERS_PER_SESSION_QUEUE = 4
#: The syphon's timing scaled to the drill: back-off after a failed move in milliseconds rather
#: than seconds (outage windows last a fraction of a second). Its lock duration is the backlog
#: queues' (`DrillConfig.backlog_lock_duration`).
SYPHON_OPTIONS: dict[str, Any] = {
    "retry_hold": timedelta(milliseconds=500),
    "backoff_initial": timedelta(milliseconds=5),
    "backoff_max": timedelta(milliseconds=200),
    # A listing that failed on a random fault serves no queue until the next one.
    "relist_interval": timedelta(milliseconds=500),
}
#: A caller's patience: far beyond any outage window of a drill.
MAX_SEND_ATTEMPTS = 10_000
SETTLE_POLL = 0.05
QUIET_POLLS = 10
#: Of a `--timeout`, the seconds kept for the end (consumers and syphon stopped, clients closed, the
#: audit), at most a quarter of it, and more for each message the audit must read (below): the
#: drill's work stops this much before the caller's bound.
WRAP_UP_SECONDS = 3.0
#: What the audit costs per message left in the backlog or at a destination (it reads each): about
#: twice the most measured (docs/benchmarks.md, "Figures behind the code's comments").
AUDIT_SECONDS_PER_MESSAGE = 100e-6
#: How long consumers told to stop may take to finish what they hold before they are cancelled: over
#: the wire a session receiver waiting for a session, or a receive inside the SDK's own retries, does
#: not look at the stop for minutes (a 2,000-message wire drill's verdict came 400 s after its bound).
CONSUMER_STOP_GRACE = 5.0
#: How long a cancelled consumer or syphon may take to end before the drill leaves it behind (something
#: under it, in the SDK or the syphon, swallowed the cancellation) rather than wait for ever.
ABANDON_GRACE = 5.0
#: How often the bound is re-read while sending (the backlog grows, and with it the audit's cost).
BOUND_POLL = 0.25


@dataclass(frozen=True)
class Bound:
    """The caller's `--timeout` on a perf_counter clock: when the drill's work (sending and settling)
    must stop, and when the verdict is due. Without a timeout, neither ever comes."""

    verdict_at: float = math.inf
    wrap_up: float = 0.0

    @classmethod
    def starting(cls, started: float, timeout: float | None) -> Bound:
        if timeout is None:
            return cls()
        return cls(started + timeout, min(WRAP_UP_SECONDS, timeout / 4))

    @property
    def bounded(self) -> bool:
        return self.verdict_at != math.inf

    def work_left(self, *, waiting: int = 0) -> float:
        """Seconds the drill may still send or settle with `waiting` messages for the audit to read
        (inf: no bound)."""
        return self.verdict_at - self.wrap_up - waiting * AUDIT_SECONDS_PER_MESSAGE - time.perf_counter()

    def left(self) -> float:
        """Seconds until the verdict is due (inf: no bound)."""
        return self.verdict_at - time.perf_counter()


async def _keep_to(bound: Bound, sending: asyncio.Timeout, world: DrillWorld, entities: list[DrillEntity]) -> None:
    """While sending: move the end of the sending phase forward as the backlog (and so the audit's
    cost) grows, so that the verdict still comes within the bound."""
    loop = asyncio.get_running_loop()
    while True:
        waiting = (await world.in_flight(entities)).total
        sending.reschedule(loop.time() + bound.work_left(waiting=waiting))
        await asyncio.sleep(BOUND_POLL)


async def run_drill(
    config: DrillConfig, world: DrillWorld, *, progress: DrillProgress | None = None, started: float | None = None
) -> DrillReport:
    """The drill's one sequence, on `world` (in_process.py or wire.py): the same scenario, ledger,
    settling and verdict on either."""
    began = time.perf_counter()
    sdk.keep_cancellations()  # the consumers and senders it stops are cancelled too (issue 34)
    bound = Bound.starting(began if started is None else started, config.timeout)
    plan = drill_plan(config)
    entities = plan.entities
    await world.create(
        creations(
            entities,
            world.primary,
            config.backlog_queues,
            dedup=config.destination_duplicate_detection,
            backlog_lock=config.backlog_lock_duration,
        )
    )
    planned = plan.messages
    units = plan.units
    ledger = Ledger()
    progress = progress or DrillProgress(len(planned))

    await world.inject(plan.faults)
    options = SendAvailabilityOptions(
        backlog_queue_count=config.backlog_queues,
        failover_interval=config.failover_interval,
        ping_primary_interval=max(config.ping_interval, contract.MIN_PING_PRIMARY_INTERVAL),
    )
    ping_sleep = _ping_sleep(config.ping_interval)
    stop_consumers = asyncio.Event()
    syphon = RestartingSyphon(
        world.credential, primary=world.primary, secondary=world.secondary, lock_duration=config.backlog_lock_duration
    )
    kills = list(plan.kill_points)
    sent_so_far = [0]

    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                PairedNamespaceClient(
                    world.primary,
                    world.secondary,
                    world.credential,
                    options=options,
                    rng=random.Random(seed),
                    **({"sleep": ping_sleep} if ping_sleep else {}),
                )
            )
            for seed in plan.client_seeds
        ]
        consumer_client = await stack.enter_async_context(world.primary.client(world.credential))
        sabotage = Sabotage(config.sabotage_consumer_every)
        consumers = _start_consumers(consumer_client, entities, ledger, sabotage, stop_consumers)
        syphon.start()
        phase = ["sending"]
        park_clock = ParkClock(clients, entities)
        park_watch = asyncio.create_task(park_clock.watch())
        reporter = asyncio.create_task(_report_progress(progress, phase, sent_so_far, ledger, clients, world, entities))
        work: asyncio.Queue[list[PlannedMessage] | None] = asyncio.Queue(maxsize=config.senders * 2)
        workers = [
            asyncio.create_task(_sender_worker(clients[i % CLIENTS], work, ledger, world.now, sent_so_far))
            for i in range(config.senders)
        ]
        outages = [0]
        timed_out = False
        settled = False
        keeper: asyncio.Task[None] | None = None
        try:
            try:
                async with asyncio.timeout(bound.work_left() if bound.bounded else None) as sending:
                    if bound.bounded:
                        keeper = asyncio.create_task(_keep_to(bound, sending, world, entities))
                    pace = config.min_send_time.total_seconds() / max(len(units), 1)
                    await _dispatch(units, pace, plan.outage_windows, kills, work, world, syphon, park_clock, outages)
                    for _ in workers:
                        await work.put(None)
                    await asyncio.gather(*workers)
            except TimeoutError:
                if not sending.expired():
                    raise
                timed_out = True  # the caller's bound came while sending: no settling
            park_watch.cancel()
            park_clock.observe()
            await world.outage(down=False)
            sending_done = time.perf_counter()
            phase[0] = "settling"
            if not timed_out:
                # The caller's --timeout bounds settling (`bound`); without one, the settle limit does.
                limit = math.inf if bound.bounded else config.settle_timeout.total_seconds()
                settled = await _settle(world, ledger, entities, syphon, kills, limit, senders=clients, bound=bound)
                timed_out = not settled and bound.work_left(waiting=(await world.in_flight(entities)).total) <= 0
            settle_done = time.perf_counter()
        finally:
            if keeper is not None:
                keeper.cancel()
            park_watch.cancel()
            for task in workers:  # only still running if the drill itself failed or was cut short
                task.cancel()
            await asyncio.gather(*workers, park_watch, return_exceptions=True)
            stop_consumers.set()
            await stopped(consumers, grace=min(CONSUMER_STOP_GRACE, max(0.0, bound.left() / 4)))
            await syphon.stop(grace=min(contract.CLOSE_FAULT_GRACE.total_seconds(), max(0.0, bound.left() / 4)))
            reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporter
            progress.finish()
        # Audit without faults: what is left, and every dead letter.
        await world.calm()
        stats = [c.stats for c in clients]
    contents = await world.contents(entities)
    left = audit(ledger, contents, entities)
    return DrillReport.build(
        config=config,
        ledger=ledger,
        stats=stats,
        syphon=syphon,
        outages=outages[0],
        left=left,
        injected=contents.injected,
        duplicates_dropped=contents.duplicates_dropped,
        settled=settled,
        timed_out=timed_out,
        sending_seconds=sending_done - began,
        settling_seconds=settle_done - sending_done,
        wall_seconds=time.perf_counter() - began,
        world=world.name,
        connections_dropped=contents.connections_dropped,
        first_parked_seconds=park_clock.first_parked,
        outage_parking=park_clock.outages,
        plan_digest=plan.digest,
    )


def _start_consumers(
    client: Any,
    entities: Sequence[DrillEntity],
    ledger: Ledger,
    sabotage: Sabotage,
    stop: asyncio.Event,
) -> list[asyncio.Task[None]]:
    """The drill's consumers: on every queue and every topic subscription, more than one on a session
    queue (each holds one session at a time)."""
    return [
        asyncio.create_task(consume(client, entity, sub, ledger, sabotage, stop))
        for entity in entities
        for sub in (SUBSCRIPTIONS if entity.is_topic else (None,))
        for _ in range(
            CONSUMERS_PER_SESSION_QUEUE if entity.kind is DrillEntityKind.SESSION_QUEUE else CONSUMERS_PER_DESTINATION
        )
    ]


async def _dispatch(
    units: list[list[PlannedMessage]],
    pace: float,
    outage_windows: list[tuple[int, int]],
    kills: list[int],
    work: asyncio.Queue[list[PlannedMessage] | None],
    world: DrillWorld,
    syphon: RestartingSyphon,
    park_clock: ParkClock,
    outages: list[int],
) -> None:
    """Hand the units to the senders at the drill's pace, opening and closing the planned outages and
    killing the syphon at the planned units. `outages` counts the outages opened as they open: the
    caller's bound may cut this short."""
    dispatch_start = time.perf_counter()
    for index, unit in enumerate(units):
        ahead = dispatch_start + index * pace - time.perf_counter()
        if ahead > 0.005:
            await asyncio.sleep(ahead)
        for start, end in outage_windows:
            if index == start:
                park_clock.outage_began()
                await world.outage(down=True)
                outages[0] += 1
            elif index == end:
                await world.outage(down=False)
                park_clock.outage_ended()
        while kills and kills[0] <= index:
            kills.pop(0)
            await syphon.kill(world.syphon_killed)
        await work.put(unit)


# --- setup ---------------------------------------------------------------------------------


def _ping_sleep(interval: timedelta) -> Callable[[float], Any] | None:
    if interval >= contract.MIN_PING_PRIMARY_INTERVAL:
        return None
    seconds = interval.total_seconds()
    return lambda _requested: asyncio.sleep(seconds)


# --- sending -------------------------------------------------------------------------------


def message_from_plan(planned: PlannedMessage) -> ServiceBusMessage:
    message = ServiceBusMessage(
        planned.body,
        application_properties=dict(planned.properties),
        message_id=planned.message_id,
        session_id=planned.session_id,
        subject=planned.subject,
        correlation_id=planned.correlation_id,
        content_type=planned.content_type,
    )
    if planned.ttl is not None:
        message.time_to_live = planned.ttl
    return message


async def _sender_worker(
    client: PairedNamespaceClient,
    work: asyncio.Queue[list[PlannedMessage] | None],
    ledger: Ledger,
    now: Callable[[], float],
    sent_so_far: list[int],
    on_sent: Callable[[], None] = lambda: None,
) -> None:
    """Send units from `work` until None; `now` is the service's clock (scheduled times), `on_sent`
    hears of every send that returned."""
    senders: dict[str, Any] = {}
    use_batch_object = False
    while (unit := await work.get()) is not None:
        entity = unit[0].entity
        sender = senders.get(entity.name)
        if sender is None:
            get = client.get_topic_sender if entity.is_topic else client.get_queue_sender
            sender = senders[entity.name] = get(entity.name)
        messages = [message_from_plan(p) for p in unit]
        scheduled_at: datetime | None = None
        if unit[0].schedule_in is not None:
            scheduled_at = _ms(datetime.fromtimestamp(now(), UTC) + unit[0].schedule_in)
        try:
            delivered = await _send_unit(
                sender, messages, scheduled_at, use_batch_object=use_batch_object, ledger=ledger
            )
        except asyncio.CancelledError:
            # The caller's bound cut the send short: the service may have stored it (then it is
            # found and counted), or not (then it was never sent, and is not lost either).
            for planned, message in zip(unit, messages, strict=True):
                if message.message_id is not None:
                    ledger.sent(planned, message.message_id, scheduled_at, interrupted=True)
            raise
        if len(messages) > 1:
            use_batch_object = not use_batch_object
        for planned, message in zip(unit, messages, strict=True):
            if delivered or message.message_id is not None:  # no id: it failed before anything was sent
                ledger.sent(planned, message.message_id, scheduled_at, failed=not delivered)
        sent_so_far[0] += len(unit)
        on_sent()
    for sender in senders.values():
        await sender.close()


async def _send_unit(
    sender: Any,
    messages: list[ServiceBusMessage],
    scheduled_at: datetime | None,
    *,
    use_batch_object: bool,
    ledger: Ledger,
) -> bool:
    """Send (or schedule) one unit, retrying the primary's errors while the failover clock runs,
    as any caller would; a send that raises otherwise counts as a send failure (False)."""
    attempt = 0
    while True:
        try:
            if scheduled_at is not None:
                await sender.schedule_messages(messages[0], scheduled_at)
            elif len(messages) == 1:
                await sender.send_messages(messages[0])
            elif use_batch_object:
                batch = await sender.create_message_batch()
                for message in messages:
                    batch.add_message(message)
                await sender.send_messages(batch)
            else:
                await sender.send_messages(messages)
            return True
        except Exception as exc:
            attempt += 1
            if not starts_failover_clock(exc) or attempt > MAX_SEND_ATTEMPTS:
                ledger.send_failed(len(messages), exc)
                return False
            await asyncio.sleep(min(0.0005 * 2 ** min(attempt, 10), 0.02))


def _ms(moment: datetime) -> datetime:
    """The service keeps scheduled times to the millisecond."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


# --- the syphon ----------------------------------------------------------------------------


@dataclass
class SyphonCounts:
    moved: int = 0
    dead_lettered: int = 0
    dropped_pings: int = 0
    given_back: int = 0


class RestartingSyphon:
    """Runs one syphon at a time; `kill()` cancels it mid-whatever and starts a new one. A syphon
    that faults (random faults reach its connections too) is replaced, as the platform restarts
    a replica that exits non-zero."""

    def __init__(
        self,
        credential: Any,
        *,
        primary: str | NamespaceEndpoint = PRIMARY_FQDN,
        secondary: str | NamespaceEndpoint = SECONDARY_FQDN,
        lock_duration: timedelta = DrillConfig.model_fields["backlog_lock_duration"].default,
    ) -> None:
        self._credential = credential
        self._primary = primary
        self._secondary = secondary
        self._options = {**SYPHON_OPTIONS, "lock_duration": lock_duration}
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._syphon: Any = None
        self.kills = 0
        self.faults = 0
        #: Cancelled syphons that had not ended `ABANDON_GRACE` later (left behind, see `_finished`).
        self.abandoned = 0
        self.totals = SyphonCounts()

    def start(self) -> None:
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(self._stop), name="drill-syphon")

    async def _run(self, stop: asyncio.Event) -> None:
        from pairedbus.syphon import Syphon

        task = asyncio.current_task()
        # A cancellation something under the syphon swallowed must not start a new one (it was the kill).
        while not stop.is_set() and not (task is not None and task.cancelling()):
            self._syphon = Syphon(
                primary=self._primary, secondary=self._secondary, credential=self._credential, **self._options
            )
            try:
                async with self._syphon:
                    await self._syphon.run(stop)
            except Exception:
                self.faults += 1
                await asyncio.sleep(0.01)
            finally:
                self._collect()

    def _collect(self) -> None:
        if self._syphon is not None:
            stats = self._syphon.stats
            self.totals.moved += stats.moved
            self.totals.dead_lettered += stats.dead_lettered
            self.totals.dropped_pings += stats.dropped_pings
            self.totals.given_back += stats.given_back
            self._syphon = None

    async def kill(self, crash: Callable[[], Awaitable[None]] | None = None) -> None:
        """Cancel the running syphon mid-whatever (after `crash`: what else its world does to a
        crashed process, e.g. cut its sockets) and start a new one."""
        assert self._task is not None
        if crash is not None:
            await crash()
        self._task.cancel()
        if not await _finished(self._task):
            self.abandoned += 1
        self.kills += 1
        self.start()

    async def stop(self, *, grace: float = contract.CLOSE_FAULT_GRACE.total_seconds()) -> None:
        """Stop the syphon: it settles what it holds, for `grace` seconds; then it is cancelled."""
        if self._task is None:
            return
        self._stop.set()
        done, _ = await asyncio.wait({self._task}, timeout=grace)
        if not done:
            self._task.cancel()
        if not await _finished(self._task):
            self.abandoned += 1
        self._task = None


async def stopped(tasks: Sequence[asyncio.Task[None]], *, grace: float) -> None:
    """Wait up to `grace` seconds for `tasks` to end, then cancel those still running and wait for them
    (a message a cancelled consumer held is left locked at its destination: counted as left, not lost)."""
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=grace)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=ABANDON_GRACE)  # one that ignores its cancel is left behind
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a consumer's own error is no news at the end


async def _finished(task: asyncio.Task[None]) -> bool:
    """Wait for the cancelled `task` to end, at most `ABANDON_GRACE`; its own cancellation or error
    swallowed but never the caller's (awaiting the task under `suppress(CancelledError)` also swallowed
    a cancellation of the caller: the `--timeout` that came during a syphon kill was lost, and the drill
    sent everything). False when it had not ended: it is left behind (over the wire a cancelled syphon
    once never ended, and the drill waited about 200 s past its --timeout until it was killed)."""
    await asyncio.wait({task}, timeout=ABANDON_GRACE)
    if not task.done():
        return False
    if not task.cancelled():
        task.exception()  # retrieved: a syphon that died with an error was already counted
    return True


# --- settling and the audit ----------------------------------------------------------------


async def _settle(
    world: DrillWorld,
    ledger: Ledger,
    entities: list[DrillEntity],
    syphon: RestartingSyphon,
    kills: list[int],
    limit: float,
    *,
    senders: Sequence[PairedNamespaceClient] = (),
    bound: Bound = Bound(),
) -> bool:
    """Wait until every expected delivery is recorded, nothing waits in the backlog or at a
    destination (the audit counts both) and no sender is still switched to the backlog, or until
    nothing has been in flight for a while; False at `limit`, or once `bound` (the caller's timeout,
    less what the audit of what waits will take) comes. A switched sender pings its entity once a
    second, and its next ping would land after the consumers stop (settling's quiet half-second is
    shorter; CI once saw "1 left at the destinations"); a ping is stored before its sender switches
    back. Kill points not reached while sending (rounding) happen here, mid-drain."""
    deadline = time.perf_counter() + limit
    quiet = 0
    expected = ledger.expected_deliveries()
    while time.perf_counter() < deadline:
        if kills:
            kills.pop(0)
            await syphon.kill(world.syphon_killed)
        waiting = (await world.in_flight(entities)).total  # the backlog and the destinations (a late ping included)
        if bound.work_left(waiting=waiting) <= 0:
            return False  # the caller's bound, less what the audit of `waiting` messages will take
        waiting += sum(s.is_switched(e.name, topic=e.is_topic) for s in senders for e in entities)
        if ledger.delivered_count() >= expected and waiting == 0:
            return True
        quiet = quiet + 1 if waiting == 0 else 0
        if quiet >= QUIET_POLLS:
            return True
        await asyncio.sleep(SETTLE_POLL)
    return False


def audit(ledger: Ledger, contents: Contents, entities: list[DrillEntity]) -> dict[str, int]:
    """Record every dead letter, and every copy still parked in the backlog or waiting at a
    destination (not yet delivered, not lost); return how many messages are left in each."""
    by_name = {e.name: e for e in entities}
    left = {"backlog": 0, "destinations": 0, "dead_lettered_pings": 0}
    for destination, held in contents.destinations.items():
        for message in held.waiting:
            left["destinations"] += 1
            ledger.waiting(destination, message.message_id, message.sequence_number)
        for message in held.dead_letters:
            if message.ping:
                left["dead_lettered_pings"] += 1
                continue
            ledger.dead_lettered(destination, message.message_id, message.dead_letter_reason, message.sequence_number)
    for held in contents.backlog.values():
        for message in held.waiting:
            left["backlog"] += 1
            if not message.ping:
                for destination in _parked_for(message, by_name):
                    ledger.parked(destination, message.message_id)
        for message in held.dead_letters:
            if message.ping:
                left["dead_lettered_pings"] += 1
                continue
            for destination in _parked_for(message, by_name):
                ledger.dead_lettered(destination, message.message_id, message.dead_letter_reason)
    return left


def _parked_for(message: Seen, by_name: dict[str, DrillEntity]) -> tuple[str, ...]:
    """The destinations a backlog message is parked for (its `x-ms-path` alias)."""
    entity = by_name.get(message.path or "")
    return entity.destinations if entity else (f"<unknown {message.path!r}>",)


async def _report_progress(
    progress: DrillProgress,
    phase: list[str],
    sent: list[int],
    ledger: Ledger,
    clients: list[PairedNamespaceClient],
    world: DrillWorld,
    entities: list[DrillEntity],
) -> None:
    while True:
        parked = sum(c.stats.parked_messages for c in clients)
        failovers = sum(c.stats.failovers for c in clients)
        if phase[0] == "sending":
            progress.sending(sent[0], f"{parked} parked · {failovers} failovers")
        else:
            detail = f"{(await world.in_flight(entities)).backlog} still parked · {parked} parked in all · {failovers} failovers"
            progress.settling(ledger.delivered_count(), ledger.expected_deliveries(), detail)
        await asyncio.sleep(0.25)
