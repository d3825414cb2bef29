"""A secret given to PairedNamespace stays secret through it: every child input that carries it is masked.

Rendered with PlanMocks, which answer as the engine does: an output is secret only when the input of its name
was, so a namespace's `name` read back from a secret `namespaceName` is clear text (and so is a resource
group's `name`). ARM ids are left out: Pulumi never masks an `id`, and an id holds the names it is built from.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from pairedbus import contract
from pairedbus.iac import PairedNamespace
from pairedbus.iac.render.program import render_program
from pairedbus.plans.model import SECRET_MASK, Plan
from pairedbus.sdk import pulumi_sync_await
from tests.iac.components.test_paired_namespace import ARGS

#: Where the program passes a secret, the secret's text, and how to put it there.
SECRETS: dict[str, tuple[str, Callable[[dict[str, Any], pulumi.Output[str]], None]]] = {
    "primary name": ("contoso-s3cret", lambda a, s: a["primary"].update(name=s)),
    "secondary name": ("contoso-dr-s3cret", lambda a, s: a["secondary"].update(name=s)),
    "created resource group": ("rg-s3cret", lambda a, s: a["resource_groups"]["primary"].update(name=s)),
    "tag value": ("alice-s3cret", lambda a, s: a.update(tags={"owner": s, "team": "orders"})),
    "image": ("example.azurecr.io/s3cret:1.0.0", lambda a, s: a["syphon"].update(image=s)),
}


def _program(where: str, kept: dict[str, PairedNamespace] | None = None) -> Callable[[], None]:
    text, put = SECRETS[where]

    def program() -> None:
        args = copy.deepcopy(ARGS)
        put(args, pulumi.Output.secret(text))
        paired = PairedNamespace("orders", args)  # type: ignore[arg-type]
        if kept is not None:
            kept["paired"] = paired

    return program


def clear_text(value: Any, text: str, path: str = "") -> list[str]:
    """Where `text` shows unmasked in a recorded input (ARM ids aside)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in clear_text(v, text, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in clear_text(v, text, f"{path}[{i}]")]
    if isinstance(value, str) and text in value and not value.startswith("/subscriptions/"):
        return [path]
    return []


def _leaks(plan: Plan, text: str) -> list[str]:
    return [f"{r.type} {r.name}: {p}" for r in plan.resources for p in clear_text(r.inputs, text)]


@pytest.mark.parametrize("where", list(SECRETS))
def test_a_secret_given_to_the_component_is_masked_in_every_child_input_that_carries_it(where: str) -> None:
    text, _ = SECRETS[where]
    plan = render_program(_program(where), project="pairedbus", stack="test")
    assert _leaks(plan, text) == []
    assert SECRET_MASK in json.dumps([r.inputs for r in plan.resources])  # it reached the children, masked


def test_children_wired_to_a_namespace_read_its_name_as_secret_as_it_was_given() -> None:
    plan = render_program(_program("primary name"), project="pairedbus", stack="test")
    entities = [*plan.of_type(contract.TYPE_QUEUE), *plan.of_type(contract.TYPE_TOPIC)]
    assert entities and {r.inputs["namespaceName"] for r in entities} == {SECRET_MASK}
    plan = render_program(_program("secondary name"), project="pairedbus", stack="test")
    backlog = plan.of_type(contract.TYPE_BACKLOG_QUEUE)
    assert backlog and {r.inputs["namespaceName"] for r in backlog} == {SECRET_MASK}


def test_children_in_a_created_resource_group_read_its_name_as_secret_as_it_was_given() -> None:
    plan = render_program(_program("created resource group"), project="pairedbus", stack="test")
    in_group = [
        r for r in plan.resources if "resourceGroupName" in r.inputs and r.inputs["resourceGroupName"] != "rg-secondary"
    ]
    assert len(in_group) > 3 and {r.inputs["resourceGroupName"] for r in in_group} == {SECRET_MASK}


def test_the_components_name_and_endpoint_outputs_are_secret_when_the_name_was() -> None:
    kept: dict[str, PairedNamespace] = {}
    render_program(_program("primary name", kept), project="pairedbus", stack="test")
    paired = kept["paired"]
    for output in (paired.primary_namespace_name, paired.primary_endpoint, paired.pair.primary_namespace_name):
        assert pulumi_sync_await(output.is_secret()) is True
    assert pulumi_sync_await(paired.secondary_namespace_name.is_secret()) is False


def test_as_secret_as_adds_only_secrecy() -> None:
    from pairedbus.iac.components.secrecy import as_secret_as

    plain = pulumi.Output.from_input("contoso-primary")
    assert as_secret_as(plain, "contoso-primary") is plain
    wrapped = as_secret_as(plain, pulumi.Output.secret("contoso-primary"))
    assert pulumi_sync_await(wrapped.future()) == "contoso-primary"
    assert pulumi_sync_await(wrapped.is_secret()) is True
