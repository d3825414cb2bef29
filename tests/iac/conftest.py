"""Fixtures for the infrastructure tests on top of the repository-wide ones (tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

_SUB = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/resourceGroups"
#: Private connectivity for a production pair: a namespace that denies public access needs it.
NETWORK: dict[str, str] = {
    "privateEndpointSubnetId": f"{_SUB}/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-pe",
    "privateDnsZoneId": f"{_SUB}/rg-dns/providers/Microsoft.Network/privateDnsZones/privatelink.servicebus.windows.net",
    "syphonInfrastructureSubnetId": f"{_SUB}/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/snet-env",
}


@pytest.fixture
def production_config_dict(production_config_dict: dict[str, Any]) -> dict[str, Any]:
    """The repository-wide production config, with the private connectivity it now requires."""
    production_config_dict["network"] = dict(NETWORK)
    return production_config_dict
