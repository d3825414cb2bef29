"""`pairedbus drift` with the data-plane administration client replaced through pytest-mock."""

from __future__ import annotations

import json
from datetime import timedelta

import isodate
import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.servicebus.management import NamespaceProperties, QueueProperties

from pairedbus import contract
from pairedbus.cli import main
from pairedbus.iac.drift import arm_named_properties, detect_drift

PRIMARY = "contoso"
SECONDARY = contract.service_bus_fqdn("contoso-backlog")
MAX = isodate.parse_duration(contract.TIMESPAN_MAX_ISO)  # what the SDK deserializes TimeSpan.MaxValue to


def live_queue(name: str, **overrides) -> QueueProperties:
    """A QueueProperties as the SDK returns it for a backlog queue created by the table, with the
    service's defaults for everything else (Standard: partitioned, 16 fragments)."""
    fields = dict(
        authorization_rules=[],
        auto_delete_on_idle=MAX,
        dead_lettering_on_message_expiration=True,
        default_message_time_to_live=MAX,
        duplicate_detection_history_time_window=timedelta(minutes=10),
        availability_status="Available",
        enable_batched_operations=True,
        enable_express=False,
        enable_partitioning=True,
        lock_duration=timedelta(minutes=1),
        max_delivery_count=contract.INT32_MAX,
        max_size_in_megabytes=5120 * contract.PARTITIONS_PER_ENTITY[contract.SKU_STANDARD],
        requires_duplicate_detection=False,
        requires_session=False,
        status="Active",
        forward_to=None,
        user_metadata=None,
        forward_dead_lettered_messages_to=None,
        max_message_size_in_kilobytes=256,
    )
    fields.update(overrides)
    return QueueProperties(name, **fields)


def namespace(sku: str = contract.SKU_STANDARD) -> NamespaceProperties:
    return NamespaceProperties(
        "contoso-backlog",
        alias=None,
        created_at_utc=None,
        messaging_sku=sku,
        messaging_units=None,
        modified_at_utc=None,
        namespace_type="Messaging",
    )


def backlog(count: int, **overrides_by_index) -> list[QueueProperties]:
    return [
        live_queue(contract.backlog_queue_name(PRIMARY, i), **overrides_by_index.get(f"q{i}", {})) for i in range(count)
    ]


@pytest.fixture
def admin(mocker):
    """The administration client class in pairedbus.iac.drift, and the instance `with` yields."""
    mocker.patch("pairedbus.iac.drift.DefaultAzureCredential")
    cls = mocker.patch("pairedbus.iac.drift.ServiceBusAdministrationClient")
    client = cls.return_value.__enter__.return_value
    client.get_namespace_properties.return_value = namespace()
    client.list_queues.return_value = [*backlog(10), live_queue("orders", lock_duration=timedelta(minutes=5))]
    return cls, client


def run_drift(*extra: str) -> int:
    return main(["drift", "--secondary", SECONDARY, "--primary-name", PRIMARY, *extra])


def test_live_properties_use_arm_names():
    props = arm_named_properties(live_queue("x"))
    assert props["lockDuration"] == timedelta(minutes=1)
    assert props["enablePartitioning"] is True
    assert "status" not in props


def test_clean_backlog_exits_0_and_signs_in_to_the_secondary(admin, capsys):
    cls, _client = admin
    assert run_drift() == 0
    assert cls.call_args.args[0] == SECONDARY
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "no drift"
    assert "10 found" in out


def test_premium_partitioned_sizes_read_back_doubled_are_not_drift(admin):
    _cls, client = admin
    client.get_namespace_properties.return_value = namespace(contract.SKU_PREMIUM)
    doubled = {"max_size_in_megabytes": 5120 * contract.PARTITIONS_PER_ENTITY[contract.SKU_PREMIUM]}
    client.list_queues.return_value = backlog(10, **{f"q{i}": doubled for i in range(10)})
    assert run_drift() == 0


def test_each_property_off_the_table_is_reported_and_exits_1(admin, capsys):
    _cls, client = admin
    client.list_queues.return_value = backlog(
        10,
        q3={"lock_duration": timedelta(seconds=30)},
        q7={"max_delivery_count": 10, "enable_batched_operations": False},
    )
    assert run_drift() == 1
    drift_lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("DRIFT")]
    assert len(drift_lines) == 3
    assert any(contract.backlog_queue_name(PRIMARY, 3) in line and "lockDuration" in line for line in drift_lines)
    assert sum(contract.backlog_queue_name(PRIMARY, 7) in line for line in drift_lines) == 2


def test_a_missing_index_is_drift_and_extras_are_reported_as_allowed(admin, capsys):
    _cls, client = admin
    queues = backlog(12)
    del queues[4]
    client.list_queues.return_value = queues
    assert run_drift("--count", "10") == 1
    out = capsys.readouterr().out
    assert f"MISSING  {contract.backlog_queue_name(PRIMARY, 4)}" in out
    assert f"EXTRA    {contract.backlog_queue_name(PRIMARY, 10)}" in out
    assert f"EXTRA    {contract.backlog_queue_name(PRIMARY, 11)}" in out
    assert out.splitlines()[-1] == "drift: 1 missing (2 extra, allowed)"


def test_the_specs_own_example_five_plus_seven_is_clean(admin, capsys, tmp_path):
    # paired-namespaces.md: "if five are requested and contoso/x-servicebus-transfer/7 exists, it
    # stays, unused - a clean pair, not drift".
    _cls, client = admin
    client.list_queues.return_value = [*backlog(5), live_queue("contoso/x-servicebus-transfer/7")]
    report = tmp_path / "drift.json"
    assert run_drift("--count", "5", "--json", str(report)) == 0
    out = capsys.readouterr().out
    assert "EXTRA    contoso/x-servicebus-transfer/7 (beyond backlogQueueCount 5: allowed" in out
    assert out.splitlines()[-1] == "no drift (1 extra, allowed)"
    document = json.loads(report.read_text())
    assert document["drift"] is False and document["extra"] == ["contoso/x-servicebus-transfer/7"]


def test_drift_exits_0_after_the_count_was_lowered(admin):
    _cls, client = admin
    client.list_queues.return_value = backlog(10)  # retained by design after 10 -> 3
    assert run_drift("--count", "3") == 0


def test_an_extra_queue_off_the_table_is_still_drift(admin, capsys):
    _cls, client = admin
    client.list_queues.return_value = [
        *backlog(5),
        live_queue("contoso/x-servicebus-transfer/7", max_delivery_count=10),
    ]
    assert run_drift("--count", "5") == 1
    out = capsys.readouterr().out
    assert any(
        "contoso/x-servicebus-transfer/7" in line and "maxDeliveryCount" in line
        for line in out.splitlines()
        if line.startswith("DRIFT")
    )


def test_a_prefixed_name_without_a_valid_index_is_drift(admin, capsys):
    _cls, client = admin
    client.list_queues.return_value = [*backlog(3), live_queue("contoso/x-servicebus-transfer/01")]
    assert run_drift("--count", "3") == 1
    assert "INVALID  contoso/x-servicebus-transfer/01" in capsys.readouterr().out


def test_other_primaries_queues_and_plain_queues_are_ignored(admin):
    _cls, client = admin
    others = [live_queue(contract.backlog_queue_name("fabrikam", 0), lock_duration=timedelta(seconds=5))]
    client.list_queues.return_value = [*backlog(10), *others, live_queue("contoso-orders")]
    assert run_drift() == 0


def test_json_report_carries_findings(admin, tmp_path):
    _cls, client = admin
    client.list_queues.return_value = backlog(2, q1={"requires_session": True, "lock_duration": timedelta(minutes=2)})
    out = tmp_path / "drift.json"
    assert run_drift("--count", "2", "--json", str(out)) == 1
    report = json.loads(out.read_text())
    assert report["drift"] is True and report["sku"] == "Standard"
    [finding] = report["findings"]
    assert finding["entity"] == contract.backlog_queue_name(PRIMARY, 1)
    assert (finding["property"], finding["expected"]) == ("lockDuration", "PT1M")


def test_namespace_properties_unavailable_still_checks_the_queues(admin):
    _cls, client = admin
    client.get_namespace_properties.side_effect = HttpResponseError("forbidden")
    report = detect_drift(client, secondary=SECONDARY, primary_name=PRIMARY, count=10)
    assert not report.drifted and report.sku is None and report.notes


def test_sign_in_failure_is_a_one_line_user_error(admin, capsys):
    _cls, client = admin
    client.list_queues.side_effect = ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token")
    assert run_drift() == 2
    err = capsys.readouterr().err
    assert "ClientAuthenticationError" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--secondary", "contoso-backlog", "--primary-name", PRIMARY], "--secondary"),
        (["--secondary", SECONDARY, "--primary-name", "contoso.servicebus.windows.net"], "--primary-name"),
        # The one namespace-name rule (contract.is_namespace_name): too short, a reserved suffix in any case.
        (["--secondary", SECONDARY, "--primary-name", "abc"], "--primary-name"),
        (["--secondary", SECONDARY, "--primary-name", "contoso-SB"], "--primary-name"),
        (["--secondary", SECONDARY, "--primary-name", PRIMARY, "--count", "0"], "--count"),
    ],
)
def test_bad_flags_are_user_errors_naming_the_flag(admin, capsys, flags, named):
    assert main(["drift", *flags]) == 2
    assert named in capsys.readouterr().err


def test_values_print_as_the_table_writes_them_iso_durations_and_enum_values(admin, capsys):
    # Issue 36: drift printed `0:00:30` beside `PT1M` and `MessagingSku.STANDARD` for the tier.
    from azure.servicebus.management import MessagingSku

    _cls, client = admin
    client.get_namespace_properties.return_value = namespace(MessagingSku.STANDARD)
    client.list_queues.return_value = backlog(10, q3={"lock_duration": timedelta(seconds=30)})
    assert run_drift() == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"{SECONDARY} (Standard): 10 backlog queues expected")
    assert f"backlog queue {contract.backlog_queue_name(PRIMARY, 3)}: lockDuration expected 'PT1M', got 'PT30S'" in out
    assert "0:00:30" not in out and "MessagingSku" not in out
