"""The primary and secondary Service Bus namespaces, and their resource groups.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

from typing import NotRequired, TypedDict

import pulumi
from pulumi_azure_native import network, resources, servicebus

from pairedbus import contract
from pairedbus.iac.components import namespace_hardening
from pairedbus.iac.components.args import NAMESPACE_DEFAULTS, NamespaceSettings, ResourceGroupSettings
from pairedbus.iac.components.options import Inherited, renamed_from, with_part_token
from pairedbus.iac.components.secrecy import as_secret_as
from pairedbus.iac.config.choices import enum_value

#: The private-link sub-resource of a Service Bus namespace (learn.microsoft.com/azure/private-link/
#: private-endpoint-overview, "Private-link resource": Microsoft.ServiceBus/namespaces, "namespace").
PRIVATE_LINK_GROUP = "namespace"
#: The name of a zone config in a private DNS zone group: 1-80 letters, digits, '_', '.', '-'.
PRIVATE_DNS_ZONE_CONFIG_NAME = "privatelink-servicebus-windows-net"


class PrivateEndpointSettings(TypedDict):
    """Where a pair's private endpoints go."""

    subnet_id: pulumi.Input[str]
    """ARM id of the subnet the endpoints' network interfaces go in."""
    private_dns_zone_id: pulumi.Input[str]
    """ARM id of the privatelink.servicebus.windows.net private DNS zone the endpoints register in."""
    location: pulumi.Input[str]
    """The subnet's region (a private endpoint lives in its virtual network's region)."""


class NamespacePairArgs(TypedDict):
    """The two namespaces of a pair and where they live."""

    primary: NamespaceSettings
    """The namespace senders write to."""
    secondary: NamespaceSettings
    """The namespace that holds the backlog queues while the primary is unavailable."""
    primary_resource_group: ResourceGroupSettings
    """The primary namespace's resource group."""
    secondary_resource_group: ResourceGroupSettings
    """The secondary namespace's resource group."""
    secondary_local_auth: NotRequired[bool]
    """Keep local (SAS) auth on the secondary (default false): only for the backlog provider's SAS fallback."""
    tags: NotRequired[dict[str, pulumi.Input[str]]]
    """Tags for every resource (the role and pair tags are added)."""
    production: NotRequired[bool]
    """Production: also protect the namespaces, resource groups and private endpoints from deletion (adds to the
    `protect` resource option, which every child inherits anyway)."""
    backlog_queue_count: NotRequired[int]
    """The backlog queue count, recorded as a tag on the secondary so the inventory can read it back."""
    private_endpoints: NotRequired[PrivateEndpointSettings]
    """A private endpoint (with its DNS registration) for each Premium namespace; none: no private endpoints."""


class NamespacePair(pulumi.ComponentResource):
    """Two namespaces with explicit (DNS) names in different regions, secure by default: local
    (SAS) auth off, TLS 1.2, a system-assigned identity. Premium gets its messaging partitions."""

    primary: servicebus.Namespace
    """The primary namespace."""
    secondary: servicebus.Namespace
    """The secondary namespace."""
    primary_resource_group_name: pulumi.Output[str]
    """The primary namespace's resource group name (secret when the name given was)."""
    secondary_resource_group_name: pulumi.Output[str]
    """The secondary namespace's resource group name (secret when the name given was)."""
    primary_namespace_name: pulumi.Output[str]
    """The primary namespace's name as ARM returns it, secret when the name given was: wire children to this, not
    to `primary.name`, which the engine returns in clear text even for a secret `namespaceName`."""
    secondary_namespace_name: pulumi.Output[str]
    """The secondary namespace's name as ARM returns it, secret when the name given was."""
    private_endpoints: dict[str, network.PrivateEndpoint]
    """The private endpoint of each Premium namespace, by role (primary, secondary), when asked for."""

    def __init__(
        self,
        name: str,
        args: NamespacePairArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        legacy_urns: bool = False,
    ) -> None:
        """`legacy_urns`: the children keep the URNs a pair built with pairedbus before 0.2 holds (see
        `PairedNamespace`); at most one pair of a program."""
        super().__init__(contract.TYPE_NAMESPACE_PAIR, name, None, with_part_token(contract.TYPE_NAMESPACE_PAIR, opts))
        self._name = name
        self._legacy_urns = legacy_urns
        self._inherited = Inherited.of(opts)
        self._tags = dict(args.get("tags") or {})
        self._production = bool(args.get("production", False))
        self._pair = args["primary"]["name"]
        backlog_queue_count = args.get("backlog_queue_count")
        self._secondary_tags = (
            {} if backlog_queue_count is None else {contract.TAG_BACKLOG_QUEUE_COUNT: str(backlog_queue_count)}
        )
        self.primary_resource_group_name = self._resource_group(
            contract.ROLE_PRIMARY, args["primary_resource_group"], args["primary"]["location"]
        )
        self.secondary_resource_group_name = self._resource_group(
            contract.ROLE_SECONDARY, args["secondary_resource_group"], args["secondary"]["location"]
        )
        self.primary = self._namespace(contract.ROLE_PRIMARY, args["primary"], self.primary_resource_group_name)
        self.secondary = self._namespace(
            contract.ROLE_SECONDARY,
            args["secondary"],
            self.secondary_resource_group_name,
            # The documented SAS fallback for the backlog provider needs local auth here only.
            local_auth=bool(args.get("secondary_local_auth", False)),
        )
        self.primary_namespace_name = as_secret_as(self.primary.name, args["primary"]["name"])
        self.secondary_namespace_name = as_secret_as(self.secondary.name, args["secondary"]["name"])
        self.private_endpoints = {}
        endpoints = args.get("private_endpoints")
        if endpoints is not None:
            for role, settings, namespace, group in (
                (contract.ROLE_PRIMARY, args["primary"], self.primary, self.primary_resource_group_name),
                (contract.ROLE_SECONDARY, args["secondary"], self.secondary, self.secondary_resource_group_name),
            ):
                # Private endpoints are Premium only (Service Bus network security docs).
                if enum_value(settings.get("sku", NAMESPACE_DEFAULTS["sku"])) == contract.SKU_PREMIUM:
                    self.private_endpoints[role] = self._private_endpoint(
                        role, settings["name"], namespace, group, endpoints
                    )
        self.register_outputs(
            {
                "primaryNamespace": self.primary_namespace_name,
                "secondaryNamespace": self.secondary_namespace_name,
                "primaryEndpoint": self.primary.service_bus_endpoint,
                "secondaryEndpoint": self.secondary.service_bus_endpoint,
            }
        )

    def _child(self, old_name: str, **options: object) -> pulumi.ResourceOptions:
        """A child's options: named `<pair>-<old_name>` now, aliased to `old_name` (its name before 0.2)."""
        return self._inherited.child(
            self,
            protect=self._production,
            aliases=renamed_from(old_name, self._legacy_urns),
            **options,  # type: ignore[arg-type]  # options are the callers' ResourceOptions keywords, each of its own type
        )

    def _resource_group(
        self, role: str, group: ResourceGroupSettings, location: pulumi.Input[str]
    ) -> pulumi.Output[str]:
        if not group.get("create", True):
            return pulumi.Output.from_input(group["name"])
        rg = resources.ResourceGroup(
            f"{self._name}-{role}-rg",
            resource_group_name=group["name"],
            location=location,
            tags=self._tags,
            opts=self._child(f"{role}-rg"),
        )
        return as_secret_as(rg.name, group["name"])

    def _namespace(
        self, role: str, ns: NamespaceSettings, resource_group_name: pulumi.Input[str], *, local_auth: bool = False
    ) -> servicebus.Namespace:
        sku = enum_value(ns.get("sku", NAMESPACE_DEFAULTS["sku"]))
        premium = sku == contract.SKU_PREMIUM
        partitions = contract.effective_partitions(ns.get("premium_messaging_partitions"))
        return servicebus.Namespace(
            f"{self._name}-{role}",
            namespace_name=ns["name"],
            resource_group_name=resource_group_name,
            location=ns["location"],
            # Premium capacity in effect: as given, else one messaging unit per partition.
            sku=servicebus.SBSkuArgs(
                name=sku, tier=sku, capacity=(ns.get("capacity") or partitions) if premium else None
            ),
            premium_messaging_partitions=partitions if premium else None,
            zone_redundant=ns.get("zone_redundant", NAMESPACE_DEFAULTS["zone_redundant"]),
            public_network_access=enum_value(
                ns.get("public_network_access", NAMESPACE_DEFAULTS["public_network_access"])
            ),
            disable_local_auth=not local_auth,
            minimum_tls_version=contract.MINIMUM_TLS_VERSION,
            # A system-assigned identity; with a customer-managed key also the key's user-assigned identity.
            identity=namespace_hardening.namespace_identity(ns),
            encryption=namespace_hardening.namespace_encryption(ns),
            tags={
                **self._tags,
                contract.TAG_ROLE: role,
                contract.TAG_PAIR: self._pair,
                **(self._secondary_tags if role == contract.ROLE_SECONDARY else {}),
            },
            opts=self._child(role),
        )

    def _private_endpoint(
        self,
        role: str,
        namespace_name: pulumi.Input[str],
        namespace: servicebus.Namespace,
        resource_group_name: pulumi.Input[str],
        settings: PrivateEndpointSettings,
    ) -> network.PrivateEndpoint:
        """A private endpoint to the namespace, and its A record in the privatelink zone, so that
        `<name>.servicebus.windows.net` resolves to the private address inside linked networks."""
        endpoint_name = pulumi.Output.concat("pe-", namespace_name)  # 2-64 characters: namespace names are 6-50
        endpoint = network.PrivateEndpoint(
            f"{self._name}-{role}-pe",
            private_endpoint_name=endpoint_name,
            resource_group_name=resource_group_name,
            location=settings["location"],
            subnet={"id": settings["subnet_id"]},
            private_link_service_connections=[
                {
                    "name": namespace_name,
                    "private_link_service_id": namespace.id,
                    "group_ids": [PRIVATE_LINK_GROUP],
                }
            ],
            tags={**self._tags, contract.TAG_ROLE: role, contract.TAG_PAIR: self._pair},
            opts=self._child(f"{role}-pe"),
        )
        network.PrivateDnsZoneGroup(
            f"{self._name}-{role}-pe-dns",
            private_dns_zone_group_name="default",
            private_endpoint_name=endpoint_name,
            resource_group_name=resource_group_name,
            private_dns_zone_configs=[
                {"name": PRIVATE_DNS_ZONE_CONFIG_NAME, "private_dns_zone_id": settings["private_dns_zone_id"]}
            ],
            # A child of the endpoint in ARM (.../privateEndpoints/{name}/privateDnsZoneGroups/default).
            opts=self._child(f"{role}-pe-dns", depends_on=[endpoint]),
        )
        return endpoint
