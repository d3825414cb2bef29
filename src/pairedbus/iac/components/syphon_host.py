"""SyphonHost: where the syphon runs, an Azure Container App with its own identity.

At least one process must host the syphon (paired-namespaces.md, "Sequence"), so the app keeps
`minReplicas >= 1`. The app's user-assigned identity gets exactly two data-plane roles: receive
from the secondary (the backlog queues) and send to the primary (their destinations), plus
control-plane Reader on the secondary so it can list every backlog queue through ARM (listing
through the data plane would need Manage, i.e. Data Owner). Role assignments exist before the
app starts, so its first receive is not refused.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

from typing import NotRequired, TypedDict

import pulumi
from pulumi_azure_native import app, authorization, managedidentity, operationalinsights

from pairedbus import contract
from pairedbus.iac.components.args import SYPHON_DEFAULTS, SyphonSettings
from pairedbus.iac.components.roles import role_definition_id
from pairedbus.service.endpoints import (
    DEFAULT_PORT,
    ENV_AZURE_CLIENT_ID,
    ENV_PRIMARY,
    ENV_SECONDARY,
    ENV_SECONDARY_RESOURCE_ID,
    LIVENESS_PATH,
    READINESS_PATH,
)

CONTAINER_NAME = "syphon"
SERVICE_PRINCIPAL = "ServicePrincipal"
LOG_ANALYTICS_SKU = "PerGB2018"

#: Probe timings (seconds). Startup allows two minutes for the first AMQP links and token (12 s x 10
#: checks: Container Apps refuses a failureThreshold above 10, see ContainerAppProbe in the Microsoft.App
#: spec, "Minimum value is 1. Maximum value is 10."); after that three failed checks in a row restart
#: (liveness) or unroute (readiness) the replica.
_STARTUP = {"period_seconds": 12, "failure_threshold": 10, "timeout_seconds": 3}
_LIVENESS = {"period_seconds": 10, "failure_threshold": 3, "timeout_seconds": 5}
_READINESS = {"period_seconds": 10, "failure_threshold": 3, "timeout_seconds": 5}
#: On SIGTERM the syphon settles what it holds. Waiting longer than a backlog message's lock is
#: pointless: by then the broker has released it for redelivery anyway.
TERMINATION_GRACE_SECONDS = int(
    contract.duration_timedelta(str(contract.BACKLOG_QUEUE_PROPERTIES["lockDuration"])).total_seconds()
)


class SyphonHostArgs(TypedDict):
    """The syphon's settings and the pair it moves messages for."""

    syphon: SyphonSettings
    """Image, size, replicas, logs and registry of the syphon."""
    location: pulumi.Input[str]
    """Region of the syphon's resources."""
    resource_group_name: pulumi.Input[str]
    """Resource group of the syphon's resources."""
    primary_namespace_id: pulumi.Input[str]
    """ARM id of the primary namespace (the syphon sends there)."""
    secondary_namespace_id: pulumi.Input[str]
    """ARM id of the secondary namespace (the syphon receives from its backlog queues)."""
    primary_fqdn: pulumi.Input[str]
    """Fully qualified domain name of the primary namespace."""
    secondary_fqdn: pulumi.Input[str]
    """Fully qualified domain name of the secondary namespace."""
    tags: NotRequired[dict[str, str]]
    """Tags for every resource of the syphon."""


def _probe(kind: str, path: str, timings: dict[str, int]) -> dict[str, object]:
    return {"type": kind, "http_get": {"path": path, "port": DEFAULT_PORT}, **timings}


class SyphonHost(pulumi.ComponentResource):
    """Where the syphon runs: a Container App (at least one replica always), its user-assigned identity with
    receive on the secondary, send on the primary and Reader on the secondary, and a Log Analytics workspace."""

    app_name: pulumi.Output[str]
    """The container app's name."""
    fqdn: pulumi.Output[str]
    """The app's internal FQDN (metrics and health, reachable from inside its environment only)."""
    principal_id: pulumi.Output[str]
    """Object id of the syphon's identity (for further role assignments)."""
    client_id: pulumi.Output[str]
    """Client id of the syphon's identity."""

    def __init__(self, name: str, args: SyphonHostArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(contract.TYPE_SYPHON_HOST, name, None, opts)
        config = args["syphon"]
        settings = {**SYPHON_DEFAULTS, **config}
        min_replicas = settings["min_replicas"]
        if min_replicas < 1:  # the model says so too; the spec needs a syphon always running
            raise ValueError(f"syphon.minReplicas: expected >= 1, got {min_replicas}")
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(args.get("tags") or {})
        common = {"resource_group_name": args["resource_group_name"], "location": args["location"], "tags": tags}

        workspace = operationalinsights.Workspace(
            f"{name}-logs",
            sku={"name": LOG_ANALYTICS_SKU},
            retention_in_days=settings["log_retention_days"],
            **common,
            opts=child,
        )
        shared_key = operationalinsights.get_shared_keys_output(
            resource_group_name=args["resource_group_name"],
            workspace_name=workspace.name,
            opts=pulumi.InvokeOutputOptions(parent=self),
        ).primary_shared_key
        environment = app.ManagedEnvironment(
            f"{name}-env",
            app_logs_configuration={
                "destination": "log-analytics",
                "log_analytics_configuration": {
                    "customer_id": workspace.customer_id,
                    "shared_key": pulumi.Output.secret(shared_key),
                },
            },
            **common,
            opts=child,
        )
        identity = managedidentity.UserAssignedIdentity(f"{name}-identity", **common, opts=child)

        def grant(suffix: str, role_guid: str, scope: pulumi.Input[str]) -> authorization.RoleAssignment:
            return authorization.RoleAssignment(
                f"{name}-{suffix}",
                principal_id=identity.principal_id,
                principal_type=SERVICE_PRINCIPAL,
                role_definition_id=role_definition_id(role_guid),
                scope=scope,
                opts=child,
            )

        grants = [
            grant("receive-secondary", contract.ROLE_SERVICE_BUS_DATA_RECEIVER, args["secondary_namespace_id"]),
            grant("send-primary", contract.ROLE_SERVICE_BUS_DATA_SENDER, args["primary_namespace_id"]),
            grant("list-secondary", contract.ROLE_READER, args["secondary_namespace_id"]),
        ]
        registries: list[dict[str, pulumi.Input[str]]] = []
        registry = config.get("registry")
        if registry is not None:
            grants.append(grant("acr-pull", contract.ROLE_ACR_PULL, registry["resource_id"]))
            registries.append({"server": registry["server"], "identity": identity.id})

        container_app = app.ContainerApp(
            f"{name}-app",
            managed_environment_id=environment.id,
            identity={"type": "UserAssigned", "user_assigned_identities": [identity.id]},
            configuration={
                "active_revisions_mode": "Single",
                # Internal only: /metrics is reachable from inside the environment, nothing public.
                "ingress": {"external": False, "target_port": DEFAULT_PORT, "transport": "http"},
                "registries": registries or None,
            },
            template={
                "containers": [
                    {
                        "name": CONTAINER_NAME,
                        "image": config["image"],
                        "env": [
                            {"name": ENV_PRIMARY, "value": args["primary_fqdn"]},
                            {"name": ENV_SECONDARY, "value": args["secondary_fqdn"]},
                            {"name": ENV_SECONDARY_RESOURCE_ID, "value": args["secondary_namespace_id"]},
                            {"name": ENV_AZURE_CLIENT_ID, "value": identity.client_id},
                        ],
                        "resources": {"cpu": settings["cpu"], "memory": settings["memory"]},
                        "probes": [
                            # Startup waits for the process to serve and not to have given up; readiness
                            # (clients open, loop running) is the readiness probe's own question.
                            _probe("Startup", LIVENESS_PATH, _STARTUP),
                            _probe("Liveness", LIVENESS_PATH, _LIVENESS),
                            _probe("Readiness", READINESS_PATH, _READINESS),
                        ],
                    }
                ],
                "scale": {"min_replicas": min_replicas, "max_replicas": settings["max_replicas"]},
                "termination_grace_period_seconds": TERMINATION_GRACE_SECONDS,
            },
            **common,
            opts=pulumi.ResourceOptions(parent=self, depends_on=grants),
        )

        self.app_name = container_app.name
        self.fqdn = container_app.latest_revision_fqdn
        self.principal_id = identity.principal_id
        self.client_id = identity.client_id
        self.register_outputs(
            {
                "appName": self.app_name,
                "fqdn": self.fqdn,
                "principalId": self.principal_id,
                "clientId": self.client_id,
                "workspaceId": workspace.id,
            }
        )
