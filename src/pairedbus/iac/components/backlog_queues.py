"""The backlog queues in the secondary namespace, created through the data plane."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import authorization, servicebus

from pairedbus import contract
from pairedbus.iac.backlog_provider import BacklogQueue, BacklogQueueProvider, DataPlaneAuth
from pairedbus.iac.components.roles import deploying_principal_id, role_definition_id
from pairedbus.iac.config import StackConfig


@dataclass(frozen=True)
class BacklogQueuesArgs:
    config: StackConfig
    secondary: servicebus.Namespace
    secondary_resource_group_name: pulumi.Input[str]


class BacklogQueues(pulumi.ComponentResource):
    """Backlog queues 0..N-1 (`contract.backlog_queue_name`) in the secondary, each with exactly
    the spec's table. Queues are retained on delete: lowering the count never deletes one, since it may
    hold parked messages (the original library never cleaned up extras either)."""

    queues: list[BacklogQueue]

    def __init__(self, name: str, args: BacklogQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(contract.TYPE_BACKLOG_QUEUES, name, None, opts)
        config = args.config
        depends_on: list[pulumi.Resource] = []
        if config.backlog_auth == "entra":
            # The provider acts as whoever runs `pulumi up`; it needs the data plane's Owner role.
            depends_on.append(
                authorization.RoleAssignment(
                    "deployer-data-owner",
                    scope=args.secondary.id,
                    principal_id=deploying_principal_id(),
                    role_definition_id=role_definition_id(contract.ROLE_SERVICE_BUS_DATA_OWNER),
                    opts=pulumi.ResourceOptions(parent=self),
                )
            )
        provider = BacklogQueueProvider(
            DataPlaneAuth(
                mode=config.backlog_auth,
                resource_group_name=config.resource_groups.secondary.name if config.backlog_auth == "sas" else None,
            )
        )
        partitioning = (
            {contract.BACKLOG_PARTITIONING_PROPERTY: True} if config.secondary.requires_partitioned_entities else {}
        )
        self.queues = [
            BacklogQueue(
                f"backlog-{index}",
                {
                    "namespaceName": args.secondary.name,
                    "queueName": queue_name,
                    **contract.BACKLOG_QUEUE_PROPERTIES,
                    **partitioning,
                },
                provider,
                # Retained, never protected, in every stack: retaining is the safety (a queue that
                # leaves the program stays in Azure with its parked messages), while `protect` would
                # make the engine refuse to drop it from the program at all, so lowering the count,
                # which the design allows, would fail `pulumi up` on prod.
                pulumi.ResourceOptions(parent=self, depends_on=depends_on, retain_on_delete=True, protect=False),
            )
            for index, queue_name in enumerate(config.backlog_queue_names)
        ]
        self.queue_names = config.backlog_queue_names
        self.register_outputs({"queueNames": self.queue_names, "namespaceName": args.secondary.name})
