"""What Azure Verified Modules' `avm/res/service-bus/namespace` gives a production namespace, for a pair's two:
diagnostic settings (resource logs and metrics to Log Analytics), a management lock, a network rule set for a
namespace that keeps public access, and customer-managed-key encryption (Premium). As the AVM module does it
(Azure/bicep-registry-modules, avm/res/service-bus/namespace/main.bicep): `Microsoft.Authorization/locks@2020-05-01`
scoped to the namespace ("Cannot delete resource or child resources."), `Microsoft.Insights/diagnosticSettings@
2021-05-01-preview` on it, the namespace's `encryption` with keySource Microsoft.KeyVault read through a user-assigned
identity added to the namespace's identities, and a `networkRuleSets` child. Unlike AVM, a rule set here defaults to
Deny (AVM: Allow) and trusted services off (AVM: on), and infrastructure encryption is off unless asked (AVM: on).

Functions, not a component: each takes the owning component's name, the namespace's role and resource and the
component as `parent`, and names its resource `f"{name}-{role}-<what>"`, so two pairs in one program never
collide. `PairedNamespace` calls them; the encryption and identity helpers feed `NamespacePair`'s namespace.
"""

from collections.abc import Callable, Mapping
from typing import Any, cast

import pulumi
from pulumi_azure_native import authorization, monitor, servicebus

from pairedbus.iac.components.options import Inherited
from pairedbus.iac.components.secrecy import as_secret_as
from pairedbus.iac.config import StackConfig
from pairedbus.iac.config.args_mapping import settings_of

#: The diagnostic setting's name on each namespace (unique per resource; one pair owns a namespace).
DIAGNOSTIC_SETTING_NAME = "pairedbus"
#: Resource-specific tables (AZMSOperationalLogs, AZMSRunTimeAuditLogs, ...) rather than AzureDiagnostics, as the
#: Service Bus monitoring data reference lists them (learn.microsoft.com/azure/service-bus-messaging/
#: monitor-service-bus-reference, "Resource logs").
LOG_ANALYTICS_DESTINATION_TYPE = "Dedicated"
#: Every platform metric the namespace exports through diagnostic settings.
ALL_METRICS = "AllMetrics"
#: Category groups, as Azure Monitor names them; anything else in `logs` is a category.
CATEGORY_GROUPS = ("allLogs", "audit")
#: The lock on each namespace: 1-90 characters, none of < > * % & : \ ? / + (ARM naming rules, Microsoft.Authorization).
LOCK_NAME = "pairedbus-cannot-delete"
LOCK_NOTES = (
    "pairedbus: this namespace holds a pair's queues, topics or backlog queues. Remove the lock (namespaceLock: none, "
    "then pulumi up) before deleting or replacing the namespace on purpose."
)


# --- On the namespace itself (NamespacePair) -------------------------------------------------------


def namespace_identity(namespace: Mapping[str, Any]) -> servicebus.IdentityArgs:
    """The system-assigned identity every namespace gets, plus the key's user-assigned identity under CMK."""
    encryption = namespace.get("encryption")
    if not encryption:
        return servicebus.IdentityArgs(type=servicebus.ManagedServiceIdentityType.SYSTEM_ASSIGNED)
    return servicebus.IdentityArgs(
        type=servicebus.ManagedServiceIdentityType.SYSTEM_ASSIGNED_USER_ASSIGNED,
        user_assigned_identities=[encryption["user_assigned_identity_id"]],
    )


def namespace_encryption(namespace: Mapping[str, Any]) -> servicebus.EncryptionArgs | None:
    """The namespace's `encryption` for a customer-managed key (none: Microsoft-managed keys)."""
    encryption = namespace.get("encryption")
    if not encryption:
        return None
    return servicebus.EncryptionArgs(
        key_source=servicebus.KeySource.MICROSOFT_KEY_VAULT,
        key_vault_properties=[
            servicebus.KeyVaultPropertiesArgs(
                key_vault_uri=encryption["key_vault_uri"],
                key_name=encryption["key_name"],
                key_version=encryption.get("key_version"),
                identity=servicebus.UserAssignedIdentityPropertiesArgs(
                    user_assigned_identity=encryption["user_assigned_identity_id"]
                ),
            )
        ],
        require_infrastructure_encryption=bool(encryption.get("require_infrastructure_encryption", False)),
    )


# --- Beside the namespace (PairedNamespace) --------------------------------------------------------


def _options(parent: pulumi.Resource, inherited: Inherited, *, protect: bool = False) -> pulumi.ResourceOptions:
    # What the component hands down (options.py); protect only added, never passed as False.
    return inherited.child(parent, protect=protect)


def diagnostic_setting(
    name: str,
    role: str,
    namespace: servicebus.Namespace,
    workspace_id: pulumi.Input[str],
    settings: Mapping[str, Any],
    parent: pulumi.Resource,
    inherited: Inherited,
) -> monitor.DiagnosticSetting:
    """The namespace's resource logs (and metrics) to a Log Analytics workspace."""
    logs: list[monitor.DiagnosticsLogSettingsArgsDict] = [
        {"category_group": entry, "enabled": True} if entry in CATEGORY_GROUPS else {"category": entry, "enabled": True}
        for entry in settings.get("logs", [CATEGORY_GROUPS[0]])
    ]
    metrics: list[monitor.DiagnosticsMetricSettingsArgsDict] | None = (
        [{"category": ALL_METRICS, "enabled": True}] if settings.get("metrics", True) else None
    )
    return monitor.DiagnosticSetting(
        f"{name}-{role}-diagnostics",
        name=DIAGNOSTIC_SETTING_NAME,
        resource_uri=namespace.id,
        workspace_id=workspace_id,
        log_analytics_destination_type=LOG_ANALYTICS_DESTINATION_TYPE,
        logs=logs,
        metrics=metrics,
        opts=_options(parent, inherited),
    )


def management_lock(
    name: str,
    role: str,
    namespace: servicebus.Namespace,
    level: str,
    parent: pulumi.Resource,
    inherited: Inherited,
    *,
    protect: bool,
) -> authorization.ManagementLockByScope:
    """A lock on the namespace. CanNotDelete: ARM refuses to delete the namespace or anything in it (queues, topics,
    subscriptions) until the lock is gone; reads and updates go on. Protected with the namespace in production, so
    `pulumi destroy` and a replacement stop at it instead of removing the lock first."""
    return authorization.ManagementLockByScope(
        f"{name}-{role}-lock",
        lock_name=LOCK_NAME,
        level=level,
        scope=namespace.id,
        notes=LOCK_NOTES,
        opts=_options(parent, inherited, protect=protect),
    )


def _each(rules: pulumi.Input[list[Any]], rule: Callable[[Any], dict[str, Any]]) -> Any:
    """Each firewall rule as ARM takes it; a list that is an output is mapped when it resolves (its items, outputs
    or not, pass through as they are)."""
    if isinstance(rules, list):
        return [rule(item) for item in rules]
    whole = cast(pulumi.Output[list[Any]], pulumi.Output.from_input(rules))  # not a list: an output of one
    return whole.apply(lambda items: [rule(item) for item in items])


def network_rule_set(
    name: str,
    role: str,
    namespace_name: pulumi.Input[str],
    resource_group_name: pulumi.Input[str],
    settings: Mapping[str, Any],
    parent: pulumi.Resource,
    inherited: Inherited,
) -> servicebus.NamespaceNetworkRuleSet:
    """The public endpoint's firewall. It carries publicNetworkAccess Enabled, as the namespace does (the config
    refuses a rule set on a namespace that denies public access): the rule set's own flag would otherwise win."""
    return servicebus.NamespaceNetworkRuleSet(
        f"{name}-{role}-network-rules",
        namespace_name=namespace_name,
        resource_group_name=resource_group_name,
        default_action=settings.get("default_action", "Deny"),
        public_network_access="Enabled",
        trusted_service_access_enabled=bool(settings.get("trusted_service_access_enabled", False)),
        ip_rules=_each(settings.get("ip_rules", []), lambda mask: {"ip_mask": mask, "action": "Allow"}),
        virtual_network_rules=_each(
            settings.get("virtual_network_rules", []),
            lambda subnet: {"subnet": {"id": subnet}, "ignore_missing_vnet_service_endpoint": False},
        ),
        opts=_options(parent, inherited),
    )


def harden_pair(
    name: str,
    parent: pulumi.Resource,
    config: StackConfig,
    namespaces: Mapping[str, tuple[servicebus.Namespace, pulumi.Input[str]]],
    syphon_workspace_id: pulumi.Input[str],
    inherited: Inherited,
) -> None:
    """What the config asks for on each namespace (by role: the namespace and its resource group name)."""
    for role, (namespace, resource_group_name) in namespaces.items():
        settings = getattr(config, role)
        if config.diagnostics is not None:
            # settings_of, not model_dump: the workspace id may be an output, which model_dump cannot serialise.
            diagnostics = settings_of(config.diagnostics)
            given = config.diagnostics.workspace_id
            workspace = given if given is not None else syphon_workspace_id
            diagnostic_setting(name, role, namespace, workspace, diagnostics, parent, inherited)
        if config.lock_level is not None:
            management_lock(name, role, namespace, config.lock_level, parent, inherited, protect=config.production)
        if settings.network_rule_set is not None:
            rules = settings_of(settings.network_rule_set)  # its rules may be outputs
            namespace_name = as_secret_as(namespace.name, settings.name)
            network_rule_set(name, role, namespace_name, resource_group_name, rules, parent, inherited)
