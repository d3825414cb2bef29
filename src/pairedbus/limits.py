"""Azure's limits, each with the source it comes from: what the stack config is checked against, and the
entity-property limits the fake and the drill check too.

These are Azure's numbers, not the spec's: the spec's own names and numbers stay in
`pairedbus.contract`. No Pulumi, no SDK: the runtime, the fake and the IaC all import it. Sources, as cited on
each constant:

- [admin] azure-sdk-for-net, `sdk/servicebus/Azure.Messaging.ServiceBus/src/Administration/
  AdministrationClientConstants.cs`: the .NET administration client's own validation.
- [arm-sb] azure-rest-api-specs, `specification/servicebus/resource-manager/Microsoft.ServiceBus/
  stable/2024-01-01/openapi.json` (and the 2026-01-01 API pulumi-azure-native 3.x uses for
  servicebus, see `pulumi_azure_native/servicebus/queue.py`), plus the `azure.mgmt.servicebus`
  model docstrings generated from it.
- [arm-common] azure-rest-api-specs, `specification/common-types/resource-management/v6/types.json`.
- [quotas] learn.microsoft.com/azure/service-bus-messaging/service-bus-quotas.
- [naming] learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
  (Microsoft.ServiceBus, Microsoft.Resources).
- [tags] learn.microsoft.com/azure/azure-resource-manager/management/tag-resources ("Limitations").
- [aca] learn.microsoft.com/azure/container-apps/containers ("Allocations").
- [image] the distribution/reference grammar Docker and OCI registries parse image names with.
- [arm-id] learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules and the
  ARM resource id form `/subscriptions/{guid}/resourceGroups/{group}/providers/{namespace}/{type}/{name}`
  (segments compared without regard to case); [sb-dns]
  learn.microsoft.com/azure/private-link/private-endpoint-dns ("Azure Service Bus ... namespace ...
  privatelink.servicebus.windows.net").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from pairedbus import contract

# --- Entity properties ([admin], [arm-sb]): the stack config, the fake and the drill check these ---------

#: [admin] MinimumAllowedTimeToLive = 1 s; MaximumAllowedTimeToLive = TimeSpan.MaxValue.
MIN_TIME_TO_LIVE: Final = timedelta(seconds=1)
#: [admin] MinimumLockDuration = 5 s, MaximumLockDuration = 5 min ([arm-sb]: "The maximum value
#: for LockDuration is 5 minutes").
MIN_LOCK_DURATION: Final = timedelta(seconds=5)
MAX_LOCK_DURATION: Final = timedelta(minutes=5)
#: [admin] MinimumAllowedAutoDeleteOnIdle = 5 min ([arm-sb]: "The minimum duration is 5 minutes").
MIN_AUTO_DELETE_ON_IDLE: Final = timedelta(minutes=5)
#: [admin] Minimum/MaximumDuplicateDetectionHistoryTimeWindow = 20 s / 7 days.
MIN_DUPLICATE_DETECTION_WINDOW: Final = timedelta(seconds=20)
MAX_DUPLICATE_DETECTION_WINDOW: Final = timedelta(days=7)
#: [admin] MinAllowedMaxDeliveryCount = 1; the wire type is a .NET int32.
MIN_MAX_DELIVERY_COUNT: Final = 1
MAX_MAX_DELIVERY_COUNT: Final = contract.INT32_MAX

# --- Names ---------------------------------------------------------------------------------

#: Namespace names: `contract.is_namespace_name` ([arm-sb] and [naming] agree with it).
#: Entity and subscription name lengths: `contract.ENTITY_NAME_MAX`, `contract.SUBSCRIPTION_NAME_MAX`.
#: [naming] queues/topics/subscriptions: letters, digits, '.', '-', '_'; start and end with a letter
#: or digit. ('/' is allowed by the data plane but ARM cannot address such a name.)
ENTITY_NAME: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
#: [arm-common] ResourceGroupNameParameter: minLength 1, maxLength 90, pattern ^[-\w\._\(\)]+$
#: (\w is Unicode letters, digits and '_'); [naming]: it cannot end in a period. Case-insensitive.
RESOURCE_GROUP_NAME_MAX: Final = 90
RESOURCE_GROUP_NAME: Final = re.compile(r"^[-\w._()]+$")

# --- Tags ([tags], "Limitations") ----------------------------------------------------------

#: "Each resource, resource group, and subscription can have a maximum of 50 tag name-value pairs."
MAX_TAGS_PER_RESOURCE: Final = 50
#: "The tag name has a limit of 512 characters and the tag value has a limit of 256 characters."
TAG_NAME_MAX: Final = 512
TAG_VALUE_MAX: Final = 256
#: "Tag names can't contain these characters: <, >, %, &, \, ?, /"
TAG_NAME_FORBIDDEN_CHARACTERS: Final = "<>%&\\?/"
#: Tags this project adds to namespaces on top of the stack's own (role and pair; the backlog count on the secondary).
RESERVED_TAGS: Final = (contract.TAG_ROLE, contract.TAG_PAIR, contract.TAG_BACKLOG_QUEUE_COUNT)

# --- Topics ([quotas]) -----------------------------------------------------------------------

#: "Number of subscriptions per topic: 2,000 per-topic for the Standard and Premium tiers."
MAX_SUBSCRIPTIONS_PER_TOPIC: Final = 2_000

# --- Container Apps ([aca]) and images ([image]) ----------------------------------------------

#: Consumption plan: CPU 0.25-2.0 in steps of 0.25, memory twice the CPU in GiB.
SYPHON_CPU_VALUES: Final = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
#: distribution/reference: [domain[:port]/]path-component(/path-component)*[:tag][@digest];
#: path components lower case; tag up to 128 characters; whole name up to 255 characters.
IMAGE_NAME_MAX: Final = 255
#: Name, ':' and a 128-character tag, '@' and a sha512 digest: longer is no reference at all.
IMAGE_REFERENCE_MAX: Final = IMAGE_NAME_MAX + 1 + 128 + 1 + len("sha512:") + 128
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
IMAGE_REFERENCE: Final = re.compile(
    rf"^(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$"
)


# --- Network ([arm-id], [sb-dns]) -----------------------------------------------------------------

_SUBSCRIPTION = r"/subscriptions/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_GROUP = r"/resourceGroups/[-\w._()]{1,90}"
#: A virtual network subnet: .../providers/Microsoft.Network/virtualNetworks/{vnet}/subnets/{subnet}.
#: Names: virtual networks 2-64, subnets 1-80 characters of letters, digits, '_', '.', '-' ([naming]).
SUBNET_ID: Final = re.compile(
    rf"(?i)^{_SUBSCRIPTION}{_GROUP}/providers/Microsoft\.Network/virtualNetworks/[\w.-]{{2,64}}/subnets/[\w.-]{{1,80}}$"
)
#: A container registry: .../providers/Microsoft.ContainerRegistry/registries/{registry}, the registry name 5-50
#: letters and digits ([naming]: "Microsoft.ContainerRegistry registries 5-50 Alphanumerics"), the group name
#: not ending in '.' (so no `..` segment can pass as one), nothing after the name.
REGISTRY_ID: Final = re.compile(
    rf"(?i)^{_SUBSCRIPTION}/resourceGroups/[-\w._()]{{0,89}}[-\w_()]"
    r"/providers/Microsoft\.ContainerRegistry/registries/[a-zA-Z0-9]{5,50}$"
)
#: The private DNS zone Service Bus private endpoints register in (Azure public cloud) [sb-dns].
SERVICE_BUS_PRIVATE_DNS_ZONE: Final = "privatelink.servicebus.windows.net"
PRIVATE_DNS_ZONE_ID: Final = re.compile(
    rf"(?i)^{_SUBSCRIPTION}{_GROUP}/providers/Microsoft\.Network/privateDnsZones/"
    + re.escape(SERVICE_BUS_PRIVATE_DNS_ZONE)
    + "$"
)


# --- Production hardening (what Azure Verified Modules' avm/res/service-bus/namespace sets) ---------
# Sources: [quotas]; [sb-net] learn.microsoft.com/azure/service-bus-messaging/network-security and
# service-bus-ip-filtering ("IP firewall rules are applied at the namespace level", IPv4 only);
# [sb-cmk] learn.microsoft.com/azure/service-bus-messaging/configure-customer-managed-key;
# [kv-names] learn.microsoft.com/azure/key-vault/general/about-keys-secrets-certificates ("Object
# identifiers": vault names 3-24 characters; object names 1-127 letters, digits and '-'; a version
# is 32 hexadecimal digits); [sb-monitor] learn.microsoft.com/azure/service-bus-messaging/
# monitor-service-bus-reference ("Resource logs") and learn.microsoft.com/azure/azure-monitor/
# reference/supported-logs/microsoft-servicebus-namespaces-logs.

#: [quotas] IP filter rules and virtual network rules per namespace: 128 of each (the same bound ARM enforces on
#: the network rule set's ipRules and virtualNetworkRules).
MAX_IP_RULES: Final = 128
MAX_VIRTUAL_NETWORK_RULES: Final = 128
#: [kv-names] https://{vault}.vault.azure.net (or another cloud's vault domain, or a managed HSM), optionally with '/'.
KEY_VAULT_URI: Final = re.compile(
    r"^https://[A-Za-z][A-Za-z0-9-]{1,22}[A-Za-z0-9]\.(?:vault|managedhsm)\.(?:azure\.net|azure\.cn|usgovcloudapi\.net)/?$"
)
KEY_NAME: Final = re.compile(r"^[A-Za-z0-9-]{1,127}$")
KEY_VERSION: Final = re.compile(r"^[0-9a-fA-F]{32}$")
#: [arm-id] a user-assigned managed identity: .../providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}
#: (3-128 letters, digits, '-', '_', [naming]).
USER_ASSIGNED_IDENTITY_ID: Final = re.compile(
    rf"(?i)^{_SUBSCRIPTION}{_GROUP}/providers/Microsoft\.ManagedIdentity/userAssignedIdentities/[\w-]{{3,128}}$"
)
#: [arm-id] a Log Analytics workspace: .../providers/Microsoft.OperationalInsights/workspaces/{name} (4-63, [naming]).
LOG_ANALYTICS_WORKSPACE_ID: Final = re.compile(
    rf"(?i)^{_SUBSCRIPTION}{_GROUP}/providers/Microsoft\.OperationalInsights/workspaces/[A-Za-z0-9-]{{4,63}}$"
)
#: [sb-monitor] Service Bus's resource log categories and the category groups Azure Monitor defines over them.
SERVICE_BUS_LOG_CATEGORIES: Final = (
    "OperationalLogs",
    "VNetAndIPFilteringLogs",
    "RuntimeAuditLogs",
    "ApplicationMetricsLogs",
    "DiagnosticErrorLogs",
)
LOG_CATEGORY_GROUPS: Final = ("allLogs", "audit")
#: [sb-monitor] "Runtime audit logs are currently available only in premium tier" (AZMSRunTimeAuditLogs).
PREMIUM_ONLY_LOG_CATEGORIES: Final = ("RuntimeAuditLogs",)


# --- Names azure-native makes from a component's name -----------------------------------------------
# Sources: [autoname] pulumi/pulumi-azure-native, provider/pkg/provider (`getDefaultName`): a resource whose name
# the program leaves out is named after its Pulumi name plus `resource.NewUniqueHex(name, 8, 0)`, 8 random
# hexadecimal digits (strategy `random`; the provider's own test: `test` -> `test614742c2`), or a random GUID
# (strategy `uuid`: role assignments, "It can be any valid GUID"). [aca-name] PSRule.Rules.Azure
# Azure.ContainerApp.Name (`^([a-z][0-9a-z-]{0,30}[0-9a-z])$`, 2-32) and ARM's own refusal ("A name must consist
# of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric
# character and cannot have '--'. The length must not be more than 32 characters."). [naming] Microsoft.App
# managedEnvironments 2-60 alphanumerics and hyphens, starting with a letter and ending with an alphanumeric;
# [uai-name] PSRule.Rules.Azure Azure.Identity.UserAssignedName (`^[a-zA-Z0-9][a-zA-Z0-9\-_]{2,127}$`);
# [log-name] PSRule.Rules.Azure Azure.Log.Name and LOG_ANALYTICS_WORKSPACE_ID above (4-63 letters, digits and
# '-', starting and ending with a letter or digit).

#: [autoname] Random hexadecimal digits azure-native appends to a Pulumi name to make a resource's name.
AUTONAME_SUFFIX_LENGTH: Final = 8


@dataclass(frozen=True)
class NameRule:
    """What ARM accepts as one resource type's name."""

    resource_type: str
    min_length: int
    max_length: int
    pattern: re.Pattern[str]
    #: The rule in words, for the one line that refuses a name.
    described: str
    #: Whether two hyphens in a row are refused (Container Apps).
    no_double_hyphen: bool = False

    def accepts(self, name: str) -> bool:
        return (
            self.min_length <= len(name) <= self.max_length
            and self.pattern.fullmatch(name) is not None
            and not (self.no_double_hyphen and "--" in name)
        )


CONTAINER_APP_NAME: Final = NameRule(
    "Microsoft.App/containerApps",
    2,
    32,
    re.compile(r"[a-z][a-z0-9-]*[a-z0-9]"),
    "2-32 lower-case letters, digits and '-', starting with a letter, ending with a letter or digit, no '--'",
    no_double_hyphen=True,
)
MANAGED_ENVIRONMENT_NAME: Final = NameRule(
    "Microsoft.App/managedEnvironments",
    2,
    60,
    re.compile(r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]"),
    "2-60 letters, digits and '-', starting with a letter, ending with a letter or digit",
)
USER_ASSIGNED_IDENTITY_NAME: Final = NameRule(
    "Microsoft.ManagedIdentity/userAssignedIdentities",
    3,
    128,
    re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*"),
    "3-128 letters, digits, '-' and '_', starting with a letter or digit",
)
LOG_ANALYTICS_WORKSPACE_NAME: Final = NameRule(
    "Microsoft.OperationalInsights/workspaces",
    4,
    63,
    re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]"),
    "4-63 letters, digits and '-', starting and ending with a letter or digit",
)
