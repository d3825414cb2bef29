"""Every resource the repository's stacks render, checked against ARM's own definitions for the API
version pulumi-azure-native uses, plus the service limits the specs do not carry.

Sources of truth (none of them this project's own models):

- The generated models of the `azure-mgmt-*` package whose API version is the one the installed
  pulumi-azure-native documents for that resource ("Uses Azure REST API version X"), pinned in
  pyproject's `dev` extra. `arm.py` reads names, types, enums, required, read-only and the
  msrest models' `_validation` constraints from them.
- The azure-rest-api-specs JSON of the same API version for what the generated code lost (path
  parameters' lengths and patterns; the TypeSpec-generated Service Bus models carry no
  constraints at all), restated below with the file and commit.
- The service docs for limits the specs do not carry (Service Bus quotas, Container Apps probes
  and sizes, tags), each with its page.

A mismatch is reported as one line: stack, resource, property path, rule, value.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pulumi_azure_native
import pytest
from azure.mgmt.appcontainers import models as app_models
from azure.mgmt.authorization.v2022_04_01 import models as authorization_models
from azure.mgmt.loganalytics import models as loganalytics_models
from azure.mgmt.monitor.v2021_05_01_preview import models as monitor_models
from azure.mgmt.msi.v2023_01_31 import models as msi_models
from azure.mgmt.network import models as network_models
from azure.mgmt.resource.locks import models as lock_models
from azure.mgmt.resource.resources.v2024_07_01 import models as resource_models
from azure.mgmt.servicebus import models as servicebus_models
from pulumi.runtime import rpc

from pairedbus import contract
from pairedbus.iac.render import PulumiProject
from pairedbus.iac.render import mocks as render_mocks
from pairedbus.iac.render import program as render_module
from pairedbus.plans.model import Plan
from tests.iac.conformance.arm import (
    Definition,
    Limit,
    Mismatch,
    Prop,
    check_resource,
    duration_seconds,
    model_api_version,
    properties_of,
    reachable_models,
)
from tests.iac.names import program_name

REPO = Path(__file__).resolve().parents[3]
STACKS = ("dev", "staging", "prod")

# ---------------------------------------------------------------------------------------------
# Path parameters: azure-native takes them as inputs beside the body. Their constraints are in the
# spec JSON only (the generated clients build URLs without them).
#
# Azure/azure-rest-api-specs @ 073de7191d99d2e6dda68511a0433e5d3721582e,
#   specification/common-types/resource-management/v6/types.json, parameters.ResourceGroupNameParameter:
#   minLength 1, maxLength 90, pattern ^[-\w\._\(\)]+$ (every spec below $refs it).
_RESOURCE_GROUP_NAME = Prop(
    wire="{resourceGroupName}", kind="string", required=True, min_length=1, max_length=90, pattern=r"^[-\w\._\(\)]+$"
)
# Azure/azure-rest-api-specs @ 3761470bb7dc1c0130e89d1eddcbbdbc6634aa05,
#   specification/servicebus/resource-manager/Microsoft.ServiceBus/ServiceBus/stable/2026-01-01/servicebus.json:
#   namespaceName minLength 6 maxLength 50; topicName (and queueName) minLength 1.
_NAMESPACE_NAME = Prop(wire="{namespaceName}", kind="string", required=True, min_length=6, max_length=50)
_ENTITY_NAME = Prop(wire="{entityName}", kind="string", required=True, min_length=1)
# Same file (and every earlier Service Bus spec): subscriptionName minLength 1, maxLength 50.
_SUBSCRIPTION_NAME = Prop(wire="{subscriptionName}", kind="string", required=True, min_length=1, max_length=50)
# Path parameters azure-native fills in itself when the program gives none (auto-naming, or a new
# GUID for a role assignment's name): known names, nothing to check in the render.
_AUTO_NAMED = Prop(wire="{autoNamed}", kind="string")
# Role assignments: PUT {scope}/providers/Microsoft.Authorization/roleAssignments/{roleAssignmentName}
# (authorization-RoleAssignmentsCalls.json 2022-04-01; scope is the common-types ScopeParameter,
# minLength 1, x-ms-skip-url-encoding).
_SCOPE = Prop(wire="{scope}", kind="string", required=True, min_length=1)

_SB_PATH = {"resourceGroupName": _RESOURCE_GROUP_NAME, "namespaceName": _NAMESPACE_NAME}
# Azure/azure-rest-api-specs, specification/network/resource-manager/Microsoft.Network/stable/2024-05-01/
#   privateEndpoint.json: privateEndpointName and privateDnsZoneGroupName are plain required strings in the
#   path (no length or pattern); their naming rules are the docs' (_PRIVATE_ENDPOINT_NAME below).
_PRIVATE_ENDPOINT_PATH = {
    "resourceGroupName": _RESOURCE_GROUP_NAME,
    "privateEndpointName": Prop(wire="{privateEndpointName}", kind="string", required=True),
}

# ---------------------------------------------------------------------------------------------
# Service limits the specs do not carry (or carry only in a description), per property path.
#
# Service Bus quotas: https://learn.microsoft.com/azure/service-bus-messaging/service-bus-quotas
#   "Maximum size of any messaging entity path: queue or topic: 260 characters"; "namespace,
#   subscription, or subscription rule: 50 characters"; queue or topic size "1, 2, 3, 4 GB or 5 GB",
#   80 GB in Premium and for partitioned Standard entities.
# Lock duration: the 2026-01-01 spec's own description ("The maximum value for LockDuration is 5
#   minutes") and the .NET administration client's validation, Azure/azure-sdk-for-net @
#   a256d07e7edbfbbd31bcfa3b1d5266907bb30397, sdk/servicebus/Azure.Messaging.ServiceBus/src/Administration/
#   AdministrationClientConstants.cs: MinimumAllowedTimeToLive 1 s, MaximumAllowedTimeToLive
#   TimeSpan.MaxValue, MinimumLockDuration 5 s, MaximumLockDuration 5 min, MinimumAllowedAutoDeleteOnIdle
#   5 min, MinimumDuplicateDetectionHistoryTimeWindow 20 s, MaximumDuplicateDetectionHistoryTimeWindow
#   7 days, MinAllowedMaxDeliveryCount 1, MaxUserMetadataLength 1024, QueueNameMaximumLength and
#   TopicNameMaximumLength 260, SubscriptionNameMaximumLength 50, InvalidEntityPathCharacters @ ? # *.
# Autodelete on idle: the spec's description too ("The minimum duration is 5 minutes").
_TIMESPAN_MAX = duration_seconds("P10675199DT2H48M5.4775807S")  # .NET TimeSpan.MaxValue, exactly
_LOCK = Limit("lockDuration", "Service Bus: lock 5 s to 5 min", minimum=5, maximum=5 * 60)
_TTL = Limit("defaultMessageTimeToLive", "Service Bus: TTL 1 s to TimeSpan.MaxValue", minimum=1, maximum=_TIMESPAN_MAX)
_AUTO_DELETE = Limit(
    "autoDeleteOnIdle", "Service Bus: auto-delete at least 5 min", minimum=5 * 60, maximum=_TIMESPAN_MAX
)
_DUPLICATE_WINDOW = Limit(
    "duplicateDetectionHistoryTimeWindow",
    "Service Bus: duplicate detection 20 s to 7 days",
    minimum=20,
    maximum=7 * 86400,
)
_DELIVERY_COUNT = Limit("maxDeliveryCount", "Service Bus: max delivery count at least 1", minimum=1)
_ENTITY_PATH = Limit(
    "{name}", "Service Bus: entity path at most 260 characters, none of @ ? # *", max_length=260, pattern=r"^[^@?#*]*$"
)
_USER_METADATA = Limit("userMetadata", "Service Bus: user metadata at most 1024 characters", max_length=1024)
# Premium large messages: maxMessageSizeInKilobytes 1,024 to 102,400 (100 MB)
# https://learn.microsoft.com/azure/service-bus-messaging/service-bus-premium-messaging#large-messages-support
_MESSAGE_SIZE = Limit("maxMessageSizeInKilobytes", "Service Bus Premium: 1 MB to 100 MB", minimum=1024, maximum=102400)
# Namespace naming: https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
#   (Microsoft.ServiceBus/namespaces: 6-50, alphanumerics and hyphens, start with a letter, end with a
#   letter or number) and https://learn.microsoft.com/rest/api/servicebus/create-namespace ("can't end
#   with -sb or -mgmt"; checked case-insensitively, as DNS is).
_NAMESPACE_PATTERN = Limit(
    "namespaceName",
    "Service Bus naming rules",
    pattern=r"^(?!.*-(?i:sb|mgmt)$)[a-zA-Z][a-zA-Z0-9-]{4,48}[a-zA-Z0-9]$",
)
# Premium partitions: the 2026-01-01 spec's description of premiumMessagingPartitions ("possible
#   values are 1, 2 and 4").
_PARTITIONS = Limit("premiumMessagingPartitions", "Service Bus spec 2026-01-01 description", enum=frozenset({1, 2, 4}))
# Resource groups: https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
#   (Microsoft.Resources/resourcegroups: "Can't end with period").
_RG_NO_TRAILING_DOT = Limit(
    "resourceGroupName", "resource group naming rules: can't end with a period", pattern=r"[^.]$"
)
# Tags: https://learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations
#   ("Each resource ... can have a maximum of 50 tag name/value pairs"; "The tag name is limited to 512
#   characters, and the tag value is limited to 256 characters"; "Tag names can't contain these
#   characters: <, >, %, &, \, ?, /").
_TAGS = Limit(
    "tags",
    "Azure tags: at most 50, names at most 512 characters without < > % & \\ ? /",
    max_items=50,
    max_key_length=512,
    key_pattern=r"^[^<>%&\\?/]*$",
)
_TAG_VALUES = Limit("tags.{}", "Azure tags: values at most 256 characters", max_length=256)
# Container Apps probes: the Microsoft.App spec's descriptions, as the installed models carry them
# (azure-mgmt-appcontainers 4.0.0b1, ContainerAppProbe docstring; CommonDefinitions.json
# 2025-02-02-preview): failureThreshold "Minimum value is 1. Maximum value is 10.", initialDelaySeconds
# "Minimum value is 1. Maximum value is 60.", periodSeconds and timeoutSeconds "Minimum value is 1.
# Maximum value is 240.", successThreshold "Minimum value is 1. Maximum value is 10." (The issue's brief
# said initialDelaySeconds 0-60; the spec says 1-60.)
_PROBE = "template.containers[].probes[]"
_PROBE_LIMITS = (
    Limit(f"{_PROBE}.failureThreshold", "Container Apps probe spec", minimum=1, maximum=10),
    Limit(f"{_PROBE}.initialDelaySeconds", "Container Apps probe spec", minimum=1, maximum=60),
    Limit(f"{_PROBE}.periodSeconds", "Container Apps probe spec", minimum=1, maximum=240),
    Limit(f"{_PROBE}.timeoutSeconds", "Container Apps probe spec", minimum=1, maximum=240),
    Limit(f"{_PROBE}.successThreshold", "Container Apps probe spec", minimum=1, maximum=10),
)
# Log Analytics: https://learn.microsoft.com/azure/azure-monitor/logs/data-retention-configure
#   (a workspace's default retention is 30 to 730 days on the pay-as-you-go PerGB2018 tier).
_RETENTION = Limit("retentionInDays", "Log Analytics retention 30 to 730 days", minimum=30, maximum=730)

# Private endpoints: https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
#   (Microsoft.Network privateEndpoints: "2-64", "Alphanumerics, underscores, periods, and hyphens. Start with
#   alphanumeric. End alphanumeric or underscore."; subnets and private DNS zone groups are named by the
#   virtual network's owner and by this program, "default").
_PRIVATE_ENDPOINT_NAME = Limit(
    "privateEndpointName",
    "resource naming rules: private endpoints",
    pattern=r"^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}[a-zA-Z0-9_]$",
)
# Service Bus private link: https://learn.microsoft.com/azure/private-link/private-endpoint-overview
#   ("Private-link resource": Microsoft.ServiceBus/namespaces, sub-resource "namespace") and
#   https://learn.microsoft.com/azure/private-link/private-endpoint-dns (Service Bus:
#   privatelink.servicebus.windows.net).
_PRIVATE_LINK_GROUP = Limit(
    "privateLinkServiceConnections[].groupIds[]", "Service Bus private link sub-resource", enum=frozenset({"namespace"})
)
_PRIVATE_LINK_TARGET = Limit(
    "privateLinkServiceConnections[].privateLinkServiceId",
    "Service Bus private link resource: a namespace",
    pattern=r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ServiceBus/namespaces/[^/]+$",
)
_PRIVATE_DNS_ZONE = Limit(
    "privateDnsZoneConfigs[].privateDnsZoneId",
    "Service Bus private DNS zone",
    pattern=r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/privateDnsZones/"
    r"privatelink\.servicebus\.windows\.net$",
)
_SUBNET = Limit(
    "subnet.id",
    "a virtual network subnet",
    pattern=r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$",
)
_ENVIRONMENT_SUBNET = dataclasses.replace(_SUBNET, path="vnetConfiguration.infrastructureSubnetId")

# Production hardening (pairedbus.iac.components.namespace_hardening), what AVM's service-bus/namespace sets.
_NAMESPACE_ID = r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ServiceBus/namespaces/[^/]+$"
# Diagnostic settings, Microsoft.Insights 2021-05-01-preview (azure-mgmt-monitor 6.0.2, v2021_05_01_preview):
#   PUT {resourceUri}/providers/Microsoft.Insights/diagnosticSettings/{name}. The categories are Service Bus's
#   (learn.microsoft.com/azure/service-bus-messaging/monitor-service-bus-reference, "Resource logs"; the category
#   groups allLogs and audit are Azure Monitor's); logAnalyticsDestinationType: "Possible values are: Dedicated and
#   null" (the model's docstring).
_DIAGNOSTIC_PATH = {
    "resourceUri": Prop(wire="{resourceUri}", kind="string", required=True, min_length=1),
    "name": Prop(wire="{name}", kind="string", required=True, min_length=1),
}
_DIAGNOSTIC_LIMITS = (
    Limit("resourceUri", "diagnostic settings of a Service Bus namespace", pattern=_NAMESPACE_ID),
    Limit(
        "workspaceId",
        "a Log Analytics workspace",
        pattern=r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.OperationalInsights/workspaces/[^/]+$",
    ),
    Limit("logs[].categoryGroup", "Azure Monitor category groups", enum=frozenset({"allLogs", "audit"})),
    Limit(
        "logs[].category",
        "Service Bus resource log categories",
        enum=frozenset(
            {
                "OperationalLogs",
                "VNetAndIPFilteringLogs",
                "RuntimeAuditLogs",
                "ApplicationMetricsLogs",
                "DiagnosticErrorLogs",
            }
        ),
    ),
    Limit("metrics[].category", "Azure Monitor: every platform metric", enum=frozenset({"AllMetrics"})),
    Limit("logAnalyticsDestinationType", "DiagnosticSettingsResource docstring", enum=frozenset({"Dedicated"})),
)
# Management locks, Microsoft.Authorization 2020-05-01 (azure-mgmt-resource-locks 1.0.0):
#   PUT {scope}/providers/Microsoft.Authorization/locks/{lockName}; resource-name-rules (Microsoft.Authorization
#   locks: 1-90 characters, none of < > * % & : \ ? / + or control characters); ManagementLockObject: "notes:
#   Notes about the lock. Maximum of 512 characters."
_LOCK_PATH = {"scope": _SCOPE, "lockName": Prop(wire="{lockName}", kind="string", required=True, min_length=1)}
_LOCK_LIMITS = (
    Limit("lockName", "resource naming rules: locks", pattern=r"^[^<>*%&:\\?/+\x00-\x1f]{1,90}$"),
    Limit("notes", "ManagementLockObject docstring", max_length=512),
    Limit("scope", "a lock on a Service Bus namespace", pattern=_NAMESPACE_ID),
    Limit("level", "a namespace keeps taking writes: CanNotDelete only", enum=frozenset({"CanNotDelete"})),
)
# Network rule sets, Microsoft.ServiceBus 2026-01-01 (namespaces/networkRuleSets/default): IPv4 masks
#   (learn.microsoft.com/azure/service-bus-messaging/service-bus-ip-filtering) and subnets of virtual networks.
_NETWORK_RULE_LIMITS = (
    Limit("ipRules", "Service Bus quotas: IP filter rules per namespace", max_items=128),
    Limit("virtualNetworkRules", "Service Bus quotas: virtual network rules per namespace", max_items=128),
    Limit(
        "ipRules[].ipMask",
        "Service Bus IP filter: an IPv4 address or CIDR range",
        pattern=r"^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:/(?:3[0-2]|[12]?\d))?$",
    ),
    Limit("ipRules[].action", "Service Bus IP filter rules allow", enum=frozenset({"Allow"})),
    dataclasses.replace(_SUBNET, path="virtualNetworkRules[].subnet.id"),
)
# Customer-managed keys on the namespace (learn.microsoft.com/azure/service-bus-messaging/
#   configure-customer-managed-key; Key Vault object identifiers, learn.microsoft.com/azure/key-vault/general/
#   about-keys-secrets-certificates).
_CMK_LIMITS = (
    Limit(
        "encryption.keyVaultProperties[].keyVaultUri",
        "a Key Vault URI",
        pattern=r"^https://[A-Za-z0-9-]{3,24}\.(?:vault|managedhsm)\.[a-z0-9.]+/?$",
    ),
    Limit("encryption.keyVaultProperties[].keyName", "Key Vault key names", pattern=r"^[A-Za-z0-9-]{1,127}$"),
    Limit("encryption.keyVaultProperties[].keyVersion", "Key Vault key versions", pattern=r"^[0-9a-fA-F]{32}$"),
    Limit(
        "encryption.keyVaultProperties[].identity.userAssignedIdentity",
        "a user-assigned identity",
        pattern=r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ManagedIdentity/userAssignedIdentities/[^/]+$",
    ),
    Limit(
        "identity.userAssignedIdentities",
        "identity keys are user-assigned identities",
        key_pattern=r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ManagedIdentity/userAssignedIdentities/[^/]+$",
    ),
)

_QUEUE_LIMITS = (_LOCK, _TTL, _AUTO_DELETE, _DUPLICATE_WINDOW, _DELIVERY_COUNT, _MESSAGE_SIZE, _USER_METADATA)
_TOPIC_LIMITS = (_TTL, _AUTO_DELETE, _DUPLICATE_WINDOW, _MESSAGE_SIZE, _USER_METADATA)
_SUBSCRIPTION_LIMITS = (_LOCK, _TTL, _AUTO_DELETE, _DUPLICATE_WINDOW, _DELIVERY_COUNT, _USER_METADATA)
_TRACKED = (_TAGS, _TAG_VALUES, _RG_NO_TRAILING_DOT)


def _named(limit: Limit, path: str) -> Limit:
    return dataclasses.replace(limit, path=path)


# ---------------------------------------------------------------------------------------------
# The definition of every azure-native type the program registers, from the package whose API
# version matches pulumi-azure-native's. Where no published package has that exact version, the
# nearest is used and the difference is recorded in API_VERSION_DIFFERENCES (checked below).
DEFINITIONS: dict[str, Definition] = {
    contract.TYPE_NAMESPACE: Definition(
        servicebus_models.SBNamespace,
        "2026-01-01",
        _SB_PATH,
        (_NAMESPACE_PATTERN, _PARTITIONS, *_CMK_LIMITS, *_TRACKED),
    ),
    "azure-native:servicebus:NamespaceNetworkRuleSet": Definition(
        servicebus_models.NetworkRuleSet, "2026-01-01", _SB_PATH, (*_NETWORK_RULE_LIMITS, _RG_NO_TRAILING_DOT)
    ),
    "azure-native:monitor:DiagnosticSetting": Definition(
        monitor_models.DiagnosticSettingsResource, "2021-05-01-preview", _DIAGNOSTIC_PATH, _DIAGNOSTIC_LIMITS
    ),
    "azure-native:authorization:ManagementLockByScope": Definition(
        lock_models.ManagementLockObject, "2020-05-01", _LOCK_PATH, _LOCK_LIMITS
    ),
    contract.TYPE_QUEUE: Definition(
        servicebus_models.SBQueue,
        "2026-01-01",
        {**_SB_PATH, "queueName": _ENTITY_NAME},
        (*_QUEUE_LIMITS, _named(_ENTITY_PATH, "queueName"), _RG_NO_TRAILING_DOT),
    ),
    contract.TYPE_TOPIC: Definition(
        servicebus_models.SBTopic,
        "2026-01-01",
        {**_SB_PATH, "topicName": _ENTITY_NAME},
        (*_TOPIC_LIMITS, _named(_ENTITY_PATH, "topicName"), _RG_NO_TRAILING_DOT),
    ),
    contract.TYPE_SUBSCRIPTION: Definition(
        servicebus_models.SBSubscription,
        "2026-01-01",
        {**_SB_PATH, "topicName": _ENTITY_NAME, "subscriptionName": _SUBSCRIPTION_NAME},
        (*_SUBSCRIPTION_LIMITS, _RG_NO_TRAILING_DOT),
    ),
    "azure-native:resources:ResourceGroup": Definition(
        resource_models.ResourceGroup,
        "2024-07-01",
        {"resourceGroupName": _RESOURCE_GROUP_NAME},
        _TRACKED,
    ),
    "azure-native:authorization:RoleAssignment": Definition(
        authorization_models.RoleAssignmentCreateParameters,
        "2022-04-01",
        {"scope": _SCOPE, "roleAssignmentName": _AUTO_NAMED},
    ),
    "azure-native:managedidentity:UserAssignedIdentity": Definition(
        msi_models.Identity,
        "2023-01-31",
        {"resourceGroupName": _RESOURCE_GROUP_NAME, "resourceName": _AUTO_NAMED},
        _TRACKED,
    ),
    "azure-native:operationalinsights:Workspace": Definition(
        loganalytics_models.Workspace,
        "2025-07-01",
        {"resourceGroupName": _RESOURCE_GROUP_NAME, "workspaceName": _AUTO_NAMED},
        (_RETENTION, *_TRACKED),
    ),
    "azure-native:app:ManagedEnvironment": Definition(
        app_models.ManagedEnvironment,
        "2025-02-02-preview",
        {"resourceGroupName": _RESOURCE_GROUP_NAME, "environmentName": _AUTO_NAMED},
        (_ENVIRONMENT_SUBNET, *_TRACKED),
    ),
    "azure-native:network:PrivateEndpoint": Definition(
        network_models.PrivateEndpoint,
        "2024-05-01",
        _PRIVATE_ENDPOINT_PATH,
        (_PRIVATE_ENDPOINT_NAME, _PRIVATE_LINK_GROUP, _PRIVATE_LINK_TARGET, _SUBNET, *_TRACKED),
    ),
    "azure-native:network:PrivateDnsZoneGroup": Definition(
        network_models.PrivateDnsZoneGroup,
        "2024-05-01",
        {
            **_PRIVATE_ENDPOINT_PATH,
            "privateDnsZoneGroupName": Prop(wire="{privateDnsZoneGroupName}", kind="string", required=True),
        },
        (_PRIVATE_DNS_ZONE,),
    ),
    "azure-native:app:ContainerApp": Definition(
        app_models.ContainerApp,
        "2025-02-02-preview",
        {"resourceGroupName": _RESOURCE_GROUP_NAME, "containerAppName": _AUTO_NAMED},
        (*_PROBE_LIMITS, *_TRACKED),
    ),
}

#: The backlog queues go through the data plane (the dynamic provider, ATOM bodies), not ARM, but their
#: table uses the same property names and the same Service Bus limits bind them: checked with the ARM
#: queue definition, with only the inputs the provider takes (no resource group).
BACKLOG_DEFINITION = Definition(
    servicebus_models.SBQueue,
    "2026-01-01",
    {"namespaceName": _NAMESPACE_NAME, "queueName": _ENTITY_NAME},
    (*_QUEUE_LIMITS, _named(_ENTITY_PATH, "queueName")),
)

#: azure-native type -> (azure-native's API version, the models' API version, why that is sound).
API_VERSION_DIFFERENCES = {
    # No azure-mgmt-loganalytics release has 2023-09-01 (12.0.0: 2021-06-01, 13.0.0b6/b7: 2022-10-01,
    # 13.1.x and 14.0.0: 2025-07-01). The 2025-07-01 Workspace is a superset: every property the
    # components set has the same name and type in Azure/azure-rest-api-specs @
    # 0dcfa37f9e6838328ebfae44ceb216b6ee066949, specification/operationalinsights/resource-manager/
    # Microsoft.OperationalInsights/stable/2023-09-01/Workspaces.json (WorkspaceSku: name required, enum with
    # PerGB2018; retentionInDays int32, no bounds; tags/location from TrackedResource). One difference to
    # know: 2025-07-01 adds SecuredByPerimeter to publicNetworkAccessFor*, which 2023-09-01 does not have.
    "azure-native:operationalinsights:Workspace": ("2023-09-01", "2025-07-01", "no package has 2023-09-01"),
    # azure-mgmt-resource ships resources API versions 2022-09-01, 2024-07-01, 2024-11-01, 2025-03-01 but
    # no 2024-03-01; ResourceGroup (location required, tags, managedBy, read-only id/name/type/properties)
    # is the same definition in all of them.
    "azure-native:resources:ResourceGroup": ("2024-03-01", "2024-07-01", "no package has 2024-03-01"),
}

# ---------------------------------------------------------------------------------------------
# Built-in role definition ids, as Microsoft documents them (MicrosoftDocs/azure-docs,
# articles/role-based-access-control/built-in-roles/integration.md for the three Service Bus roles,
# general.md for Reader, containers.md for AcrPull; each role's JSON "name" field).
BUILT_IN_ROLES = {
    "Azure Service Bus Data Owner": "090c5cfd-751d-490a-894a-3ce6f1109419",
    "Azure Service Bus Data Receiver": "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0",
    "Azure Service Bus Data Sender": "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39",
    "Reader": "acdd72a7-3385-48ef-bd42-f606fba81ae7",
    "AcrPull": "7f951dda-4ed3-4680-a7ca-43fe172d538d",
}
#: Where each role may be granted: a Service Bus namespace, never a subscription or resource group.
_NAMESPACE_SCOPE = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ServiceBus/namespaces/[^/]+$"
)
_REGISTRY_SCOPE = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ContainerRegistry/registries/[^/]+$"
)
ROLE_SCOPES = {
    BUILT_IN_ROLES["Azure Service Bus Data Owner"]: _NAMESPACE_SCOPE,
    BUILT_IN_ROLES["Azure Service Bus Data Receiver"]: _NAMESPACE_SCOPE,
    BUILT_IN_ROLES["Azure Service Bus Data Sender"]: _NAMESPACE_SCOPE,
    BUILT_IN_ROLES["Reader"]: _NAMESPACE_SCOPE,
    BUILT_IN_ROLES["AcrPull"]: _REGISTRY_SCOPE,
}
_ROLE_DEFINITION_ID = re.compile(
    r"^/subscriptions/[0-9a-f-]{36}/providers/Microsoft\.Authorization/roleDefinitions/(?P<guid>[0-9a-f-]{36})$"
)
DEPLOYER_PRINCIPAL_TYPE_KEY = "pairedbus:deployerPrincipalType"
DEPLOYER_PRINCIPAL_TYPE_DEFAULT = "User"
# A managed identity is a service principal to RBAC:
# https://learn.microsoft.com/azure/role-based-access-control/role-assignments-template#principaltype
MANAGED_IDENTITY_PRINCIPAL_TYPE = "ServicePrincipal"

# ---------------------------------------------------------------------------------------------
# Rendering: every stack once per session, with secrets revealed (a secret input, such as the
# environment's log configuration, is otherwise one opaque "[secret]" and could not be checked).


def _reveal(original: Any) -> Any:
    def plain(value: Any) -> Any:
        if isinstance(value, Mapping) and value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return plain(value.get("value"))
        return original(value)

    return plain


@contextmanager
def _secrets_revealed() -> Iterator[None]:
    original = render_module._plan_value_from_engine
    render_module._plan_value_from_engine = _reveal(original)  # the recursion goes through the module global too
    try:
        yield
    finally:
        render_module._plan_value_from_engine = original


def render_settings(stack: str, overrides: Mapping[str, str] | None = None) -> tuple[dict[str, str], Plan]:
    project = PulumiProject.find(REPO)
    settings, secrets = project.stack_settings(stack)
    settings = {**settings, **(overrides or {})}
    with _secrets_revealed():
        plan = render_module.render_program(
            project.run_program, project=project.name, stack=stack, config=settings, secret_keys=secrets
        )
    return settings, plan


@pytest.fixture(scope="module")
def rendered() -> dict[str, tuple[dict[str, str], Plan]]:
    return {stack: render_settings(stack) for stack in STACKS}


_SUBSCRIPTION = "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
#: The hardening prod does not use (it denies public access, so no network rule set), on dev: a network rule set on
#: each namespace (IP rules on the Standard primary, a virtual-network rule on a Premium secondary), diagnostics by
#: category to a given workspace without metrics, and the lock outside production.
HARDENED_DEV = {
    "pairedbus:namespaceLock": "CanNotDelete",
    "pairedbus:diagnostics": json.dumps(
        {
            "workspaceId": f"{_SUBSCRIPTION}/resourceGroups/rg-logs/providers/Microsoft.OperationalInsights/workspaces/law-central",
            "logs": ["OperationalLogs", "VNetAndIPFilteringLogs", "ApplicationMetricsLogs"],
            "metrics": False,
        }
    ),
}


def _hardened_namespaces(settings: Mapping[str, str]) -> dict[str, str]:
    primary = json.loads(settings["pairedbus:primary"])
    secondary = json.loads(settings["pairedbus:secondary"])
    primary["networkRuleSet"] = {"ipRules": ["203.0.113.0/24", "198.51.100.7"], "trustedServiceAccessEnabled": True}
    secondary.update(
        sku="Premium",
        premiumMessagingPartitions=2,
        networkRuleSet={
            "virtualNetworkRules": [
                f"{_SUBSCRIPTION}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-dev/subnets/clients"
            ]
        },
    )
    return {"pairedbus:primary": json.dumps(primary), "pairedbus:secondary": json.dumps(secondary)}


@pytest.fixture(scope="module")
def hardened() -> tuple[dict[str, str], Plan]:
    settings, _ = PulumiProject.find(REPO).stack_settings("dev")
    return render_settings("dev", {**HARDENED_DEV, **_hardened_namespaces(settings)})


# ---------------------------------------------------------------------------------------------
# The checks


def to_wire(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """azure-native's one input shape that differs from ARM's here: `identity.userAssignedIdentities`
    is a list of identity ids in the SDK and a map of id -> {} on the wire (pulumi_azure_native
    app/_inputs.py, ManagedServiceIdentityArgs: "The userAssignedIdentities dictionary keys will be
    ARM resource ids ... The dictionary values can be empty objects ({}) in requests")."""
    wire = copy.deepcopy(dict(inputs))
    identity = wire.get("identity")
    if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
        identity["userAssignedIdentities"] = {uid: {} for uid in identity["userAssignedIdentities"]}
    return wire


def check_arm(stack: str, plan: Plan) -> list[Mismatch]:
    """Every azure-native resource against its ARM definition and per-property limits."""
    mismatches: list[Mismatch] = []
    for resource in plan.resources:
        if resource.type == contract.TYPE_BACKLOG_QUEUE:
            mismatches += check_resource(stack, resource.name, BACKLOG_DEFINITION, resource.inputs)
            continue
        if not resource.custom or not resource.type.startswith("azure-native:"):
            continue
        definition = DEFINITIONS.get(resource.type)
        if definition is None:
            mismatches.append(Mismatch(stack, resource.name, "-", "no-definition", resource.type))
            continue
        mismatches += check_resource(stack, resource.name, definition, to_wire(resource.inputs))
    return mismatches


# Queue or topic size, per tier: the quotas page (see above, "1, 2, 3, 4 GB or 5 GB", 80 GB in Premium)
# and Azure PowerShell's New-AzServiceBusQueue -MaxSizeInMegabytes ("Max for Standard SKU is 5120 and for
# Premium SKU is 81920, Allowed values : 1024, 2048, 3072, 4096, 5120, 10240, 20480, 40960, 81920"). A
# partitioned Standard entity is also given 1-5 GB: the service keeps 16 partitions of that size (the
# 80 GB the quotas page names) and reports 16 x the value back, so the request itself stays 1-5 GB.
_STANDARD_SIZES = frozenset({1024, 2048, 3072, 4096, 5120})
_PREMIUM_SIZES = _STANDARD_SIZES | {10240, 20480, 40960, 81920}
# "Number of partitioned topics or queues per namespace: 100" on Standard (quotas page, Standard tier).
MAX_PARTITIONED_ENTITIES_STANDARD = 100
# Premium messaging units: the SBSku.capacity description of the 2026-01-01 spec ("Valid capacities
# are {1, 2, 4, 8, 16} multiples of your properties.premiumMessagingPartitions setting").
_PREMIUM_CAPACITY_FACTORS = (1, 2, 4, 8, 16)
# Container Apps, an environment without workload profiles (Consumption only, as SyphonHost creates):
#   MicrosoftDocs/azure-docs @ 01c60165e1334a2e8c08deef6422aebae9d3cf5e, articles/container-apps/containers.md:
#   "the total amount of CPUs and memory requested for all the containers in a container app must add up
#   to one of the following combinations": 0.25/0.5Gi, 0.5/1.0Gi, ..., 2.0/4.0Gi (steps of 0.25 vCPU,
#   memory twice the CPU); and https://learn.microsoft.com/azure/container-apps/quotas ("Consumption
#   plan: Cores per replica 2").
_CONSUMPTION_CPU = tuple(Decimal(n) / 4 for n in range(1, 9))


def _memory_gi(text: Any) -> Decimal | None:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)Gi", text) if isinstance(text, str) else None
    return Decimal(match[1]) if match else None


def check_service_limits(stack: str, plan: Plan) -> list[Mismatch]:
    """Limits that span properties or resources: sizes per tier, capacity, partitioned-entity
    count, container sizes."""
    out: list[Mismatch] = []
    namespaces = {ns.inputs.get("namespaceName"): ns for ns in plan.of_type(contract.TYPE_NAMESPACE)}
    for ns in namespaces.values():
        sku = ns.inputs.get("sku") or {}
        partitions = ns.inputs.get("premiumMessagingPartitions")
        if sku.get("name") == "Premium":
            allowed = {f * (partitions or 1) for f in _PREMIUM_CAPACITY_FACTORS}
            if sku.get("capacity") not in allowed:
                out.append(
                    Mismatch(
                        stack, ns.name, "sku.capacity", "enum", sku.get("capacity"), f"limit: one of {sorted(allowed)}"
                    )
                )
        else:
            if partitions is not None:
                out.append(Mismatch(stack, ns.name, "premiumMessagingPartitions", "tier", partitions, "Premium only"))
            if sku.get("capacity") is not None:
                out.append(Mismatch(stack, ns.name, "sku.capacity", "tier", sku.get("capacity"), "Premium only"))
        if sku.get("tier") is not None and sku.get("tier") != sku.get("name"):
            out.append(
                Mismatch(stack, ns.name, "sku.tier", "enum", sku.get("tier"), f"equal to sku.name {sku.get('name')!r}")
            )
    partitioned: Counter[str] = Counter()
    entities = (
        plan.of_type(contract.TYPE_QUEUE)
        + plan.of_type(contract.TYPE_TOPIC)
        + plan.of_type(contract.TYPE_BACKLOG_QUEUE)
    )
    for entity in entities:
        namespace = namespaces.get(entity.inputs.get("namespaceName"))
        tier = ((namespace.inputs.get("sku") or {}).get("name") if namespace else None) or "Standard"
        if entity.inputs.get("enablePartitioning"):
            partitioned[entity.inputs.get("namespaceName")] += 1
        size = entity.inputs.get("maxSizeInMegabytes")
        allowed = _PREMIUM_SIZES if tier == "Premium" else _STANDARD_SIZES
        if size is not None and size not in allowed:
            out.append(
                Mismatch(
                    stack, entity.name, "maxSizeInMegabytes", "enum", size, f"limit, {tier}: one of {sorted(allowed)}"
                )
            )
        if entity.inputs.get("maxMessageSizeInKilobytes") is not None and tier != "Premium":
            out.append(
                Mismatch(
                    stack,
                    entity.name,
                    "maxMessageSizeInKilobytes",
                    "tier",
                    entity.inputs["maxMessageSizeInKilobytes"],
                    "Premium only",
                )
            )
    for name, count in partitioned.items():
        namespace = namespaces.get(name)
        tier = ((namespace.inputs.get("sku") or {}).get("name") if namespace else None) or "Standard"
        if tier == "Standard" and count > MAX_PARTITIONED_ENTITIES_STANDARD:
            out.append(
                Mismatch(
                    stack,
                    name,
                    "partitioned entities",
                    "maximum",
                    count,
                    f"limit: at most {MAX_PARTITIONED_ENTITIES_STANDARD} per Standard namespace",
                )
            )
    for app in plan.of_type("azure-native:app:ContainerApp"):
        containers = (app.inputs.get("template") or {}).get("containers") or []
        cpus = [(c.get("resources") or {}).get("cpu") for c in containers]
        memories = [_memory_gi((c.get("resources") or {}).get("memory")) for c in containers]
        if any(v is None for v in cpus + memories):
            out.append(
                Mismatch(
                    stack,
                    app.name,
                    "template.containers[].resources",
                    "combination",
                    [c.get("resources") for c in containers],
                    "set cpu and memory (in Gi) on every container",
                )
            )
            continue
        cpu, memory = sum(Decimal(str(v)) for v in cpus), sum(memories)
        if cpu not in _CONSUMPTION_CPU or memory != 2 * cpu:
            out.append(
                Mismatch(
                    stack,
                    app.name,
                    "template.containers[].resources",
                    "combination",
                    {"cpu": float(cpu), "memory": f"{memory}Gi"},
                    "limit: total 0.25-2.0 cpu in steps of 0.25, memory = 2 x cpu Gi",
                )
            )
    return out


def check_role_assignments(
    stack: str, settings: Mapping[str, str], plan: Plan, deployer_object_id: str
) -> list[Mismatch]:
    """Built-in role ids, scopes and principal types, beyond what the ARM definition can say."""
    expected_deployer = settings.get(DEPLOYER_PRINCIPAL_TYPE_KEY, DEPLOYER_PRINCIPAL_TYPE_DEFAULT)
    out: list[Mismatch] = []
    for assignment in plan.of_type("azure-native:authorization:RoleAssignment"):
        inputs = assignment.inputs
        match = _ROLE_DEFINITION_ID.match(inputs.get("roleDefinitionId") or "")
        guid = match["guid"] if match else None
        if guid not in ROLE_SCOPES:
            out.append(
                Mismatch(
                    stack,
                    assignment.name,
                    "roleDefinitionId",
                    "role-definition",
                    inputs.get("roleDefinitionId"),
                    "not one of the documented built-in roles",
                )
            )
        scope = inputs.get("scope")
        if guid in ROLE_SCOPES and scope is not None and not ROLE_SCOPES[guid].match(scope):
            out.append(
                Mismatch(stack, assignment.name, "scope", "scope", scope, f"must match {ROLE_SCOPES[guid].pattern}")
            )
        deployer = inputs.get("principalId") == deployer_object_id
        expected = expected_deployer if deployer else MANAGED_IDENTITY_PRINCIPAL_TYPE
        why = (
            f"the stack setting {DEPLOYER_PRINCIPAL_TYPE_KEY}"
            if deployer
            else "a managed identity is a ServicePrincipal"
        )
        if inputs.get("principalType") != expected:
            out.append(
                Mismatch(
                    stack,
                    assignment.name,
                    "principalType",
                    "principal-type",
                    inputs.get("principalType"),
                    f"expected {expected!r}: {why}",
                )
            )
    return out


def all_mismatches(stack: str, settings: Mapping[str, str], plan: Plan) -> list[Mismatch]:
    return (
        check_arm(stack, plan)
        + check_service_limits(stack, plan)
        + check_role_assignments(stack, settings, plan, render_mocks.FAKE_OBJECT_ID)
    )


# ---------------------------------------------------------------------------------------------
# The repository's stacks: no mismatch at all.


def _report(mismatches: list[Mismatch]) -> str:
    return "\n".join(str(m) for m in mismatches)


@pytest.mark.parametrize("stack", STACKS)
def test_repository_stack_conforms_to_arm(stack: str, rendered) -> None:
    settings, plan = rendered[stack]
    mismatches = all_mismatches(stack, settings, plan)
    assert not mismatches, "\n" + _report(mismatches)


def test_the_hardening_prod_does_not_use_conforms_to_arm(hardened) -> None:
    settings, plan = hardened
    mismatches = all_mismatches("dev-hardened", settings, plan)
    assert not mismatches, "\n" + _report(mismatches)
    assert len(plan.of_type("azure-native:servicebus:NamespaceNetworkRuleSet")) == 2
    assert len(plan.of_type("azure-native:monitor:DiagnosticSetting")) == 2
    assert len(plan.of_type("azure-native:authorization:ManagementLockByScope")) == 2


def test_every_rendered_azure_native_type_has_a_definition(rendered, hardened) -> None:
    plans = [plan for _, plan in rendered.values()] + [hardened[1]]
    types = {r.type for plan in plans for r in plan.resources if r.type.startswith("azure-native:")}
    assert types == set(DEFINITIONS)
    counts = {
        stack: sum(r.type.startswith("azure-native:") for r in plan.resources) for stack, (_, plan) in rendered.items()
    }
    assert all(count >= 14 for count in counts.values()), counts


#: Definitions ARM declares without properties (free-form objects).
_EMPTY_DEFINITIONS: frozenset[str] = frozenset()


def _resolve(definition: Definition, path: str) -> Prop | None:
    """The property a limit's path names, or None if the definition has no such property."""
    first, *rest = re.findall(r"[^.]+", path.replace("[]", ".[]"))
    prop = definition.path_params.get(first) or definition.body.get(first)
    for part in rest:
        if prop is None:
            return None
        if part in ("[]", "{}"):
            prop = prop.item
        else:
            prop = properties_of(prop.model).get(part) if prop.model is not None else None
    return prop


@pytest.mark.parametrize("resource_type", sorted(DEFINITIONS))
def test_every_definition_reachable_from_a_resource_is_readable(resource_type: str) -> None:
    """Every nested definition reads (names, types, enums), not just those the stacks use today."""
    models = reachable_models(DEFINITIONS[resource_type].model)
    assert all(properties_of(model) for model in models if model.__name__ not in _EMPTY_DEFINITIONS)


@pytest.mark.parametrize("resource_type", [*sorted(DEFINITIONS), "backlog"])
def test_every_limit_names_a_real_property(resource_type: str) -> None:
    """A misspelt limit path would check nothing, silently."""
    definition = BACKLOG_DEFINITION if resource_type == "backlog" else DEFINITIONS[resource_type]
    for limit in definition.limits:
        assert _resolve(definition, limit.path) is not None, (resource_type, limit.path)


def test_the_secret_log_configuration_is_checked_too(rendered) -> None:
    _, plan = rendered["dev"]
    (env,) = plan.of_type("azure-native:app:ManagedEnvironment")
    assert env.inputs["appLogsConfiguration"]["destination"] == "log-analytics"


# ---------------------------------------------------------------------------------------------
# The sources themselves: the models are the API versions azure-native uses; the role ids and the
# probe limits restated above are the ones Microsoft documents.


def _azure_native_api_version(resource_type: str) -> str:
    _, module, name = resource_type.split(":")
    cls = getattr(getattr(pulumi_azure_native, module), name)
    versions = set(
        re.findall(r"Uses Azure REST API version (\d{4}-\d{2}-\d{2}(?:-preview)?)\.", inspect.getsource(cls))
    )
    assert len(versions) == 1, (resource_type, versions)
    return versions.pop()


@pytest.mark.parametrize("resource_type", sorted(DEFINITIONS))
def test_each_definition_is_the_api_version_azure_native_uses(resource_type: str) -> None:
    definition = DEFINITIONS[resource_type]
    assert model_api_version(definition.model) == definition.api_version
    azure_native = _azure_native_api_version(resource_type)
    if resource_type in API_VERSION_DIFFERENCES:
        # The recorded difference must still be the actual one: a pulumi-azure-native or package
        # upgrade that changes either side fails here until the table (and the check) is reviewed.
        assert (azure_native, definition.api_version) == API_VERSION_DIFFERENCES[resource_type][:2]
    else:
        assert azure_native == definition.api_version


def test_the_contract_role_ids_are_the_documented_built_in_roles() -> None:
    assert contract.ROLE_SERVICE_BUS_DATA_OWNER == "090c5cfd-751d-490a-894a-3ce6f1109419"
    assert contract.ROLE_SERVICE_BUS_DATA_RECEIVER == "4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0"
    assert contract.ROLE_SERVICE_BUS_DATA_SENDER == "69a216fc-b8fb-44d8-bc22-1f3c2cd27a39"
    assert contract.ROLE_READER == "acdd72a7-3385-48ef-bd42-f606fba81ae7"
    assert contract.ROLE_ACR_PULL == "7f951dda-4ed3-4680-a7ca-43fe172d538d"


def test_the_probe_limits_are_those_the_installed_models_document() -> None:
    doc = " ".join((app_models.ContainerAppProbe.__doc__ or "").split())
    for limit in _PROBE_LIMITS:
        attr = re.sub(r"(?<!^)(?=[A-Z])", "_", limit.path.rsplit(".", 1)[1]).lower()
        text = re.search(rf":ivar {attr}: (.*?):vartype", doc)
        assert text, attr
        assert f"Minimum value is {int(limit.minimum)}. Maximum value is {int(limit.maximum)}." in text[1], (
            attr,
            text[1],
        )


def test_the_lock_and_auto_delete_limits_are_in_the_spec_descriptions_too() -> None:
    queue = " ".join((servicebus_models.SBQueueProperties.__doc__ or "").split())
    assert "The maximum value for LockDuration is 5 minutes" in queue
    assert "The minimum duration is 5 minutes" in queue  # autoDeleteOnIdle
    sku = " ".join((servicebus_models.SBSku.__doc__ or "").split())
    assert "{1, 2, 4, 8, 16} multiples of your properties.premiumMessagingPartitions" in sku


# ---------------------------------------------------------------------------------------------
# principalType: azure-native fills in "User" when the program sets none (pulumi_azure_native
# authorization/role_assignment.py: `if principal_type is None: principal_type = 'User'`), and ARM
# answers UnmatchedPrincipalType when it is not the principal's type. The deployer's assignment must
# therefore carry the stack setting, which the deploy workflow sets to ServicePrincipal.


@pytest.mark.parametrize("principal_type", ["User", "ServicePrincipal", "Group"])
def test_the_deployer_assignment_takes_its_principal_type_from_the_stack_setting(principal_type: str) -> None:
    settings, plan = render_settings("dev", {DEPLOYER_PRINCIPAL_TYPE_KEY: principal_type})
    mismatches = check_role_assignments("dev", settings, plan, render_mocks.FAKE_OBJECT_ID)
    assert not mismatches, "\n" + _report(mismatches)
    (deployer,) = [
        a
        for a in plan.of_type("azure-native:authorization:RoleAssignment")
        if a.name == program_name("deployer-data-owner")
    ]
    assert deployer.inputs["principalType"] == principal_type


def test_the_deployer_assignment_is_user_when_the_stack_says_nothing(rendered) -> None:
    for stack in STACKS:
        _, plan = rendered[stack]
        (deployer,) = [
            a
            for a in plan.of_type("azure-native:authorization:RoleAssignment")
            if a.name == program_name("deployer-data-owner")
        ]
        assert deployer.inputs["principalType"] == "User"


def test_the_deploy_workflow_declares_its_service_principal() -> None:
    # pulumi/actions `config-map`: {pairedbus:deployerPrincipalType: {value: ServicePrincipal, ...}}
    workflow = (REPO / ".github" / "workflows" / "deploy.yml").read_text()
    assert (
        len(re.findall(r"deployerPrincipalType\W+(?:value\W+)?ServicePrincipal", workflow)) == 3
    )  # dev, staging, prod


# ---------------------------------------------------------------------------------------------
# Each check can fail: one deliberately wrong resource per kind, taken from the real dev or prod
# render and changed in one place. Only the expected mismatch may appear.


_ZONE_ID = (
    "/subscriptions/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/resourceGroups/rg-dns-prod/providers/Microsoft.Network/"
    "privateDnsZones/privatelink.servicebus.windows.net"
)


def _with(plan: Plan, name: str, change) -> Plan:
    resources = []
    for resource in plan.resources:
        if resource.name == program_name(name):
            inputs = copy.deepcopy(resource.inputs)
            change(inputs)
            resource = dataclasses.replace(resource, inputs=inputs)
        resources.append(resource)
    assert any(r.name == program_name(name) for r in plan.resources), name
    return dataclasses.replace(plan, resources=tuple(resources))


def _set(path: str, value: Any):
    def change(inputs: dict[str, Any]) -> None:
        *parents, last = re.findall(r"[^.\[\]]+", path)
        target: Any = inputs
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value

    return change


def _delete(path: str):
    def change(inputs: dict[str, Any]) -> None:
        *parents, last = re.findall(r"[^.\[\]]+", path)
        target: Any = inputs
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        del target[last]

    return change


_PROBE_0 = "template.containers[0].probes[0]"
_PROBE_1 = "template.containers[0].probes[1]"
_CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"  # a real built-in role, but not one this design grants

WRONG = [
    # (id, stack, resource, change, expected (path, rule) set)
    ("unknown-name", "dev", "queue-orders", _set("lockDurationn", "PT1M"), {("lockDurationn", "unknown-property")}),
    ("unknown-nested-name", "dev", "primary", _set("sku.family", "SB"), {("sku.family", "unknown-property")}),
    ("wrong-type-count", "dev", "queue-orders", _set("maxDeliveryCount", "10"), {("maxDeliveryCount", "type")}),
    ("wrong-type-bool", "dev", "queue-orders", _set("requiresSession", "true"), {("requiresSession", "type")}),
    ("wrong-type-duration", "dev", "queue-orders", _set("lockDuration", "1 minute"), {("lockDuration", "type")}),
    ("bad-enum", "dev", "primary", _set("minimumTlsVersion", "1.4"), {("minimumTlsVersion", "enum")}),
    ("bad-enum-case", "dev", "syphon-app", _set(f"{_PROBE_0}.type", "startup"), {(f"{_PROBE_0}.type", "enum")}),
    # (Not `location`: azure-native fills a missing one in from the provider's `azure-native:location`.)
    (
        "missing-required",
        "dev",
        "syphon-send-primary",
        _delete("principalId"),
        {("principalId", "required")},
    ),
    (
        "missing-required-nested",
        "dev",
        "syphon-app",
        _delete(f"{_PROBE_0}.httpGet.port"),
        {(f"{_PROBE_0}.httpGet.port", "required")},
    ),
    (
        "missing-required-sku-name",
        "dev",
        "primary",
        _delete("sku.name"),
        {("sku.name", "required"), ("sku.tier", "enum")},
    ),
    (
        "read-only-set",
        "dev",
        "primary",
        _set("serviceBusEndpoint", "https://x.servicebus.windows.net:443/"),
        {("serviceBusEndpoint", "read-only")},
    ),
    (
        "below-minimum-probe",
        "dev",
        "syphon-app",
        _set(f"{_PROBE_1}.periodSeconds", 0),
        {(f"{_PROBE_1}.periodSeconds", "minimum")},
    ),
    ("below-minimum-lock", "dev", "queue-orders", _set("lockDuration", "PT1S"), {("lockDuration", "minimum")}),
    ("above-maximum-lock", "dev", "queue-orders", _set("lockDuration", "PT5M1S"), {("lockDuration", "maximum")}),
    (
        "above-maximum-window",
        "dev",
        "topic-events",
        _set("duplicateDetectionHistoryTimeWindow", "P7DT1S"),
        {("duplicateDetectionHistoryTimeWindow", "maximum")},
    ),
    (
        "above-maximum-ttl",
        "dev",
        "queue-orders",
        _set("defaultMessageTimeToLive", "P10675199DT2H48M5.477581S"),
        {("defaultMessageTimeToLive", "maximum")},
    ),
    ("above-maximum-retention", "dev", "syphon-logs", _set("retentionInDays", 731), {("retentionInDays", "maximum")}),
    (
        "below-min-length",
        "dev",
        "primary",
        _set("namespaceName", "abc12"),
        {("namespaceName", "min-length"), ("namespaceName", "pattern")},
    ),
    (
        "above-max-length",
        "dev",
        "subscription-events-audit",
        _set("subscriptionName", "a" * 51),
        {("subscriptionName", "max-length")},
    ),
    (
        "pattern-resource-group",
        "dev",
        "queue-orders",
        _set("resourceGroupName", "rg/pairedbus"),
        {("resourceGroupName", "pattern")},
    ),
    (
        "pattern-resource-group-dot",
        "dev",
        "primary-rg",
        _set("resourceGroupName", "rg-pairedbus."),
        {("resourceGroupName", "pattern")},
    ),
    (
        "pattern-namespace-suffix",
        "dev",
        "primary",
        _set("namespaceName", "contoso-dev-Sb"),
        {("namespaceName", "pattern")},
    ),
    ("tag-name-character", "dev", "primary", _set("tags", {"cost/center": "x"}), {("tags.cost/center", "pattern")}),
    ("too-many-tags", "dev", "primary", _set("tags", {f"t{i}": "v" for i in range(51)}), {("tags", "max-items")}),
    ("tag-name-too-long", "dev", "primary-rg", _set("tags", {"k" * 513: "v"}), {("tags." + "k" * 513, "max-length")}),
    (
        "principal-type-missing",
        "dev",
        "syphon-receive-secondary",
        _delete("principalType"),
        {("principalType", "principal-type")},
    ),
    (
        "principal-type-default-user",
        "dev",
        "syphon-send-primary",
        _set("principalType", "User"),
        {("principalType", "principal-type")},
    ),
    (
        "principal-type-bad-enum",
        "dev",
        "syphon-send-primary",
        _set("principalType", "App"),
        {("principalType", "enum"), ("principalType", "principal-type")},
    ),
    (
        "role-not-built-in",
        "dev",
        "syphon-list-secondary",
        _set(
            "roleDefinitionId",
            f"/subscriptions/{render_mocks.FAKE_SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{_CONTRIBUTOR}",
        ),
        {("roleDefinitionId", "role-definition")},
    ),
    (
        "scope-subscription",
        "dev",
        "syphon-receive-secondary",
        _set("scope", f"/subscriptions/{render_mocks.FAKE_SUBSCRIPTION_ID}"),
        {("scope", "scope")},
    ),
    (
        "size-not-a-tier-size",
        "dev",
        "queue-invoices",
        _set("maxSizeInMegabytes", 6144),
        {("maxSizeInMegabytes", "enum")},
    ),
    (
        "cpu-memory-combination",
        "dev",
        "syphon-app",
        _set("template.containers[0].resources", {"cpu": 0.5, "memory": "2Gi"}),
        {("template.containers[].resources", "combination")},
    ),
    (
        "cpu-above-consumption",
        "dev",
        "syphon-app",
        _set("template.containers[0].resources", {"cpu": 2.25, "memory": "4.5Gi"}),
        {("template.containers[].resources", "combination")},
    ),
    (
        "backlog-ttl-rounded-up",  # issue 11: Python's timedelta rounds TimeSpan.MaxValue up by 3 ticks
        "dev",
        "backlog-3",
        _set("defaultMessageTimeToLive", "P10675199DT2H48M5.477581S"),
        {("defaultMessageTimeToLive", "maximum")},
    ),
    (
        "backlog-unknown-name",
        "dev",
        "backlog-3",
        _set("maxDeliveryCountt", 1),
        {("maxDeliveryCountt", "unknown-property")},
    ),
    ("entity-path-characters", "dev", "queue-orders", _set("queueName", "orders#1"), {("queueName", "pattern")}),
    (
        "user-metadata-too-long",
        "dev",
        "topic-events",
        _set("userMetadata", "m" * 1025),
        {("userMetadata", "max-length")},
    ),
    ("premium-capacity", "prod", "primary", _set("sku.capacity", 3), {("sku.capacity", "enum")}),
    (
        "premium-partitions",
        "prod",
        "primary",
        _set("premiumMessagingPartitions", 3),
        {("premiumMessagingPartitions", "enum"), ("sku.capacity", "enum")},
    ),
    # Private connectivity (prod): the private endpoints, their DNS zone groups, the environment's subnet.
    (
        "private-link-group",
        "prod",
        "primary-pe",
        _set("privateLinkServiceConnections[0].groupIds", ["namespaces"]),
        {("privateLinkServiceConnections[0].groupIds[0]", "enum")},
    ),
    (
        "private-link-target",
        "prod",
        "secondary-pe",
        _set("privateLinkServiceConnections[0].privateLinkServiceId", "/subscriptions/x/resourceGroups/y"),
        {("privateLinkServiceConnections[0].privateLinkServiceId", "pattern")},
    ),
    (
        "private-endpoint-name",
        "prod",
        "primary-pe",
        _set("privateEndpointName", "p" * 65),
        {("privateEndpointName", "pattern")},
    ),
    ("private-endpoint-subnet", "prod", "primary-pe", _set("subnet.id", "snet-pe"), {("subnet.id", "pattern")}),
    (
        "private-endpoint-unknown-name",
        "prod",
        "primary-pe",
        _set("privateLinkServiceConnections[0].groupId", "namespace"),
        {("privateLinkServiceConnections[0].groupId", "unknown-property")},
    ),
    (
        "private-dns-zone",
        "prod",
        "primary-pe-dns",
        _set("privateDnsZoneConfigs[0].privateDnsZoneId", _ZONE_ID.replace("servicebus", "blob")),
        {("privateDnsZoneConfigs[0].privateDnsZoneId", "pattern")},
    ),
    (
        "private-dns-zone-group-required-name",
        "prod",
        "secondary-pe-dns",
        _delete("privateEndpointName"),
        {("privateEndpointName", "required")},
    ),
    (
        "environment-subnet",
        "prod",
        "syphon-env",
        _set(
            "vnetConfiguration.infrastructureSubnetId",
            "/subscriptions/x/resourceGroups/y/providers/Microsoft.Network/virtualNetworks/v",
        ),
        {("vnetConfiguration.infrastructureSubnetId", "pattern")},
    ),
    (
        "environment-internal-type",
        "prod",
        "syphon-env",
        _set("vnetConfiguration.internal", "true"),
        {("vnetConfiguration.internal", "type")},
    ),
    (
        "cmk-key-vault-uri",
        "prod",
        "primary",
        _set("encryption.keyVaultProperties[0].keyVaultUri", "kv-pairedbus-prod-weu"),
        {("encryption.keyVaultProperties[0].keyVaultUri", "pattern")},
    ),
    (
        "cmk-key-source",
        "prod",
        "primary",
        _set("encryption.keySource", "Microsoft.Storage"),
        {("encryption.keySource", "enum")},
    ),
    (
        "cmk-identity-not-an-identity",
        "prod",
        "secondary",
        _set(
            "identity.userAssignedIdentities",
            ["/subscriptions/x/resourceGroups/y/providers/Microsoft.KeyVault/vaults/v"],
        ),
        {
            (
                "identity.userAssignedIdentities./subscriptions/x/resourceGroups/y/providers/Microsoft.KeyVault/vaults/v",
                "pattern",
            )
        },
    ),
    (
        "diagnostics-unknown-category",
        "prod",
        "pairedbus-primary-diagnostics",
        _set("logs[0]", {"category": "AuditEvent", "enabled": True}),
        {("logs[0].category", "enum")},
    ),
    (
        "diagnostics-enabled-missing",
        "prod",
        "pairedbus-secondary-diagnostics",
        _set("logs[0]", {"categoryGroup": "allLogs"}),
        {("logs[0].enabled", "required")},
    ),
    (
        "diagnostics-to-a-storage-account-id",
        "prod",
        "pairedbus-primary-diagnostics",
        _set("workspaceId", "/subscriptions/x/resourceGroups/y/providers/Microsoft.Storage/storageAccounts/s"),
        {("workspaceId", "pattern")},
    ),
    (
        "lock-read-only",
        "prod",
        "pairedbus-primary-lock",
        _set("level", "ReadOnly"),
        {("level", "enum")},
    ),
    (
        "lock-level-unknown-to-arm",
        "prod",
        "pairedbus-primary-lock",
        _set("level", "DoNotDelete"),
        {("level", "enum")},
    ),
    (
        "lock-notes-too-long",
        "prod",
        "pairedbus-secondary-lock",
        _set("notes", "x" * 513),
        {("notes", "max-length")},
    ),
    (
        "message-size-on-standard",
        "dev",
        "queue-orders",
        _set("maxMessageSizeInKilobytes", 2048),
        {("maxMessageSizeInKilobytes", "tier")},
    ),
]


@pytest.mark.parametrize(
    ("stack", "name", "change", "expected"), [case[1:] for case in WRONG], ids=[case[0] for case in WRONG]
)
def test_each_check_can_fail(stack: str, name: str, change, expected: set[tuple[str, str]], rendered) -> None:
    settings, plan = rendered[stack]
    before = {(m.resource, m.path, m.rule) for m in all_mismatches(stack, settings, plan)}
    after = all_mismatches(stack, settings, _with(plan, name, change))
    new = {(m.path, m.rule) for m in after if (m.resource, m.path, m.rule) not in before}
    assert new == expected, "\n" + _report(after)
    assert all(m.resource == program_name(name) and m.stack == stack for m in after if (m.path, m.rule) in expected)


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        (
            "pairedbus-primary-network-rules",
            _set("ipRules[0].ipMask", "2001:db8::/32"),
            {("ipRules[0].ipMask", "pattern")},
        ),
        ("pairedbus-primary-network-rules", _set("defaultAction", "Block"), {("defaultAction", "enum")}),
        (
            "pairedbus-primary-network-rules",
            _set("ipRules", [{"ipMask": "10.0.0.0/8", "action": "Allow"}] * 129),
            {("ipRules", "max-items")},
        ),
        (
            "pairedbus-secondary-network-rules",
            _set("virtualNetworkRules[0].subnet.id", "snet-clients"),
            {("virtualNetworkRules[0].subnet.id", "pattern")},
        ),
    ],
)
def test_each_network_rule_set_check_can_fail(name: str, change, expected, hardened) -> None:
    settings, plan = hardened
    after = all_mismatches("dev-hardened", settings, _with(plan, name, change))
    assert {(m.path, m.rule) for m in after} == expected, "\n" + _report(after)


def test_a_standard_namespace_holds_at_most_100_partitioned_entities(rendered) -> None:
    _, plan = rendered["dev"]
    (orders,) = [r for r in plan.resources if r.name == program_name("queue-orders")]
    existing = sum(
        bool(r.inputs.get("enablePartitioning"))
        for r in plan.resources
        if r.inputs.get("namespaceName") == "contoso-dev-weu"
    )
    extra = [
        dataclasses.replace(orders, name=f"queue-extra-{i}", inputs={**orders.inputs, "queueName": f"extra-{i}"})
        for i in range(MAX_PARTITIONED_ENTITIES_STANDARD - existing)
    ]
    at_limit = dataclasses.replace(plan, resources=(*plan.resources, *extra))
    assert not [m for m in check_service_limits("dev", at_limit) if m.rule == "maximum"]
    over = dataclasses.replace(
        at_limit, resources=(*at_limit.resources, dataclasses.replace(orders, name="queue-one-too-many"))
    )
    (mismatch,) = [m for m in check_service_limits("dev", over) if m.rule == "maximum"]
    assert (mismatch.resource, mismatch.path, mismatch.value) == ("contoso-dev-weu", "partitioned entities", 101)


def test_a_type_without_a_definition_is_a_mismatch(rendered) -> None:
    _, plan = rendered["dev"]
    (orders,) = [r for r in plan.resources if r.name == program_name("queue-orders")]
    stray = dataclasses.replace(orders, name="account", type="azure-native:storage:StorageAccount")
    mismatches = check_arm("dev", dataclasses.replace(plan, resources=(stray,)))
    assert [(m.resource, m.rule) for m in mismatches] == [("account", "no-definition")]


def test_a_mismatch_is_one_line_naming_stack_resource_property_rule_and_value() -> None:
    line = str(
        Mismatch(
            "prod",
            "syphon-app",
            "template.containers[0].probes[0].failureThreshold",
            "maximum",
            24,
            "limit, x: at most 10",
        )
    )
    assert (
        line
        == "prod syphon-app template.containers[0].probes[0].failureThreshold: maximum (limit, x: at most 10); value=24"
    )
