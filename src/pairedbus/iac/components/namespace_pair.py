"""The primary and secondary Service Bus namespaces, and their resource groups."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import resources, servicebus

from pairedbus import contract
from pairedbus.iac.config import NamespaceConfig, ResourceGroupConfig, StackConfig


@dataclass(frozen=True)
class NamespacePairArgs:
    config: StackConfig


class NamespacePair(pulumi.ComponentResource):
    """Two namespaces with explicit (DNS) names in different regions, secure by default: local
    (SAS) auth off, TLS 1.2, a system-assigned identity. Premium gets its messaging partitions."""

    primary: servicebus.Namespace
    secondary: servicebus.Namespace
    primary_resource_group_name: pulumi.Output[str]
    secondary_resource_group_name: pulumi.Output[str]

    def __init__(self, name: str, args: NamespacePairArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(contract.TYPE_NAMESPACE_PAIR, name, None, opts)
        config = args.config
        self.primary_resource_group_name = self._resource_group("primary", config.resource_groups.primary, config)
        self.secondary_resource_group_name = self._resource_group("secondary", config.resource_groups.secondary, config)
        self.primary = self._namespace(contract.ROLE_PRIMARY, config.primary, self.primary_resource_group_name, config)
        self.secondary = self._namespace(
            contract.ROLE_SECONDARY,
            config.secondary,
            self.secondary_resource_group_name,
            config,
            # The documented SAS fallback for the backlog provider needs local auth here only.
            local_auth=config.backlog_auth == "sas",
        )
        self.register_outputs(
            {
                "primaryNamespace": self.primary.name,
                "secondaryNamespace": self.secondary.name,
                "primaryEndpoint": self.primary.service_bus_endpoint,
                "secondaryEndpoint": self.secondary.service_bus_endpoint,
            }
        )

    def _resource_group(self, role: str, group: ResourceGroupConfig, config: StackConfig) -> pulumi.Output[str]:
        if not group.create:
            return pulumi.Output.from_input(group.name)
        location = config.primary.location if role == contract.ROLE_PRIMARY else config.secondary.location
        rg = resources.ResourceGroup(
            f"{role}-rg",
            resource_group_name=group.name,
            location=location,
            tags=config.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=config.production),
        )
        return rg.name

    def _namespace(
        self,
        role: str,
        ns: NamespaceConfig,
        resource_group_name: pulumi.Input[str],
        config: StackConfig,
        *,
        local_auth: bool = False,
    ) -> servicebus.Namespace:
        return servicebus.Namespace(
            role,
            namespace_name=ns.name,
            resource_group_name=resource_group_name,
            location=ns.location,
            sku=servicebus.SBSkuArgs(name=ns.sku, tier=ns.sku, capacity=ns.messaging_units),
            premium_messaging_partitions=ns.partitions if ns.is_premium else None,
            zone_redundant=ns.zone_redundant,
            public_network_access=ns.public_network_access,
            disable_local_auth=not local_auth,
            minimum_tls_version=contract.MINIMUM_TLS_VERSION,
            identity=servicebus.IdentityArgs(type=servicebus.ManagedServiceIdentityType.SYSTEM_ASSIGNED),
            tags={**config.tags, contract.TAG_ROLE: role, contract.TAG_PAIR: config.primary.name},
            opts=pulumi.ResourceOptions(parent=self, protect=config.production),
        )
