"""The close/fault rule of a connection pair (paired-namespaces.md, "Close/fault behaviour"), with the
reaction as a parameter: the rule is the same for the sender and the syphon."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from azure.servicebus.exceptions import OperationTimeoutError, ServiceBusConnectionError

from pairedbus.pairing.connections import (
    PRIMARY,
    SECONDARY,
    ConnectionPair,
    Verdict,
    check_side,
    is_connection_loss,
    partner_of,
)

#: Long enough that a partner told to follow does so inside it; only an upper bound is ever waited.
GRACE = 0.05
BOUND = 5.0


class Recorded:
    """A reaction that records what the rule told it; `replace` mimics the sender (a side that went
    down is back at once)."""

    def __init__(self, *, replace: bool = False) -> None:
        self.downs: list[tuple[str, str]] = []
        self.verdicts: list[Verdict] = []
        self.judged_event = asyncio.Event()
        self.pair: ConnectionPair | None = None
        self._replace = replace

    def went_down(self, side: str, cause: str) -> None:
        self.downs.append((side, cause))
        if self._replace:
            assert self.pair is not None
            self.pair.mark_up(side)

    def judged(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict)
        self.judged_event.set()


def make_pair(*, replace: bool = False) -> tuple[ConnectionPair, Recorded]:
    reaction = Recorded(replace=replace)
    pair = ConnectionPair(GRACE, reaction)
    reaction.pair = pair
    return pair, reaction


class _Client:
    def __init__(self) -> None:
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


def test_the_sides_are_primary_and_secondary_each_the_others_partner() -> None:
    assert (PRIMARY, SECONDARY) == ("primary", "secondary")
    assert partner_of("primary") == "secondary"
    assert partner_of("secondary") == "primary"


def test_a_side_that_is_neither_is_refused_naming_the_field() -> None:
    assert check_side("secondary") == "secondary"
    with pytest.raises(ValueError, match="side must be 'primary' or 'secondary', got 'tertiary'"):
        check_side("tertiary")


def test_only_a_broken_connection_is_a_connection_loss() -> None:
    assert is_connection_loss(ServiceBusConnectionError(message="connection is broken"))
    assert not is_connection_loss(OperationTimeoutError(message="timed out"))
    assert not is_connection_loss(ValueError("handler closed"))


async def test_a_partner_that_does_not_follow_within_the_grace_is_faulted() -> None:
    pair, reaction = make_pair()
    pair.mark_down(PRIMARY, "was closed")
    await asyncio.wait_for(reaction.judged_event.wait(), BOUND)

    assert reaction.downs == [
        ("primary", "was closed"),
        ("secondary", "faulted: did not follow the primary within the grace"),
    ]
    assert reaction.verdicts == [Verdict("primary", "was closed", partner_followed=False)]
    assert not pair.both_up and pair.is_down(SECONDARY)


async def test_a_partner_that_follows_within_the_grace_is_not_faulted_again() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    pair.mark_down(SECONDARY, "faulted (connection is broken)")
    pair.mark_down(PRIMARY, "was closed")  # the partner follows at once
    await asyncio.wait_for(reaction.judged_event.wait(), BOUND)

    assert reaction.downs == [("secondary", "faulted (connection is broken)"), ("primary", "was closed")]
    assert reaction.verdicts == [Verdict("secondary", "faulted (connection is broken)", partner_followed=True)]
    assert reaction.verdicts[0].partner == "primary"
    assert pair.pending_graces == 0


async def test_a_side_the_rule_faulted_gives_its_partner_no_grace_so_the_two_never_fault_each_other_in_turn() -> None:
    pair, reaction = make_pair(replace=True)  # like the sender: each side is back at once
    pair.mark_down(PRIMARY, "was closed")
    await asyncio.wait_for(reaction.judged_event.wait(), BOUND)

    assert [side for side, _ in reaction.downs] == ["primary", "secondary"]
    assert pair.pending_graces == 0  # no grace started for the primary to follow the secondary
    assert pair.both_up


async def test_going_down_is_idempotent_while_down_and_reacts_again_once_back() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    pair.mark_down(PRIMARY, "was closed")
    pair.mark_down(PRIMARY, "faulted")
    assert reaction.downs == [("primary", "was closed")]
    pair.mark_up(PRIMARY)
    pair.mark_down(PRIMARY, "faulted")
    assert reaction.downs == [("primary", "was closed"), ("primary", "faulted")]
    await pair.shut_down()


async def test_only_a_connection_loss_takes_a_side_down() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    assert pair.note_error(PRIMARY, OperationTimeoutError(message="timed out")) is False
    assert pair.both_up
    assert pair.note_error(PRIMARY, ServiceBusConnectionError(message="connection is broken")) is True
    assert reaction.downs == [("primary", "faulted (connection is broken)")]
    await pair.shut_down()


async def test_a_report_names_a_side_or_is_refused() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    with pytest.raises(ValueError, match="side must be"):
        pair.report_fault("both")
    pair.report_fault(SECONDARY)
    assert reaction.downs == [("secondary", "faulted")]
    await pair.shut_down()


async def test_a_close_by_anyone_else_takes_the_side_down_and_the_owners_close_does_not() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    primary, secondary = _Client(), _Client()
    pair.watch_close(PRIMARY, primary)
    pair.watch_close(SECONDARY, secondary)

    assert await pair.close_side(SECONDARY) is None  # the owner's close
    assert secondary.closed == 1 and pair.both_up
    await primary.close()  # someone else's
    assert primary.closed == 1
    assert reaction.downs == [("primary", "was closed")]
    await pair.shut_down()


async def test_closing_a_replaced_client_is_no_fault() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    old, fresh = _Client(), _Client()
    pair.watch_close(PRIMARY, old)
    pair.watch_close(PRIMARY, fresh)
    await old.close()
    assert reaction.downs == []
    assert pair.both_up


async def test_close_side_returns_what_the_close_raised() -> None:
    class Failing:
        async def close(self) -> Any:
            raise OSError("socket gone")

    pair = ConnectionPair(BOUND, Recorded())
    pair.watch_close(PRIMARY, Failing())
    error = await pair.close_side(PRIMARY)
    assert isinstance(error, OSError)
    assert await pair.close_side(PRIMARY) is None  # closed once


async def test_after_shut_down_nothing_goes_down_and_no_grace_judges() -> None:
    pair = ConnectionPair(BOUND, reaction := Recorded())
    pair.mark_down(PRIMARY, "was closed")
    assert pair.pending_graces == 1
    await pair.shut_down()
    assert pair.pending_graces == 0
    pair.mark_down(SECONDARY, "was closed")
    assert reaction.downs == [("primary", "was closed")]
    assert reaction.verdicts == []
