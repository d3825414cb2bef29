"""Auto-forwarding across queues, topics and subscriptions: every target exists, nothing forwards
to itself, and no message can loop, whether the loop runs queue to queue or through a topic and
one of its subscriptions ("Chaining Service Bus entities with autoforwarding", Service Bus docs:
a queue or subscription forwards to a queue or topic of the same namespace)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pairedbus.iac.config.schema import StackConfig


@dataclass(frozen=True)
class _Source:
    """An entity that forwards: its key path, its display name and the node it is."""

    path: str
    label: str
    node: str
    target: str | None


def _node(name: str) -> str:
    return name.lower()  # entity paths are case-insensitive in Service Bus


def _sources(config: StackConfig) -> list[_Source]:
    sources = [_Source(f"queues[{i}]", q.name, _node(q.name), q.forward_to) for i, q in enumerate(config.queues)]
    for i, topic in enumerate(config.topics):
        for j, sub in enumerate(topic.subscriptions):
            node = f"{_node(topic.name)}/subscriptions/{sub.name.lower()}"
            sources.append(_Source(f"topics[{i}].subscriptions[{j}]", f"{topic.name}/{sub.name}", node, sub.forward_to))
    return sources


def missing_targets(config: StackConfig) -> Iterator[str]:
    names = {_node(e.name) for e in [*config.queues, *config.topics]}
    for source in _sources(config):
        if source.target is not None and _node(source.target) not in names:
            yield f"{source.path}.forwardTo: expected a queue or topic of this stack's primary, got {source.target!r}"


def self_forwarding(config: StackConfig) -> Iterator[str]:
    for source in _sources(config):
        if source.target is not None and _node(source.target) == source.node:
            yield f"{source.path}.forwardTo: expected another entity, an entity cannot forward to itself"


def subscription_to_own_topic(config: StackConfig) -> Iterator[str]:
    for i, topic in enumerate(config.topics):
        for j, sub in enumerate(topic.subscriptions):
            if sub.forward_to is not None and _node(sub.forward_to) == _node(topic.name):
                yield (
                    f"topics[{i}].subscriptions[{j}].forwardTo: expected an entity other than its own topic "
                    f"{topic.name!r} (every message would come back to this subscription)"
                )


def _edges(config: StackConfig) -> dict[str, list[str]]:
    """Where a message can go next: a queue or subscription to its target, a topic to each of its
    subscriptions. Self-loops and subscription -> own topic are reported on their own."""
    edges: dict[str, list[str]] = {}
    for topic in config.topics:
        edges[_node(topic.name)] = [f"{_node(topic.name)}/subscriptions/{s.name.lower()}" for s in topic.subscriptions]
    for source in _sources(config):
        target = _node(source.target) if source.target else None
        own_topic = source.node.split("/subscriptions/")[0] if "/subscriptions/" in source.node else None
        if target is not None and target != source.node and target != own_topic:
            edges.setdefault(source.node, []).append(target)
    return edges


def _cycle_from(start: str, edges: dict[str, list[str]]) -> list[str] | None:
    """The first cycle back to `start` (depth first), as the nodes on it."""
    stack: list[tuple[str, Iterator[str]]] = [(start, iter(edges.get(start, [])))]
    on_path = [start]
    seen = {start}
    while stack:
        _, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            on_path.pop()
            continue
        if child == start:
            return [*on_path, start]
        if child not in seen:
            seen.add(child)
            on_path.append(child)
            stack.append((child, iter(edges.get(child, []))))
    return None


def forwarding_cycles(config: StackConfig) -> Iterator[str]:
    """Each cycle once, on the first forwarding entity (in file order) that lies on it."""
    edges = _edges(config)
    labels = {s.node: s.label for s in _sources(config)} | {_node(t.name): t.name for t in config.topics}
    reported: set[frozenset[str]] = set()
    for source in _sources(config):
        if source.target is None:
            continue
        cycle = _cycle_from(source.node, edges)
        if cycle is None or frozenset(cycle) in reported:
            continue
        reported.add(frozenset(cycle))
        shown = " -> ".join(labels.get(node, node) for node in cycle)
        yield f"{source.path}.forwardTo: expected no forwarding cycle, got {shown}"


FORWARDING_RULES = (missing_targets, self_forwarding, subscription_to_own_topic, forwarding_cycles)


def forwarding_problems(config: StackConfig) -> Iterable[str]:
    for rule in FORWARDING_RULES:
        yield from rule(config)
