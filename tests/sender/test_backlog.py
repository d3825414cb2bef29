"""The backlog rotation: random picks, queues leaving after a failure and coming back, queues
missing at open never picked."""

import random
from collections import Counter

import pytest

from pairedbus import contract
from pairedbus.sender.backlog import BacklogRotation
from pairedbus.sender.errors import BACKLOG_HOP_NOTE, raised_by_backlog

QUEUES = contract.backlog_queue_names("contoso", 4)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_picks_are_random_and_spread_over_every_queue():
    rotation = BacklogRotation(QUEUES, rng=random.Random(7))
    counts = Counter(rotation.pick() for _ in range(4000))
    assert set(counts) == set(QUEUES)
    assert min(counts.values()) > 800


def test_a_queue_taken_out_is_not_picked_until_its_retry_interval_passed():
    clock = Clock()
    rotation = BacklogRotation(QUEUES, rng=random.Random(1), retry_after=30, clock=clock)
    rotation.take_out(QUEUES[2])
    assert QUEUES[2] not in rotation
    assert {rotation.pick() for _ in range(500)} == {QUEUES[0], QUEUES[1], QUEUES[3]}
    assert rotation.removals == 1
    clock.now = 29.9
    assert QUEUES[2] not in rotation
    clock.now = 30
    assert QUEUES[2] in rotation  # it recovered: it comes back


def test_pick_excludes_what_was_tried():
    rotation = BacklogRotation(QUEUES, rng=random.Random(1))
    assert rotation.pick(exclude=set(QUEUES[:3])) == QUEUES[3]
    assert rotation.pick(exclude=set(QUEUES)) is None


def test_when_every_queue_is_out_nothing_is_picked():
    rotation = BacklogRotation(QUEUES[:2], rng=random.Random(1), clock=Clock())
    rotation.take_out(QUEUES[0])
    rotation.take_out(QUEUES[1])
    assert rotation.in_rotation() == ()
    assert rotation.pick() is None


def test_queues_missing_at_discovery_are_never_picked():
    rotation = BacklogRotation(QUEUES, rng=random.Random(3))
    missing = rotation.set_existing([*QUEUES[:2], contract.backlog_queue_name("contoso", 7)])
    assert missing == {QUEUES[2], QUEUES[3]}
    assert {rotation.pick() for _ in range(300)} == set(QUEUES[:2])


def test_an_empty_rotation_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        BacklogRotation([])


# --- on the fake: a client's backlog sends -----------------------------------------------------

from azure.servicebus import ServiceBusMessage  # noqa: E402
from azure.servicebus.exceptions import (  # noqa: E402
    MessagingEntityDisabledError,
    MessagingEntityNotFoundError,
    ServiceBusAuthorizationError,
    ServiceBusCommunicationError,
    ServiceBusError,
    ServiceBusQuotaExceededError,
    ServiceBusServerBusyError,
)

from .conftest import BACKLOG, PRIMARY, QUEUE, SECONDARY, backlog_messages, parked  # noqa: E402


@pytest.mark.parametrize(
    "error",
    [
        ServiceBusQuotaExceededError,  # a full backlog queue
        MessagingEntityNotFoundError,  # a missing one
        ServiceBusAuthorizationError,  # a refused one
        MessagingEntityDisabledError,
        ServiceBusServerBusyError,
    ],
)
async def test_any_failed_backlog_send_moves_the_message_to_another_queue(world, make_client, error):
    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        bad = sender.backlog_queue
        world.fail(SECONDARY, bad, error)
        await sender.send_messages(ServiceBusMessage(b"parked anyway"))
        assert bad not in client.rotation
        assert sender.backlog_queue != bad
    backlog = backlog_messages(world)
    assert backlog[bad] == [] and len(parked(world)) == 1
    assert client.stats.backlog_send_failures == 1


async def test_missing_backlog_queues_are_learned_at_open_and_never_picked(world, make_client, caplog):
    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    # Six configured, four exist: a sender that picked index 4 or 5 used to fail every parked send.
    async with make_client(failover_interval=0, backlog_queue_count=6, seed=5) as client:
        assert client.stats.backlog_queues_missing == 2
        assert set(client.rotation.in_rotation()) == set(BACKLOG)
        senders = [client.get_queue_sender(QUEUE) for _ in range(40)]
        assert {s.backlog_queue for s in senders} <= set(BACKLOG)
        for sender in senders:
            await sender.send_messages(ServiceBusMessage(b"x"))
        assert client.stats.backlog_send_failures == 0
    assert len(parked(world)) == 40
    assert "2 of 6 backlog queues do not exist" in caplog.text


def test_removals_count_each_queue_taken_out_once_while_it_is_out():
    clock = Clock()
    rotation = BacklogRotation(QUEUES, rng=random.Random(1), retry_after=30, clock=clock)
    rotation.take_out(QUEUES[0])
    rotation.take_out(QUEUES[1])
    rotation.take_out(QUEUES[1])  # already out: its retry time moves, no new removal
    assert rotation.removals == 2
    clock.now = 31
    assert rotation.in_rotation() == tuple(QUEUES)
    rotation.take_out(QUEUES[1])
    rotation.take_out(QUEUES[2])
    assert rotation.removals == 4


async def test_with_no_backlog_queue_at_all_a_failed_over_send_says_none_was_tried_and_how_many_are_out(
    world, make_client
):
    from azure.servicebus import ServiceBusMessage
    from azure.servicebus.exceptions import ServiceBusCommunicationError

    from pairedbus.sender.errors import NoBacklogQueueError

    from .conftest import BACKLOG, PRIMARY, QUEUE, SECONDARY

    for name in BACKLOG:
        world.namespace(SECONDARY).delete(name)
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        with pytest.raises(NoBacklogQueueError) as caught:
            await client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage(b"nowhere"))
    assert str(caught.value) == "no backlog queue could take the message (none tried; 4 out of the rotation)"
    assert caught.value.failures == []
    # the caller (and the drill's report) can tell the backlog's failure from the primary's
    assert raised_by_backlog(caught.value)
    assert BACKLOG_HOP_NOTE in caught.value.__notes__


async def test_the_primary_s_own_error_is_not_marked_as_the_backlog_s(world, make_client):
    from azure.servicebus import ServiceBusMessage
    from azure.servicebus.exceptions import MessageSizeExceededError

    from .conftest import PRIMARY, QUEUE

    world.fail(PRIMARY, QUEUE, MessageSizeExceededError)
    async with make_client(failover_interval=0) as client:
        with pytest.raises(MessageSizeExceededError) as caught:
            await client.get_queue_sender(QUEUE).send_messages(ServiceBusMessage(b"too big"))
    assert not raised_by_backlog(caught.value)


@pytest.mark.parametrize(
    "error",
    [
        ServiceBusError("Handler failed: 'NoneType' object has no attribute 'create_sender_link'."),
        AttributeError("'NoneType' object has no attribute 'end'"),
    ],
    ids=["handler-failed", "pyamqp"],
)
async def test_a_backlog_send_whose_secondary_was_closed_under_it_goes_again_on_the_fresh_connection(
    world, make_client, monkeypatch, error
):
    # Over the wire (the wire drill, two outages): the close/fault rule faulted the secondary while
    # parked sends were under way, and the SDK raised what pyamqp tripped on, not a connection
    # error: each such send reached the caller (176 of 200 sends).
    from datetime import timedelta

    from pairedbus.testing.sender import ServiceBusSender

    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    healthy = ServiceBusSender.send_messages
    client = make_client(failover_interval=0, reconnect_backoff=timedelta(milliseconds=10))
    cut = []

    async def closed_under_the_first(self, message, **kwargs):
        if self.fully_qualified_namespace == SECONDARY and not cut:
            cut.append(True)
            await client.connections.client("secondary").close()  # the rule faults it mid-send
            raise error
        await healthy(self, message, **kwargs)

    monkeypatch.setattr(ServiceBusSender, "send_messages", closed_under_the_first)
    async with client:
        sender = client.get_queue_sender(QUEUE)
        queue = sender.backlog_queue
        await sender.send_messages(ServiceBusMessage(b"parked"))
        assert cut and client.stats.backlog_send_failures == 0
    assert [b"".join(m.body) for m in backlog_messages(world)[queue]] == [b"parked"]


async def test_senders_parking_at_once_open_the_shared_backlog_sender_once(world, make_client, monkeypatch):
    # Every sender of a client parks through one SDK sender per backlog queue, and the SDK's aio
    # sender cannot be opened by two tasks at once: over the wire the others raised ServiceBusError
    # ("Handler failed: 'NoneType' object has no attribute 'create_sender_link'") to the caller (the
    # wire drill, after each replacement of the secondary). Here the fake's sender opens as the SDK's
    # does: a second call while the first opens fails so.
    import asyncio
    import weakref

    from pairedbus.testing.sender import ServiceBusSender

    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    state: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
    healthy_send, healthy_batch = ServiceBusSender.send_messages, ServiceBusSender.create_message_batch

    async def open_as_the_sdk(self) -> None:
        if self.fully_qualified_namespace != SECONDARY or state.get(self) == "open":
            return
        if state.get(self) == "opening":
            raise ServiceBusError("Handler failed: 'NoneType' object has no attribute 'create_sender_link'.")
        state[self] = "opening"
        await asyncio.sleep(0.01)
        state[self] = "open"

    async def send(self, message, **kwargs):
        await open_as_the_sdk(self)
        await healthy_send(self, message, **kwargs)

    async def batch(self, *args, **kwargs):
        await open_as_the_sdk(self)
        return await healthy_batch(self, *args, **kwargs)

    monkeypatch.setattr(ServiceBusSender, "send_messages", send)
    monkeypatch.setattr(ServiceBusSender, "create_message_batch", batch)
    async with make_client(failover_interval=0, backlog_queue_count=1) as client:
        senders = [client.get_queue_sender(QUEUE) for _ in range(8)]
        await asyncio.gather(*(s.send_messages(ServiceBusMessage(b"x")) for s in senders))
        assert client.stats.backlog_send_failures == 0
    assert len(backlog_messages(world)[BACKLOG[0]]) == 8


async def test_senders_parking_at_once_never_overlap_their_sends_on_the_shared_backlog_sender(
    world, make_client, monkeypatch
):
    # The SDK's aio sender loses track of sends that overlap on it (azure-servicebus 7.15.0: sends
    # transferred twice, others never returning; Azure/azure-sdk-for-python#36334; the syphon's
    # 10-queue wire drain stalled so). Every sender of a client parks through one SDK sender per
    # backlog queue: its sends take turns. Here a backlog send that overlaps another fails.
    import asyncio

    from pairedbus.testing.sender import ServiceBusSender

    world.fail(PRIMARY, error=ServiceBusCommunicationError)
    healthy_send = ServiceBusSender.send_messages
    busy: set[object] = set()

    async def send_as_the_sdk_allows(self, message, **kwargs):
        if self.fully_qualified_namespace == SECONDARY:
            assert self not in busy, "two sends overlapped on one SDK sender"
            busy.add(self)
            try:
                await asyncio.sleep(0.005)
                await healthy_send(self, message, **kwargs)
            finally:
                busy.discard(self)
        else:
            await healthy_send(self, message, **kwargs)

    monkeypatch.setattr(ServiceBusSender, "send_messages", send_as_the_sdk_allows)
    async with make_client(failover_interval=0, backlog_queue_count=1) as client:
        senders = [client.get_queue_sender(QUEUE) for _ in range(8)]
        await asyncio.gather(*(s.send_messages(ServiceBusMessage(b"x")) for s in senders))
        assert client.stats.backlog_send_failures == 0
    assert len(backlog_messages(world)[BACKLOG[0]]) == 8


async def test_a_backlog_sender_the_sdk_shut_down_is_replaced_by_a_fresh_one(world, make_client, monkeypatch):
    # Over the wire (default drill, seed 3): after an error of its own the SDK shut the shared backlog
    # sender down and every later park through it raised ValueError ("The handler has already been
    # shutdown") to the caller: 20 send failures, the secondary's connection fine all along.
    from azure.servicebus import ServiceBusMessage
    from azure.servicebus.exceptions import ServiceBusCommunicationError

    from pairedbus.testing import sender as fake_sender

    from .conftest import PRIMARY, QUEUE, SECONDARY, parked

    real_send = fake_sender.ServiceBusSender.send_messages
    dead: list[object] = []

    async def send(self, message, *, timeout=None, **kwargs):  # noqa: ASYNC109 (the SDK signature)
        if self.fully_qualified_namespace == SECONDARY and (not dead or self in dead):
            dead.append(self)
            raise ValueError(
                "The handler has already been shutdown. Please use ServiceBusClient to create a new instance."
            )
        return await real_send(self, message, timeout=timeout, **kwargs)

    monkeypatch.setattr(fake_sender.ServiceBusSender, "send_messages", send)
    world.fail(PRIMARY, QUEUE, ServiceBusCommunicationError)
    async with make_client(failover_interval=0) as client:
        sender = client.get_queue_sender(QUEUE)
        for i in range(3):
            await sender.send_messages(ServiceBusMessage(f"parked-{i}".encode()))
        assert client.stats.handlers_renewed == 1 and client.stats.backlog_send_failures == 0
    assert len(parked(world)) == 3
