"""The stack config's shape, the one declaration of every setting of a pair: its name, type, bound (its rule in
`fields.py`), default and description, together in one `Field` per setting. A stack file (`pairedbus:` keys, the
aliases) and a program's args (`PairedNamespaceArgs`, the field names) are validated by these models, and the
components' typed args are generated from them (`components/args.py`, by `components/args_codegen.py`). Parsing,
key checks and the cross-field rules live in `model.py`, which builds on this; the rules (`cross_field.py`,
`forwarding.py`) read these types, so this module imports none of them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, Strict
from pydantic.alias_generators import to_camel

from pairedbus import contract, limits
from pairedbus.iac.config.choices import BacklogAuth, PrincipalType, PublicNetworkAccess, Sku
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

#: A choice (`choices.py`) as a stack file or a program writes it (`Premium`) or as its member: the model is strict,
#: and strict pydantic would take only the member.
Lax = Strict(False)


class _Model(BaseModel):
    #: strict: a bool is not a count, an int is not a string, a YAML date is not a duration.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, strict=True)


def defaults_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's defaults by field name, for a part used on its own that is given no value (None: no default)."""
    found = {
        name: field.get_default(call_default_factory=True)
        for name, field in model.model_fields.items()
        if not field.is_required()
    }
    return {name: value for name, value in found.items() if value is not None}


def minimum_of(model: type[BaseModel], name: str) -> Any:
    """A field's lower bound (`ge`) as the model declares it, for a part used on its own (not validated by it)."""
    return next(m.ge for m in model.model_fields[name].metadata if isinstance(m, annotated_types.Ge))


class ResourceGroupConfig(_Model):
    """The resource group that holds one namespace (and, for the primary, the syphon)."""

    name: ResourceGroupName = Field(
        description="Resource group name: 1-90 letters, digits, '_', '-', '.', '(' or ')', not ending in '.'."
    )
    create: bool = Field(True, description="Create the group; false: the group exists and is only referenced.")


class ResourceGroupsConfig(_Model):
    """The resource groups of the primary and the secondary namespace."""

    primary: ResourceGroupConfig = Field(description="The primary namespace's resource group.")
    secondary: ResourceGroupConfig = Field(description="The secondary namespace's resource group.")


class NetworkRuleSetConfig(_Model):
    """Firewall rules for a namespace that keeps public network access (ARM networkRuleSets/default): IPv4 rules
    (Standard and Premium) and virtual-network rules (Premium: service endpoints)."""

    default_action: Literal["Allow", "Deny"] = Field(
        "Deny",
        description="Deny: only the rules' addresses and subnets (and trusted services, if enabled) get in; Allow: "
        "everyone (then no rules may be given).",
    )
    ip_rules: Annotated[list[IpRule], at_most(limits.MAX_IP_RULES, "IP rules")] = Field(
        default_factory=list,
        description="IPv4 addresses or CIDR ranges allowed in (at most 128); the list or any address may be an output.",
    )
    virtual_network_rules: Annotated[
        list[SubnetId], at_most(limits.MAX_VIRTUAL_NETWORK_RULES, "virtual network rules")
    ] = Field(
        default_factory=list,
        description="ARM ids of subnets allowed in through their Microsoft.ServiceBus service endpoint (Premium only; "
        "at most 128); the list or any id may be an output.",
    )
    trusted_service_access_enabled: bool = Field(
        False, description="Let Microsoft's trusted services (Event Grid, Stream Analytics, ...) past the firewall."
    )


class EncryptionConfig(_Model):
    """Customer-managed-key encryption at rest (Premium only, [sb-cmk]): a Key Vault key the namespace reads
    through a user-assigned identity. The identity must hold the key (Key Vault Crypto Service Encryption User)
    before `pulumi up`; the vault needs soft delete and purge protection."""

    key_vault_uri: KeyVaultUri = Field(
        description="The key vault's URI, https://<vault>.vault.azure.net (may be an output of the vault)."
    )
    key_name: KeyName = Field(description="The key's name in the vault (may be an output of the key).")
    key_version: KeyVersion = Field(
        None,
        description="A key version (32 hexadecimal digits); none: the current version, followed when the key rotates.",
    )
    user_assigned_identity_id: UserAssignedIdentityId = Field(
        description="ARM id of the user-assigned identity that reads the key (it needs Key Vault Crypto Service "
        "Encryption User; added to the namespace's identities); may be an output of the identity."
    )
    require_infrastructure_encryption: bool = Field(
        False, description="A second layer of platform-key encryption; decided when the namespace is created."
    )


class NamespaceConfig(_Model):
    """One Service Bus namespace of the pair."""

    name: NamespaceName = Field(
        description="Namespace name (6-50 letters, digits or '-', starting with a letter); it is the DNS name."
    )
    location: Region = Field(
        description="Azure region, name or display name in any case (westeurope, West Europe). The secondary must "
        "be in another region than the primary."
    )
    sku: Annotated[Sku, Lax] = Field(Sku.STANDARD, description="The namespace's tier.")
    capacity: Annotated[Literal[1, 2, 4, 8, 16] | None, NotBool] = Field(
        None, description="Premium messaging units: 1, 2, 4, 8 or 16 (none: one per partition). Not for Standard."
    )
    premium_messaging_partitions: Annotated[Literal[1, 2, 4] | None, NotBool] = Field(
        None,
        description="Premium messaging partitions: 1, 2 or 4, set at creation. Not for Standard. None on Premium: 2 "
        "where the namespace holds queues or topics (the secondary always, for its backlog queues), else the "
        "service's 1.",
    )
    zone_redundant: bool = Field(False, description="Spread the namespace over availability zones.")
    public_network_access: Annotated[PublicNetworkAccess, Lax] = Field(
        PublicNetworkAccess.ENABLED,
        description="Production needs Disabled: clients then reach a Premium namespace through private endpoints (a "
        "Standard namespace has none, only IP firewall rules, so it cannot be Disabled).",
    )
    network_rule_set: NetworkRuleSetConfig | None = Field(
        None,
        description="Firewall rules for the public endpoint (publicNetworkAccess Enabled only); none: no rule set.",
    )
    encryption: EncryptionConfig | None = Field(
        None, description="Customer-managed-key encryption (Premium only); none: Microsoft-managed keys."
    )

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


_LOCK_DURATION = "Peek-lock duration, ISO 8601 (PT5S to PT5M, e.g. PT1M); none: the service's."
_MAX_DELIVERY_COUNT = "Deliveries before a message is dead-lettered; none: the service's."
_TIME_TO_LIVE = "Message time to live, ISO 8601 (at least PT1S, e.g. P14D); none: the service's."
_AUTO_DELETE_ON_IDLE = "Delete the entity after this long idle, ISO 8601 (at least PT5M); none: the service's (never)."
_DEAD_LETTERING = "Dead-letter expired messages; none: the service's."
_FORWARD_TO = "Forward every message to this queue or topic of the primary namespace (no forwarding cycles)."


class SubscriptionConfig(_Model):
    """A subscription of a topic in the primary namespace."""

    name: SubscriptionName = Field(
        description="Subscription name (1-50 letters, digits, '.', '-' or '_'), unique in its topic."
    )
    requires_session: bool = Field(False, description="Session-aware subscription.")
    lock_duration: LockDuration = Field(None, description=_LOCK_DURATION)
    max_delivery_count: DeliveryCount = Field(None, description=_MAX_DELIVERY_COUNT)
    default_message_time_to_live: TimeToLive = Field(None, description=_TIME_TO_LIVE)
    dead_lettering_on_message_expiration: bool | None = Field(None, description=_DEAD_LETTERING)
    auto_delete_on_idle: AutoDeleteOnIdle = Field(None, description=_AUTO_DELETE_ON_IDLE)
    forward_to: str | None = Field(None, description=_FORWARD_TO + " Not the subscription's own topic.")


class _PrimaryEntity(_Model):
    name: EntityName = Field(
        description="Name (1-260 letters, digits, '.', '-' or '_', starting and ending with a letter or digit; no "
        "'/'), unique among the namespace's queues and topics regardless of case."
    )
    max_size_in_megabytes: int = Field(
        contract.DEFAULT_ENTITY_SIZE_MB,
        description="Maximum size in MB; one of the sizes the namespace's tier allows (Standard 1024-5120 in 1024 "
        "steps; Premium 1, 2, 3, 4, 5, 10, 20, 40 or 80 GB).",
    )
    enable_partitioning: bool = Field(True, description="Partitioned (every Premium queue and topic must be).")
    paired: bool = Field(
        True,
        description="Paired senders write here: a repeated syphon move must then be dropped as a duplicate, so "
        "duplicate detection is on, with a window of at least maxOutage; false: exempt.",
    )
    requires_duplicate_detection: bool | None = Field(
        None, description="Duplicate detection; none: on when paired (and it must be on when paired)."
    )
    duplicate_detection_history_time_window: DuplicateDetectionWindow = Field(
        None,
        description="Duplicate detection window, ISO 8601 (PT20S to P7D; at least maxOutage when paired); none: "
        "maxOutage when paired, else the service's.",
    )
    default_message_time_to_live: TimeToLive = Field(None, description=_TIME_TO_LIVE)
    auto_delete_on_idle: AutoDeleteOnIdle = Field(None, description=_AUTO_DELETE_ON_IDLE)

    @property
    def duplicate_detection(self) -> bool:
        """On unless said otherwise for entities paired senders write to."""
        if self.requires_duplicate_detection is None:
            return self.paired
        return self.requires_duplicate_detection


class QueueConfig(_PrimaryEntity):
    """A queue in the primary namespace."""

    requires_session: bool = Field(False, description="Session-aware queue.")
    lock_duration: LockDuration = Field(None, description=_LOCK_DURATION)
    max_delivery_count: DeliveryCount = Field(None, description=_MAX_DELIVERY_COUNT)
    dead_lettering_on_message_expiration: bool | None = Field(None, description=_DEAD_LETTERING)
    forward_to: str | None = Field(None, description=_FORWARD_TO)


class TopicConfig(_PrimaryEntity):
    """A topic in the primary namespace, with its subscriptions."""

    subscriptions: list[SubscriptionConfig] = Field(
        default_factory=list, description="The topic's subscriptions (at most 2,000)."
    )


class RegistryConfig(_Model):
    """The container registry the syphon image is pulled from with the syphon's identity (AcrPull)."""

    server: Annotated[str, Field(min_length=1)] = Field(description="Registry login server, e.g. acme.azurecr.io.")
    resource_id: RegistryId = Field(
        description="ARM id of the registry (/subscriptions/.../providers/Microsoft.ContainerRegistry/registries/...): "
        "the syphon's identity gets AcrPull on it."
    )


class SyphonConfig(_Model):
    """Where and how the syphon runs: an Azure Container App with its own identity."""

    image: ContainerImage = Field(
        description="The syphon's container image, registry/repository[:tag][@sha256:digest] (may be the output of "
        "an image build in the same program)."
    )
    cpu: Annotated[Literal[limits.SYPHON_CPU_VALUES], NotBool] = Field(  # type: ignore[valid-type]  # a Literal over limits' tuple, which pydantic reads at run time and mypy cannot
        0.5, description="vCPUs: 0.25 to 2.0 in steps of 0.25 (Container Apps consumption sizes)."
    )
    memory: str = Field("1Gi", description="Memory, twice the CPU in GiB, e.g. 1Gi for 0.5 CPU.")
    min_replicas: Annotated[int, Field(ge=1, le=30)] = Field(
        1, description="Replicas always running: at least one syphon must always run."
    )
    max_replicas: Annotated[int, Field(ge=1, le=30)] = Field(
        1,
        description="Most replicas, at least minReplicas; above it the app scales on the backlog's depth (KEDA).",
    )
    log_retention_days: Annotated[int, Field(ge=30, le=730)] = Field(30, description="Log Analytics retention in days.")
    registry: RegistryConfig | None = Field(
        None, description="Private registry to pull the image from; none: the image is public."
    )
    location: Region | None = Field(None, description="Region of the syphon; none: the primary namespace's.")


class NetworkConfig(_Model):
    """Private connectivity, required when a namespace denies public network access (production): each Premium
    namespace gets a private endpoint (group `namespace`) registered in the private DNS zone, and the syphon's
    Container Apps environment runs, internal, on its own subnet. Both subnets are in the syphon's region."""

    private_endpoint_subnet_id: SubnetId = Field(
        description="ARM id of the subnet each Premium namespace's private endpoint goes in (in the syphon's region)."
    )
    private_dns_zone_id: PrivateDnsZoneId = Field(
        description="ARM id of the privatelink.servicebus.windows.net private DNS zone the endpoints register in."
    )
    syphon_infrastructure_subnet_id: SubnetId = Field(
        description="ARM id of the subnet dedicated to the syphon's (internal) Container Apps environment (it cannot "
        "also hold the private endpoints)."
    )


class DiagnosticsConfig(_Model):
    """Diagnostic settings on both namespaces: their resource logs (and metrics) to a Log Analytics workspace."""

    workspace_id: LogAnalyticsWorkspaceId | None = Field(
        None,
        description="ARM id of the Log Analytics workspace (may be an output of the workspace); none: the syphon's "
        "workspace.",
    )
    logs: LogSelection = Field(
        default_factory=lambda: ["allLogs"],
        description="Category groups (allLogs, audit) or Service Bus log categories (OperationalLogs, "
        "VNetAndIPFilteringLogs, RuntimeAuditLogs (Premium only), ApplicationMetricsLogs, DiagnosticErrorLogs), "
        "each once.",
    )
    metrics: bool = Field(True, description="Also send the namespaces' platform metrics (AllMetrics).")


class StackConfig(_Model):
    """Everything under `pairedbus:` in a stack file (README.md, "Stack config reference")."""

    production: bool = Field(
        False,
        description="Also protect every resource whose loss would stop or lose messages (backlog queues are "
        "retained instead); requires publicNetworkAccess Disabled on both namespaces. Only ever adds to the "
        "`protect` resource option.",
    )
    allow_unknown_region: bool = Field(
        False,
        description="A location pairedbus's region table lacks is a region newer than the table: deployed with a "
        "warning instead of refused (false: refused, with the closest region of its geography).",
    )
    resource_groups: ResourceGroupsConfig = Field(
        description="Resource groups of the primary and the secondary namespace."
    )
    primary: NamespaceConfig = Field(description="The primary namespace: senders write here while it is available.")
    secondary: NamespaceConfig = Field(
        description="The secondary namespace, in another region: it holds the backlog queues."
    )
    backlog_queue_count: Annotated[
        int, Field(ge=contract.MIN_BACKLOG_QUEUE_COUNT, le=contract.MAX_BACKLOG_QUEUE_COUNT)
    ] = Field(
        contract.DEFAULT_BACKLOG_QUEUE_COUNT,
        description="How many backlog queues the secondary holds (at most 100 in a Standard secondary).",
    )
    backlog_auth: Annotated[BacklogAuth, Lax] = Field(
        BacklogAuth.ENTRA,
        description="How the backlog queues are created: entra, or sas (the documented fallback for "
        "azure-service-bus#344, RBAC on names with '/'; needs local auth on the secondary).",
    )
    deployer_principal_type: Annotated[PrincipalType, Lax] = Field(
        PrincipalType.USER,
        description="What runs `pulumi up`, exact case: the deployer's data-plane role assignment names it, and ARM "
        "refuses one whose principalType does not match (UnmatchedPrincipalType).",
    )
    max_outage: OutageDuration = Field(
        contract.DEFAULT_MAX_OUTAGE,
        description="The longest primary outage the pair must absorb, ISO 8601 (PT20S to P7D): paired entities' "
        "minimum duplicate-detection window.",
    )
    queues: list[QueueConfig] = Field(default_factory=list, description="Queues of the primary namespace.")
    topics: list[TopicConfig] = Field(
        default_factory=list, description="Topics of the primary namespace, with their subscriptions."
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Tags for every resource, at most 47 (ARM's 50 less this project's own); names up to 512 "
        "characters, values up to 256 (each value may be an output of another resource).",
    )
    syphon: SyphonConfig = Field(description="The syphon, which moves backlog messages to their primary destinations.")
    network: NetworkConfig | None = Field(
        None,
        description="Private endpoints and the syphon's subnet; required when a namespace denies public network "
        "access.",
    )
    diagnostics: DiagnosticsConfig | None = Field(
        None,
        description="Diagnostic settings on both namespaces (resource logs and metrics to Log Analytics); none: no "
        "settings.",
    )
    namespace_lock: NamespaceLock | None = Field(
        None,
        description="A management lock on each namespace: CanNotDelete or none; none given: CanNotDelete when "
        "production, else none.",
    )

    @property
    def lock_level(self) -> str | None:
        """The lock each namespace gets, after the default: CanNotDelete in production, none otherwise."""
        chosen = self.namespace_lock or ("CanNotDelete" if self.production else "none")
        return None if chosen == "none" else chosen

    @property
    def backlog_queue_names(self) -> list[str]:
        return contract.backlog_queue_names(self.primary.name, self.backlog_queue_count)
