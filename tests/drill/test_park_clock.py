"""The park clock: per outage, the seconds to the first message a failover of its own parked, or why
there is no such figure (issue 34: 9 of 10 outages of the harsh wire drill had a silent null)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pairedbus.drill.park_clock import ParkClock, ParkOutcome
from pairedbus.drill.scenario import drill_entities


@dataclass
class Stats:
    failovers: int = 0
    parked_messages: int = 0


@dataclass
class Client:
    """What the clock reads of a PairedNamespaceClient: its counters and which entities are switched."""

    stats: Stats = field(default_factory=Stats)
    switched: set[str] = field(default_factory=set)

    def is_switched(self, name: str, *, topic: bool = False) -> bool:
        return name in self.switched

    def fail_over(self, entity: str) -> None:
        self.switched.add(entity)
        self.stats.failovers += 1

    def park(self, count: int = 1) -> None:
        self.stats.parked_messages += count


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


ENTITIES = drill_entities(3)
QUEUE = ENTITIES[1].name


def clock_of(*clients: Client) -> tuple[ParkClock, Clock]:
    clock = Clock()
    clients_: Any = list(clients)
    return ParkClock(clients_, ENTITIES, clock=clock), clock


def test_a_failover_and_its_park_are_timed_though_no_send_returned_before_the_next_outage():
    # The wire drill's outages began 0.5 s apart, before any send returned: the clock that looked only
    # when a send returned gave it null.
    a = Client()
    park_clock, clock = clock_of(a, Client())
    park_clock.outage_began()  # at 100.0
    clock.now = 100.1
    a.fail_over(QUEUE)
    park_clock.observe()
    clock.now = 100.2
    park_clock.outage_ended()
    clock.now = 100.4
    a.park()
    park_clock.observe()
    clock.now = 100.5
    park_clock.outage_began()
    clock.now = 101.4
    park_clock.observe()
    first = park_clock.outages[0]
    assert first.outcome is ParkOutcome.FAILED_OVER
    assert round(first.failed_over_seconds or 0, 3) == 0.1
    assert round(first.first_parked_seconds or 0, 3) == 0.4
    assert round(first.lasted_seconds or 0, 3) == 0.2
    assert park_clock.first_parked[0] is not None and round(park_clock.first_parked[0], 3) == 0.4


def test_parks_of_a_sender_still_switched_since_the_last_outage_are_not_the_next_outage_s():
    # The sender never went back to the primary: its sends park without a failover, so the outage has
    # no figure of its own, and the report says why (the old clock gave the first such park's time).
    a = Client()
    park_clock, clock = clock_of(a)
    park_clock.outage_began()
    a.fail_over(QUEUE)
    a.park()
    park_clock.observe()
    clock.now = 102.0
    park_clock.outage_began()
    clock.now = 102.1
    a.park(5)
    park_clock.observe()
    second = park_clock.outages[1]
    assert second.switched_at_start == 1
    assert second.outcome is ParkOutcome.ALREADY_FAILED_OVER
    assert second.failed_over_seconds is None and second.first_parked_seconds is None
    assert park_clock.first_parked == [0.0, None]


def test_a_park_after_the_failover_is_timed_not_one_of_an_entity_already_switched():
    a = Client(switched={ENTITIES[0].name})
    park_clock, clock = clock_of(a)
    park_clock.outage_began()
    clock.now = 100.1
    a.park()  # the entity switched before the outage: not this outage's
    park_clock.observe()
    clock.now = 101.0
    a.fail_over(QUEUE)
    park_clock.observe()
    clock.now = 101.5
    a.park()
    park_clock.observe()
    only = park_clock.outages[0]
    assert only.switched_at_start == 1
    assert only.outcome is ParkOutcome.FAILED_OVER
    assert (round(only.failed_over_seconds or 0, 3), round(only.first_parked_seconds or 0, 3)) == (1.0, 1.5)


def test_an_outage_with_no_failover_before_the_next_says_so_and_the_next_one_s_figure_is_withheld():
    # The SDK's retries outlast a short outage: the failover that comes after the next outage began
    # may be for either, so neither gets a figure.
    a = Client()
    park_clock, clock = clock_of(a)
    park_clock.outage_began()
    clock.now = 100.5
    park_clock.outage_began()
    clock.now = 100.7
    a.fail_over(QUEUE)
    a.park()
    park_clock.observe()
    first, second = park_clock.outages
    assert first.outcome is ParkOutcome.NO_FAILOVER
    assert second.outcome is ParkOutcome.FAILED_OVER_AFTER_AN_EARLIER_OUTAGE
    assert round(second.first_parked_seconds or 0, 3) == 0.2  # kept in the outage's record
    assert park_clock.first_parked == [None, None]


def test_a_failover_of_the_other_client_is_timed_by_that_client_s_park():
    a, b = Client(), Client()
    park_clock, clock = clock_of(a, b)
    park_clock.outage_began()
    clock.now = 100.3
    b.fail_over(QUEUE)
    park_clock.observe()
    clock.now = 100.6
    a.park()  # not the client that failed over
    park_clock.observe()
    assert park_clock.outages[0].first_parked_seconds is None
    clock.now = 100.9
    b.park()
    park_clock.observe()
    assert round(park_clock.outages[0].first_parked_seconds or 0, 3) == 0.9


def test_a_park_that_comes_after_the_next_outage_began_still_ends_the_first_one_s_figure():
    a = Client()
    park_clock, clock = clock_of(a)
    park_clock.outage_began()
    clock.now = 100.2
    a.fail_over(QUEUE)
    park_clock.observe()
    clock.now = 100.5
    park_clock.outage_began()
    clock.now = 103.0
    a.park()
    park_clock.observe()
    first, second = park_clock.outages
    assert round(first.first_parked_seconds or 0, 3) == 3.0
    assert second.outcome is ParkOutcome.ALREADY_FAILED_OVER


def test_a_failover_after_the_primary_was_back_gets_no_figure():
    # The 200-message harsh wire run's last outage: back after 9.3 s, a failover 14.2 s after its start
    # (a busy answer of the healthy primary, or a retry of a call that failed in it: the clock cannot
    # tell), and the figure was given as the outage's (17.5 s).
    a = Client()
    park_clock, clock = clock_of(a)
    park_clock.outage_began()
    clock.now = 109.3
    park_clock.outage_ended()
    clock.now = 114.2
    a.fail_over(QUEUE)
    a.park()
    park_clock.observe()
    only = park_clock.outages[0]
    assert only.outcome is ParkOutcome.FAILED_OVER_AFTER_THE_PRIMARY_WAS_BACK
    assert round(only.first_parked_seconds or 0, 3) == 14.2  # kept in the outage's record
    assert park_clock.first_parked == [None]
