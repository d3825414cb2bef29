"""The backlog provider through the real azure-servicebus `ServiceBusAdministrationClient`, its real
pipeline (bearer-token policy, XML serializer, requests transport, TLS) against an HTTPS recorder on
127.0.0.1: the ATOM bodies it sends carry every table value of paired-namespaces.md, and no duration
above .NET TimeSpan.MaxValue (`P10675199DT2H48M5.4775807S`), on create, adopt, update and read.

Only two things are swapped: the credential (a fake token, never the default chain) and the host
the client is pointed at (the recorder instead of `<namespace>.servicebus.windows.net`).
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.servicebus.management import ServiceBusAdministrationClient

from pairedbus.durations import duration_ticks
from pairedbus.iac import backlog_provider as module
from pairedbus.iac.backlog_provider import BacklogQueueProvider, DataPlaneAuth

from .atom_recorder import DURATION_ELEMENTS, Recorder, self_signed_certificate

SECONDARY = "contoso-sec"
NAME = "contoso/x-servicebus-transfer/0"
#: TimeSpan.MaxValue, to the tick (Int64.MaxValue ticks of 100 ns).
TIMESPAN_MAX = "P10675199DT2H48M5.4775807S"
TIMESPAN_MAX_TICKS = 9_223_372_036_854_775_807
#: The spec's table in ARM names, written out as the spec states it.
INPUTS: dict[str, Any] = {
    "namespaceName": SECONDARY,
    "queueName": NAME,
    "maxSizeInMegabytes": 5120,
    "maxDeliveryCount": 2147483647,
    "defaultMessageTimeToLive": TIMESPAN_MAX,
    "autoDeleteOnIdle": TIMESPAN_MAX,
    "lockDuration": "PT1M",
    "deadLetteringOnMessageExpiration": True,
    "enableBatchedOperations": True,
}
#: The same table as the ATOM `QueueDescription` elements the service reads.
WIRE_TABLE = {
    "MaxSizeInMegabytes": "5120",
    "MaxDeliveryCount": "2147483647",
    "LockDuration": "PT1M",
    "DeadLetteringOnMessageExpiration": "true",
    "EnableBatchedOperations": "true",
}
AT_MAXIMUM = ("DefaultMessageTimeToLive", "AutoDeleteOnIdle")


class FakeCredential:
    """A TokenCredential that hands out a fixed token (tests never touch the default chain)."""

    def get_token(self, *_scopes: str, **_kwargs: Any) -> AccessToken:
        return AccessToken("recorder-token", int(time.time()) + 3600)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def recorder(certificate, monkeypatch):
    with Recorder(*certificate) as running:

        def admin_client_at_recorder(fqdn: str, credential: Any, **kwargs: Any) -> ServiceBusAdministrationClient:
            assert fqdn == f"{SECONDARY}.servicebus.windows.net"  # what the provider would dial
            assert isinstance(credential, FakeCredential)
            return ServiceBusAdministrationClient(
                running.address, credential, connection_verify=str(running.ca_path), retry_total=0, **kwargs
            )

        monkeypatch.setattr(module, "ServiceBusAdministrationClient", admin_client_at_recorder)
        monkeypatch.setattr("azure.identity.DefaultAzureCredential", FakeCredential)
        yield running


@pytest.fixture
def provider() -> BacklogQueueProvider:
    return BacklogQueueProvider(DataPlaneAuth(), rbac_timeout=timedelta(0))


def assert_table_on_the_wire(sent: dict[str, str]) -> None:
    """Every table value, as the service would read it; durations at or below TimeSpan.MaxValue."""
    for element, value in WIRE_TABLE.items():
        assert sent[element] == value, element
    for element in AT_MAXIMUM:
        ticks = duration_ticks(sent[element])
        assert ticks <= TIMESPAN_MAX_TICKS, f"{element}={sent[element]} is above TimeSpan.MaxValue"
        assert TIMESPAN_MAX_TICKS - ticks < 10, f"{element}={sent[element]} is not the maximum"  # within 1 us


def assert_no_duration_above_the_maximum(recorder: Recorder) -> None:
    for exchange in recorder.service.writes():
        sent = exchange.queue_description()
        for element in DURATION_ELEMENTS:
            if element in sent:
                assert duration_ticks(sent[element]) <= TIMESPAN_MAX_TICKS, (element, sent[element])
        assert exchange.status in (200, 201), exchange.status


def test_create_sends_the_table_and_reads_it_back_without_drift(recorder, provider) -> None:
    result = provider.create(dict(INPUTS))

    methods = [(e.method, e.path.split("?")[0]) for e in recorder.service.exchanges]
    assert methods == [("GET", "/contoso%2Fx-servicebus-transfer%2F0"), ("PUT", "/contoso%2Fx-servicebus-transfer%2F0")]
    put = recorder.service.writes()[0]
    assert put.headers["authorization"] == "Bearer recorder-token"
    assert "if-match" not in put.headers  # a create, not an update
    assert_table_on_the_wire(put.queue_description())
    assert_no_duration_above_the_maximum(recorder)

    assert result.id == NAME and result.outs["adopted"] is False
    assert {k: result.outs[k] for k in INPUTS} == INPUTS  # the service's answer maps back to the table
    assert provider.diff(NAME, result.outs, dict(INPUTS)).changes is False


def test_adopting_a_drifted_queue_sends_nothing_then_update_restores_the_table(recorder, provider) -> None:
    recorder.service.put_queue(
        NAME, MaxDeliveryCount="10", DefaultMessageTimeToLive="P14D", LockDuration="PT30S", MaxSizeInMegabytes="1024"
    )
    created = provider.create(dict(INPUTS))
    assert [e.method for e in recorder.service.exchanges] == ["GET"]  # adopt: no write
    assert created.outs["adopted"] is True
    assert created.outs["maxDeliveryCount"] == 10 and created.outs["defaultMessageTimeToLive"] == "P14D"
    diff = provider.diff(NAME, created.outs, dict(INPUTS))
    assert diff.changes is True and diff.replaces == []

    updated = provider.update(NAME, created.outs, dict(INPUTS))
    put = recorder.service.writes()[0]
    assert put.headers["if-match"] == "*"  # an update of the existing entity
    assert_table_on_the_wire(put.queue_description())
    assert_no_duration_above_the_maximum(recorder)
    assert {k: updated.outs[k] for k in INPUTS} == INPUTS
    assert updated.outs["adopted"] is True
    assert provider.diff(NAME, updated.outs, dict(INPUTS)).changes is False


def test_update_of_a_queue_the_service_reports_at_the_maximum_stays_at_or_below_it(recorder, provider) -> None:
    # The service reports TimeSpan.MaxValue; the SDK reads it as ...5.477581 (rounded up). The
    # update body must not echo that back: every duration it carries is checked.
    recorder.service.put_queue(NAME, MaxDeliveryCount="10")
    olds = provider.read(NAME, dict(INPUTS)).outs
    provider.update(NAME, olds, dict(INPUTS))
    assert_table_on_the_wire(recorder.service.writes()[0].queue_description())
    assert_no_duration_above_the_maximum(recorder)


def test_read_of_a_queue_at_the_maximum_is_no_drift(recorder, provider) -> None:
    recorder.service.put_queue(
        NAME,
        MaxSizeInMegabytes="5120",
        MaxDeliveryCount="2147483647",
        LockDuration="PT1M",
        DeadLetteringOnMessageExpiration="true",
        EnableBatchedOperations="true",
        DefaultMessageTimeToLive=TIMESPAN_MAX,
        AutoDeleteOnIdle=TIMESPAN_MAX,
    )
    read = provider.read(NAME, dict(INPUTS))
    assert [e.method for e in recorder.service.exchanges] == ["GET"]
    assert read.id == NAME
    assert read.outs["defaultMessageTimeToLive"] == TIMESPAN_MAX
    assert read.outs["autoDeleteOnIdle"] == TIMESPAN_MAX
    assert {k: read.outs[k] for k in INPUTS} == INPUTS
    assert provider.diff(NAME, read.outs, dict(INPUTS)).changes is False


def test_read_of_what_the_provider_wrote_is_no_drift(recorder, provider) -> None:
    provider.create(dict(INPUTS))
    stored = recorder.service.queues[NAME]
    assert duration_ticks(stored["DefaultMessageTimeToLive"]) <= TIMESPAN_MAX_TICKS
    read = provider.read(NAME, dict(INPUTS))
    assert provider.diff(NAME, read.outs, dict(INPUTS)).changes is False


def test_read_of_a_missing_queue_is_gone(recorder, provider) -> None:
    assert provider.read(NAME, dict(INPUTS)).id is None


def test_the_recorder_refuses_what_the_sdk_makes_of_an_iso_string_at_the_maximum(recorder) -> None:
    """Why the provider hands the SDK timedeltas: given the spec's string, the SDK's isodate-based
    serializer rounds it *up* (`...5.477581S`) and the service refuses it. This is the failure the
    wire test above would show if the provider passed strings through."""
    client = module.ServiceBusAdministrationClient(f"{SECONDARY}.servicebus.windows.net", FakeCredential())
    with client, pytest.raises(HttpResponseError):
        client.create_queue(NAME, default_message_time_to_live=TIMESPAN_MAX)
    sent = recorder.service.writes()[0].queue_description()
    assert sent["DefaultMessageTimeToLive"] == "P10675199DT2H48M5.477581S"
    assert recorder.service.writes()[0].status == 400
