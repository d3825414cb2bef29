"""Test your own Pulumi program that uses `PairedNamespace`, offline, with the mocks `pairedbus plan` uses.

- `PlanMocks`: Pulumi mocks (`pulumi.runtime.Mocks`) that answer as the Azure providers do where echoing
  the inputs back is not enough (a Container App's identity: a list in, a map out; ARM ids; principal
  ids; the namespace endpoint). Use them with `pulumi.runtime.set_mocks` in Pulumi's own unit-test style.
- `run_program(program, preview=...)`: run a whole program under those mocks and get every registered
  resource back (`Plan`: type, name, inputs, parent, protect, ignore_changes, ...), in update or preview mode.
  As the engine does, and Pulumi's mock monitor does not: URNs carry the parent's whole type chain
  (`urn:pulumi:stack::project::team:index:Platform$pairedbus:index:PairedNamespace::messaging`), so `Plan.by_urn()`
  is exact; transforms (`transforms=` and `pulumi.runtime.register_resource_transform`) run on every
  registration, the resource's own first, then its ancestors', then the stack's. What the engine would refuse
  (a duplicate URN, an alias two resources claim, a missing parent) raises `EngineRefusal` in the engine's
  words, where Pulumi's mock monitor would silently keep the last one.

See docs/testing.md, "Testing your own Pulumi program".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pairedbus.iac.render.mocks import FAKE_CLIENT_ID, FAKE_OBJECT_ID, FAKE_SUBSCRIPTION_ID, FAKE_TENANT_ID, PlanMocks
from pairedbus.plans.engine_checks import EngineRefusal
from pairedbus.plans.model import Plan, PlannedResource

__all__ = [
    "FAKE_CLIENT_ID",
    "FAKE_OBJECT_ID",
    "FAKE_SUBSCRIPTION_ID",
    "FAKE_TENANT_ID",
    "EngineRefusal",
    "Plan",
    "PlanMocks",
    "PlannedResource",
    "run_program",
]


def run_program(
    program: Callable[[], Any],
    *,
    project: str = "project",
    stack: str = "stack",
    config: Mapping[str, Any] | None = None,
    secret_keys: list[str] | None = None,
    preview: bool = False,
    mocks: Any = None,
) -> Plan:
    """Run `program` as `pulumi up` (or, `preview=True`, as `pulumi preview`) would, under `PlanMocks`.

    `config` takes full keys (`"myproject:region"`); a value that is not a string is passed as JSON, as
    the Pulumi CLI passes structured config. `mocks` replaces `PlanMocks` (for your own subclass).
    Returns what the program registered and exported, and its warnings (`pulumi.log.warn`); raises what
    the program raises, or `EngineRefusal` for registrations the engine would refuse.
    """
    from pairedbus.iac.render.program import render_program

    raw = {key: value if isinstance(value, str) else json.dumps(value) for key, value in (config or {}).items()}
    return render_program(
        program, project=project, stack=stack, config=raw, secret_keys=secret_keys, preview=preview, mocks=mocks
    )
