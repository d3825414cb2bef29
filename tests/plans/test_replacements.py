"""`plans.replacements`: which inputs replace a resource, from pulumi-azure-native's own metadata for every type
the program uses, and from this package's backlog provider (issue 36, item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pairedbus import contract
from pairedbus.iac.backlog_provider import REPLACED_ON_CHANGE
from pairedbus.iac.render import PulumiProject, render_stack
from pairedbus.plans.replacements import OWN_PROVIDERS, known_types, replace_keys

ROOT = Path(__file__).resolve().parents[2]
METADATA = ROOT / "src" / "pairedbus" / "plans" / "azure_native_replacements.json"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_resource_type_the_program_uses_has_its_replacements(stack: str) -> None:
    _config, plan = render_stack(PulumiProject.find(ROOT), stack)
    used = {r.type for r in plan.resources if r.custom}
    assert used - known_types() == set()


def test_the_backlog_queue_replaces_on_what_its_provider_replaces_on() -> None:
    for type_ in (contract.TYPE_BACKLOG_QUEUE, contract.TYPE_DYNAMIC_RESOURCE):
        assert OWN_PROVIDERS[type_] == REPLACED_ON_CHANGE


def test_the_metadata_names_its_sources() -> None:
    document = json.loads(METADATA.read_text())
    source = document["sources"]["forceNewMap"]
    assert source["repository"] == "pulumi/pulumi-azure-native" and re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert document["sources"]["pathParameters"]["package"] == "pulumi-azure-native"


@pytest.mark.parametrize(
    ("type_", "inputs"),
    [
        ("azure-native:resources:ResourceGroup", {"location", "resourceGroupName"}),
        ("azure-native:authorization:RoleAssignment", {"principalId", "roleAssignmentName", "scope"}),
        ("azure-native:network:PrivateEndpoint", {"privateEndpointName", "resourceGroupName", "subnet"}),
        (
            contract.TYPE_QUEUE,
            {
                "enablePartitioning",
                "namespaceName",
                "queueName",
                "requiresDuplicateDetection",
                "requiresSession",
                "resourceGroupName",
            },
        ),
        (contract.TYPE_NAMESPACE, {"location", "namespaceName", "resourceGroupName"}),  # not zoneRedundant
    ],
)
def test_the_providers_rules_for_a_few_types(type_: str, inputs: set[str]) -> None:
    assert replace_keys(type_) == inputs


def test_a_type_not_in_the_metadata_is_unknown_not_updatable() -> None:
    assert replace_keys("azure-native:storage:StorageAccount") is None
