from __future__ import annotations

import pytest

from pairedbus.rules import LOCAL_AUTH_DISABLED, MINIMUM_TLS, check_namespace_security, namespace_view


def test_pulumi_input_shape_is_normalised():
    view = namespace_view(
        {
            "namespaceName": "ns",
            "location": "westeurope",
            "sku": {"name": "Premium", "tier": "Premium", "capacity": 2},
            "premiumMessagingPartitions": 2,
        }
    )
    assert (view.name, view.sku, view.partitions, view.requires_partitioned_entities) == ("ns", "Premium", 2, True)


def test_arm_resource_shape_is_normalised():
    view = namespace_view(
        {
            "name": "ns",
            "location": "West Europe",
            "sku": {"name": "Standard"},
            "properties": {"disableLocalAuth": True, "minimumTlsVersion": "1.2"},
        }
    )
    assert (view.sku, view.disable_local_auth, view.minimum_tls_version) == ("Standard", True, "1.2")
    assert not view.requires_partitioned_entities


def test_flat_interface_shape_with_a_string_sku():
    view = namespace_view({"name": "ns", "sku": "premium"})
    assert view.is_premium and view.partitions == 1 and not view.requires_partitioned_entities


def test_secure_namespace_passes():
    assert check_namespace_security({"name": "ns", "disableLocalAuth": True, "minimumTlsVersion": "1.2"}) == []


@pytest.mark.parametrize(
    ("props", "rules"),
    [
        ({"disableLocalAuth": False, "minimumTlsVersion": "1.2"}, [LOCAL_AUTH_DISABLED]),
        ({"disableLocalAuth": True, "minimumTlsVersion": "1.1"}, [MINIMUM_TLS]),
        ({}, [LOCAL_AUTH_DISABLED, MINIMUM_TLS]),
        ({"disableLocalAuth": True, "minimumTlsVersion": "1.3"}, []),
    ],
)
def test_security_baseline(props, rules):
    assert [f.rule for f in check_namespace_security({"name": "ns", **props})] == rules
