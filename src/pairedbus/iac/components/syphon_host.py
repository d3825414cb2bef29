"""SyphonHost: where the syphon runs, an Azure Container App with its own identity.

At least one process must host the syphon (paired-namespaces.md, "Sequence"), so the app keeps
`minReplicas >= 1`. The app's user-assigned identity gets two data-plane roles: receive
from the secondary (the backlog queues) and send to the primary (their destinations), plus
control-plane Reader on the secondary so it can list every backlog queue through ARM (listing
through the data plane would need Manage, i.e. Data Owner). When the app may scale
(maxReplicas > minReplicas) it scales on backlog depth with KEDA's azure-servicebus scaler, which
needs Data Owner on the secondary (see "Scaling on backlog depth" below). Role assignments exist
before the app starts, so its first receive is not refused.

No `from __future__ import annotations`: Pulumi's component analyzer reads the annotations as live types.
"""

from typing import NotRequired, TypedDict

import pulumi
from pulumi_azure_native import app, authorization, managedidentity, operationalinsights

from pairedbus import contract, durations, limits
from pairedbus.iac.components.args import SYPHON_DEFAULTS, SyphonSettings
from pairedbus.iac.components.options import Inherited, with_part_token
from pairedbus.iac.components.roles import role_definition_id
from pairedbus.iac.config.schema import SyphonConfig, minimum_of
from pairedbus.service.endpoints import (
    DEFAULT_PORT,
    ENV_AZURE_CLIENT_ID,
    ENV_PRIMARY,
    ENV_SECONDARY,
    ENV_SECONDARY_RESOURCE_ID,
    KEDA_SCALER_TYPE,
    LIVENESS_PATH,
    READINESS_PATH,
    keda_scale_rule_metadata,
)

CONTAINER_NAME = "syphon"
#: The children whose Azure name azure-native makes from their Pulumi name, `<syphon>-<suffix>` plus random
#: hexadecimal digits (limits.py, [autoname]), and the rule ARM checks each against, strictest first (the
#: container app's 32 lower-case characters: a name it accepts passes the others too).
LOGS, ENVIRONMENT, IDENTITY, APP = "logs", "env", "identity", "app"
AUTONAMED: tuple[tuple[str, limits.NameRule], ...] = (
    (APP, limits.CONTAINER_APP_NAME),
    (ENVIRONMENT, limits.MANAGED_ENVIRONMENT_NAME),
    (LOGS, limits.LOG_ANALYTICS_WORKSPACE_NAME),
    (IDENTITY, limits.USER_ASSIGNED_IDENTITY_NAME),
)
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
    durations.duration_timedelta(str(contract.BACKLOG_QUEUE_PROPERTIES["lockDuration"])).total_seconds()
)

# --- Scaling on backlog depth ------------------------------------------------------------------
# The Container Apps custom scale rule `azure-servicebus` is KEDA's scaler, authenticated with the
# syphon's user-assigned identity (`identity` on the rule: "The resource ID of a user-assigned managed
# identity that is assigned to the Container App", CustomScaleRule in the Microsoft.App spec).
#
# What the scaler does (kedacore/keda @ 066a1e7127e78606b5cf1588b6e9c485dda825c3,
# pkg/scalers/azure_servicebus_scaler.go): it reads queue depths through the Service Bus
# administration (ATOM) endpoint with azservicebus/admin, `GetQueueRuntimeProperties(queueName)` or,
# with `useRegex: "true"`, `NewListQueuesRuntimePropertiesPager` over the whole namespace, keeping
# the queues whose whole name the Go regexp matches (`FindString(name) == name`) and folding their
# ActiveMessageCount with `operation` (sum, max or avg). A `/` in a queue name needs nothing special:
# azservicebus's ATOM client appends the entity path to the host unescaped
# (Azure/azure-sdk-for-go, sdk/messaging/azservicebus/internal/atom/entity_manager.go, `execute`), and
# `/`, `-` and digits are literals in a Go regexp. One namespace-wide rule with `sum` scales on the
# total backlog, counts queues added later, and keeps one trigger however many queues there are
# (a rule per queue would scale on the deepest queue only: the HPA takes the largest of its metrics).
#
# The role it needs: reading runtime properties is a management operation, which needs the Manage
# claim (keda-docs, content/docs/2.16/scalers/azure-service-bus.md: "Manage access is required for
# KEDA to be able to get metrics from Service Bus"; microsoft/azure-container-apps#1138: a Listen-only
# key does not scale). With Entra ID, Manage on the data plane comes only with Azure Service Bus Data
# Owner (the built-in data roles' data actions are send, receive, or `Microsoft.ServiceBus/*`; none
# grants reading entity runtime properties alone), and it cannot be narrowed to the backlog queues:
# ARM cannot address a queue whose name holds `/` (azure-service-bus#344), so a queue-scoped assignment
# is impossible, and the regex listing is namespace-wide anyway. So the syphon identity gets Data Owner
# on the secondary only, and only when there is something to scale (maxReplicas > minReplicas): a
# syphon with a fixed replica count keeps receive, send and Reader. The secondary holds only backlog
# queues, so the extra right reaches nothing else of the pair.
SCALE_RULE_NAME = "backlog-depth"


def backlog_scale_rule(
    primary_namespace_name: pulumi.Input[str],
    secondary_namespace_name: pulumi.Input[str],
    identity_id: pulumi.Input[str],
) -> dict[str, object]:
    """The Container Apps scale rule over the secondary's backlog queues; its KEDA metadata is the one
    the syphon image documents (`service.endpoints.keda_scale_rule_metadata`)."""
    metadata = pulumi.Output.all(primary_namespace_name, secondary_namespace_name).apply(
        lambda names: keda_scale_rule_metadata(names[0], names[1])
    )
    return {
        "name": SCALE_RULE_NAME,
        "custom": {"type": KEDA_SCALER_TYPE, "identity": identity_id, "metadata": metadata},
    }


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
    primary_namespace_name: NotRequired[pulumi.Input[str]]
    """The primary namespace's name (the backlog queues are named after it); needed to scale on backlog depth."""
    secondary_namespace_name: NotRequired[pulumi.Input[str]]
    """The secondary namespace's name (where KEDA reads backlog depths); needed to scale on backlog depth."""
    tags: NotRequired[dict[str, pulumi.Input[str]]]
    """Tags for every resource of the syphon."""
    infrastructure_subnet_id: NotRequired[pulumi.Input[str]]
    """Run the environment, internal, on this (dedicated) subnet; needed to reach namespaces through private
    endpoints. None: a Container Apps-managed network."""
    production: NotRequired[bool]
    """Production: also protect what the syphon needs to move messages (identity, role assignments, environment,
    app); adds to the `protect` resource option."""


def autonamed_problem(name: str, infix: str = "") -> str | None:
    """Why ARM would refuse a name azure-native makes from a syphon named `name + infix` (PairedNamespace passes
    its own name and `-syphon`), or None. Every random digit is a lower-case hexadecimal one, which each rule
    allows: one sample stands for them all."""
    for suffix, rule in AUTONAMED:
        made = f"{name}{infix}-{suffix}"
        if not rule.accepts(made + "0" * limits.AUTONAME_SUFFIX_LENGTH):
            room = rule.max_length - limits.AUTONAME_SUFFIX_LENGTH - (len(made) - len(name))
            return (
                f"the syphon's {rule.resource_type} is named {made!r} plus {limits.AUTONAME_SUFFIX_LENGTH} random "
                f"hexadecimal digits, and ARM accepts {rule.described} (so at most {room} characters here)"
            )
    return None


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
    workspace_id: pulumi.Output[str]
    """ARM id of the syphon's Log Analytics workspace (the namespaces' diagnostic settings default to it)."""

    def __init__(self, name: str, args: SyphonHostArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        problem = autonamed_problem(name)
        if problem is not None:  # before anything registers: ARM would refuse the app only after the rest exists
            raise ValueError(f"{name}: name: expected a name Azure accepts in every name made from it: {problem}")
        super().__init__(contract.TYPE_SYPHON_HOST, name, None, with_part_token(contract.TYPE_SYPHON_HOST, opts))
        inherited = Inherited.of(opts)
        config = args["syphon"]
        settings = {**SYPHON_DEFAULTS, **config}
        min_replicas = settings["min_replicas"]
        lowest = minimum_of(SyphonConfig, "min_replicas")  # the spec needs a syphon always running
        if min_replicas < lowest:  # checked here too: a part used on its own is not validated by the model
            raise ValueError(f"syphon.minReplicas: expected >= {lowest}, got {min_replicas}")
        # Children are named `<name>-<suffix>`: inside PairedNamespace the engine's inherited child alias
        # (`syphon` -> `<pair>-syphon`) maps them to their names before 0.2 (`syphon-<suffix>`) by itself.
        child = inherited.child(self)
        # Production: whatever would stop the syphon if deleted (its identity, its roles, its environment and
        # app) is protected. The workspace only holds logs, so production does not (a caller's protect=True does).
        kept = inherited.child(self, protect=bool(args.get("production", False)))
        tags = dict(args.get("tags") or {})
        common = {"resource_group_name": args["resource_group_name"], "location": args["location"], "tags": tags}

        workspace = operationalinsights.Workspace(
            f"{name}-{LOGS}",
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
        subnet = args.get("infrastructure_subnet_id")
        environment = app.ManagedEnvironment(
            f"{name}-{ENVIRONMENT}",
            # Internal: no public address; the app reaches private endpoints through the subnet's network.
            vnet_configuration={"infrastructure_subnet_id": subnet, "internal": True} if subnet else None,
            app_logs_configuration={
                "destination": "log-analytics",
                "log_analytics_configuration": {
                    "customer_id": workspace.customer_id,
                    "shared_key": pulumi.Output.secret(shared_key),
                },
            },
            **common,
            opts=kept,
        )
        identity = managedidentity.UserAssignedIdentity(f"{name}-{IDENTITY}", **common, opts=kept)

        def grant(suffix: str, role_guid: str, scope: pulumi.Input[str]) -> authorization.RoleAssignment:
            return authorization.RoleAssignment(
                f"{name}-{suffix}",
                principal_id=identity.principal_id,
                principal_type=SERVICE_PRINCIPAL,
                role_definition_id=role_definition_id(role_guid),
                scope=scope,
                opts=kept,
            )

        grants = [
            grant("receive-secondary", contract.ROLE_SERVICE_BUS_DATA_RECEIVER, args["secondary_namespace_id"]),
            grant("send-primary", contract.ROLE_SERVICE_BUS_DATA_SENDER, args["primary_namespace_id"]),
            grant("list-secondary", contract.ROLE_READER, args["secondary_namespace_id"]),
        ]
        scale: dict[str, object] = {"min_replicas": min_replicas, "max_replicas": settings["max_replicas"]}
        if settings["max_replicas"] > min_replicas:
            missing = [k for k in ("primary_namespace_name", "secondary_namespace_name") if not args.get(k)]
            if missing:
                raise ValueError(f"{missing[0]}: expected the namespace's name to scale on backlog depth, got none")
            # Manage on the secondary, for KEDA's runtime-properties read (see "Scaling on backlog depth").
            grants.append(
                grant("scale-secondary", contract.ROLE_SERVICE_BUS_DATA_OWNER, args["secondary_namespace_id"])
            )
            scale["rules"] = [
                backlog_scale_rule(args["primary_namespace_name"], args["secondary_namespace_name"], identity.id)
            ]
        registries: list[dict[str, pulumi.Input[str]]] = []
        registry = config.get("registry")
        if registry is not None:
            grants.append(grant("acr-pull", contract.ROLE_ACR_PULL, registry["resource_id"]))
            registries.append({"server": registry["server"], "identity": identity.id})

        container_app = app.ContainerApp(
            f"{name}-{APP}",
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
                "scale": scale,
                "termination_grace_period_seconds": TERMINATION_GRACE_SECONDS,
            },
            **common,
            opts=pulumi.ResourceOptions.merge(kept, pulumi.ResourceOptions(depends_on=grants)),
        )

        self.app_name = container_app.name
        self.fqdn = container_app.latest_revision_fqdn
        self.principal_id = identity.principal_id
        self.client_id = identity.client_id
        self.workspace_id = workspace.id
        self.register_outputs(
            {
                "appName": self.app_name,
                "fqdn": self.fqdn,
                "principalId": self.principal_id,
                "clientId": self.client_id,
                "workspaceId": self.workspace_id,
            }
        )
