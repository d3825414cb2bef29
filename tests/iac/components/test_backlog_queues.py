"""BacklogQueues: the exact table, in the secondary, partitioned where required, never deleted."""

from __future__ import annotations

from pairedbus import contract
from tests.iac.components.conftest import only


def test_backlog_queues_are_named_after_the_primary_and_live_in_the_secondary(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    queues = plan.of_type(contract.TYPE_BACKLOG_QUEUE)
    assert [q.inputs["queueName"] for q in queues] == [
        "contoso-primary/x-servicebus-transfer/0",
        "contoso-primary/x-servicebus-transfer/1",
        "contoso-primary/x-servicebus-transfer/2",
    ]
    assert {q.inputs["namespaceName"] for q in queues} == {"contoso-secondary"}


def test_backlog_queue_inputs_are_exactly_the_table_on_standard(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    for queue in plan.of_type(contract.TYPE_BACKLOG_QUEUE):
        expected = {
            "namespaceName": "contoso-secondary",
            "queueName": queue.inputs["queueName"],
            **contract.BACKLOG_QUEUE_PROPERTIES,
        }
        assert queue.inputs == expected


def test_backlog_queues_are_partitioned_on_a_partitioned_premium_secondary(render_core, premium_config_dict) -> None:
    plan = render_core(premium_config_dict)
    for queue in plan.of_type(contract.TYPE_BACKLOG_QUEUE):
        assert queue.inputs[contract.BACKLOG_PARTITIONING_PROPERTY] is True
        assert set(queue.inputs) == {
            "namespaceName",
            "queueName",
            "enablePartitioning",
            *contract.BACKLOG_QUEUE_PROPERTIES,
        }


def test_backlog_queues_wait_for_the_deployer_data_owner_role(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    grant = only(plan, "azure-native:authorization:RoleAssignment")
    assert grant.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{contract.ROLE_SERVICE_BUS_DATA_OWNER}")
    assert grant.inputs["scope"].endswith("/namespaces/contoso-secondary")
    assert grant.inputs["principalId"]  # the deploying identity, from getClientConfig
    for queue in plan.of_type(contract.TYPE_BACKLOG_QUEUE):
        assert grant.urn in queue.dependencies


def test_shrinking_the_count_never_deletes_a_queue(render_core, config_dict) -> None:
    config_dict["backlogQueueCount"] = 5
    before = render_core(config_dict)
    config_dict["backlogQueueCount"] = 2
    after = render_core(config_dict)
    kept = {q.urn for q in after.of_type(contract.TYPE_BACKLOG_QUEUE)}
    dropped = [q for q in before.of_type(contract.TYPE_BACKLOG_QUEUE) if q.urn not in kept]
    assert len(dropped) == 3
    # A resource that leaves the program is deleted by the engine unless retainOnDelete is set.
    assert all(q.retain_on_delete for q in dropped)


def test_production_retains_backlog_queues_without_protecting_them(render_core, production_config_dict) -> None:
    # The options as the engine receives them (the mock monitor's RegisterResourceRequest): a
    # protected resource cannot leave the program, so lowering the count would fail `pulumi up`;
    # retainOnDelete alone keeps a dropped queue, and its parked messages, in Azure.
    plan = render_core(production_config_dict)
    queues = plan.of_type(contract.TYPE_BACKLOG_QUEUE)
    assert queues and all(q.retain_on_delete and not q.protect for q in queues)
    assert all(ns.protect for ns in plan.of_type(contract.TYPE_NAMESPACE))  # the rest of prod stays protected
