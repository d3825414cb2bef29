"""The syphon's process (`pairedbus.service.syphon_process`): health, metrics, JSON logs, graceful stop and faults, over a real HTTP server."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from azure.servicebus import ServiceBusMessage
from prometheus_client.parser import text_string_to_metric_families

from pairedbus import contract
from pairedbus.errors import UserError
from pairedbus.service import syphon_process as syphon_service
from pairedbus.service.endpoints import (
    ENV_AZURE_CLIENT_ID,
)
from pairedbus.service.logs import configure_json_logging
from pairedbus.service.syphon_process import (
    EXIT_FAILED,
    EXIT_STOPPED,
    ServiceOptions,
    SyphonService,
    serve,
)
from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.syphon import Syphon, SyphonFaulted, SyphonStats
from tests.load import guard
from tests.syphon import helpers

PRIMARY = "contoso.servicebus.windows.net"
SECONDARY = "contoso-dr.servicebus.windows.net"
#: Bounds a test's waits so a bug hangs nothing; no test asserts on how long anything took.
WAIT = 10


class FakeSyphon:
    """Stands in for pairedbus.syphon.Syphon: holds `in_flight` moves open until stop is set,
    then settles them before `run` returns, the way the real one must."""

    def __init__(self, *, in_flight: int = 3, fault: BaseException | None = None, ends_alone: bool = False) -> None:
        self.stats = SyphonStats()
        self.clients_open = False
        self.in_flight = 0
        self.in_flight = in_flight
        self.fault = fault
        self.ends_alone = ends_alone
        self.events: list[str] = []
        self.kwargs: dict[str, Any] = {}
        self.running = asyncio.Event()
        self.enter_gate: asyncio.Event | None = None

    def __call__(self, **kwargs: Any) -> FakeSyphon:
        self.kwargs = kwargs
        return self

    async def __aenter__(self) -> FakeSyphon:
        if self.enter_gate is not None:
            await self.enter_gate.wait()
        self.clients_open = True
        self.events.append("open")
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.clients_open = False
        self.events.append("close")

    async def run(self, stop: asyncio.Event) -> None:
        self.running.set()
        if self.ends_alone:
            return
        if self.fault is not None:
            raise self.fault

        async def move(index: int) -> None:
            await stop.wait()
            await asyncio.sleep(0)  # the send's acknowledgement arrives after the stop request
            self.stats.moved += 1
            self.events.append(f"settled {index}")

        async with asyncio.TaskGroup() as moves:
            for i in range(self.in_flight):
                moves.create_task(move(i))
        self.events.append("run returned")


class FakeCredential:
    def __init__(self) -> None:
        self.closed = False

    async def __aenter__(self) -> FakeCredential:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.closed = True


def _options(**overrides: Any) -> ServiceOptions:
    return ServiceOptions(**{"primary": PRIMARY, "secondary": SECONDARY, "host": "127.0.0.1", "port": 0, **overrides})


@asynccontextmanager
async def running(
    syphon: FakeSyphon, *, wait_for_loop: bool = True
) -> AsyncIterator[tuple[SyphonService, asyncio.Event, asyncio.Task[int]]]:
    credential = FakeCredential()
    service = SyphonService(_options(), syphon_factory=syphon, credential_factory=lambda: credential)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        if wait_for_loop:
            await asyncio.wait_for(service.started.wait(), guard(WAIT))
        else:
            await asyncio.wait_for(service.listening.wait(), guard(WAIT))
        yield service, stop, task
    finally:
        stop.set()
        if syphon.enter_gate is not None:
            syphon.enter_gate.set()
        await asyncio.wait_for(task, guard(WAIT))
    assert credential.closed


async def _get(service: SyphonService, path: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{service.port}{path}") as response:
        return response.status, response.headers["Content-Type"], await response.text()


# --- /healthz ---------------------------------------------------------------------------------


async def test_healthz_is_200_while_the_loop_runs_with_clients_open() -> None:
    syphon = FakeSyphon()
    async with running(syphon) as (service, _, _):
        status, _, body = await _get(service, "/healthz")
    assert status == 200
    assert json.loads(body) == {"status": "ok"}


async def test_healthz_is_503_when_a_client_has_closed() -> None:
    syphon = FakeSyphon()
    async with running(syphon) as (service, _, _):
        syphon.clients_open = False
        status, _, _ = await _get(service, "/healthz")
    assert status == 503


async def test_healthz_is_503_until_the_syphon_has_opened_its_clients() -> None:
    syphon = FakeSyphon()
    syphon.enter_gate = asyncio.Event()
    async with running(syphon, wait_for_loop=False) as (service, _, _):
        status, _, _ = await _get(service, "/healthz")
    assert status == 503


async def test_healthz_is_503_once_the_loop_has_returned() -> None:
    syphon = FakeSyphon(in_flight=0)
    async with running(syphon) as (service, stop, task):
        stop.set()
        await asyncio.wait_for(asyncio.shield(task), guard(WAIT))
        assert not service.healthy()


# --- /metrics ---------------------------------------------------------------------------------


async def test_metrics_expose_the_syphon_counters_in_prometheus_text_format() -> None:
    syphon = FakeSyphon()
    syphon.stats = SyphonStats(
        moved=7,
        dead_lettered=2,
        dead_letter_reasons=Counter({"SendRejected": 1, "DestinationNotFound": 1}),
        dropped_pings=5,
        left_locked=6,
        retries=8,
        errors=Counter({"ServiceBusConnectionError": 3, "ClientAuthenticationError": 1}),
        backlog_depth={"contoso/x-servicebus-transfer/0": 4, "contoso/x-servicebus-transfer/1": 0},
    )
    syphon.in_flight = 9
    async with running(syphon) as (service, _, _):
        status, content_type, body = await _get(service, "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }
    assert samples[("pairedbus_syphon_up", ())] == 1
    assert samples[("pairedbus_syphon_messages_moved_total", ())] == 7
    assert samples[("pairedbus_syphon_messages_dead_lettered_total", ())] == 2
    # One alertable series per reason: each is a message its sender was told was sent.
    assert samples[("pairedbus_syphon_dead_letters_total", (("reason", "SendRejected"),))] == 1
    assert samples[("pairedbus_syphon_dead_letters_total", (("reason", "DestinationNotFound"),))] == 1
    assert samples[("pairedbus_syphon_pings_dropped_total", ())] == 5
    assert samples[("pairedbus_syphon_messages_left_locked_total", ())] == 6
    assert samples[("pairedbus_syphon_send_retries_total", ())] == 8
    assert samples[("pairedbus_syphon_in_flight", ())] == 9
    assert samples[("pairedbus_syphon_errors_total", (("kind", "ServiceBusConnectionError"),))] == 3
    assert samples[("pairedbus_syphon_errors_total", (("kind", "ClientAuthenticationError"),))] == 1
    assert samples[("pairedbus_syphon_backlog_depth", (("queue", "contoso/x-servicebus-transfer/0"),))] == 4
    assert samples[("pairedbus_syphon_backlog_depth", (("queue", "contoso/x-servicebus-transfer/1"),))] == 0


async def test_metrics_before_the_syphon_exists_report_it_down() -> None:
    syphon = FakeSyphon()
    syphon.enter_gate = asyncio.Event()
    async with running(syphon, wait_for_loop=False) as (service, _, _):
        _, _, body = await _get(service, "/metrics")
    assert "pairedbus_syphon_up 0.0" in body


# --- Stop, fault, exit codes --------------------------------------------------------------------


async def test_stop_request_lets_in_flight_messages_settle_then_exits_zero() -> None:
    syphon = FakeSyphon(in_flight=3)
    credential = FakeCredential()
    service = SyphonService(_options(), syphon_factory=syphon, credential_factory=lambda: credential)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(syphon.running.wait(), guard(WAIT))
    stop.set()
    assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_STOPPED
    assert syphon.stats.moved == 3
    assert syphon.events[-2:] == ["run returned", "close"]
    assert sorted(syphon.events[1:4]) == ["settled 0", "settled 1", "settled 2"]
    assert credential.closed
    assert syphon.kwargs == {"primary": PRIMARY, "secondary": SECONDARY, "credential": credential}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_sigterm_or_sigint_requests_a_graceful_stop_and_exits_zero(signum: signal.Signals) -> None:
    syphon = FakeSyphon(in_flight=2)
    before = signal.getsignal(signum)
    task = asyncio.create_task(serve(_options(), syphon_factory=syphon, credential_factory=FakeCredential))
    await asyncio.wait_for(syphon.running.wait(), guard(WAIT))  # serve() installed its handlers before this
    os.kill(os.getpid(), signum)
    assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_STOPPED
    assert syphon.stats.moved == 2
    assert signal.getsignal(signum) == before  # the process's own handler is back


async def test_syphon_fault_exits_non_zero() -> None:
    syphon = FakeSyphon(fault=SyphonFaulted("secondary", partner_followed=False, cause="was closed"))
    service = SyphonService(_options(), syphon_factory=syphon, credential_factory=FakeCredential)
    assert await asyncio.wait_for(service.run(asyncio.Event()), guard(WAIT)) == EXIT_FAILED
    assert syphon.events == ["open", "close"]


async def test_loop_that_ends_without_a_stop_request_exits_non_zero() -> None:
    syphon = FakeSyphon(ends_alone=True)
    service = SyphonService(_options(), syphon_factory=syphon, credential_factory=FakeCredential)
    assert await asyncio.wait_for(service.run(asyncio.Event()), guard(WAIT)) == EXIT_FAILED


async def test_port_in_use_is_a_one_line_user_error() -> None:
    syphon = FakeSyphon()
    async with running(syphon) as (busy, _, _):
        service = SyphonService(
            _options(port=busy.port), syphon_factory=FakeSyphon(), credential_factory=FakeCredential
        )
        with pytest.raises(UserError, match=r"^--port: cannot listen on 127\.0\.0\.1:\d+") as error:
            await service.run(asyncio.Event())
    assert "\n" not in str(error.value)


def test_run_service_maps_a_crash_to_a_non_zero_exit_with_a_json_log_line(capsys: pytest.CaptureFixture[str]) -> None:
    class Boom(Exception):
        pass

    syphon = FakeSyphon(fault=Boom("link detached"))
    code = syphon_service.run_service(_options(), syphon_factory=syphon, credential_factory=FakeCredential)
    assert code == EXIT_FAILED
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    (crash,) = [entry for entry in lines if entry["message"] == "syphon service failed"]
    assert crash["level"] == "ERROR" and "link detached" in crash["exception"]


# --- JSON logs --------------------------------------------------------------------------------


async def test_every_log_line_is_one_json_object_with_time_level_logger_message() -> None:
    stream = io.StringIO()
    configure_json_logging("INFO", stream=stream)
    syphon = FakeSyphon(in_flight=1)
    async with running(syphon) as (service, stop, task):
        stop.set()
        await asyncio.wait_for(asyncio.shield(task), guard(WAIT))
    entries = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert entries, "the service logged nothing"
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= set(entry)
    listening = next(e for e in entries if e["message"] == "syphon service listening")
    assert listening["primary"] == PRIMARY and listening["port"] == service.port
    stopped = next(e for e in entries if e["message"] == "syphon service stopped")
    assert stopped["moved"] == 1


def test_credential_uses_the_user_assigned_identity_named_by_azure_client_id(
    monkeypatch: pytest.MonkeyPatch, mocker: Any
) -> None:
    monkeypatch.setenv(ENV_AZURE_CLIENT_ID, "33333333-3333-3333-3333-333333333333")
    credential_class = mocker.patch("azure.identity.aio.DefaultAzureCredential")
    syphon_service.default_credential()
    credential_class.assert_called_once_with(managed_identity_client_id="33333333-3333-3333-3333-333333333333")


# --- End to end on the Service Bus fake ---------------------------------------------------------


@dataclass
class FakePair:
    """The real Syphon on the Service Bus fake: primary queue `orders`, two backlog queues."""

    world: ServiceBusWorld
    made: list[Syphon] = field(default_factory=list)

    def syphon_factory(self, **kwargs: Any) -> Syphon:
        assert (kwargs["primary"], kwargs["secondary"]) == (helpers.PRIMARY, helpers.SECONDARY)
        self.made.append(helpers.make_syphon(self.world))
        return self.made[-1]

    def service(self, **overrides: Any) -> SyphonService:
        options = ServiceOptions(
            primary=helpers.PRIMARY, secondary=helpers.SECONDARY, host="127.0.0.1", port=0, **overrides
        )
        return SyphonService(
            options, syphon_factory=self.syphon_factory, credential_factory=FakeCredential, clock=self.clock
        )

    #: Seconds added to the monotonic clock the service judges liveness by (moved by the test).
    skew: float = 0.0

    def clock(self) -> float:
        return time.monotonic() + self.skew


@pytest.fixture
def fake_pair(servicebus_world: ServiceBusWorld) -> FakePair:
    world = servicebus_world
    world.namespace(helpers.PRIMARY).create_queue("orders")
    helpers.create_backlog_queues(world, 2)
    return FakePair(world)


async def test_service_moves_parked_messages_reports_them_and_stops_cleanly(fake_pair: FakePair) -> None:
    orders = fake_pair.world.namespace(helpers.PRIMARY).queue("orders")
    await helpers.park("orders", ServiceBusMessage("a"), ServiceBusMessage("b"), backlog=1)
    service = fake_pair.service()
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    await asyncio.wait_for(service.started.wait(), guard(WAIT))
    await helpers.eventually(lambda: orders.message_counts()["active"] == 2)
    await helpers.eventually(lambda: (service.stats() or SyphonStats()).moved == 2)
    status, _, _ = await _get(service, "/healthz")
    _, _, body = await _get(service, "/metrics")
    stop.set()
    assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_STOPPED
    assert status == 200
    samples = {
        (s.name, tuple(s.labels.values())): s.value for f in text_string_to_metric_families(body) for s in f.samples
    }
    assert samples[("pairedbus_syphon_messages_moved_total", ())] == 2
    assert ("pairedbus_syphon_backlog_depth", (contract.backlog_queue_name(helpers.PRIMARY_NAME, 1),)) in samples
    assert helpers.backlog_depth(fake_pair.world) == 0


async def test_service_exits_non_zero_when_a_namespace_connection_faults(fake_pair: FakePair) -> None:
    service = fake_pair.service()
    task = asyncio.create_task(service.run(asyncio.Event()))
    await asyncio.wait_for(service.started.wait(), guard(WAIT))
    fake_pair.made[0].report_fault("secondary", "faulted")
    assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_FAILED
    assert not service.healthy()


# --- liveness and readiness ------------------------------------------------------------------


async def _samples(service: SyphonService) -> dict[tuple[str, tuple[str, ...]], float]:
    _, _, body = await _get(service, "/metrics")
    return {
        (s.name, tuple(s.labels.values())): s.value for f in text_string_to_metric_families(body) for s in f.samples
    }


async def test_without_a_usable_credential_liveness_fails_after_the_grace_and_recovers(fake_pair: FakePair) -> None:
    from azure.servicebus.exceptions import ServiceBusAuthenticationError

    for namespace in (helpers.PRIMARY, helpers.SECONDARY):
        fake_pair.world.fail(namespace, error=ServiceBusAuthenticationError)
    service = fake_pair.service(unfixable_after=60, stall_after=120)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        await asyncio.wait_for(service.started.wait(), guard(WAIT))
        await helpers.eventually(lambda: (service.stats() or SyphonStats()).unfixable_since is not None)
        assert (await _get(service, "/livez"))[0] == 200  # not yet sustained
        assert (await _get(service, "/readyz"))[0] == 503  # but not ready
        fake_pair.skew = 61  # a minute of nothing but authentication failures
        status, _, body = await _get(service, "/livez")
        assert status == 503
        assert "ServiceBusAuthenticationError" in json.loads(body)["problem"]
        assert (await _get(service, "/healthz"))[0] == 503
        samples = await _samples(service)
        assert samples[("pairedbus_syphon_up", ())] == 0 and samples[("pairedbus_syphon_live", ())] == 0
        fake_pair.world.heal_all()  # the role assignment arrived
        await helpers.eventually(lambda: (service.stats() or SyphonStats()).unfixable_since is None)
        assert (await _get(service, "/livez"))[0] == 200
        assert (await _get(service, "/readyz"))[0] == 200
    finally:
        stop.set()
        assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_STOPPED


async def test_liveness_fails_when_nothing_moves_for_the_stall_timeout_with_work_waiting(fake_pair: FakePair) -> None:
    await helpers.park("orders", ServiceBusMessage("stuck"), backlog=0)
    # Receives that never come back within the test (a wedged link); listings still work.
    fake_pair.world.namespace(helpers.SECONDARY).latency = 3600
    service = fake_pair.service(stall_after=120)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        await asyncio.wait_for(service.started.wait(), guard(WAIT))
        await helpers.eventually(lambda: (service.stats() or SyphonStats()).listed)
        assert (await _get(service, "/livez"))[0] == 200
        fake_pair.skew = 121
        status, _, body = await _get(service, "/livez")
        assert status == 503 and "no progress" in json.loads(body)["problem"]
    finally:
        stop.set()
        assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_STOPPED


async def test_an_idle_syphon_with_an_empty_backlog_stays_live(fake_pair: FakePair) -> None:
    service = fake_pair.service(stall_after=120)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        await asyncio.wait_for(service.started.wait(), guard(WAIT))
        await helpers.eventually(lambda: (service.stats() or SyphonStats()).listed)
        fake_pair.skew = 3600  # an hour of long polls that found nothing
        assert (await _get(service, "/livez"))[0] == 200
        assert (await _get(service, "/readyz"))[0] == 200
    finally:
        stop.set()
        assert await asyncio.wait_for(task, guard(WAIT)) == EXIT_STOPPED
