"""The components' typed settings: plain dicts (TypedDicts), the form a Pulumi program in any language can pass
and Pulumi's component-provider analyzer (`pulumi.provider.experimental.analyzer`) turns into the package schema.

Field names are the stack config's keys in snake_case; the schema (and every other language) spells them in
camelCase, exactly as `stacks/Pulumi.<stack>.yaml` does, so a validation error naming `primary.sku` means the
same field on every path. Plain fields (`str`, `int`, ...) must be known before anything is registered: the
component reads them to build its resources, and some decide which resources exist (`args_mapping.DECIDES`).
`pulumi.Input[...]` fields may be outputs of other resources: they are passed through to resource inputs and
checked when they resolve.

No `from __future__ import annotations` here: the analyzer reads these annotations as live types.
"""

from enum import Enum, StrEnum
from typing import Any, NotRequired, TypedDict

import pulumi

from pairedbus import contract
from pairedbus.iac.components.namespace_hardening import EncryptionSettings, NetworkRuleSetSettings

#: What a part assumes when used on its own and a setting is left out: the stack-config model's defaults
#: (tests/iac/components/test_args.py holds them equal). PairedNamespace always passes the model's values.
NAMESPACE_DEFAULTS: dict[str, Any] = {
    "sku": contract.SKU_STANDARD,
    "zone_redundant": False,
    "public_network_access": "Enabled",
}
ENTITY_DEFAULTS: dict[str, Any] = {
    "max_size_in_megabytes": contract.DEFAULT_ENTITY_SIZE_MB,
    "enable_partitioning": True,
    "paired": True,
    "requires_session": False,
}
SYPHON_DEFAULTS: dict[str, Any] = {
    "cpu": 0.5,
    "memory": "1Gi",
    "min_replicas": 1,
    "max_replicas": 1,
    "log_retention_days": 30,
}


class Sku(StrEnum):
    """A Service Bus namespace tier (the pair's two namespaces may differ)."""

    STANDARD = "Standard"
    """Standard: shared capacity, no private endpoints."""
    PREMIUM = "Premium"
    """Premium: dedicated messaging units and partitions, private endpoints."""


class PublicNetworkAccess(StrEnum):
    """Whether a namespace takes connections from public networks."""

    ENABLED = "Enabled"
    """Public networks may connect (the only choice for Standard)."""
    DISABLED = "Disabled"
    """Private endpoints only (production; Premium)."""
    SECURED_BY_PERIMETER = "SecuredByPerimeter"
    """A network security perimeter decides."""


class BacklogAuth(StrEnum):
    """How the backlog queues are created through the data plane."""

    ENTRA = "entra"
    """With the deployer's Entra ID identity (Azure Service Bus Data Owner on the secondary)."""
    SAS = "sas"
    """With the secondary's SAS keys: the documented fallback; keeps local auth on the secondary."""


class PrincipalType(StrEnum):
    """What kind of principal runs `pulumi up` (an ARM role assignment must name it)."""

    USER = "User"
    """A person at a terminal."""
    SERVICE_PRINCIPAL = "ServicePrincipal"
    """A CI pipeline's service principal or managed identity."""
    GROUP = "Group"
    """A group."""


def enum_value(value: Any) -> Any:
    """An enum member's value (a schema enum arrives as its member), anything else as it is."""
    return value.value if isinstance(value, Enum) else value


class ResourceGroupSettings(TypedDict):
    """The resource group that holds one namespace."""

    name: pulumi.Input[str]
    """Resource group name (1-90 characters)."""
    create: NotRequired[bool]
    """Create the group (default true); false: the group exists and is only referenced."""


class ResourceGroupsSettings(TypedDict):
    """The resource groups of the primary and the secondary namespace."""

    primary: ResourceGroupSettings
    """The primary namespace's resource group."""
    secondary: ResourceGroupSettings
    """The secondary namespace's resource group."""


class NamespaceSettings(TypedDict):
    """One Service Bus namespace of the pair."""

    name: pulumi.Input[str]
    """Namespace name (6-50 letters, digits or '-', starting with a letter); it is the DNS name."""
    location: pulumi.Input[str]
    """Azure region, e.g. westeurope. The secondary must be in another region than the primary."""
    sku: NotRequired[Sku]
    """Standard (default) or Premium."""
    capacity: NotRequired[int]
    """Premium messaging units: 1, 2, 4, 8 or 16 (default: one per partition). Not for Standard."""
    premium_messaging_partitions: NotRequired[int]
    """Premium messaging partitions: 1, 2 or 4, set at creation. Not for Standard. Default on Premium: 2 where the
    namespace holds queues or topics (the secondary always, for its backlog queues), else the service's 1."""
    zone_redundant: NotRequired[bool]
    """Spread the namespace over availability zones (default false)."""
    public_network_access: NotRequired[PublicNetworkAccess]
    """Enabled (default), Disabled or SecuredByPerimeter."""
    network_rule_set: NotRequired[NetworkRuleSetSettings]
    """Firewall rules for the public endpoint (publicNetworkAccess Enabled only); none: no rule set."""
    encryption: NotRequired[EncryptionSettings]
    """Customer-managed-key encryption (Premium only); none: Microsoft-managed keys."""


class SubscriptionSettings(TypedDict):
    """A subscription of a topic in the primary namespace."""

    name: str
    """Subscription name (1-50 letters, digits, '.', '-' or '_')."""
    requires_session: NotRequired[bool]
    """Session-aware subscription (default false)."""
    lock_duration: NotRequired[str]
    """Peek-lock duration, ISO 8601 (e.g. PT1M); default: the service's."""
    max_delivery_count: NotRequired[int]
    """Deliveries before a message is dead-lettered; default: the service's."""
    default_message_time_to_live: NotRequired[str]
    """Message time to live, ISO 8601 (e.g. P14D); default: the service's."""
    dead_lettering_on_message_expiration: NotRequired[bool]
    """Dead-letter expired messages; default: the service's."""
    auto_delete_on_idle: NotRequired[str]
    """Delete the subscription after this long idle, ISO 8601 (at least PT5M); default: the service's (never)."""
    forward_to: NotRequired[str]
    """Forward every message to this queue or topic of the primary namespace."""


class QueueSettings(TypedDict):
    """A queue in the primary namespace."""

    name: str
    """Queue name (1-260 letters, digits, '.', '-' or '_'; no '/')."""
    max_size_in_megabytes: NotRequired[int]
    """Maximum size in MB; one of the sizes the namespace's tier allows (default 1024)."""
    enable_partitioning: NotRequired[bool]
    """Partitioned queue (default true; every Premium queue is)."""
    paired: NotRequired[bool]
    """Paired senders write here (default true): duplicate detection is then on unless said otherwise."""
    requires_duplicate_detection: NotRequired[bool]
    """Duplicate detection; default: on for paired queues."""
    duplicate_detection_history_time_window: NotRequired[str]
    """Duplicate detection window, ISO 8601; default: the service's."""
    default_message_time_to_live: NotRequired[str]
    """Message time to live, ISO 8601; default: the service's."""
    requires_session: NotRequired[bool]
    """Session-aware queue (default false)."""
    lock_duration: NotRequired[str]
    """Peek-lock duration, ISO 8601; default: the service's."""
    max_delivery_count: NotRequired[int]
    """Deliveries before a message is dead-lettered; default: the service's."""
    dead_lettering_on_message_expiration: NotRequired[bool]
    """Dead-letter expired messages; default: the service's."""
    auto_delete_on_idle: NotRequired[str]
    """Delete the queue after this long idle, ISO 8601 (at least PT5M); default: the service's (never)."""
    forward_to: NotRequired[str]
    """Forward every message to this queue or topic of the primary namespace."""


class TopicSettings(TypedDict):
    """A topic in the primary namespace, with its subscriptions."""

    name: str
    """Topic name (1-260 letters, digits, '.', '-' or '_'; no '/')."""
    max_size_in_megabytes: NotRequired[int]
    """Maximum size in MB; one of the sizes the namespace's tier allows (default 1024)."""
    enable_partitioning: NotRequired[bool]
    """Partitioned topic (default true; every Premium topic is)."""
    paired: NotRequired[bool]
    """Paired senders write here (default true): duplicate detection is then on unless said otherwise."""
    requires_duplicate_detection: NotRequired[bool]
    """Duplicate detection; default: on for paired topics."""
    duplicate_detection_history_time_window: NotRequired[str]
    """Duplicate detection window, ISO 8601; default: the service's."""
    default_message_time_to_live: NotRequired[str]
    """Message time to live, ISO 8601; default: the service's."""
    auto_delete_on_idle: NotRequired[str]
    """Delete the topic after this long idle, ISO 8601 (at least PT5M); default: the service's (never)."""
    subscriptions: NotRequired[list[SubscriptionSettings]]
    """The topic's subscriptions."""


class NetworkSettings(TypedDict):
    """Private connectivity, required when a namespace denies public network access (production)."""

    private_endpoint_subnet_id: pulumi.Input[str]
    """ARM id of the subnet each Premium namespace's private endpoint goes in (in the syphon's region)."""
    private_dns_zone_id: pulumi.Input[str]
    """ARM id of the privatelink.servicebus.windows.net private DNS zone the endpoints register in."""
    syphon_infrastructure_subnet_id: pulumi.Input[str]
    """ARM id of the subnet dedicated to the syphon's (internal) Container Apps environment."""


class PrivateEndpointSettings(TypedDict):
    """Where a pair's private endpoints go."""

    subnet_id: pulumi.Input[str]
    """ARM id of the subnet the endpoints' network interfaces go in."""
    private_dns_zone_id: pulumi.Input[str]
    """ARM id of the privatelink.servicebus.windows.net private DNS zone the endpoints register in."""
    location: pulumi.Input[str]
    """The subnet's region (a private endpoint lives in its virtual network's region)."""


class RegistrySettings(TypedDict):
    """The container registry the syphon image is pulled from with the syphon's identity (AcrPull)."""

    server: pulumi.Input[str]
    """Registry login server, e.g. acme.azurecr.io."""
    resource_id: pulumi.Input[str]
    """ARM id of the registry (/subscriptions/.../providers/Microsoft.ContainerRegistry/registries/...)."""


class SyphonSettings(TypedDict):
    """Where and how the syphon runs: an Azure Container App with its own identity."""

    image: pulumi.Input[str]
    """The syphon's container image (may be the output of an image build in the same program)."""
    cpu: NotRequired[float]
    """vCPUs: 0.25 to 2.0 in steps of 0.25 (default 0.5)."""
    memory: NotRequired[str]
    """Memory, twice the CPU in GiB, e.g. 1Gi for 0.5 CPU (default 1Gi)."""
    min_replicas: NotRequired[int]
    """Replicas always running, 1-30 (default 1): at least one syphon must always run."""
    max_replicas: NotRequired[int]
    """Most replicas, 1-30, at least min_replicas (default 1)."""
    log_retention_days: NotRequired[int]
    """Log Analytics retention, 30-730 days (default 30)."""
    registry: NotRequired[RegistrySettings]
    """Private registry to pull the image from; none: the image is public."""
    location: NotRequired[pulumi.Input[str]]
    """Region of the syphon; default: the primary namespace's."""
