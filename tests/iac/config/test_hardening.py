"""The production-hardening keys (diagnostics, namespaceLock, networkRuleSet, encryption): their defaults, the
values Azure accepts, and one line naming the key for each value it would refuse."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pairedbus.iac.config import StackConfigError, parse_stack_config
from tests.conftest import BASE_CONFIG, PREMIUM

SUBSCRIPTION = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
IDENTITY = f"{SUBSCRIPTION}/resourceGroups/rg-sec/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-cmk"
WORKSPACE = f"{SUBSCRIPTION}/resourceGroups/rg-logs/providers/Microsoft.OperationalInsights/workspaces/law-central"
SUBNET = f"{SUBSCRIPTION}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/clients"
KEY = {"keyVaultUri": "https://kv-contoso.vault.azure.net", "keyName": "sb-cmk", "userAssignedIdentityId": IDENTITY}


def _config(premium: bool = False, **changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(BASE_CONFIG)
    if premium:
        config["primary"].update(PREMIUM)
        config["secondary"].update(PREMIUM)
    for path, value in changes.items():
        node = config
        *parents, last = path.split("__")
        for part in parents:
            node = node[part]
        node[last] = value
    return config


def _one_problem(config: dict[str, Any]) -> str:
    with pytest.raises(StackConfigError) as info:
        parse_stack_config(config)
    (line,) = info.value.shown
    assert "\n" not in line
    return line


def test_nothing_is_hardened_unless_asked_outside_production() -> None:
    config = parse_stack_config(_config())
    assert config.diagnostics is None and config.lock_level is None
    assert config.primary.network_rule_set is None and config.primary.encryption is None


def test_production_locks_each_namespace_by_default(production_config_dict: dict[str, Any]) -> None:
    assert parse_stack_config(production_config_dict).lock_level == "CanNotDelete"
    assert parse_stack_config({**production_config_dict, "namespaceLock": "none"}).lock_level is None
    assert parse_stack_config(_config(namespaceLock="CanNotDelete")).lock_level == "CanNotDelete"


def test_diagnostics_default_to_all_logs_and_metrics_in_the_syphon_workspace() -> None:
    diagnostics = parse_stack_config(_config(diagnostics={})).diagnostics
    assert diagnostics is not None
    assert (diagnostics.workspace_id, diagnostics.logs, diagnostics.metrics) == (None, ["allLogs"], True)


def test_diagnostics_take_service_bus_categories_and_a_workspace() -> None:
    logs = ["OperationalLogs", "VNetAndIPFilteringLogs", "ApplicationMetricsLogs", "DiagnosticErrorLogs"]
    diagnostics = parse_stack_config(_config(diagnostics={"workspaceId": WORKSPACE, "logs": logs})).diagnostics
    assert diagnostics is not None and diagnostics.logs == logs and diagnostics.workspace_id == WORKSPACE
    premium = parse_stack_config(_config(premium=True, diagnostics={"logs": ["audit", "RuntimeAuditLogs"]}))
    assert premium.diagnostics is not None and premium.diagnostics.logs == ["audit", "RuntimeAuditLogs"]


def test_customer_managed_key_on_premium() -> None:
    key = {**KEY, "keyVersion": "0123456789abcdef0123456789ABCDEF", "requireInfrastructureEncryption": True}
    config = parse_stack_config(_config(premium=True, primary__encryption=key))
    encryption = config.primary.encryption
    assert encryption is not None
    assert (encryption.key_name, encryption.key_version, encryption.require_infrastructure_encryption) == (
        "sb-cmk",
        "0123456789abcdef0123456789ABCDEF",
        True,
    )
    assert config.secondary.encryption is None


def test_network_rule_set_on_a_public_pair() -> None:
    rules = {"ipRules": ["203.0.113.0/24", "198.51.100.7"], "trustedServiceAccessEnabled": True}
    config = parse_stack_config(_config(primary__networkRuleSet=rules))
    assert config.primary.network_rule_set is not None
    assert config.primary.network_rule_set.default_action == "Deny"
    assert config.primary.network_rule_set.ip_rules == ["203.0.113.0/24", "198.51.100.7"]
    premium = parse_stack_config(_config(premium=True, secondary__networkRuleSet={"virtualNetworkRules": [SUBNET]}))
    assert premium.secondary.network_rule_set is not None
    assert premium.secondary.network_rule_set.virtual_network_rules == [SUBNET]


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "a customer-managed key on Standard",
        _config(primary__encryption=KEY),
        "pairedbus:primary.encryption: expected none for a Standard namespace (customer-managed keys are Premium only)",
    ),
    (
        "a key vault URI that is not a vault",
        _config(premium=True, secondary__encryption={**KEY, "keyVaultUri": "https://example.com"}),
        "pairedbus:secondary.encryption.keyVaultUri: expected a key vault URI",
    ),
    (
        "a key name with an underscore",
        _config(premium=True, primary__encryption={**KEY, "keyName": "sb_cmk"}),
        "pairedbus:primary.encryption.keyName: expected a Key Vault key name",
    ),
    (
        "a key version that is not 32 hex digits",
        _config(premium=True, primary__encryption={**KEY, "keyVersion": "latest"}),
        "pairedbus:primary.encryption.keyVersion: expected 32 hexadecimal digits",
    ),
    (
        "a system identity's id as the key's identity",
        _config(premium=True, primary__encryption={**KEY, "userAssignedIdentityId": "SystemAssigned"}),
        "pairedbus:primary.encryption.userAssignedIdentityId: expected a user-assigned identity's ARM id",
    ),
    (
        "a key without its identity",
        _config(premium=True, primary__encryption={k: v for k, v in KEY.items() if k != "userAssignedIdentityId"}),
        "pairedbus:primary.encryption.userAssignedIdentityId",
    ),
    (
        "infrastructure encryption as a string",
        _config(premium=True, primary__encryption={**KEY, "requireInfrastructureEncryption": "true"}),
        "pairedbus:primary.encryption.requireInfrastructureEncryption",
    ),
    (
        "a read-only lock",
        _config(namespaceLock="ReadOnly"),
        "pairedbus:namespaceLock: expected 'CanNotDelete' or 'none'",
    ),
    ("a lock as a boolean", _config(namespaceLock=True), "pairedbus:namespaceLock"),
    (
        "an unknown log category",
        _config(diagnostics={"logs": ["AuditEvent"]}),
        "pairedbus:diagnostics.logs: expected each of allLogs, audit, OperationalLogs",
    ),
    (
        "a log category in the wrong case",
        _config(diagnostics={"logs": ["operationallogs"]}),
        "pairedbus:diagnostics.logs: expected each of",
    ),
    ("no log category at all", _config(diagnostics={"logs": []}), "pairedbus:diagnostics.logs: expected at least one"),
    (
        "a category twice",
        _config(diagnostics={"logs": ["allLogs", "allLogs"]}),
        "pairedbus:diagnostics.logs: expected each category or group once",
    ),
    (
        "runtime audit logs from a Standard pair",
        _config(diagnostics={"logs": ["RuntimeAuditLogs"]}),
        "pairedbus:diagnostics.logs: expected no RuntimeAuditLogs while primary is Standard",
    ),
    (
        "a storage account as the workspace",
        _config(
            diagnostics={
                "workspaceId": f"{SUBSCRIPTION}/resourceGroups/g/providers/Microsoft.Storage/storageAccounts/s"
            }
        ),
        "pairedbus:diagnostics.workspaceId: expected a Log Analytics workspace's ARM id",
    ),
    (
        "an unknown diagnostics key",
        _config(diagnostics={"retentionDays": 30}),
        "pairedbus:diagnostics.retentionDays",
    ),
    (
        "an IPv6 rule",
        _config(primary__networkRuleSet={"ipRules": ["2001:db8::/32"]}),
        "pairedbus:primary.networkRuleSet.ipRules[0]: expected an IPv4 address or CIDR range",
    ),
    (
        "a range with host bits set",
        _config(primary__networkRuleSet={"ipRules": ["203.0.113.7/24"]}),
        "pairedbus:primary.networkRuleSet.ipRules[0]: expected an IPv4 address or CIDR range",
    ),
    (
        "129 IP rules",
        _config(primary__networkRuleSet={"ipRules": [f"10.0.{i // 256}.{i % 256}" for i in range(129)]}),
        "pairedbus:primary.networkRuleSet.ipRules: expected at most 128",
    ),
    (
        "a virtual network rule on Standard",
        _config(primary__networkRuleSet={"virtualNetworkRules": [SUBNET]}),
        "pairedbus:primary.networkRuleSet.virtualNetworkRules: expected none for a Standard namespace",
    ),
    (
        "rules that Allow would ignore",
        _config(primary__networkRuleSet={"defaultAction": "Allow", "ipRules": ["203.0.113.0/24"]}),
        "pairedbus:primary.networkRuleSet.defaultAction: expected 'Deny' when ipRules or virtualNetworkRules are given",
    ),
    (
        "a default action in the wrong case",
        _config(primary__networkRuleSet={"defaultAction": "deny"}),
        "pairedbus:primary.networkRuleSet.defaultAction: expected 'Allow' or 'Deny'",
    ),
    (
        "a rule set on a namespace without public access",
        _config(premium=True, primary__publicNetworkAccess="SecuredByPerimeter", primary__networkRuleSet={}),
        "pairedbus:primary.networkRuleSet: expected none when publicNetworkAccess is 'SecuredByPerimeter'",
    ),
]


@pytest.mark.parametrize(("config", "expected"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_hardening_value_azure_would_refuse_gets_one_line_naming_its_key(
    config: dict[str, Any], expected: str
) -> None:
    assert expected in _one_problem(config)


def test_a_network_rule_set_on_a_private_production_namespace_is_refused(
    production_config_dict: dict[str, Any],
) -> None:
    production_config_dict["secondary"]["networkRuleSet"] = {"ipRules": ["203.0.113.0/24"]}
    assert _one_problem(production_config_dict).startswith(
        "pairedbus:secondary.networkRuleSet: expected none when publicNetworkAccess is 'Disabled'"
    )
