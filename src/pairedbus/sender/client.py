"""`PairedNamespaceClient`: senders with send availability over a primary/secondary pair.

Owns the namespace connections (`PairedConnections`: one ServiceBusClient per namespace, the
close/fault rule, replacement after a fault), the `Backlog` (rotation and backlog senders, shared
by every sender of the client), one `EntityFailover` per entity (failover clock, pings, facts)
and, with `enable_syphon`, a supervised syphon that is restarted with fresh connections when it
faults. `close()` (or leaving the `async with`) stops the pings and the syphon and closes every
sender and client it opened.

Entering the client (`async with`) also learns which backlog queues exist, so a sender never
picks a missing one; each entity's metadata (does it require sessions, does it exist) is read
once in the background when its first sender is made. Both need the right to read entities
(Manage on the data plane); without it the client keeps every configured backlog queue in the
rotation until a send to it fails, learns the entity's facts from the answers to its sends, and
logs that it does. `get_queue_sender(..., requires_session=True)` states the one fact that
matters most when it cannot be read.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from azure.servicebus import ServiceBusMessage

from pairedbus import contract, sdk
from pairedbus.pairing.backoff import BackoffPolicy
from pairedbus.pairing.connections import PRIMARY, SECONDARY
from pairedbus.pairing.endpoints import NamespaceEndpoint, endpoint_of
from pairedbus.sender.backlog import Backlog, BacklogRotation
from pairedbus.sender.connections import Credential, PairedConnections
from pairedbus.sender.failover import EntityFacts, EntityFailover, EntityKind, FailoverStats, Sleep
from pairedbus.sender.failover_clock import FailoverClock, MonotonicSeconds
from pairedbus.sender.options import SendAvailabilityOptions, sdk_client_kwargs
from pairedbus.sender.sender import PairedSender
from pairedbus.sender.turns import Turns, close_within

_log = logging.getLogger("pairedbus.sender")

#: The longest wait (seconds) before a faulted connection or embedded syphon is replaced.
_MAX_RECONNECT_BACKOFF = 60.0


class PairedNamespaceClient:
    """`async with PairedNamespaceClient(primary=..., secondary=..., credential=...) as client:`

    `primary`/`secondary` are fully qualified namespaces (`contoso.servicebus.windows.net`) reached
    with `credential` (Entra ID), or `NamespaceEndpoint`s (see `from_connection_strings`).
    `rng`, `clock` and `sleep` are injectable for tests and drills (the backlog pick, the failover
    clock and the wait between pings); `client_kwargs` go to both ServiceBusClients;
    `close_fault_grace` and `reconnect_backoff` tune the close/fault rule (spec: 5 s) and the wait
    before a faulted connection or syphon is replaced: the runtime's back-off
    (`pairing.backoff.BackoffPolicy`), its first wait drawn from [0, reconnect_backoff], doubling
    per fault in a row up to a minute; `backoff_rng` draws that jitter (None: a shared source).
    """

    def __init__(
        self,
        primary: str | NamespaceEndpoint,
        secondary: str | NamespaceEndpoint,
        credential: Credential | None,
        *,
        options: SendAvailabilityOptions | None = None,
        rng: random.Random | None = None,
        clock: MonotonicSeconds = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        client_kwargs: Mapping[str, object] | None = None,
        close_fault_grace: timedelta = contract.CLOSE_FAULT_GRACE,
        reconnect_backoff: timedelta = timedelta(seconds=1),
        backoff_rng: random.Random | None = None,
    ) -> None:
        primary_endpoint, secondary_endpoint = endpoint_of(primary), endpoint_of(secondary)
        if primary_endpoint.fqdn == secondary_endpoint.fqdn:
            raise ValueError("primary and secondary must be different namespaces")
        if options is not None and not isinstance(options, SendAvailabilityOptions):
            raise TypeError(f"options must be a SendAvailabilityOptions, got {type(options).__name__}")
        self.endpoints = {PRIMARY: primary_endpoint, SECONDARY: secondary_endpoint}
        self.primary = primary_endpoint.fqdn
        self.secondary = secondary_endpoint.fqdn
        self.options = options or SendAvailabilityOptions()
        self._credential = credential
        self._clock = clock
        self._sleep = sleep
        self._timeout = self.options.operation_timeout.total_seconds()
        #: The close/fault rule's grace (paired-namespaces.md: 5 s).
        self.close_fault_grace = close_fault_grace
        self._reconnect_backoff = BackoffPolicy(
            reconnect_backoff.total_seconds(), _MAX_RECONNECT_BACKOFF, rng=backoff_rng
        )
        self.stats = FailoverStats()
        self.connections = PairedConnections(
            self.endpoints,
            credential,
            self.stats,
            grace=close_fault_grace.total_seconds(),
            backoff_initial=reconnect_backoff.total_seconds(),
            backoff_max=_MAX_RECONNECT_BACKOFF,
            backoff_rng=backoff_rng,
            client_kwargs=sdk_client_kwargs(self.options, client_kwargs),
        )
        rotation = BacklogRotation(
            contract.backlog_queue_names(primary_endpoint.name, self.options.backlog_queue_count),
            rng=rng,
            retry_after=self.options.backlog_retry_interval.total_seconds(),
            clock=clock,
        )
        self.backlog = Backlog(rotation, self.connections, self.stats, timeout=self._timeout)
        self._entities: dict[tuple[EntityKind, str], EntityFailover] = {}
        self._learning: dict[tuple[EntityKind, str], asyncio.Task[None]] = {}
        self._senders: set[PairedSender] = set()
        self._syphon_stop: asyncio.Event | None = None
        self._syphon_task: asyncio.Task[None] | None = None
        self._opened = False
        self._closed = False

    @classmethod
    def from_connection_strings(
        cls,
        primary: str,
        secondary: str,
        *,
        primary_name: str | None = None,
        connection_verify: str | None = None,
        **kwargs: Any,
    ) -> PairedNamespaceClient:
        """A client on two connection strings (SAS, or an emulator's), as the SDK takes them.
        `primary_name` is the primary namespace's name when its host does not say it (an
        emulator's `localhost`): the backlog queues are named after it. Entra ID (the
        constructor with a credential) stays the way for deployed namespaces, whose local
        authentication is off. `connection_verify`: the CA bundle the administration clients trust
        (an emulator's `ca_file`)."""
        return cls(
            NamespaceEndpoint.from_connection_string(
                primary, name=primary_name, source="primary", connection_verify=connection_verify
            ),
            NamespaceEndpoint.from_connection_string(
                secondary, name="secondary", source="secondary", connection_verify=connection_verify
            ),
            None,
            **kwargs,
        )

    @property
    def rotation(self) -> BacklogRotation:
        return self.backlog.rotation

    # --- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> PairedNamespaceClient:
        self._open()
        await self.backlog.discover(self._list_secondary_queues)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _open(self) -> None:
        if self._closed:
            raise ValueError("the paired namespace client is closed")
        if self._opened:
            return
        self._opened = True
        # on 3.11 the SDK's frame reads dropped cancellations: a cancelled send or ping ran on (issue 34)
        sdk.keep_cancellations()
        self.connections.open()
        if self.options.enable_syphon:
            self._syphon_stop = asyncio.Event()
            self._syphon_task = asyncio.create_task(self._run_syphon(self._syphon_stop), name="pairedbus-syphon")

    async def close(self) -> None:
        """Close everything this client opened; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        errors: list[BaseException] = []
        for task in self._learning.values():
            task.cancel()
        await asyncio.gather(*self._learning.values(), return_exceptions=True)
        for failover in self._entities.values():
            await failover.close()
        if self._syphon_task is not None:
            assert self._syphon_stop is not None
            self._syphon_stop.set()
            # The syphon settles what it holds and stops; one grace period, then crash semantics.
            done, _ = await asyncio.wait({self._syphon_task}, timeout=self.close_fault_grace.total_seconds())
            if not done:
                self._syphon_task.cancel()
            await asyncio.gather(self._syphon_task, return_exceptions=True)
        for sender in list(self._senders):
            try:
                await sender.close()
            except Exception as exc:
                errors.append(exc)
        errors.extend(await self.connections.close())
        if errors:
            _log.warning("errors while closing the paired namespace client: %r", errors)

    # --- the embedded syphon --------------------------------------------------------------

    async def _run_syphon(self, stop: asyncio.Event) -> None:
        """Run a syphon until `stop`; when it faults (the close/fault rule) it is counted, logged
        and started again with fresh connections after a back-off."""
        from pairedbus.syphon import Syphon

        faults = 0
        while not stop.is_set():
            try:
                async with Syphon(
                    primary=self.endpoints[PRIMARY],
                    secondary=self.endpoints[SECONDARY],
                    credential=self._credential,
                    close_fault_grace=self.close_fault_grace,
                    operation_timeout=self.options.operation_timeout,
                ) as syphon:
                    await syphon.run(stop)
                return
            except Exception as exc:  # SyphonFaulted, or a failure to open: restart either way
                self.stats.syphon_faults += 1
                faults += 1
                delay = self._reconnect_backoff.delay(faults)
                _log.warning("embedded syphon stopped (%s); restarting it in %g s", exc, delay)
            try:
                await asyncio.wait_for(stop.wait(), delay)
                return
            except TimeoutError:
                pass
            self.stats.syphon_restarts += 1
            _log.warning("embedded syphon restarted with fresh connections")

    # --- senders ------------------------------------------------------------------------

    def get_queue_sender(self, queue_name: str, *, requires_session: bool | None = None) -> PairedSender:
        """A failover sender for a queue. `requires_session` states what the client would
        otherwise learn from the queue's metadata (used to refuse, while failed over, a message
        without a session id as the primary would)."""
        if requires_session is not None and not isinstance(requires_session, bool):
            raise TypeError(f"requires_session must be a bool or None, got {type(requires_session).__name__}")
        return self._sender(EntityKind.QUEUE, queue_name, requires_session)

    def get_topic_sender(self, topic_name: str) -> PairedSender:
        return self._sender(EntityKind.TOPIC, topic_name, None)

    def _sender(self, kind: EntityKind, name: str, requires_session: bool | None) -> PairedSender:
        if not isinstance(name, str) or not name:
            raise ValueError(f"the {kind.value} name must be a non-empty string, got {name!r}")
        self._open()
        if contract.is_backlog_queue_name(name):
            raise ValueError(f"{name!r} is a backlog queue; send to the entity the message is meant for")
        failover = self._failover(kind, name)
        if requires_session is not None:
            failover.facts.requires_session = requires_session
        sender = PairedSender(
            failover,
            self.backlog,
            self.connections,
            self.stats,
            # Load spreads over clients that do not know each other: a random queue per sender.
            backlog_queue=self.backlog.pick(),
            timeout=self._timeout,
            on_close=self._senders.discard,
        )
        self._senders.add(sender)
        return sender

    def _failover(self, kind: EntityKind, name: str) -> EntityFailover:
        key = (kind, name)
        failover = self._entities.get(key)
        if failover is None:
            failover = self._entities[key] = EntityFailover(
                name,
                kind,
                FailoverClock(self.options.failover_interval, clock=self._clock),
                self.stats,
                ping=self._ping,
                ping_interval=self.options.ping_primary_interval.total_seconds(),
                sleep=self._sleep,
            )
            if not self._closed:
                task = asyncio.create_task(self._learn(failover), name=f"pairedbus-learn:{name}")
                self._learning[key] = failover.metadata_read = task
        return failover

    def is_switched(self, name: str, *, topic: bool = False) -> bool:
        failover = self._entities.get((EntityKind.TOPIC if topic else EntityKind.QUEUE, name))
        return failover is not None and failover.switched

    async def entity_facts(self, name: str, *, topic: bool = False) -> EntityFacts:
        """What the client knows of an entity, once its metadata read has finished."""
        key = (EntityKind.TOPIC if topic else EntityKind.QUEUE, name)
        learning = self._learning.get(key)
        if learning is not None:
            await asyncio.gather(learning, return_exceptions=True)
        failover = self._entities.get(key)
        return failover.facts if failover is not None else EntityFacts()

    # --- what the client reads from Service Bus ---------------------------------------------

    async def _ping(self, failover: EntityFailover, ping: ServiceBusMessage) -> None:
        """One ping, bounded by the operation timeout (not by the ping interval, which may be 1 s)."""
        client = self.connections.client(PRIMARY)
        sender = (
            client.get_queue_sender(failover.name)
            if failover.kind is EntityKind.QUEUE
            else client.get_topic_sender(failover.name)
        )
        try:
            # its own sender, so one call: bounded (the SDK may lose track of it) but with no turn to take
            await Turns(lambda _handler: None, self.connections.watchdog).call(
                sender, lambda left: sender.send_messages(ping, timeout=left), self._timeout, what="a ping"
            )
            self.connections.note_worked(PRIMARY)
        except Exception as exc:
            self.connections.note_error(PRIMARY, exc)
            raise
        finally:
            await close_within(sender, self.close_fault_grace.total_seconds())

    async def _learn(self, failover: EntityFailover) -> None:
        """Read the entity's metadata from the primary once (needs the right to read entities)."""
        try:
            async with (
                asyncio.timeout(self._timeout),
                self.endpoints[PRIMARY].admin_client(self._credential) as admin,
            ):
                if failover.kind is EntityKind.QUEUE:
                    properties = await admin.get_queue(failover.name)
                    if failover.facts.requires_session is None:
                        failover.facts.requires_session = bool(properties.requires_session)
                else:
                    await admin.get_topic(failover.name)
                failover.facts.exists = True
        except Exception as exc:
            from azure.core.exceptions import ResourceNotFoundError

            if isinstance(exc, ResourceNotFoundError):
                failover.facts.exists = False
                return
            self.stats.metadata_unavailable += 1
            _log.info(
                "cannot read the metadata of %s %r (%r): learning it from sends instead",
                failover.kind.value,
                failover.name,
                exc,
            )

    async def _list_secondary_queues(self) -> list[str]:
        async with (
            asyncio.timeout(self._timeout),
            self.endpoints[SECONDARY].admin_client(self._credential) as admin,
        ):
            prefix = contract.backlog_queue_prefix(self.endpoints[PRIMARY].name)
            return [q.name async for q in admin.list_queues() if q.name.startswith(prefix)]
