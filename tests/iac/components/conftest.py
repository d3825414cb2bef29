"""Render components with Pulumi's mock runtime (the same renderer `pairedbus plan` uses)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from pairedbus.iac.render.program import render_program
from pairedbus.plans.model import Plan, PlannedResource

Build = Callable[[], None]


def render_config(config: dict[str, Any], build: Build, stack: str = "test") -> Plan:
    """Render `build` with `config` set as this stack's `pairedbus:` config."""
    settings = {f"pairedbus:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    return render_program(build, project="pairedbus", stack=stack, config=settings)


def build_core() -> None:
    """The program's infrastructure core: the pair, its backlog queues, the entities."""
    from pairedbus.iac.components.backlog_queues import BacklogQueues
    from pairedbus.iac.components.messaging_entities import MessagingEntities
    from pairedbus.iac.components.namespace_pair import NamespacePair
    from pairedbus.iac.components.paired_namespace import (
        backlog_queues_args,
        messaging_entities_args,
        namespace_pair_args,
    )
    from pairedbus.iac.config import load_pulumi_stack_config

    config = load_pulumi_stack_config()
    pair = NamespacePair("pair", namespace_pair_args(config))
    BacklogQueues("backlog", backlog_queues_args(config, pair))
    MessagingEntities("entities", messaging_entities_args(config, pair))
    pulumi.export("primaryEndpoint", pair.primary.service_bus_endpoint)


def only(plan: Plan, type_: str, **inputs: Any) -> PlannedResource:
    matches = [r for r in plan.of_type(type_) if all(r.inputs.get(k) == v for k, v in inputs.items())]
    assert len(matches) == 1, f"{len(matches)} {type_} with {inputs}"
    return matches[0]


@pytest.fixture
def render_core() -> Callable[[dict[str, Any]], Plan]:
    return lambda config: render_config(config, build_core)
