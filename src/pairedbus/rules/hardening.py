"""Production hardening that Azure Verified Modules' `avm/res/service-bus/namespace` gives a namespace and a rule
can see before deployment: diagnostic settings on a production namespace.

Without them a namespace's resource logs (OperationalLogs: who created, changed or deleted an entity;
RuntimeAuditLogs; VNetAndIPFilteringLogs) go nowhere, and an incident on a production pair has no trail
(learn.microsoft.com/azure/service-bus-messaging/monitor-service-bus-reference, "Resource logs"). Mirrors
PSRule's Azure.ServiceBus.AuditLogs and the Azure Policy built-in "Resource logs in Service Bus should be enabled".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairedbus.rules.findings import ADVISORY, PRODUCTION_NAMESPACE_DIAGNOSTICS, Finding
from pairedbus.rules.namespace import namespace_view


def _sends_logs(setting: Mapping[str, object]) -> bool:
    """A diagnostic setting with a destination and at least one enabled log category or group."""
    destinations = ("workspaceId", "storageAccountId", "eventHubAuthorizationRuleId", "marketplacePartnerId")
    if not any(key in setting for key in destinations):  # present but unknown (a preview's new workspace) counts
        return False
    logs = setting.get("logs")
    return isinstance(logs, Sequence) and any(
        isinstance(entry, Mapping) and entry.get("enabled") is not False for entry in logs
    )


def check_production_diagnostics(
    namespace: Mapping[str, object], diagnostic_settings: Sequence[Mapping[str, object]]
) -> list[Finding]:
    """A production namespace has a diagnostic setting that sends its resource logs somewhere (an unknown
    destination, not yet created during a preview, counts as one)."""
    if any(_sends_logs(setting) for setting in diagnostic_settings):
        return []
    ns = namespace_view(namespace)
    found = len(diagnostic_settings)
    return [
        Finding(
            rule=PRODUCTION_NAMESPACE_DIAGNOSTICS,
            entity=ns.label,
            namespace=ns.name,
            property="diagnosticSettings",
            expected="a diagnostic setting sending resource logs",
            actual=f"{found} without logs" if found else None,
            severity=ADVISORY,
            message=(
                f"production namespace {ns.label}: no diagnostic setting sends its resource logs anywhere "
                f"(pairedbus:diagnostics; {found} setting(s) found without an enabled log and a destination)"
                if found
                else f"production namespace {ns.label}: no diagnostic settings (set pairedbus:diagnostics to send "
                "its resource logs to Log Analytics)"
            ),
        )
    ]
