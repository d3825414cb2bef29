"""MessagingEntities: partitioned queues, topics and subscriptions in the primary."""

from __future__ import annotations

from pairedbus import contract
from tests.iac.components.conftest import only


def test_entities_are_partitioned_and_deduplicated_by_default(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    entities = plan.of_type(contract.TYPE_QUEUE) + plan.of_type(contract.TYPE_TOPIC)
    assert len(entities) == 3
    for entity in entities:
        assert entity.inputs["namespaceName"] == "contoso-primary"
        assert entity.inputs["enablePartitioning"] is True
        assert entity.inputs["requiresDuplicateDetection"] is True
        assert entity.inputs["maxSizeInMegabytes"] == contract.DEFAULT_ENTITY_SIZE_MB


def test_queue_options_reach_arm(render_core, config_dict) -> None:
    config_dict["queues"][0].update(lockDuration="PT2M", maxDeliveryCount=7, defaultMessageTimeToLive="P3D")
    plan = render_core(config_dict)
    orders = only(plan, contract.TYPE_QUEUE, queueName="orders")
    assert orders.inputs["requiresSession"] is True
    assert orders.inputs["lockDuration"] == "PT2M"
    assert orders.inputs["maxDeliveryCount"] == 7
    assert orders.inputs["defaultMessageTimeToLive"] == "P3D"


def test_subscriptions_belong_to_their_topic(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    topic = only(plan, contract.TYPE_TOPIC, topicName="events")
    subs = plan.of_type(contract.TYPE_SUBSCRIPTION)
    assert sorted(s.inputs["subscriptionName"] for s in subs) == ["audit", "billing"]
    assert all(s.inputs["topicName"] == "events" and topic.urn in s.dependencies for s in subs)


def test_forwarding_queue_depends_on_its_target(render_core, config_dict) -> None:
    config_dict["queues"][0]["forwardTo"] = "invoices"
    plan = render_core(config_dict)
    orders = only(plan, contract.TYPE_QUEUE, queueName="orders")
    invoices = only(plan, contract.TYPE_QUEUE, queueName="invoices")
    assert orders.inputs["forwardTo"] == "invoices"
    assert invoices.urn in orders.dependencies


def test_unpaired_entity_may_skip_duplicate_detection(render_core, config_dict) -> None:
    config_dict["queues"][1]["paired"] = False
    plan = render_core(config_dict)
    assert only(plan, contract.TYPE_QUEUE, queueName="invoices").inputs["requiresDuplicateDetection"] is False


def test_production_protects_entities(render_core, production_config_dict) -> None:
    plan = render_core(production_config_dict)
    entities = (
        plan.of_type(contract.TYPE_QUEUE) + plan.of_type(contract.TYPE_TOPIC) + plan.of_type(contract.TYPE_SUBSCRIPTION)
    )
    assert all(e.protect for e in entities)


def test_every_child_is_parented_to_its_component(render_core, config_dict) -> None:
    plan = render_core(config_dict)
    components = {r.urn: r.type for r in plan.resources if not r.custom}
    assert set(components.values()) == {
        contract.TYPE_NAMESPACE_PAIR,
        contract.TYPE_BACKLOG_QUEUES,
        contract.TYPE_MESSAGING_ENTITIES,
    }
    assert all(r.parent in components for r in plan.resources if r.custom)


def test_auto_delete_on_idle_reaches_arm_for_queues_topics_and_subscriptions(render_core, config_dict) -> None:
    config_dict["queues"][0]["autoDeleteOnIdle"] = "PT5M"  # the service's minimum
    config_dict["topics"][0]["autoDeleteOnIdle"] = "P30D"
    config_dict["topics"][0]["subscriptions"][0]["autoDeleteOnIdle"] = "PT1H"
    plan = render_core(config_dict)
    assert only(plan, contract.TYPE_QUEUE, queueName="orders").inputs["autoDeleteOnIdle"] == "PT5M"
    assert only(plan, contract.TYPE_TOPIC, topicName="events").inputs["autoDeleteOnIdle"] == "P30D"
    subs = {s.inputs["subscriptionName"]: s.inputs for s in plan.of_type(contract.TYPE_SUBSCRIPTION)}
    name = config_dict["topics"][0]["subscriptions"][0]["name"]
    assert subs[name]["autoDeleteOnIdle"] == "PT1H"
    # Not given: not sent, so the service keeps its default (never).
    assert "autoDeleteOnIdle" not in only(plan, contract.TYPE_QUEUE, queueName="invoices").inputs
    assert all("autoDeleteOnIdle" not in s for n, s in subs.items() if n != name)


def test_auto_delete_on_idle_below_five_minutes_is_refused_before_rendering(render_core, config_dict) -> None:
    import pytest

    config_dict["queues"][0]["autoDeleteOnIdle"] = "PT4M59S"
    with pytest.raises(Exception, match=r"queues\[0\]\.autoDeleteOnIdle"):
        render_core(config_dict)
