"""The Syphon: moves every parked message from the backlog queues to its destination in the primary.

    async with Syphon(primary="contoso.servicebus.windows.net",
                      secondary="contoso-dr.servicebus.windows.net",
                      credential=credential) as syphon:
        await syphon.run(stop_event)      # the service loop, or
        stats = await syphon.drain()      # once, until every backlog queue is empty

It serves every backlog queue of the prefix (`contract.parse_backlog_queue_name`) it finds in the secondary namespace
(extra ones beyond the configured count included, so nothing is stranded) and applies the spec's
close/fault rule to its two connections.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Coroutine
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from azure.core.exceptions import AzureError
from azure.servicebus import ServiceBusReceivedMessage

from pairedbus import contract, sdk
from pairedbus.pairing.backoff import BackoffPolicy
from pairedbus.pairing.connections import PRIMARY, SECONDARY, SIDES, ConnectionPair, Verdict
from pairedbus.pairing.endpoints import NamespaceEndpoint, endpoint_of
from pairedbus.pairing.ports import Client
from pairedbus.syphon.backlog_directory import ArmDirectory, BacklogDirectory, DataPlaneDirectory
from pairedbus.syphon.backoff import Backoff
from pairedbus.syphon.close_fault import StopOnFault, give_back, secondary_still_open
from pairedbus.syphon.context import SyphonContext
from pairedbus.syphon.destinations import Destinations
from pairedbus.syphon.health import Health
from pairedbus.syphon.in_flight import InFlightBudget
from pairedbus.syphon.options import SyphonOptions
from pairedbus.syphon.pump import BacklogPump
from pairedbus.syphon.receive_plan import receivers_ahead
from pairedbus.syphon.stats import SyphonStats
from pairedbus.syphon.warm_receivers import WarmReceivers

log = logging.getLogger("pairedbus.syphon")


#: The back-off key of the backlog-queue listing.
LISTING = "<listing>"


async def _first_of(halt: asyncio.Event, tasks: list[asyncio.Task[None]], *, seconds: float) -> None:
    """Wait until `halt` is set, one of `tasks` ends, or `seconds` pass."""
    halted = asyncio.ensure_future(halt.wait())
    try:
        await asyncio.wait([halted, *tasks], timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        halted.cancel()


def _with_ssl_context(client_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The clients' keyword arguments with one SSL context for all their connections (`sdk.amqp_ssl_context`:
    each sender and receiver is a connection, and each loaded the CA bundle again), from the bundle they
    name (`connection_verify`) or the SDK's default; a caller's own `ssl_context` is kept."""
    if client_kwargs.get("ssl_context") is not None:
        return client_kwargs
    return {**client_kwargs, "ssl_context": sdk.amqp_ssl_context(client_kwargs.get("connection_verify"))}


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Syphon:
    """Async context manager owning one aio ServiceBusClient per namespace and an aio
    ServiceBusAdministrationClient for the secondary. Options are keyword-only and validated here
    (see `SyphonOptions` for defaults and ranges); `clock` gives "now" for time-to-live arithmetic;
    `rng` draws the back-offs' jitter (`pairing.backoff`; a shared source when None).
    """

    def __init__(
        self,
        *,
        primary: str | NamespaceEndpoint,
        secondary: str | NamespaceEndpoint,
        credential: Any,
        clock: Callable[[], datetime] = _utc_now,
        rng: random.Random | None = None,
        client_kwargs: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        if not primary or not secondary:
            raise ValueError("primary and secondary must be fully qualified namespace names")
        self._endpoints = {PRIMARY: endpoint_of(primary), SECONDARY: endpoint_of(secondary)}
        if self._endpoints[PRIMARY].fqdn.lower() == self._endpoints[SECONDARY].fqdn.lower():
            raise ValueError(f"primary and secondary must differ, both are {self._endpoints[PRIMARY].fqdn!r}")
        self.options = SyphonOptions(**options)
        self.primary = self._endpoints[PRIMARY].fqdn
        self.secondary = self._endpoints[SECONDARY].fqdn
        self.backlog_prefix = self.options.backlog_prefix or self._endpoints[PRIMARY].name
        self._credential = credential
        self._clock = clock
        self._rng = rng
        self._client_kwargs = dict(client_kwargs or {})
        self._stats = SyphonStats()
        self._reaction = StopOnFault()
        self._pair = ConnectionPair(self.options.close_fault_grace.total_seconds(), self._reaction)
        self._primary_client: Client[ServiceBusReceivedMessage] | None = None
        self._secondary_client: Client[ServiceBusReceivedMessage] | None = None
        self._directory: BacklogDirectory | None = None
        self._destinations: Destinations | None = None
        self._primary_admin: Any = None
        self._context: SyphonContext[ServiceBusReceivedMessage] | None = None
        #: Bytes of each backlog queue at the last listing (its depth is in the stats).
        self._sizes: dict[str, int] = {}

    # --- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Syphon:
        sdk.keep_cancellations()  # on 3.11 the SDK's reads dropped cancellations: a stopped syphon ran on
        # A fresh pair each time: a Syphon that faulted may be entered again with new connections
        # (its counters carry on).
        self._reaction = StopOnFault()
        self._pair = ConnectionPair(self.options.close_fault_grace.total_seconds(), self._reaction)
        client_kwargs = _with_ssl_context(self._client_kwargs)
        self._primary_client = self._endpoints[PRIMARY].client(self._credential, **client_kwargs)
        self._secondary_client = self._endpoints[SECONDARY].client(self._credential, **client_kwargs)
        self._directory = (
            ArmDirectory(self._credential, self.options.secondary_resource_id)
            if self.options.secondary_resource_id
            else DataPlaneDirectory(self._endpoints[SECONDARY].admin_client(self._credential))
        )
        self._pair.watch_close(PRIMARY, self._primary_client)
        self._pair.watch_close(SECONDARY, self._secondary_client)
        self._primary_admin = (
            None if self.options.secondary_resource_id else self._endpoints[PRIMARY].admin_client(self._credential)
        )
        self._destinations = Destinations(
            self._primary_client,
            timeout=self.options.operation_timeout.total_seconds(),
            keyed_by_message_id=self._keyed_by_message_id if self._primary_admin is not None else None,
            senders_per_destination=self.options.senders_per_destination,
        )
        self._context = SyphonContext(
            options=self.options,
            stats=self._stats,
            budget=InFlightBudget(self.options.max_in_flight, max_bytes=self.options.max_in_flight_bytes),
            health=Health(
                BackoffPolicy(
                    self.options.backoff_initial.total_seconds(),
                    self.options.backoff_max.total_seconds(),
                    rng=self._rng,
                )
            ),
            destinations=self._destinations,
            secondary=self._secondary_client,
            pair=self._pair,
            now=self._clock,
            rng=self._rng,
        )
        log.info(
            "syphon open",
            extra={"primary": self.primary, "secondary": self.secondary, "backlog_prefix": self.backlog_prefix},
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._pair.shut_down()
        try:
            if self._destinations is not None:
                await self._destinations.close()
        finally:
            for side in SIDES:
                error = await self._pair.close_side(side)
                if error is not None:  # closing is best effort: the process is stopping either way
                    log.warning("closing a namespace client failed", extra={"side": side, "error": repr(error)})
            if self._directory is not None:
                await self._directory.close()
                self._directory = None
            if self._primary_admin is not None:
                await self._primary_admin.close()
                self._primary_admin = None
            self._context = None

    # --- what the service reads ----------------------------------------------------------

    @property
    def stats(self) -> SyphonStats:
        """A snapshot of the counters (moved, dead_lettered, dropped_pings, errors, depth...)."""
        return self._stats.snapshot()

    @property
    def clients_open(self) -> bool:
        return self._context is not None and self._pair.both_up

    @property
    def in_flight(self) -> int:
        """Backlog messages received and not yet settled (or left to the broker)."""
        return self._context.budget.held if self._context is not None else 0

    def report_fault(self, side: str, cause: str = "faulted") -> None:
        """Tell the syphon that the `primary` or `secondary` connection faulted."""
        self._pair.report_fault(side, cause)

    # --- the two modes -------------------------------------------------------------------

    async def drain(self) -> SyphonStats:
        """Move everything parked now; returns once every backlog queue is empty (a message left
        locked while its destination backs off is waited for, so an outage makes this wait).

        Each round lists the queues and drains them; the next listing checks they are empty. A
        round that saw for itself that they are needs no such listing: every pump received at
        least its queue's listed depth and then found the queue empty, and every message received
        was settled, with no failure and nothing left locked (a listed message another receiver
        holds, or one whose settlement failed, would show as one of these)."""
        ctx = self._require_open()

        async def rounds(halt: asyncio.Event) -> None:
            describing = asyncio.ensure_future(self._describe_destinations())
            try:
                await drain_rounds(halt)
            finally:
                describing.cancel()
                await asyncio.gather(describing, return_exceptions=True)

        async def drain_rounds(halt: asyncio.Event) -> None:
            warm = self._warm_start()  # the first round's receivers, opening beside its listing
            try:
                while not halt.is_set():
                    if not self._pair.both_up:
                        await halt.wait()  # the close/fault rule is deciding; nothing to receive with
                        return
                    if await drain_round(halt, warm):
                        return
                    if warm is not None:
                        await warm.close()
                        warm = None
            finally:
                if warm is not None:
                    await warm.close()

        async def drain_round(halt: asyncio.Event, warm: WarmReceivers[ServiceBusReceivedMessage] | None) -> bool:
            """One round: list, drain every listed queue; whether the backlog is known to be empty."""
            queues = await self.list_backlog_queues()
            before = self._settled_and_failed()
            round_ctx = ctx if warm is None else replace(ctx, secondary=warm)  # the pumps take the warm receivers
            pumps = [self._pump(round_ctx, queue) for queue in queues]
            wait = self.options.drain_wait.total_seconds()

            async def run(pump: BacklogPump[ServiceBusReceivedMessage]) -> None:
                if warm is not None:
                    await warm.ready(pump.queue, halt=halt)
                try:
                    await pump.run(wait=wait, halt=halt, until_empty=True)
                finally:
                    if warm is not None:
                        await warm.release(pump.queue)  # its receivers not needed after all

            async with asyncio.TaskGroup() as running:
                for pump in pumps:
                    running.create_task(run(pump))
                if warm is not None and (unlisted := sorted(warm.queues - set(queues))):
                    # Drift (the spec: a missing index below the count); one line however many.
                    log.info(
                        "backlog queues below the configured count are not listed; not served",
                        extra={"missing": len(unlisted), "backlog_queues": unlisted[:10]},
                    )
                    for queue in unlisted:
                        running.create_task(warm.release(queue))
            await ctx.budget.idle()
            settled, failed = (now - then for now, then in zip(self._settled_and_failed(), before, strict=True))
            received = sum(pump.plan.received_count for pump in pumps)
            if all(pump.plan.emptied for pump in pumps) and settled == received and not failed:
                self._stats.backlog_depth = dict.fromkeys(queues, 0)  # what the round saw for itself
                return True
            return not any(self._stats.backlog_depth.get(q, 0) for q in await self.list_backlog_queues())

        await self._guarded(rounds)
        log.info("backlog drained", extra=self._stats.log_fields())
        return self.stats

    async def run(self, stop: asyncio.Event) -> None:
        """The service loop: a long poll on every backlog queue, re-listing the queues every
        `relist_interval`. Returns after `stop` is set, once everything received is settled (or
        left locked for redelivery); raises SyphonFaulted under the close/fault rule."""
        ctx = self._require_open()
        wait = self.options.long_poll.total_seconds()

        async def serve(halt: asyncio.Event) -> None:
            pumps: dict[str, asyncio.Task[None]] = {}
            # A failed listing is retried with back-off rather than after a whole relist_interval,
            # and a pump that ended (its receiver failed) is restarted as soon as it ends.
            listing = Backoff(
                self.options.backoff_initial.total_seconds(),
                self.options.relist_interval.total_seconds(),
                rng=self._rng,
            )
            async with asyncio.TaskGroup() as group:
                describing = group.create_task(self._describe_destinations())
                while not halt.is_set():
                    delay = self.options.relist_interval.total_seconds()
                    try:
                        queues = await self.list_backlog_queues()
                        listing.succeeded(LISTING)
                    except AzureError as exc:  # HTTP errors of the administration client included
                        self._stats.count_error(exc)
                        log.warning("listing backlog queues failed", extra={"error": repr(exc)})
                        queues, delay = list(pumps), listing.failed(LISTING)
                    for queue in queues if self._pair.both_up else ():
                        running = pumps.get(queue)
                        if running is None or running.done():
                            pumps[queue] = group.create_task(
                                self._pump(ctx, queue).run(wait=wait, halt=halt, until_empty=False)
                            )
                    await _first_of(halt, [t for t in pumps.values() if not t.done()], seconds=delay)
                describing.cancel()

        async def until_stopped(halt: asyncio.Event) -> None:
            await stop.wait()
            halt.set()

        log.info("syphon running", extra={"backlog_prefix": self.backlog_prefix})
        await self._guarded(serve, until_stopped)
        log.info("syphon stopped", extra=self._stats.log_fields())

    def _warm_start(self) -> WarmReceivers[ServiceBusReceivedMessage] | None:
        """With the backlog queue count known, start opening the named queues' receivers (as many per
        queue as a queue with work would start with if every named queue had work, its receives sized
        as the pump sizes them: `BacklogPump._batch_size` without the byte bound, which needs the
        listing); None without it."""
        count = self.options.backlog_queue_count
        if count is None or self._context is None:
            return None
        most = self.options.receivers_per_queue
        per_queue = receivers_ahead(
            queues=count,
            capacity=self.options.max_in_flight,
            batch_size=min(self.options.receive_batch_size, self._context.budget.receive_share(most, busy=count)),
            most=most,
        )
        warm = WarmReceivers(self._context.secondary, timeout=self.options.operation_timeout.total_seconds())
        warm.open(contract.backlog_queue_names(self.backlog_prefix, count), per_queue, prefetch_count=0)
        return warm

    async def list_backlog_queues(self) -> list[str]:
        """This primary's backlog queues in the secondary (by index), recording their depths."""
        found: list[tuple[int, str]] = []
        depth: dict[str, int] = {}
        sizes: dict[str, int] = {}
        if self._directory is None:
            raise RuntimeError("use the Syphon as an async context manager: async with Syphon(...) as syphon")
        async with asyncio.timeout(self.options.operation_timeout.total_seconds()):
            listed = await self._directory.list_queues()
        for queue in listed:
            parsed = contract.parse_backlog_queue_name(queue.name)
            if parsed is None or parsed[0] != self.backlog_prefix:
                continue
            found.append((parsed[1], queue.name))
            depth[queue.name] = queue.active_messages
            sizes[queue.name] = queue.size_in_bytes
        self._stats.backlog_depth = depth
        self._sizes = sizes
        self._stats.listed = True
        self._stats.note_reachable()
        return [name for _, name in sorted(found)]

    async def _describe_destinations(self) -> None:
        """Read every queue and topic of the primary (one listing each, beside the backlog's), so
        the first send to a destination does not wait for a read of its properties. A destination
        not listed (or a listing that failed) is read on its first send, as before."""
        if self._primary_admin is None or self._destinations is None:
            return
        destinations = self._destinations

        async def learn(listing: Any) -> None:
            async for entity in listing:
                keyed = bool(entity.enable_partitioning and entity.requires_duplicate_detection)
                destinations.know(entity.name, keyed_by_message_id=keyed)

        try:
            async with asyncio.timeout(self.options.operation_timeout.total_seconds()):
                await asyncio.gather(learn(self._primary_admin.list_queues()), learn(self._primary_admin.list_topics()))
        except Exception as exc:  # only a head start: whatever failed, the first send reads its destination
            log.info("cannot list the primary's entities; each is read on its first send", extra={"error": repr(exc)})

    async def _keyed_by_message_id(self, destination: str) -> bool | None:
        """Whether the destination is partitioned with duplicate detection, so that the message id
        is the partition key of a message without session id or partition key (partitioning.md).
        Read through the data-plane administration client (the same Manage right the data-plane
        listing needs); a queue first, then a topic."""
        from azure.core.exceptions import ResourceNotFoundError

        assert self._primary_admin is not None
        try:
            entity = await self._primary_admin.get_queue(destination)
        except ResourceNotFoundError:
            entity = await self._primary_admin.get_topic(destination)
        return bool(entity.enable_partitioning and entity.requires_duplicate_detection)

    # --- helpers -------------------------------------------------------------------------

    def _settled_and_failed(self) -> tuple[int, int]:
        """Backlog messages settled so far (moved, dead-lettered, pings dropped), and failures so
        far (errors of any kind, messages left locked)."""
        stats = self._stats
        return (
            stats.moved + stats.dead_lettered + stats.dropped_pings,
            sum(stats.errors.values()) + stats.left_locked,
        )

    def _pump(
        self, ctx: SyphonContext[ServiceBusReceivedMessage], queue: str
    ) -> BacklogPump[ServiceBusReceivedMessage]:
        """A pump for `queue`, told what the last listing saw in it (it starts at full size)."""
        return BacklogPump(
            ctx, queue, depth=self._stats.backlog_depth.get(queue, 0), size_in_bytes=self._sizes.get(queue, 0)
        )

    def _require_open(self) -> SyphonContext[ServiceBusReceivedMessage]:
        if self._context is None:
            raise RuntimeError("use the Syphon as an async context manager: async with Syphon(...) as syphon")
        return self._context

    async def _guarded(self, *work: Callable[[asyncio.Event], Coroutine[object, None, None]]) -> None:
        """Run `work` with the close/fault watch; a fault halts the work, then is raised."""
        halt = asyncio.Event()

        async def stopping(verdict: Verdict) -> None:
            """Before the rule's close: stop receiving, then give back what is held while the secondary
            is open (`close_fault.give_back`), so it is redelivered now, not when its lock runs out."""
            halt.set()
            await asyncio.sleep(0)  # the pumps' receives see the halt before their messages come back
            if self._context is not None and secondary_still_open(verdict):
                await give_back(self._context.holders, self._stats)

        try:
            async with asyncio.TaskGroup() as group:
                watcher = group.create_task(self._reaction.watch(self._pair, before_close=stopping))
                watcher.add_done_callback(lambda _: halt.set())
                tasks = [group.create_task(w(halt)) for w in work]
                await asyncio.wait(tasks[:1])  # its failure, if any, is raised by the group
                halt.set()
                for task in tasks[1:]:
                    task.cancel()
                # The rule halts the work before it gives back and closes the partner: once it has made
                # its fault, the work may end first, and the rule is left to finish (bounded: give_back).
                if self._reaction.fault is None:
                    watcher.cancel()
        except BaseExceptionGroup as group_error:
            if len(group_error.exceptions) == 1:
                raise group_error.exceptions[0] from None
            raise
        if self._reaction.fault is not None:
            raise self._reaction.fault
