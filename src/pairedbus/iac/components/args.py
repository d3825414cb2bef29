"""The components' typed settings: plain dicts (TypedDicts), the form a Pulumi program in any language can pass
and Pulumi's component-provider analyzer (`pulumi.provider.experimental.analyzer`) turns into the package schema.

GENERATED from the stack-config model (`pairedbus.iac.config.schema`) by `python -m
pairedbus.iac.components.args_codegen`: do not edit; change the model and run it (tests/iac/components/test_args.py
fails while the two differ). Field names are the model's (the stack config's keys in snake_case; the schema and every
other language spell them in camelCase, exactly as `stacks/Pulumi.<stack>.yaml` does). Plain fields must be known
before anything is registered; `pulumi.Input[...]` fields may be outputs of other resources
(`args_mapping.INPUT_PATHS`), passed through to resource inputs and checked when they resolve.

No `from __future__ import annotations` here: the analyzer reads these annotations as live types.
"""

from typing import Any, NotRequired, TypedDict

import pulumi

from pairedbus.iac.config.choices import BacklogAuth, PrincipalType, PublicNetworkAccess, Sku
from pairedbus.iac.config.schema import NamespaceConfig, QueueConfig, StackConfig, SyphonConfig, defaults_of

#: What a part assumes when used on its own and a setting is left out: the model's defaults, read from it.
NAMESPACE_DEFAULTS: dict[str, Any] = defaults_of(NamespaceConfig)
ENTITY_DEFAULTS: dict[str, Any] = defaults_of(QueueConfig)
SYPHON_DEFAULTS: dict[str, Any] = defaults_of(SyphonConfig)
STACK_DEFAULTS: dict[str, Any] = defaults_of(StackConfig)


class ResourceGroupSettings(TypedDict):
    """The resource group that holds one namespace (and, for the primary, the syphon)."""

    name: pulumi.Input[str]
    """Resource group name: 1-90 letters, digits, '_', '-', '.', '(' or ')', not ending in '.'."""
    create: NotRequired[bool]
    """Create the group; false: the group exists and is only referenced. Default: true."""


class ResourceGroupsSettings(TypedDict):
    """The resource groups of the primary and the secondary namespace."""

    primary: ResourceGroupSettings
    """The primary namespace's resource group."""
    secondary: ResourceGroupSettings
    """The secondary namespace's resource group."""


class NetworkRuleSetSettings(TypedDict):
    """Firewall rules for a namespace that keeps public network access (ARM networkRuleSets/default): IPv4 rules
    (Standard and Premium) and virtual-network rules (Premium: service endpoints)."""

    default_action: NotRequired[str]
    """Deny: only the rules' addresses and subnets (and trusted services, if enabled) get in; Allow: everyone (then no
    rules may be given). Default: Deny."""
    ip_rules: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """IPv4 addresses or CIDR ranges allowed in (at most 128); the list or any address may be an output."""
    virtual_network_rules: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """ARM ids of subnets allowed in through their Microsoft.ServiceBus service endpoint (Premium only; at most 128);
    the list or any id may be an output."""
    trusted_service_access_enabled: NotRequired[bool]
    """Let Microsoft's trusted services (Event Grid, Stream Analytics, ...) past the firewall. Default: false."""


class EncryptionSettings(TypedDict):
    """Customer-managed-key encryption at rest (Premium only, [sb-cmk]): a Key Vault key the namespace reads through a
    user-assigned identity. The identity must hold the key (Key Vault Crypto Service Encryption User) before `pulumi
    up`; the vault needs soft delete and purge protection."""

    key_vault_uri: pulumi.Input[str]
    """The key vault's URI, https://<vault>.vault.azure.net (may be an output of the vault)."""
    key_name: pulumi.Input[str]
    """The key's name in the vault (may be an output of the key)."""
    key_version: NotRequired[pulumi.Input[str]]
    """A key version (32 hexadecimal digits); none: the current version, followed when the key rotates."""
    user_assigned_identity_id: pulumi.Input[str]
    """ARM id of the user-assigned identity that reads the key (it needs Key Vault Crypto Service Encryption User; added
    to the namespace's identities); may be an output of the identity."""
    require_infrastructure_encryption: NotRequired[bool]
    """A second layer of platform-key encryption; decided when the namespace is created. Default: false."""


class NamespaceSettings(TypedDict):
    """One Service Bus namespace of the pair."""

    name: pulumi.Input[str]
    """Namespace name (6-50 letters, digits or '-', starting with a letter); it is the DNS name."""
    location: pulumi.Input[str]
    """Azure region, name or display name in any case (westeurope, West Europe). The secondary must be in another region
    than the primary."""
    sku: NotRequired[Sku]
    """The namespace's tier. Default: Standard."""
    capacity: NotRequired[int]
    """Premium messaging units: 1, 2, 4, 8 or 16 (none: one per partition). Not for Standard."""
    premium_messaging_partitions: NotRequired[int]
    """Premium messaging partitions: 1, 2 or 4, set at creation. Not for Standard. None on Premium: 2 where the
    namespace holds queues or topics (the secondary always, for its backlog queues), else the service's 1."""
    zone_redundant: NotRequired[bool]
    """Spread the namespace over availability zones. Default: false."""
    public_network_access: NotRequired[PublicNetworkAccess]
    """Production needs Disabled: clients then reach a Premium namespace through private endpoints (a Standard namespace
    has none, only IP firewall rules, so it cannot be Disabled). Default: Enabled."""
    network_rule_set: NotRequired[NetworkRuleSetSettings]
    """Firewall rules for the public endpoint (publicNetworkAccess Enabled only); none: no rule set."""
    encryption: NotRequired[EncryptionSettings]
    """Customer-managed-key encryption (Premium only); none: Microsoft-managed keys."""


class QueueSettings(TypedDict):
    """A queue in the primary namespace."""

    name: str
    """Name (1-260 letters, digits, '.', '-' or '_', starting and ending with a letter or digit; no '/'), unique among
    the namespace's queues and topics regardless of case."""
    max_size_in_megabytes: NotRequired[int]
    """Maximum size in MB; one of the sizes the namespace's tier allows (Standard 1024-5120 in 1024 steps; Premium 1, 2,
    3, 4, 5, 10, 20, 40 or 80 GB). Default: 1024."""
    enable_partitioning: NotRequired[bool]
    """Partitioned (every Premium queue and topic must be). Default: true."""
    paired: NotRequired[bool]
    """Paired senders write here: a repeated syphon move must then be dropped as a duplicate, so duplicate detection is
    on, with a window of at least maxOutage; false: exempt. Default: true."""
    requires_duplicate_detection: NotRequired[bool]
    """Duplicate detection; none: on when paired (and it must be on when paired)."""
    duplicate_detection_history_time_window: NotRequired[str]
    """Duplicate detection window, ISO 8601 (PT20S to P7D; at least maxOutage when paired); none: maxOutage when paired,
    else the service's."""
    default_message_time_to_live: NotRequired[str]
    """Message time to live, ISO 8601 (at least PT1S, e.g. P14D); none: the service's."""
    auto_delete_on_idle: NotRequired[str]
    """Delete the entity after this long idle, ISO 8601 (at least PT5M); none: the service's (never)."""
    requires_session: NotRequired[bool]
    """Session-aware queue. Default: false."""
    lock_duration: NotRequired[str]
    """Peek-lock duration, ISO 8601 (PT5S to PT5M, e.g. PT1M); none: the service's."""
    max_delivery_count: NotRequired[int]
    """Deliveries before a message is dead-lettered; none: the service's. From 1 to 2147483647."""
    dead_lettering_on_message_expiration: NotRequired[bool]
    """Dead-letter expired messages; none: the service's."""
    forward_to: NotRequired[str]
    """Forward every message to this queue or topic of the primary namespace (no forwarding cycles)."""


class SubscriptionSettings(TypedDict):
    """A subscription of a topic in the primary namespace."""

    name: str
    """Subscription name (1-50 letters, digits, '.', '-' or '_'), unique in its topic."""
    requires_session: NotRequired[bool]
    """Session-aware subscription. Default: false."""
    lock_duration: NotRequired[str]
    """Peek-lock duration, ISO 8601 (PT5S to PT5M, e.g. PT1M); none: the service's."""
    max_delivery_count: NotRequired[int]
    """Deliveries before a message is dead-lettered; none: the service's. From 1 to 2147483647."""
    default_message_time_to_live: NotRequired[str]
    """Message time to live, ISO 8601 (at least PT1S, e.g. P14D); none: the service's."""
    dead_lettering_on_message_expiration: NotRequired[bool]
    """Dead-letter expired messages; none: the service's."""
    auto_delete_on_idle: NotRequired[str]
    """Delete the entity after this long idle, ISO 8601 (at least PT5M); none: the service's (never)."""
    forward_to: NotRequired[str]
    """Forward every message to this queue or topic of the primary namespace (no forwarding cycles). Not the
    subscription's own topic."""


class TopicSettings(TypedDict):
    """A topic in the primary namespace, with its subscriptions."""

    name: str
    """Name (1-260 letters, digits, '.', '-' or '_', starting and ending with a letter or digit; no '/'), unique among
    the namespace's queues and topics regardless of case."""
    max_size_in_megabytes: NotRequired[int]
    """Maximum size in MB; one of the sizes the namespace's tier allows (Standard 1024-5120 in 1024 steps; Premium 1, 2,
    3, 4, 5, 10, 20, 40 or 80 GB). Default: 1024."""
    enable_partitioning: NotRequired[bool]
    """Partitioned (every Premium queue and topic must be). Default: true."""
    paired: NotRequired[bool]
    """Paired senders write here: a repeated syphon move must then be dropped as a duplicate, so duplicate detection is
    on, with a window of at least maxOutage; false: exempt. Default: true."""
    requires_duplicate_detection: NotRequired[bool]
    """Duplicate detection; none: on when paired (and it must be on when paired)."""
    duplicate_detection_history_time_window: NotRequired[str]
    """Duplicate detection window, ISO 8601 (PT20S to P7D; at least maxOutage when paired); none: maxOutage when paired,
    else the service's."""
    default_message_time_to_live: NotRequired[str]
    """Message time to live, ISO 8601 (at least PT1S, e.g. P14D); none: the service's."""
    auto_delete_on_idle: NotRequired[str]
    """Delete the entity after this long idle, ISO 8601 (at least PT5M); none: the service's (never)."""
    subscriptions: NotRequired[list[SubscriptionSettings]]
    """The topic's subscriptions (at most 2,000)."""


class RegistrySettings(TypedDict):
    """The container registry the syphon image is pulled from with the syphon's identity (AcrPull)."""

    server: pulumi.Input[str]
    """Registry login server, e.g. acme.azurecr.io."""
    resource_id: pulumi.Input[str]
    """ARM id of the registry (/subscriptions/.../providers/Microsoft.ContainerRegistry/registries/...): the syphon's
    identity gets AcrPull on it."""


class SyphonSettings(TypedDict):
    """Where and how the syphon runs: an Azure Container App with its own identity."""

    image: pulumi.Input[str]
    """The syphon's container image, registry/repository[:tag][@sha256:digest] (may be the output of an image build in
    the same program)."""
    cpu: NotRequired[float]
    """vCPUs: 0.25 to 2.0 in steps of 0.25 (Container Apps consumption sizes). Default: 0.5."""
    memory: NotRequired[str]
    """Memory, twice the CPU in GiB, e.g. 1Gi for 0.5 CPU. Default: 1Gi."""
    min_replicas: NotRequired[int]
    """Replicas always running: at least one syphon must always run. From 1 to 30. Default: 1."""
    max_replicas: NotRequired[int]
    """Most replicas, at least minReplicas; above it the app scales on the backlog's depth (KEDA). From 1 to 30.
    Default: 1."""
    log_retention_days: NotRequired[int]
    """Log Analytics retention in days. From 30 to 730. Default: 30."""
    registry: NotRequired[RegistrySettings]
    """Private registry to pull the image from; none: the image is public."""
    location: NotRequired[pulumi.Input[str]]
    """Region of the syphon; none: the primary namespace's."""


class NetworkSettings(TypedDict):
    """Private connectivity, required when a namespace denies public network access (production): each Premium namespace
    gets a private endpoint (group `namespace`) registered in the private DNS zone, and the syphon's Container Apps
    environment runs, internal, on its own subnet. Both subnets are in the syphon's region."""

    private_endpoint_subnet_id: pulumi.Input[str]
    """ARM id of the subnet each Premium namespace's private endpoint goes in (in the syphon's region)."""
    private_dns_zone_id: pulumi.Input[str]
    """ARM id of the privatelink.servicebus.windows.net private DNS zone the endpoints register in."""
    syphon_infrastructure_subnet_id: pulumi.Input[str]
    """ARM id of the subnet dedicated to the syphon's (internal) Container Apps environment (it cannot also hold the
    private endpoints)."""


class DiagnosticsSettings(TypedDict):
    """Diagnostic settings on both namespaces: their resource logs (and metrics) to a Log Analytics workspace."""

    workspace_id: NotRequired[pulumi.Input[str]]
    """ARM id of the Log Analytics workspace (may be an output of the workspace); none: the syphon's workspace."""
    logs: NotRequired[list[str]]
    """Category groups (allLogs, audit) or Service Bus log categories (OperationalLogs, VNetAndIPFilteringLogs,
    RuntimeAuditLogs (Premium only), ApplicationMetricsLogs, DiagnosticErrorLogs), each once. Default: allLogs."""
    metrics: NotRequired[bool]
    """Also send the namespaces' platform metrics (AllMetrics). Default: true."""


class PairedNamespaceArgs(TypedDict):
    """A paired namespace: the same settings a stack's `pairedbus:` config holds, in snake_case."""

    production: NotRequired[bool]
    """Also protect every resource whose loss would stop or lose messages (backlog queues are retained instead);
    requires publicNetworkAccess Disabled on both namespaces. Only ever adds to the `protect` resource option. Default:
    false."""
    allow_unknown_region: NotRequired[bool]
    """A location pairedbus's region table lacks is a region newer than the table: deployed with a warning instead of
    refused (false: refused, with the closest region of its geography). Default: false."""
    resource_groups: ResourceGroupsSettings
    """Resource groups of the primary and the secondary namespace."""
    primary: NamespaceSettings
    """The primary namespace: senders write here while it is available."""
    secondary: NamespaceSettings
    """The secondary namespace, in another region: it holds the backlog queues."""
    backlog_queue_count: NotRequired[int]
    """How many backlog queues the secondary holds (at most 100 in a Standard secondary). From 1 to 10000. Default:
    10."""
    backlog_auth: NotRequired[BacklogAuth]
    """How the backlog queues are created: entra, or sas (the documented fallback for azure-service-bus#344, RBAC on
    names with '/'; needs local auth on the secondary). Default: entra."""
    deployer_principal_type: NotRequired[PrincipalType]
    """What runs `pulumi up`, exact case: the deployer's data-plane role assignment names it, and ARM refuses one whose
    principalType does not match (UnmatchedPrincipalType). Default: User."""
    max_outage: NotRequired[str]
    """The longest primary outage the pair must absorb, ISO 8601 (PT20S to P7D): paired entities' minimum
    duplicate-detection window. Default: PT1H."""
    queues: NotRequired[list[QueueSettings]]
    """Queues of the primary namespace."""
    topics: NotRequired[list[TopicSettings]]
    """Topics of the primary namespace, with their subscriptions."""
    tags: NotRequired[dict[str, pulumi.Input[str]]]
    """Tags for every resource, at most 47 (ARM's 50 less this project's own); names up to 512 characters, values up to
    256 (each value may be an output of another resource)."""
    syphon: SyphonSettings
    """The syphon, which moves backlog messages to their primary destinations."""
    network: NotRequired[NetworkSettings]
    """Private endpoints and the syphon's subnet; required when a namespace denies public network access."""
    diagnostics: NotRequired[DiagnosticsSettings]
    """Diagnostic settings on both namespaces (resource logs and metrics to Log Analytics); none: no settings."""
    namespace_lock: NotRequired[str]
    """A management lock on each namespace: CanNotDelete or none; none given: CanNotDelete when production, else
    none."""
