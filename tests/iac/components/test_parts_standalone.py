"""The parts of PairedNamespace stay usable one by one, from plain typed args (no stack config)."""

from __future__ import annotations

import pulumi
import pytest

from pairedbus import contract
from pairedbus.iac.components.backlog_queues import BacklogQueues
from pairedbus.iac.components.messaging_entities import MessagingEntities
from pairedbus.iac.components.namespace_pair import NamespacePair
from pairedbus.iac.render.program import render_program


def _pair() -> NamespacePair:
    return NamespacePair(
        "pair",
        {
            "primary": {"name": "fabrikam-weu", "location": "westeurope"},
            "secondary": {"name": "fabrikam-neu", "location": "northeurope"},
            "primary_resource_group": {"name": "rg-weu"},
            "secondary_resource_group": {"name": "rg-neu", "create": False},
        },
    )


def test_a_pair_backlog_and_entities_without_paired_namespace() -> None:
    def program() -> None:
        pair = _pair()
        backlog = BacklogQueues(
            "backlog",
            {
                "primary_namespace_name": "fabrikam-weu",
                "backlog_queue_count": 2,
                "namespace_name": pair.secondary.name,
                "namespace_id": pair.secondary.id,
            },
        )
        entities = MessagingEntities(
            "entities",
            {
                "namespace_name": pair.primary.name,
                "resource_group_name": pair.primary_resource_group_name,
                "queues": [{"name": "orders"}, {"name": "audit", "paired": False}],
            },
        )
        pulumi.export("backlog", backlog.queue_names)
        pulumi.export("queues", entities.queue_ids)

    plan = render_program(program, project="fabrikam", stack="dev")
    assert [g.inputs["resourceGroupName"] for g in plan.of_type("azure-native:resources:ResourceGroup")] == ["rg-weu"]
    for ns in plan.of_type(contract.TYPE_NAMESPACE):
        assert ns.inputs["sku"] == {"name": "Standard", "tier": "Standard"}
        assert ns.inputs["disableLocalAuth"] is True and ns.inputs["publicNetworkAccess"] == "Enabled"
    assert plan.outputs["backlog"] == ["fabrikam-weu/x-servicebus-transfer/0", "fabrikam-weu/x-servicebus-transfer/1"]
    queues = {q.inputs["queueName"]: q.inputs for q in plan.of_type(contract.TYPE_QUEUE)}
    assert queues["orders"]["maxSizeInMegabytes"] == 1024 and queues["orders"]["enablePartitioning"] is True
    assert queues["orders"]["requiresDuplicateDetection"] is True  # paired senders write there
    assert queues["audit"]["requiresDuplicateDetection"] is False
    assert sorted(plan.outputs["queues"]) == ["audit", "orders"]
    # entra: the deployer gets Data Owner on the secondary before the data plane creates the queues
    (grant,) = plan.of_type("azure-native:authorization:RoleAssignment")
    assert grant.inputs["roleDefinitionId"].endswith(contract.ROLE_SERVICE_BUS_DATA_OWNER)


def test_a_forwarding_cycle_is_refused_by_the_part_on_its_own() -> None:
    def program() -> None:
        MessagingEntities(
            "entities",
            {
                "namespace_name": "ns",
                "resource_group_name": "rg",
                "queues": [{"name": "a", "forward_to": "b"}, {"name": "b", "forward_to": "a"}],
            },
        )

    with pytest.raises(ValueError, match=r"queues\.forwardTo: expected no forwarding cycle, got a, b"):
        render_program(program, project="fabrikam", stack="dev")
