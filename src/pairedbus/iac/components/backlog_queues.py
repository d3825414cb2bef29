"""The backlog queues in the secondary namespace, created through the data plane.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

from typing import NotRequired, TypedDict

import pulumi
from pulumi_azure_native import authorization

from pairedbus import contract
from pairedbus.iac.backlog_provider import BacklogQueue, BacklogQueueProvider, DataPlaneAuth
from pairedbus.iac.components.args import STACK_DEFAULTS
from pairedbus.iac.components.options import Inherited, renamed_from, with_part_token
from pairedbus.iac.components.roles import deploying_principal_id, role_definition_id
from pairedbus.iac.config.choices import BacklogAuth, PrincipalType, enum_value


class BacklogQueuesArgs(TypedDict):
    """The backlog queues of one pair, in its secondary namespace."""

    primary_namespace_name: pulumi.Input[str]
    """The primary namespace's name: the backlog queues are named after it."""
    backlog_queue_count: int
    """How many backlog queues (indices 0..backlog_queue_count-1)."""
    namespace_name: pulumi.Input[str]
    """The secondary namespace's name (where the queues are created)."""
    namespace_id: pulumi.Input[str]
    """The secondary namespace's ARM id (scope of the deployer's data-plane role)."""
    auth: NotRequired[BacklogAuth]
    """How the provider signs in to the data plane: entra (default) or sas (the documented fallback)."""
    resource_group_name: NotRequired[pulumi.Input[str]]
    """The secondary's resource group; needed for sas (to list the namespace's keys)."""
    partitioned: NotRequired[bool]
    """Create partitioned queues (a Premium secondary with 2+ partitions requires it)."""
    deployer_principal_type: NotRequired[PrincipalType]
    """What runs `pulumi up`: User (default), ServicePrincipal or Group. The deployer's role assignment must
    name it: ARM refuses a principalType that does not match the principal (UnmatchedPrincipalType)."""


class BacklogQueues(pulumi.ComponentResource):
    """Backlog queues 0..N-1 (`contract.backlog_queue_name`) in the secondary, each with exactly
    the spec's table. Queues are retained on delete: lowering the count never deletes one, since it may
    hold parked messages (the original library never cleaned up extras either). They are protected only when
    the caller protects the component (`protect=True`), never by the production flag."""

    queue_names: pulumi.Output[list[str]]
    """The backlog queues' names."""

    def __init__(
        self,
        name: str,
        args: BacklogQueuesArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        legacy_urns: bool = False,
    ) -> None:
        """`legacy_urns`: the children keep the URNs of pairedbus before 0.2 (see `PairedNamespace`)."""
        super().__init__(contract.TYPE_BACKLOG_QUEUES, name, None, with_part_token(contract.TYPE_BACKLOG_QUEUES, opts))
        inherited = Inherited.of(opts)
        auth = enum_value(args.get("auth", STACK_DEFAULTS["backlog_auth"]))
        primary = pulumi.Output.from_input(args["primary_namespace_name"])
        names = [
            primary.apply(lambda p, i=index: contract.backlog_queue_name(p, i))
            for index in range(args["backlog_queue_count"])
        ]
        depends_on: list[pulumi.Resource] = []
        if auth == BacklogAuth.ENTRA:
            # The provider acts as whoever runs `pulumi up`; it needs the data plane's Owner role.
            depends_on.append(
                authorization.RoleAssignment(
                    f"{name}-deployer-data-owner",
                    scope=args["namespace_id"],
                    principal_id=deploying_principal_id(),
                    role_definition_id=role_definition_id(contract.ROLE_SERVICE_BUS_DATA_OWNER),
                    # Set explicitly: azure-native fills in `User` when the program sets none, which a CI
                    # service principal's assignment fails with.
                    principal_type=enum_value(
                        args.get("deployer_principal_type", STACK_DEFAULTS["deployer_principal_type"])
                    ),
                    # Not protected by production: no message depends on it (the syphon and the senders use
                    # their own identities), and switching backlogAuth to sas must be able to drop it from the
                    # program. A caller's protect=True still reaches it.
                    opts=inherited.child(self, aliases=renamed_from("deployer-data-owner", legacy_urns)),
                )
            )
        provider = BacklogQueueProvider(
            DataPlaneAuth(
                mode=auth, resource_group_name=args.get("resource_group_name") if auth == BacklogAuth.SAS else None
            )
        )
        partitioning = {contract.BACKLOG_PARTITIONING_PROPERTY: True} if args.get("partitioned", False) else {}
        #: The dynamic resources (not a schema output: a dynamic provider has no package schema).
        self.queues = [
            BacklogQueue(
                f"{name}-{index}",
                {
                    "namespaceName": args["namespace_name"],
                    "queueName": queue_name,
                    **contract.BACKLOG_QUEUE_PROPERTIES,
                    **partitioning,
                },
                provider,
                # Retained in every stack, and not protected by the production flag: retaining is the safety
                # (a queue that leaves the program stays in Azure with its parked messages), while `protect`
                # would make the engine refuse to drop it from the program at all, so lowering the count,
                # which the design allows, would fail `pulumi up` on prod. A caller who protects the whole
                # component (`protect=True`) asked for exactly that refusal, so it is inherited like
                # everywhere else (README, "Resource options").
                inherited.child(
                    self,
                    retain_on_delete=True,
                    depends_on=depends_on,
                    aliases=renamed_from(f"backlog-{index}", legacy_urns),
                ),
            )
            for index, queue_name in enumerate(names)
        ]
        self.queue_names = pulumi.Output.all(*names) if names else pulumi.Output.from_input([])
        self.register_outputs({"queueNames": self.queue_names, "namespaceName": args["namespace_name"]})
