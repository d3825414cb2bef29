"""PairedNamespace: a whole paired namespace as one component, usable from any Pulumi program in any language.

It validates its args exactly as a stack's config is validated (`pairedbus.iac.config.args_mapping`), then composes
`NamespacePair`, `BacklogQueues`, `MessagingEntities` and `SyphonHost`, and returns what a consumer wires onward.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

import weakref
from typing import Any

import pulumi
from pulumi.runtime import settings
from pulumi_azure_native import authorization

from pairedbus import contract
from pairedbus.iac.components.args import PairedNamespaceArgs
from pairedbus.iac.components.backlog_queues import BacklogQueues, BacklogQueuesArgs
from pairedbus.iac.components.messaging_entities import MessagingEntities, MessagingEntitiesArgs
from pairedbus.iac.components.namespace_hardening import harden_pair
from pairedbus.iac.components.namespace_pair import NamespacePair, NamespacePairArgs
from pairedbus.iac.components.options import Inherited
from pairedbus.iac.components.roles import role_definition_id
from pairedbus.iac.components.secrecy import as_secret_as
from pairedbus.iac.components.syphon_host import SyphonHost, SyphonHostArgs, autonamed_problem
from pairedbus.iac.config import StackConfig, StackConfigError
from pairedbus.iac.config.args_mapping import settings_of, stack_config_from_args
from pairedbus.iac.config.choices import BacklogAuth, enum_value

#: The parts' names inside a PairedNamespace before pairedbus 0.2 (fixed, so two pairs collided); a pair built
#: with `legacy_urns=True` aliases its parts to them. Now each part is `<name>-<part>`.
PAIR, BACKLOG, ENTITIES, SYPHON = "pair", "backlog", "entities", "syphon"

#: The pair built with `legacy_urns=True` in each running program, by the program's resource monitor (one per
#: `pulumi up`, or per render under the mocks), so that a second one is refused in one line before the engine
#: lists every alias the two would share.
_LEGACY_PAIRS: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()


def _pair_problems(name: str, *, legacy_urns: bool) -> list[str]:
    """What is wrong with the pair's own name and its `legacy_urns` (not part of its config)."""
    problems = []
    made = autonamed_problem(name, f"-{SYPHON}")
    if made is not None:
        problems.append(f"{name}: name: expected a pair name Azure accepts in every name made from it: {made}")
    if legacy_urns:
        first = _legacy_pair(name)
        if first is not None:
            problems.append(
                f"{name}: legacy_urns: expected on one pair of a program only, {first!r} has it already (the names "
                "before pairedbus 0.2 were the same for every pair: two pairs would claim the same resources)"
            )
    return problems


def _validated(name: str, args: PairedNamespaceArgs, *, legacy_urns: bool) -> StackConfig:
    """The args' config, with the pair's own name and its `legacy_urns` checked too; every problem in one error."""
    problems = _pair_problems(name, legacy_urns=legacy_urns)
    try:
        config = stack_config_from_args(args, pair=name)
    except StackConfigError as exc:
        raise StackConfigError([*problems, *exc.problems]) from None
    if problems:
        raise StackConfigError(problems)
    return config


def _legacy_pair(name: str) -> str | None:
    """The pair of this program that claimed the names before 0.2 already (None: this one claims them now)."""
    monitor = settings.get_monitor()
    if monitor is None:  # not inside a Pulumi program: nothing to share the names with
        return None
    first = _LEGACY_PAIRS.setdefault(monitor, name)
    return None if first == name else first


# The parts' args from a validated config: its fields as they are (the model filled in its defaults).


def _private_location(config: StackConfig) -> pulumi.Input[str]:
    """Where the private endpoints and the syphon's subnet are: the syphon's region."""
    return config.syphon.location or config.primary.location


def _fqdn(name: pulumi.Input[str]) -> pulumi.Output[str]:
    return pulumi.Output.from_input(name).apply(contract.service_bus_fqdn)


def namespace_pair_args(config: StackConfig) -> NamespacePairArgs:
    private: dict[str, Any] = {}
    if config.network is not None:
        private["private_endpoints"] = {
            "subnet_id": config.network.private_endpoint_subnet_id,
            "private_dns_zone_id": config.network.private_dns_zone_id,
            "location": _private_location(config),
        }
    return {
        **private,  # type: ignore[typeddict-item]  # the optional private_endpoints key, or nothing: mypy cannot type a splat into a TypedDict
        "primary": settings_of(config.primary),
        "secondary": settings_of(config.secondary),
        "primary_resource_group": settings_of(config.resource_groups.primary),
        "secondary_resource_group": settings_of(config.resource_groups.secondary),
        "secondary_local_auth": config.backlog_auth == BacklogAuth.SAS,
        "tags": dict(config.tags),
        "production": config.production,
        "backlog_queue_count": config.backlog_queue_count,
    }


def backlog_queues_args(config: StackConfig, pair: NamespacePair) -> BacklogQueuesArgs:
    return {
        "primary_namespace_name": config.primary.name,
        "backlog_queue_count": config.backlog_queue_count,
        "namespace_name": pair.secondary_namespace_name,
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
        "namespace_name": pair.primary_namespace_name,
        "resource_group_name": pair.primary_resource_group_name,
        "queues": settings_of(config.queues),
        "topics": settings_of(config.topics),
        "production": config.production,
    }


def syphon_host_args(config: StackConfig, pair: NamespacePair) -> SyphonHostArgs:
    network: dict[str, Any] = {}
    if config.network is not None:
        network["infrastructure_subnet_id"] = config.network.syphon_infrastructure_subnet_id
    return {
        **network,  # type: ignore[typeddict-item]  # the optional infrastructure_subnet_id key, or nothing: mypy cannot type a splat into a TypedDict
        "production": config.production,
        "syphon": settings_of(config.syphon),
        "location": config.syphon.location or config.primary.location,
        "resource_group_name": pair.primary_resource_group_name,
        "primary_namespace_id": pair.primary.id,
        "secondary_namespace_id": pair.secondary.id,
        "primary_fqdn": _fqdn(config.primary.name),
        "secondary_fqdn": _fqdn(config.secondary.name),
        "primary_namespace_name": config.primary.name,
        "secondary_namespace_name": pair.secondary_namespace_name,
        "tags": dict(config.tags),
    }


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

    def __init__(
        self,
        name: str,
        args: PairedNamespaceArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        legacy_urns: bool = False,
    ) -> None:
        """`legacy_urns`: this is the one pair of a program that built it with pairedbus before 0.2 (parts named
        `pair`, `backlog`, `entities`, `syphon`, children `primary`, `backlog-0`, ...): each part is aliased to
        its old name, so `pulumi up` updates every resource in place. Give it to at most one pair per program:
        the old names were the same for every pair, so two pairs would claim the same old resources."""
        # Validated before anything registers; a bad value raises StackConfigError, one line per problem, each
        # starting with this pair's name.
        self._build(name, _validated(name, args, legacy_urns=legacy_urns), opts, legacy_urns=legacy_urns)

    @classmethod
    def from_config(
        cls,
        name: str,
        config: StackConfig,
        opts: pulumi.ResourceOptions | None = None,
        *,
        legacy_urns: bool = False,
    ) -> "PairedNamespace":
        """The pair a validated stack config describes (`load_pulumi_stack_config`, `parse_stack_config`), built as
        `PairedNamespace(name, args)` builds it, without turning the config into args to validate it again. The
        pair's own name and `legacy_urns` are checked as there (StackConfigError, one line each)."""
        if not isinstance(config, StackConfig):
            raise TypeError(
                f"{name}: config: expected a validated StackConfig (parse_stack_config), got {type(config).__name__}"
                " (pass args as PairedNamespace(name, args))"
            )
        problems = _pair_problems(name, legacy_urns=legacy_urns)
        if problems:
            raise StackConfigError(problems)
        pair = cls.__new__(cls)
        pair._build(name, config, opts, legacy_urns=legacy_urns)
        return pair

    def _build(self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None, *, legacy_urns: bool) -> None:
        """Register the pair's four parts and its hardening from a validated config, and its outputs."""
        super().__init__(contract.TYPE_PAIRED_NAMESPACE, name, None, opts)
        self._name = name
        self._inherited = Inherited.of(opts)

        def part(old_name: str, old_token: str) -> pulumi.ResourceOptions:
            aliases = []
            if legacy_urns:
                # Under this component (0.1.x), and at the stack's root before PairedNamespace existed (b53afa0).
                aliases = [
                    pulumi.Alias(name=old_name, type_=contract.LEGACY_PART_TYPES[old_token]),
                    pulumi.Alias(name=old_name, type_=contract.LEGACY_PART_TYPES[old_token], parent=None),
                ]
            return self._inherited.part(self, aliases)

        self.pair = NamespacePair(
            f"{name}-{PAIR}",
            namespace_pair_args(config),
            part(PAIR, contract.TYPE_NAMESPACE_PAIR),
            legacy_urns=legacy_urns,
        )
        self.backlog = BacklogQueues(
            f"{name}-{BACKLOG}",
            backlog_queues_args(config, self.pair),
            part(BACKLOG, contract.TYPE_BACKLOG_QUEUES),
            legacy_urns=legacy_urns,
        )
        self.entities = MessagingEntities(
            f"{name}-{ENTITIES}",
            messaging_entities_args(config, self.pair),
            part(ENTITIES, contract.TYPE_MESSAGING_ENTITIES),
            legacy_urns=legacy_urns,
        )
        self.syphon = SyphonHost(
            f"{name}-{SYPHON}", syphon_host_args(config, self.pair), part(SYPHON, contract.TYPE_SYPHON_HOST)
        )
        # Production hardening (diagnostics, locks, network rule sets): children of the namespaces' own part (so
        # PairedNamespace holds exactly its four parts), named from this component's name (two pairs never collide).
        namespaces = {
            contract.ROLE_PRIMARY: (self.pair.primary, self.pair.primary_resource_group_name),
            contract.ROLE_SECONDARY: (self.pair.secondary, self.pair.secondary_resource_group_name),
        }
        harden_pair(name, self.pair, config, namespaces, self.syphon.workspace_id, self._inherited)

        self.primary_namespace_id = self.pair.primary.id
        self.secondary_namespace_id = self.pair.secondary.id
        self.primary_namespace_name = self.pair.primary_namespace_name
        self.secondary_namespace_name = self.pair.secondary_namespace_name
        # ARM returns the endpoint in clear text; it holds the name, so it is as secret as the name given.
        self.primary_endpoint = as_secret_as(self.pair.primary.service_bus_endpoint, config.primary.name)
        self.secondary_endpoint = as_secret_as(self.pair.secondary.service_bus_endpoint, config.secondary.name)
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

    # --- Grants for the applications that use the pair -------------------------------------------------

    def _grant(
        self, name: str, role_guid: str, scope: pulumi.Input[str], principal_id: pulumi.Input[str], principal_type: str
    ) -> authorization.RoleAssignment:
        return authorization.RoleAssignment(
            f"{self._name}-{name}",
            principal_id=principal_id,
            principal_type=enum_value(principal_type),
            role_definition_id=role_definition_id(role_guid),
            scope=scope,
            opts=self._inherited.child(self),
        )

    def grant_sender(
        self, name: str, principal_id: pulumi.Input[str], principal_type: str = "ServicePrincipal"
    ) -> list[authorization.RoleAssignment]:
        """Let an application send through the pair: Azure Service Bus Data Sender on the primary (where it sends)
        and on the secondary (where it parks messages in the backlog queues while the primary is unavailable).

        `name` names the grant in this pair (`<pair>-<name>-send-primary`, `...-send-secondary`); `principal_id`
        is the application identity's object id; `principal_type` as ARM's role assignment: ServicePrincipal
        (default: a managed identity or an app registration), User or Group."""
        return [
            self._grant(
                f"{name}-send-primary",
                contract.ROLE_SERVICE_BUS_DATA_SENDER,
                self.primary_namespace_id,
                principal_id,
                principal_type,
            ),
            self._grant(
                f"{name}-send-secondary",
                contract.ROLE_SERVICE_BUS_DATA_SENDER,
                self.secondary_namespace_id,
                principal_id,
                principal_type,
            ),
        ]

    def grant_receiver(
        self, name: str, principal_id: pulumi.Input[str], principal_type: str = "ServicePrincipal"
    ) -> authorization.RoleAssignment:
        """Let an application receive: Azure Service Bus Data Receiver on the primary only (receivers never read
        the secondary: the syphon brings parked messages home). Named `<pair>-<name>-receive-primary`."""
        return self._grant(
            f"{name}-receive-primary",
            contract.ROLE_SERVICE_BUS_DATA_RECEIVER,
            self.primary_namespace_id,
            principal_id,
            principal_type,
        )
