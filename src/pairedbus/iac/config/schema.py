"""The stack config's shape: one pydantic model per part of `pairedbus:`, each field with its rule
(`fields.py`). Parsing, key checks and the cross-field rules live in `model.py`, which builds on this;
the rules (`cross_field.py`, `forwarding.py`) read these types, so this module imports none of them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from pairedbus import contract, limits
from pairedbus.iac.config.fields import (
    AutoDeleteOnIdle,
    ContainerImage,
    DeliveryCount,
    DuplicateDetectionWindow,
    EntityName,
    IpRule,
    KeyName,
    KeyVaultUri,
    KeyVersion,
    LockDuration,
    LogAnalyticsWorkspaceId,
    LogSelection,
    NamespaceLock,
    NamespaceName,
    NotBool,
    OutageDuration,
    PrincipalType,
    PrivateDnsZoneId,
    Region,
    RegistryId,
    ResourceGroupName,
    SubnetId,
    SubscriptionName,
    TimeToLive,
    UserAssignedIdentityId,
    at_most,
)

#: The longest primary outage a pair must absorb unless the stack says otherwise. Duplicates of
#: a message (a send that timed out after the primary stored it, then parked; a syphon move
#: repeated after a failed complete) reach the primary up to an outage after the original, so
#: duplicate detection there must remember MessageIds at least that long. One hour covers the
#: longest failover interval the sender allows (contract.MAX_FAILOVER_INTERVAL) and four syphon
#: long polls (contract.SYPHON_LONG_POLL); a longer window costs throughput and memory in the
#: service's duplicate index, so stacks that must ride out longer outages raise it (up to P7D).


class _Model(BaseModel):
    #: strict: a bool is not a count, an int is not a string, a YAML date is not a duration.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, strict=True)


class ResourceGroupConfig(_Model):
    """A resource group the namespaces (and the syphon) live in."""

    name: ResourceGroupName
    #: false: the group exists and is only referenced.
    create: bool = True


class ResourceGroupsConfig(_Model):
    primary: ResourceGroupConfig
    secondary: ResourceGroupConfig


class NetworkRuleSetConfig(_Model):
    """The namespace's public endpoint firewall (ARM `networkRuleSets/default`), for a namespace that keeps public
    network access: IPv4 rules (Standard and Premium) and virtual-network rules (Premium: service endpoints)."""

    #: Deny (default): only the rules' addresses and subnets (and trusted services, if enabled) get in.
    #: Allow: every address gets in and the rules change nothing, so rules then are refused.
    default_action: Literal["Allow", "Deny"] = "Deny"
    #: IPv4 addresses or CIDR ranges allowed in, at most 128 ([quotas]).
    ip_rules: Annotated[list[IpRule], at_most(limits.MAX_IP_RULES, "IP rules")] = Field(default_factory=list)
    #: Subnet ARM ids allowed in through their Microsoft.ServiceBus service endpoint (Premium only), at most 128.
    virtual_network_rules: Annotated[
        list[SubnetId], at_most(limits.MAX_VIRTUAL_NETWORK_RULES, "virtual network rules")
    ] = Field(default_factory=list)
    #: Let Microsoft's trusted services (Event Grid, Stream Analytics, ...) past the firewall (default false).
    trusted_service_access_enabled: bool = False


class EncryptionConfig(_Model):
    """Customer-managed-key encryption at rest (Premium only, [sb-cmk]): a Key Vault key the namespace reads
    through a user-assigned identity. The identity must hold the key (Key Vault Crypto Service Encryption User)
    before `pulumi up`; the vault needs soft delete and purge protection."""

    #: https://<vault>.vault.azure.net
    key_vault_uri: KeyVaultUri
    #: The key's name in the vault.
    key_name: KeyName
    #: A key version (32 hexadecimal digits); none (default): the current version, followed when the key rotates.
    key_version: KeyVersion = None
    #: ARM id of the user-assigned identity the namespace reads the key with (added to the namespace's identities).
    user_assigned_identity_id: UserAssignedIdentityId
    #: A second layer of encryption with a platform key (default false); decided when the namespace is created.
    require_infrastructure_encryption: bool = False


class NamespaceConfig(_Model):
    """One namespace of the pair."""

    name: NamespaceName
    #: An Azure region (name or display name, any case): `westeurope`, `West Europe`.
    location: Region
    sku: Literal["Standard", "Premium"] = contract.SKU_STANDARD
    #: Premium messaging units; Standard has none.
    capacity: Annotated[Literal[1, 2, 4, 8, 16] | None, NotBool] = None
    #: Premium only, set at creation; none: 2 where the namespace holds queues or topics (`with_tier_defaults`),
    #: else the service's 1.
    premium_messaging_partitions: Annotated[Literal[1, 2, 4] | None, NotBool] = None
    zone_redundant: bool = False
    #: Production stacks need `Disabled` (clients then reach a Premium namespace through private
    #: endpoints; a Standard namespace has none, only IP firewall rules, so it cannot be Disabled).
    public_network_access: Literal["Enabled", "Disabled", "SecuredByPerimeter"] = "Enabled"
    #: Firewall rules for a namespace with publicNetworkAccess Enabled (none: no network rule set resource).
    network_rule_set: NetworkRuleSetConfig | None = None
    #: Customer-managed-key encryption (Premium only; none: Microsoft-managed keys).
    encryption: EncryptionConfig | None = None

    @property
    def is_premium(self) -> bool:
        return self.sku == contract.SKU_PREMIUM

    @property
    def partitions(self) -> int:
        return contract.effective_partitions(self.premium_messaging_partitions)

    @property
    def messaging_units(self) -> int | None:
        """Premium capacity in effect: as configured, else one unit per partition."""
        return (self.capacity or self.partitions) if self.is_premium else None

    @property
    def requires_partitioned_entities(self) -> bool:
        return contract.requires_partitioned_entities(self.sku, self.premium_messaging_partitions)


class _EntityOptions(_Model):
    #: 5 s to 5 min (PT5S..PT5M).
    lock_duration: LockDuration = None
    max_delivery_count: DeliveryCount = None
    #: 1 s up to TimeSpan.MaxValue.
    default_message_time_to_live: TimeToLive = None
    #: 5 min up to TimeSpan.MaxValue.
    auto_delete_on_idle: AutoDeleteOnIdle = None
    dead_lettering_on_message_expiration: bool | None = None
    #: A queue or topic of the primary; no cycles (through a topic's subscriptions included).
    forward_to: str | None = None


class SubscriptionConfig(_EntityOptions):
    name: SubscriptionName
    requires_session: bool = False


class _PrimaryEntity(_Model):
    name: EntityName
    max_size_in_megabytes: int = contract.DEFAULT_ENTITY_SIZE_MB
    enable_partitioning: bool = True
    #: Paired senders write here; a repeated syphon move must then be dropped as a duplicate, so a
    #: paired entity needs duplicate detection with a window >= maxOutage. false: exempt.
    paired: bool = True
    requires_duplicate_detection: bool | None = None
    #: 20 s to 7 days; a paired entity's defaults to the stack's maxOutage.
    duplicate_detection_history_time_window: DuplicateDetectionWindow = None
    default_message_time_to_live: TimeToLive = None
    auto_delete_on_idle: AutoDeleteOnIdle = None

    @property
    def duplicate_detection(self) -> bool:
        """On unless said otherwise for entities paired senders write to."""
        if self.requires_duplicate_detection is None:
            return self.paired
        return self.requires_duplicate_detection


class QueueConfig(_PrimaryEntity):
    requires_session: bool = False
    lock_duration: LockDuration = None
    max_delivery_count: DeliveryCount = None
    dead_lettering_on_message_expiration: bool | None = None
    forward_to: str | None = None


class TopicConfig(_PrimaryEntity):
    subscriptions: list[SubscriptionConfig] = Field(default_factory=list)


class RegistryConfig(_Model):
    server: Annotated[str, Field(min_length=1)]
    #: ARM id of the container registry (`Microsoft.ContainerRegistry/registries`); the syphon identity gets
    #: AcrPull on it, so the id is parsed, not matched loosely: no `..` segment, nothing after the name.
    resource_id: RegistryId


class SyphonConfig(_Model):
    """The syphon's Container App."""

    image: ContainerImage
    #: Container Apps consumption sizes: memory is twice the CPU in GiB.
    cpu: Annotated[Literal[limits.SYPHON_CPU_VALUES], NotBool] = 0.5  # type: ignore[valid-type]  # a Literal over limits' tuple, which pydantic reads at run time and mypy cannot
    memory: str = "1Gi"
    min_replicas: Annotated[int, Field(ge=1, le=30)] = 1
    max_replicas: Annotated[int, Field(ge=1, le=30)] = 1
    log_retention_days: Annotated[int, Field(ge=30, le=730)] = 30
    registry: RegistryConfig | None = None
    #: Where the syphon runs; defaults to the primary namespace's region.
    location: Region | None = None


class NetworkConfig(_Model):
    """Private connectivity: how clients and the syphon reach namespaces that deny public access.

    Each Premium namespace gets a private endpoint (group `namespace`) in `privateEndpointSubnetId`,
    registered in `privateDnsZoneId` (privatelink.servicebus.windows.net, linked to the clients'
    virtual networks by its owner); the syphon's Container Apps environment runs, internal, on
    `syphonInfrastructureSubnetId`. Both subnets are in the syphon's region."""

    private_endpoint_subnet_id: SubnetId
    private_dns_zone_id: PrivateDnsZoneId
    #: A subnet of its own, delegated to the environment (it cannot also hold the private endpoints).
    syphon_infrastructure_subnet_id: SubnetId


class DiagnosticsConfig(_Model):
    """Diagnostic settings on both namespaces: their resource logs (and metrics) to a Log Analytics workspace."""

    #: ARM id of the workspace; none (default): the syphon's own workspace, in the primary's resource group.
    workspace_id: LogAnalyticsWorkspaceId | None = None
    #: Category groups (allLogs, audit) or Service Bus categories (OperationalLogs, VNetAndIPFilteringLogs,
    #: RuntimeAuditLogs (Premium only), ApplicationMetricsLogs, DiagnosticErrorLogs); default [allLogs].
    logs: LogSelection = Field(default_factory=lambda: ["allLogs"])
    #: Also send the namespaces' platform metrics (AllMetrics; default true).
    metrics: bool = True


class StackConfig(_Model):
    """Everything under `pairedbus:` in a stack file (README.md, "Stack config reference")."""

    #: Protects every stateful resource and requires publicNetworkAccess Disabled.
    production: bool = False
    #: true: a region-shaped location that pairedbus's region table lacks is a region newer than the table, deployed
    #: with a warning (ARM decides); false (default): it is refused with the closest region of its geography.
    allow_unknown_region: bool = False
    resource_groups: ResourceGroupsConfig
    primary: NamespaceConfig
    secondary: NamespaceConfig
    backlog_queue_count: Annotated[int, Field(ge=1, le=contract.MAX_ENTITIES_PER_NAMESPACE)] = (
        contract.DEFAULT_BACKLOG_QUEUE_COUNT
    )
    #: "entra" (default): the backlog provider signs in with Entra ID. "sas": documented fallback
    #: for azure-service-bus#344 (RBAC on names with '/'); needs local auth on the secondary.
    backlog_auth: Literal["entra", "sas"] = "entra"
    #: What runs `pulumi up` (the principal the deployer's role assignment names): ARM refuses a
    #: role assignment whose principalType does not match (UnmatchedPrincipalType). Exact case.
    deployer_principal_type: PrincipalType = "User"
    #: ISO 8601: the longest primary outage the pair must absorb (see contract.DEFAULT_MAX_OUTAGE).
    max_outage: OutageDuration = contract.DEFAULT_MAX_OUTAGE
    queues: list[QueueConfig] = Field(default_factory=list)
    topics: list[TopicConfig] = Field(default_factory=list)
    #: ARM tags on every resource: at most 47 (50 less this project's three on the secondary), names <= 512, values <= 256.
    tags: dict[str, str] = Field(default_factory=dict)
    syphon: SyphonConfig
    #: Required when a namespace's publicNetworkAccess is Disabled (production).
    network: NetworkConfig | None = None
    #: Diagnostic settings on both namespaces (none: no diagnostic settings; production should have them).
    diagnostics: DiagnosticsConfig | None = None
    #: A management lock on each namespace: CanNotDelete or none; default CanNotDelete when production, else none.
    namespace_lock: NamespaceLock | None = None

    @property
    def lock_level(self) -> str | None:
        """The lock each namespace gets, after the default: CanNotDelete in production, none otherwise."""
        chosen = self.namespace_lock or ("CanNotDelete" if self.production else "none")
        return None if chosen == "none" else chosen

    @property
    def backlog_queue_names(self) -> list[str]:
        return contract.backlog_queue_names(self.primary.name, self.backlog_queue_count)
