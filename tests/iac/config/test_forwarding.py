"""Auto-forwarding rules of the stack config: every target exists, nothing forwards to itself or from a subscription
to its own topic, and no message can loop; entity names compare without case, as Service Bus compares them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pairedbus.iac.config import parse_stack_config
from pairedbus.iac.config.forwarding import (
    forwarding_cycles,
    forwarding_problems,
    missing_targets,
    self_forwarding,
    subscription_to_own_topic,
)
from pairedbus.iac.config.problems import StackConfigError


def queue(name: str, forward_to: str | None = None) -> Any:
    return SimpleNamespace(name=name, forward_to=forward_to)


def topic(name: str, *subscriptions: tuple[str, str | None]) -> Any:
    return SimpleNamespace(name=name, subscriptions=[SimpleNamespace(name=n, forward_to=f) for n, f in subscriptions])


def stack(queues=(), topics=()) -> Any:
    return SimpleNamespace(queues=list(queues), topics=list(topics))


def test_a_target_must_be_a_queue_or_topic_of_the_stack() -> None:
    config = stack([queue("orders", "nowhere"), queue("audit")], [topic("events", ("all", "Audit"))])
    assert list(missing_targets(config)) == [
        "queues[0].forwardTo: expected a queue or topic of this stack's primary, got 'nowhere'"
    ]


def test_a_subscription_cannot_forward_to_another_subscription() -> None:
    config = stack(topics=[topic("events", ("a", "events/subscriptions/b"), ("b", None))])
    assert list(missing_targets(config)) == [
        "topics[0].subscriptions[0].forwardTo: expected a queue or topic of this stack's primary, "
        "got 'events/subscriptions/b'"
    ]


def test_an_entity_cannot_forward_to_itself_in_any_case() -> None:
    config = stack([queue("orders", "ORDERS")])
    assert list(self_forwarding(config)) == [
        "queues[0].forwardTo: expected another entity, an entity cannot forward to itself"
    ]
    assert list(forwarding_cycles(config)) == []  # reported once, as forwarding to itself


def test_a_subscription_forwarding_to_its_own_topic_is_its_own_problem() -> None:
    config = stack(topics=[topic("events", ("all", "Events"))])
    assert list(subscription_to_own_topic(config)) == [
        "topics[0].subscriptions[0].forwardTo: expected an entity other than its own topic 'events' "
        "(every message would come back to this subscription)"
    ]
    assert list(forwarding_cycles(config)) == []


def test_a_queue_cycle_is_reported_once_on_its_first_entity() -> None:
    config = stack([queue("a", "b"), queue("b", "c"), queue("c", "A"), queue("d", "a")])
    assert list(forwarding_cycles(config)) == [
        "queues[0].forwardTo: expected no forwarding cycle, got a -> b -> c -> a"
    ]


def test_a_cycle_through_a_topic_and_its_subscription() -> None:
    config = stack([queue("inbox", "events")], [topic("events", ("audit", None), ("loop", "inbox"))])
    assert list(forwarding_cycles(config)) == [
        "queues[0].forwardTo: expected no forwarding cycle, got inbox -> events -> events/loop -> inbox"
    ]


def test_a_chain_without_a_loop_passes_every_rule() -> None:
    config = stack([queue("inbox", "events"), queue("sink")], [topic("events", ("audit", "sink"), ("other", None))])
    assert list(forwarding_problems(config)) == []


def test_the_stack_config_refuses_a_cycle(config_dict: dict[str, Any]) -> None:
    config_dict["queues"][0]["forwardTo"] = "invoices"
    config_dict["queues"][1]["forwardTo"] = "orders"
    with pytest.raises(StackConfigError, match=r"queues\[0\]\.forwardTo: expected no forwarding cycle"):
        parse_stack_config(config_dict)
