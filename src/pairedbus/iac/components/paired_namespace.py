"""PairedNamespace: a whole paired namespace as one component, usable from any Pulumi program in any language.

It validates its args exactly as a stack's config is validated (`pairedbus.iac.config.args`), then composes
`NamespacePair`, `BacklogQueues`, `MessagingEntities` and `SyphonHost`, and returns what a consumer wires onward.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import pulumi

from pairedbus import contract
from pairedbus.iac.components.args import (
    NamespaceSettings,
    NetworkSettings,
    QueueSettings,
    ResourceGroupsSettings,
    SyphonSettings,
    TopicSettings,
)
from pairedbus.iac.components.backlog_queues import BacklogQueues, BacklogQueuesArgs
from pairedbus.iac.components.messaging_entities import MessagingEntities, MessagingEntitiesArgs
from pairedbus.iac.components.namespace_hardening import DiagnosticsSettings, harden_pair
from pairedbus.iac.components.namespace_pair import NamespacePair, NamespacePairArgs
from pairedbus.iac.components.syphon_host import SyphonHost, SyphonHostArgs
from pairedbus.iac.config import StackConfig
from pairedbus.iac.config.args import stack_config_from_args

#: Names of the parts inside a PairedNamespace. Fixed: leaf resources are named by their parts, and the
#: parts' aliases (below) must name the resources this repository's stacks already hold.
PAIR, BACKLOG, ENTITIES, SYPHON = "pair", "backlog", "entities", "syphon"


class PairedNamespaceArgs(TypedDict):
    """A paired namespace: the same settings a stack's `pairedbus:` config holds, in snake_case."""

    resource_groups: ResourceGroupsSettings
    """Resource groups of the primary and the secondary namespace."""
    primary: NamespaceSettings
    """The primary namespace: senders write here while it is available."""
    secondary: NamespaceSettings
    """The secondary namespace, in another region: it holds the backlog queues."""
    syphon: SyphonSettings
    """The syphon, which moves backlog messages to their primary destinations."""
    backlog_queue_count: NotRequired[int]
    """How many backlog queues the secondary holds (default: the spec's)."""
    backlog_auth: NotRequired[str]
    """How backlog queues are created: entra (default) or sas (the documented fallback; local auth on the secondary)."""
    queues: NotRequired[list[QueueSettings]]
    """Queues of the primary namespace."""
    topics: NotRequired[list[TopicSettings]]
    """Topics of the primary namespace, with their subscriptions."""
    tags: NotRequired[dict[str, str]]
    """Tags for every resource."""
    production: NotRequired[bool]
    """Protect every resource whose loss would stop or lose messages (backlog queues are retained instead)."""
    deployer_principal_type: NotRequired[str]
    """What runs `pulumi up`: User (default), ServicePrincipal or Group (the deployer's data-plane role names it)."""
    network: NotRequired[NetworkSettings]
    """Private endpoints and the syphon's subnet; required when a namespace denies public network access."""
    max_outage: NotRequired[str]
    """The longest primary outage the pair must absorb, ISO 8601 (default PT1H): paired entities' minimum
    duplicate-detection window."""
    diagnostics: NotRequired[DiagnosticsSettings]
    """Diagnostic settings on both namespaces (resource logs and metrics to Log Analytics); none: no settings."""
    namespace_lock: NotRequired[str]
    """A lock on each namespace: CanNotDelete or none (default: CanNotDelete when production, else none)."""


# The parts' args from a validated config: its fields as they are (the model filled in its defaults).


def _private_location(config: StackConfig) -> str:
    """Where the private endpoints and the syphon's subnet are: the syphon's region."""
    return config.syphon.location or config.primary.location


def namespace_pair_args(config: StackConfig) -> NamespacePairArgs:
    private: dict[str, Any] = {}
    if config.network is not None:
        private["private_endpoints"] = {
            "subnet_id": config.network.private_endpoint_subnet_id,
            "private_dns_zone_id": config.network.private_dns_zone_id,
            "location": _private_location(config),
        }
    return {
        **private,  # type: ignore[typeddict-item]
        "primary": config.primary.model_dump(exclude_none=True),  # type: ignore[typeddict-item]
        "secondary": config.secondary.model_dump(exclude_none=True),  # type: ignore[typeddict-item]
        "primary_resource_group": config.resource_groups.primary.model_dump(),  # type: ignore[typeddict-item]
        "secondary_resource_group": config.resource_groups.secondary.model_dump(),  # type: ignore[typeddict-item]
        "secondary_local_auth": config.backlog_auth == "sas",
        "tags": dict(config.tags),
        "protect": config.production,
    }


def backlog_queues_args(config: StackConfig, pair: NamespacePair) -> BacklogQueuesArgs:
    return {
        "primary_namespace_name": config.primary.name,
        "count": config.backlog_queue_count,
        "namespace_name": pair.secondary.name,
        "namespace_id": pair.secondary.id,
        "auth": config.backlog_auth,
        "resource_group_name": config.resource_groups.secondary.name,
        "partitioned": contract.requires_partitioned_entities(
            config.secondary.sku, config.secondary.premium_messaging_partitions
        ),
        "deployer_principal_type": config.deployer_principal_type,
    }


def messaging_entities_args(config: StackConfig, pair: NamespacePair) -> MessagingEntitiesArgs:
    return {
        "namespace_name": pair.primary.name,
        "resource_group_name": pair.primary_resource_group_name,
        "queues": [q.model_dump(exclude_none=True) for q in config.queues],  # type: ignore[misc]
        "topics": [t.model_dump(exclude_none=True) for t in config.topics],  # type: ignore[misc]
        "protect": config.production,
    }


def syphon_host_args(config: StackConfig, pair: NamespacePair, image: pulumi.Input[str]) -> SyphonHostArgs:
    syphon: SyphonSettings = {**config.syphon.model_dump(exclude_none=True), "image": image}  # type: ignore[typeddict-item]
    network: dict[str, Any] = {}
    if config.network is not None:
        network["infrastructure_subnet_id"] = config.network.syphon_infrastructure_subnet_id
    return {
        **network,  # type: ignore[typeddict-item]
        "protect": config.production,
        "syphon": syphon,
        "location": config.syphon.location or config.primary.location,
        "resource_group_name": pair.primary_resource_group_name,
        "primary_namespace_id": pair.primary.id,
        "secondary_namespace_id": pair.secondary.id,
        "primary_fqdn": contract.service_bus_fqdn(config.primary.name),
        "secondary_fqdn": contract.service_bus_fqdn(config.secondary.name),
        "primary_namespace_name": config.primary.name,
        "secondary_namespace_name": pair.secondary.name,
        "tags": dict(config.tags),
    }


def _image(args: Mapping[str, Any], config: StackConfig) -> pulumi.Input[str]:
    """The image as given (it may be an output of another resource); the model checked it is there."""
    syphon = args.get("syphon")
    return syphon.get("image", config.syphon.image) if isinstance(syphon, Mapping) else config.syphon.image


class PairedNamespace(pulumi.ComponentResource):
    """Azure Service Bus paired namespaces for send availability: a primary and a secondary namespace in two
    regions, the backlog queues in the secondary, the primary's queues and topics, and the syphon that moves
    backlog messages home. Args are validated as a whole before anything is registered."""

    primary_namespace_id: pulumi.Output[str]
    """ARM id of the primary namespace."""
    secondary_namespace_id: pulumi.Output[str]
    """ARM id of the secondary namespace."""
    primary_namespace_name: pulumi.Output[str]
    """Name of the primary namespace."""
    secondary_namespace_name: pulumi.Output[str]
    """Name of the secondary namespace."""
    primary_endpoint: pulumi.Output[str]
    """Service Bus endpoint of the primary namespace (https://<name>.servicebus.windows.net:443/)."""
    secondary_endpoint: pulumi.Output[str]
    """Service Bus endpoint of the secondary namespace."""
    primary_resource_group_name: pulumi.Output[str]
    """Resource group of the primary namespace (and of the syphon)."""
    secondary_resource_group_name: pulumi.Output[str]
    """Resource group of the secondary namespace."""
    queue_ids: pulumi.Output[dict[str, str]]
    """ARM id of each primary queue, by queue name."""
    topic_ids: pulumi.Output[dict[str, str]]
    """ARM id of each primary topic, by topic name."""
    subscription_ids: pulumi.Output[dict[str, str]]
    """ARM id of each subscription, by `topic/subscription`."""
    backlog_queue_names: pulumi.Output[list[str]]
    """Names of the backlog queues in the secondary namespace."""
    syphon_principal_id: pulumi.Output[str]
    """Object id of the syphon's identity (for further role assignments)."""
    syphon_client_id: pulumi.Output[str]
    """Client id of the syphon's identity."""
    syphon_app_name: pulumi.Output[str]
    """Name of the syphon's container app."""

    def __init__(self, name: str, args: PairedNamespaceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # Validated before anything registers; a bad value raises StackConfigError, one line per problem.
        config = stack_config_from_args(args)
        super().__init__(contract.TYPE_PAIRED_NAMESPACE, name, None, opts)

        # The parts were registered at the stack's root before PairedNamespace existed (pairedbus 0.1):
        # this alias, which their children inherit, keeps existing stacks from replacing anything.
        def part() -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)])

        self.pair = NamespacePair(PAIR, namespace_pair_args(config), part())
        self.backlog = BacklogQueues(BACKLOG, backlog_queues_args(config, self.pair), part())
        self.entities = MessagingEntities(ENTITIES, messaging_entities_args(config, self.pair), part())
        self.syphon = SyphonHost(SYPHON, syphon_host_args(config, self.pair, _image(args, config)), part())
        # Production hardening (diagnostics, locks, network rule sets), beside the namespaces: namespace_hardening.
        namespaces = {
            contract.ROLE_PRIMARY: (self.pair.primary, self.pair.primary_resource_group_name),
            contract.ROLE_SECONDARY: (self.pair.secondary, self.pair.secondary_resource_group_name),
        }
        # Children of the namespaces' own part (so PairedNamespace holds exactly its four parts), named from this
        # component's name so that two pairs in one program never collide.
        harden_pair(name, self.pair, config, namespaces, self.syphon.workspace_id)

        self.primary_namespace_id = self.pair.primary.id
        self.secondary_namespace_id = self.pair.secondary.id
        self.primary_namespace_name = self.pair.primary.name
        self.secondary_namespace_name = self.pair.secondary.name
        self.primary_endpoint = self.pair.primary.service_bus_endpoint
        self.secondary_endpoint = self.pair.secondary.service_bus_endpoint
        self.primary_resource_group_name = self.pair.primary_resource_group_name
        self.secondary_resource_group_name = self.pair.secondary_resource_group_name
        self.queue_ids = self.entities.queue_ids
        self.topic_ids = self.entities.topic_ids
        self.subscription_ids = self.entities.subscription_ids
        self.backlog_queue_names = self.backlog.queue_names
        self.syphon_principal_id = self.syphon.principal_id
        self.syphon_client_id = self.syphon.client_id
        self.syphon_app_name = self.syphon.app_name
        self.register_outputs(
            {
                "primaryNamespaceId": self.primary_namespace_id,
                "secondaryNamespaceId": self.secondary_namespace_id,
                "primaryNamespaceName": self.primary_namespace_name,
                "secondaryNamespaceName": self.secondary_namespace_name,
                "primaryEndpoint": self.primary_endpoint,
                "secondaryEndpoint": self.secondary_endpoint,
                "primaryResourceGroupName": self.primary_resource_group_name,
                "secondaryResourceGroupName": self.secondary_resource_group_name,
                "queueIds": self.queue_ids,
                "topicIds": self.topic_ids,
                "subscriptionIds": self.subscription_ids,
                "backlogQueueNames": self.backlog_queue_names,
                "syphonPrincipalId": self.syphon_principal_id,
                "syphonClientId": self.syphon_client_id,
                "syphonAppName": self.syphon_app_name,
            }
        )
