"""The receive plan (issue 24): a queue listed with work starts at full size, an empty one idle."""

from __future__ import annotations

import pytest

from pairedbus.syphon.receive_plan import ReceivePlan, RestOfReceive, receivers_ahead


@pytest.mark.parametrize(
    ("depth", "receivers"),
    [(1, 1), (500, 1), (501, 2), (1_000, 2), (1_600, 4), (2_000, 4), (100_000, 4)],
)
def test_a_listed_queue_warrants_one_receiver_per_batch_of_its_depth_up_to_the_most(depth: int, receivers: int) -> None:
    assert ReceivePlan(depth).receivers(batch_size=500, most=4) == receivers


def test_a_queue_listed_empty_starts_idle_and_leaves_the_ramp_to_full_receives() -> None:
    plan = ReceivePlan(0)

    assert not plan.starts_busy
    assert plan.receivers(batch_size=500, most=4) == 4  # the ramp's ceiling, reached one full receive at a time
    assert plan.receive_size(batch_size=500, receivers=1) == 500  # the budget's probe rule cuts it
    assert plan.received(16, 16) is True  # a full probe: busy
    assert plan.received(3, 16) is False  # a short one: idle


def test_a_negative_depth_counts_as_nothing_listed() -> None:
    assert ReceivePlan(-5).expected == 0


@pytest.mark.parametrize(
    ("depth", "receivers", "size"),
    [(20, 1, 20), (1_000, 2, 500), (600, 2, 300), (601, 2, 301), (10_000, 4, 500), (3, 4, 1)],
)
def test_each_receiver_asks_for_its_share_of_the_depth_at_most_a_batch(depth: int, receivers: int, size: int) -> None:
    plan = ReceivePlan(depth)

    assert plan.starts_busy
    assert plan.receive_size(batch_size=500, receivers=receivers) == size


def test_short_receives_stay_busy_until_the_listed_depth_is_received_then_a_probe_follows() -> None:
    plan = ReceivePlan(1_000)

    assert plan.received(300, 500) is True  # short, but 700 more are listed
    assert plan.expected == 700
    assert plan.receivers(batch_size=500, most=4) == 2
    assert plan.received(500, 500) is True
    assert plan.receive_size(batch_size=500, receivers=2) == 100  # two receivers share the last 200
    assert plan.received(200, 200) is False  # everything listed arrived: probe before asking for more
    assert plan.expected == 0
    assert plan.received(16, 16) is True  # more arrived meanwhile: the ramp takes over


def test_more_than_listed_in_one_receive_counts_nothing_as_still_expected() -> None:
    plan = ReceivePlan(10)

    assert plan.received(50, 50) is False
    assert plan.expected == 0


def test_an_empty_receive_means_the_listing_was_stale() -> None:
    plan = ReceivePlan(400)  # e.g. messages another receiver holds locked count as active

    assert plan.received(0, 400) is False
    assert plan.expected == 0
    assert not plan.starts_busy


def test_a_queue_counts_as_emptied_once_its_listed_depth_arrived_and_a_receive_then_found_nothing() -> None:
    plan = ReceivePlan(30)

    assert plan.received(20, 30) is True
    assert not plan.emptied
    assert plan.received(10, 10) is False
    assert not plan.emptied  # everything listed arrived, but nobody has looked since
    assert plan.received(0, 16) is False
    assert plan.emptied
    assert plan.received_count == 30


def test_a_queue_whose_listed_messages_never_came_is_not_emptied() -> None:
    plan = ReceivePlan(3)  # one of them is locked by another receiver

    plan.received(2, 3)
    plan.received(0, 1)

    assert not plan.emptied
    assert plan.received_count == 2


def test_a_queue_listed_empty_is_emptied_by_its_first_empty_receive() -> None:
    plan = ReceivePlan(0)

    assert not plan.emptied
    plan.received(0, 16)
    assert plan.emptied


@pytest.mark.parametrize(
    ("queues", "capacity", "ahead"),
    [(1, 2_000, 4), (2, 2_000, 2), (3, 2_000, 2), (4, 2_000, 1), (10, 2_000, 1), (50, 2_000, 1), (1, 100, 1)],
)
def test_receivers_opened_ahead_are_a_named_queues_share_as_if_every_one_had_work(
    queues: int, capacity: int, ahead: int
) -> None:
    assert receivers_ahead(queues=queues, capacity=capacity, batch_size=500, most=4) == ahead


def test_a_short_receive_of_listed_messages_is_followed_by_its_rest_until_a_rest_brings_nothing() -> None:
    def rest(expected: int, *, is_rest: bool = False) -> RestOfReceive:
        return RestOfReceive(ReceivePlan(expected), is_rest=is_rest)

    assert rest(1_000).follows(asked=500, received=300)
    assert rest(1_000).follows(asked=500, received=0)  # its transfers may all be on their way
    assert rest(700, is_rest=True).follows(asked=200, received=50)
    assert not rest(700, is_rest=True).follows(asked=200, received=0)  # a rest that brought nothing ends it
    assert not rest(1_000).follows(asked=500, received=500)  # a full receive leaves no credit
    assert not rest(120).follows(asked=250, received=120)  # the last ones expected: the rest is another's
    assert not rest(0).follows(asked=16, received=3)  # a probe: as before


def test_whether_a_rest_follows_is_decided_once() -> None:
    """The receive keeps its credit or takes it back on the first answer, and the pump carries the slots on the
    second: another receiver of the queue counting its messages in between must not split them."""
    plan = ReceivePlan(1_000)
    rest = RestOfReceive(plan, is_rest=False)

    assert rest.follows(asked=500, received=300)
    plan.received(700, 700)  # another receiver's receive, counted meanwhile: none expected now
    assert rest.follows(asked=500, received=300)
