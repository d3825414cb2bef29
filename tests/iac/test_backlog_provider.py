"""The backlog queue's dynamic provider against a ServiceBusAdministrationClient replaced by
pytest-mock: create when missing, adopt when present, diff per drifted property, update, read."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from pairedbus import contract, durations
from pairedbus.iac import backlog_provider as module
from pairedbus.iac.backlog_provider import BacklogQueueProvider, DataPlaneAuth

NAME = "contoso/x-servicebus-transfer/0"
#: P10675199DT2H48M5.4775807S cut to whole microseconds, toward zero.
TIMESPAN_MAX_FLOOR = timedelta(days=10675199, hours=2, minutes=48, seconds=5, microseconds=477580)
INPUTS: dict[str, Any] = {"namespaceName": "contoso-sec", "queueName": NAME, **contract.BACKLOG_QUEUE_PROPERTIES}


def sdk_queue(**overrides: Any) -> SimpleNamespace:
    """A queue as the SDK returns it: timedeltas, and TimeSpan.MaxValue cut to microseconds."""
    values = {
        "name": NAME,
        "max_size_in_megabytes": 5120,
        "max_delivery_count": contract.INT32_MAX,
        "default_message_time_to_live": durations.duration_timedelta(contract.TIMESPAN_MAX_ISO),
        "auto_delete_on_idle": durations.duration_timedelta(contract.TIMESPAN_MAX_ISO),
        "lock_duration": timedelta(minutes=1),
        "dead_lettering_on_message_expiration": True,
        "enable_batched_operations": True,
        "enable_partitioning": False,
    }
    values.update(overrides)
    return SimpleNamespace(**values)


@pytest.fixture
def admin(mocker):
    client = mocker.MagicMock(name="ServiceBusAdministrationClient()")
    client.__enter__.return_value = client
    mocker.patch.object(module, "ServiceBusAdministrationClient", return_value=client)
    mocker.patch("azure.identity.DefaultAzureCredential")
    return client


@pytest.fixture
def provider() -> BacklogQueueProvider:
    return BacklogQueueProvider(DataPlaneAuth(), rbac_timeout=timedelta(0))


def test_create_makes_the_missing_queue_with_exactly_the_table(admin, provider) -> None:
    admin.get_queue.side_effect = ResourceNotFoundError("missing")
    admin.create_queue.return_value = sdk_queue()
    result = provider.create(dict(INPUTS))
    admin.create_queue.assert_called_once_with(
        NAME,
        max_size_in_megabytes=5120,
        max_delivery_count=contract.INT32_MAX,
        # TimeSpan.MaxValue rounded *down* to the microsecond (a string would be rounded up by the SDK)
        default_message_time_to_live=TIMESPAN_MAX_FLOOR,
        auto_delete_on_idle=TIMESPAN_MAX_FLOOR,
        lock_duration=timedelta(minutes=1),
        dead_lettering_on_message_expiration=True,
        enable_batched_operations=True,
    )
    assert result.id == NAME
    assert result.outs["adopted"] is False
    assert {k: result.outs[k] for k in contract.BACKLOG_QUEUE_PROPERTIES} == contract.BACKLOG_QUEUE_PROPERTIES


def test_create_passes_partitioning_only_when_asked(admin, provider) -> None:
    admin.get_queue.side_effect = ResourceNotFoundError("missing")
    admin.create_queue.return_value = sdk_queue(enable_partitioning=True, max_size_in_megabytes=5120 * 2)
    result = provider.create({**INPUTS, "enablePartitioning": True})
    assert admin.create_queue.call_args.kwargs["enable_partitioning"] is True
    assert result.outs["maxSizeInMegabytes"] == 5120  # Premium reports 2 fragments' worth


def test_create_adopts_an_existing_queue_without_changing_it(admin, provider) -> None:
    admin.get_queue.return_value = sdk_queue(max_delivery_count=10)
    result = provider.create(dict(INPUTS))
    admin.create_queue.assert_not_called()
    admin.update_queue.assert_not_called()
    assert result.outs["adopted"] is True
    assert result.outs["maxDeliveryCount"] == 10  # shows up as a diff on the next preview


DRIFTS = [
    ("maxSizeInMegabytes", {"max_size_in_megabytes": 1024}),
    ("maxDeliveryCount", {"max_delivery_count": 10}),
    ("defaultMessageTimeToLive", {"default_message_time_to_live": timedelta(days=14)}),
    ("autoDeleteOnIdle", {"auto_delete_on_idle": timedelta(hours=1)}),
    ("lockDuration", {"lock_duration": timedelta(seconds=30)}),
    ("deadLetteringOnMessageExpiration", {"dead_lettering_on_message_expiration": False}),
    ("enableBatchedOperations", {"enable_batched_operations": False}),
]


@pytest.mark.parametrize(("prop", "drift"), DRIFTS, ids=[p for p, _ in DRIFTS])
def test_each_drifted_property_is_a_diff_and_update_restores_it(admin, provider, prop, drift) -> None:
    admin.get_queue.return_value = sdk_queue(**drift)
    olds = provider.read(NAME, dict(INPUTS)).outs
    assert olds[prop] != contract.BACKLOG_QUEUE_PROPERTIES[prop]
    diff = provider.diff(NAME, olds, dict(INPUTS))
    assert diff.changes is True and diff.replaces == []
    assert module.drifted_properties(module.desired_properties(INPUTS), olds) == [prop]

    drifted = sdk_queue(**drift)
    admin.get_queue.side_effect = [drifted, sdk_queue()]
    outs = provider.update(NAME, olds, dict(INPUTS)).outs
    restored = admin.update_queue.call_args.args[0]
    sent = getattr(restored, contract.ARM_TO_SDK_QUEUE_FIELD[prop])
    assert contract.backlog_value_matches(prop, contract.BACKLOG_QUEUE_PROPERTIES[prop], sent)
    if prop in contract.DURATION_PROPERTIES:
        assert isinstance(sent, timedelta)  # never an ISO string: the SDK would round it up
    assert outs[prop] == contract.BACKLOG_QUEUE_PROPERTIES[prop]


def test_no_diff_when_the_service_reads_back_the_table(admin, provider) -> None:
    admin.get_queue.return_value = sdk_queue()
    olds = provider.read(NAME, dict(INPUTS)).outs
    assert provider.diff(NAME, olds, dict(INPUTS)).changes is False


def test_a_partitioned_standard_queue_reports_sixteen_times_its_size_without_a_diff(admin, provider) -> None:
    admin.get_queue.return_value = sdk_queue(enable_partitioning=True, max_size_in_megabytes=5120 * 16)
    olds = provider.read(NAME, dict(INPUTS)).outs
    assert olds["maxSizeInMegabytes"] == 5120
    assert provider.diff(NAME, olds, dict(INPUTS)).changes is False


def test_a_partitioning_flip_is_a_replacement(admin, provider) -> None:
    admin.get_queue.return_value = sdk_queue(enable_partitioning=False)
    olds = provider.read(NAME, dict(INPUTS)).outs
    diff = provider.diff(NAME, olds, {**INPUTS, "enablePartitioning": True})
    assert diff.replaces == ["enablePartitioning"]


def test_read_of_a_missing_queue_reports_it_gone(admin, provider) -> None:
    admin.get_queue.side_effect = ResourceNotFoundError("gone")
    assert provider.read(NAME, dict(INPUTS)).id is None


def test_delete_keeps_a_queue_that_holds_parked_messages(admin, provider) -> None:
    admin.get_queue_runtime_properties.return_value = SimpleNamespace(total_message_count=3)
    with pytest.raises(RuntimeError, match="holds 3 parked messages"):
        provider.delete(NAME, dict(INPUTS))
    admin.delete_queue.assert_not_called()


def test_delete_removes_an_empty_queue(admin, provider) -> None:
    admin.get_queue_runtime_properties.return_value = SimpleNamespace(total_message_count=0)
    provider.delete(NAME, dict(INPUTS))
    admin.delete_queue.assert_called_once_with(NAME)


def test_check_rejects_a_name_off_the_pattern_and_a_missing_property(provider) -> None:
    news = {k: v for k, v in INPUTS.items() if k != "lockDuration"}
    news["queueName"] = "contoso/orders"
    failures = {f.property: f.reason for f in provider.check({}, news).failures}
    assert set(failures) == {"queueName", "lockDuration"}


def test_authorization_failures_are_retried_until_the_role_propagates(mocker) -> None:
    forbidden = HttpResponseError("forbidden")
    forbidden.status_code = 403
    action = mocker.Mock(side_effect=[forbidden, forbidden, "done"])
    sleeps: list[float] = []
    assert module._retry_while_unauthorized(action, timeout=timedelta(minutes=5), sleep=sleeps.append) == "done"
    assert sleeps == [5.0, 10.0]


def test_other_errors_are_not_retried(mocker) -> None:
    boom = HttpResponseError("bad request")
    boom.status_code = 400
    action = mocker.Mock(side_effect=boom)
    with pytest.raises(HttpResponseError):
        module._retry_while_unauthorized(action, timeout=timedelta(minutes=5), sleep=lambda _: None)
    assert action.call_count == 1


def test_sas_fallback_reads_the_connection_string_from_arm(mocker) -> None:
    mocker.patch("azure.identity.DefaultAzureCredential")
    mgmt = mocker.patch("azure.mgmt.servicebus.ServiceBusManagementClient")
    mgmt.return_value.namespaces.list_keys.return_value = SimpleNamespace(
        primary_connection_string="Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=v"
    )
    from_cs = mocker.patch.object(module.ServiceBusAdministrationClient, "from_connection_string")
    DataPlaneAuth(mode="sas", resource_group_name="rg", subscription_id="sub").admin_client("contoso-sec")
    mgmt.return_value.namespaces.list_keys.assert_called_once_with("rg", "contoso-sec", module.SAS_AUTHORIZATION_RULE)
    from_cs.assert_called_once_with("Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=v")


def test_the_provider_pickles_as_pulumi_serializes_it() -> None:
    from pulumi.dynamic.dynamic import serialize_provider

    assert serialize_provider(BacklogQueueProvider(DataPlaneAuth(mode="sas", resource_group_name="rg")))


def test_many_backlog_queues_in_one_program_do_not_exhaust_the_recursion_limit() -> None:
    """pulumi.dynamic.serialize_provider leaves one more wrapper around pickle's dict writer per
    dynamic resource (pulumi/pulumi#17803); without unwrapping, a program with a few hundred backlog
    queues fails with RecursionError before it registers them all."""
    import pickle
    import sys

    from pairedbus.iac.backlog_provider import BacklogQueue
    from pairedbus.iac.render.program import render_program

    count = sys.getrecursionlimit()  # more dynamic resources than frames Python allows
    provider = BacklogQueueProvider(DataPlaneAuth())

    def program() -> None:
        for index in range(count):
            BacklogQueue(
                f"backlog-{index}", {**INPUTS, "queueName": contract.backlog_queue_name("contoso", index)}, provider
            )

    plan = render_program(program, project="pairedbus", stack="test")
    assert len(plan.of_type(contract.TYPE_BACKLOG_QUEUE)) == count
    assert pickle._Pickler._batch_setitems is module._BATCH_SETITEMS
