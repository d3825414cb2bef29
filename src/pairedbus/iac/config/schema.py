"""The stack config's shape: one pydantic model per part of `pairedbus:`, each field with its rule
(`fields.py`). Parsing, key checks and the cross-field rules live in `model.py`, which builds on this;
the rules (`cross_field.py`, `forwarding.py`) read these types, so this module imports none of them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from pairedbus import contract
from pairedbus.iac.config import limits
from pairedbus.iac.config.fields import (
    AutoDeleteOnIdle,
    ContainerImage,
    DeliveryCount,
    DuplicateDetectionWindow,
    EntityName,
    LockDuration,
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
)

#: The longest primary outage a pair must absorb unless the stack says otherwise. Duplicates of
#: a message (a send that timed out after the primary stored it, then parked; a syphon move
#: repeated after a failed complete) reach the primary up to an outage after the original, so
#: duplicate detection there must remember MessageIds at least that long. One hour covers the
#: longest failover interval the sender allows (contract.MAX_FAILOVER_INTERVAL) and four syphon
#: long polls (contract.SYPHON_LONG_POLL); a longer window costs throughput and memory in the
#: service's duplicate index, so stacks that must ride out longer outages raise it (up to P7D).
DEFAULT_MAX_OUTAGE = contract.DEFAULT_MAX_OUTAGE  # one value, in the contract


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


class NamespaceConfig(_Model):
    """One namespace of the pair."""

    name: NamespaceName
    #: An Azure region (name or display name, any case): `westeurope`, `West Europe`.
    location: Region
    sku: Literal["Standard", "Premium"] = contract.SKU_STANDARD
    #: Premium messaging units; Standard has none.
    capacity: Annotated[Literal[1, 2, 4, 8, 16] | None, NotBool] = None
    premium_messaging_partitions: Annotated[Literal[1, 2, 4] | None, NotBool] = None
    zone_redundant: bool = False
    #: Production stacks need `Disabled` (clients then reach a Premium namespace through private
    #: endpoints; a Standard namespace has none, only IP firewall rules, so it cannot be Disabled).
    public_network_access: Literal["Enabled", "Disabled", "SecuredByPerimeter"] = "Enabled"

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
    cpu: Annotated[Literal[limits.SYPHON_CPU_VALUES], NotBool] = 0.5  # type: ignore[valid-type]
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


class StackConfig(_Model):
    """Everything under `pairedbus:` in a stack file (README.md, "Stack config reference")."""

    #: Protects every stateful resource and requires publicNetworkAccess Disabled.
    production: bool = False
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
    #: ISO 8601: the longest primary outage the pair must absorb (see DEFAULT_MAX_OUTAGE).
    max_outage: OutageDuration = DEFAULT_MAX_OUTAGE
    queues: list[QueueConfig] = Field(default_factory=list)
    topics: list[TopicConfig] = Field(default_factory=list)
    #: ARM tags on every resource: at most 48 (50 less this project's two), names <= 512, values <= 256.
    tags: dict[str, str] = Field(default_factory=dict)
    syphon: SyphonConfig
    #: Required when a namespace's publicNetworkAccess is Disabled (production).
    network: NetworkConfig | None = None

    @property
    def backlog_queue_names(self) -> list[str]:
        return contract.backlog_queue_names(self.primary.name, self.backlog_queue_count)
