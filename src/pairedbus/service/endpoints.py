"""What the syphon image and its host agree on: port, probe paths, environment variables.

Kept free of heavy imports: the Pulumi program reads these too.
"""

from __future__ import annotations

import re
from typing import Final

DEFAULT_PORT: Final = 8080
#: Readiness: 200 while the syphon's clients are open and its loop runs (and it is not failing
#: with errors no retry can fix). Kept at the old path so existing probes keep working.
HEALTH_PATH: Final = "/healthz"
#: Readiness: 200 while the syphon's clients are open and its loop runs.
READINESS_PATH: Final = "/readyz"
#: Liveness: 503 after sustained failures no retry can fix (authentication, authorization, a
#: missing namespace) or after no progress for the stall timeout with work pending: restart me.
LIVENESS_PATH: Final = "/livez"
METRICS_PATH: Final = "/metrics"

#: The container app sets these; `pairedbus syphon` reads them when the flags are not given.
ENV_PRIMARY: Final = "PAIREDBUS_PRIMARY"
ENV_SECONDARY: Final = "PAIREDBUS_SECONDARY"
ENV_LOG_LEVEL: Final = "PAIREDBUS_LOG_LEVEL"
#: Connection strings (SAS, or an emulator's) instead of Entra ID; never flags, so a key never
#: sits in a process listing. Both or neither.
ENV_PRIMARY_CONNECTION_STRING: Final = "PAIREDBUS_PRIMARY_CONNECTION_STRING"
ENV_SECONDARY_CONNECTION_STRING: Final = "PAIREDBUS_SECONDARY_CONNECTION_STRING"
#: The primary namespace's name when its connection string's host does not say it (an emulator's
#: `localhost`): the backlog queues are named after it.
ENV_PRIMARY_NAME: Final = "PAIREDBUS_PRIMARY_NAME"
#: A CA bundle the administration clients trust (an emulator's generated CA).
ENV_CONNECTION_VERIFY: Final = "PAIREDBUS_CONNECTION_VERIFY"
#: ARM id of the secondary namespace: the syphon lists backlog queues through ARM (Reader role).
ENV_SECONDARY_RESOURCE_ID: Final = "PAIREDBUS_SECONDARY_RESOURCE_ID"
#: azure-identity's DefaultAzureCredential picks the user-assigned managed identity by this client id.
ENV_AZURE_CLIENT_ID: Final = "AZURE_CLIENT_ID"


#: The Container Apps custom scale rule type (a KEDA scaler) the syphon app scales on.
KEDA_SCALER_TYPE: Final = "azure-servicebus"
#: Active backlog messages per replica the scale rule aims at (KEDA `messageCount`).
DEFAULT_MESSAGES_PER_REPLICA: Final = 1000


def keda_scale_rule_metadata(
    primary_namespace: str, secondary_namespace: str, *, messages_per_replica: int = DEFAULT_MESSAGES_PER_REPLICA
) -> dict[str, str]:
    """Metadata of one namespace-wide `azure-servicebus` KEDA scale rule over every backlog queue.

    KEDA's scaler reads queue depths through the Service Bus administration API. With `useRegex`
    it lists the namespace's queues and keeps those whose *whole* name the regular expression
    matches (Go `regexp`; a backlog queue's name holds `/`, which needs no escaping there), then
    folds their active-message counts with `operation` (sum). One rule therefore covers any number
    of backlog queues, including ones added later, where a rule per queue would need one trigger
    per index. `namespace` is the bare name: KEDA appends the Service Bus endpoint suffix. All
    values are strings, as Container Apps and KEDA require.
    """
    if messages_per_replica < 1:
        raise ValueError(f"messages_per_replica must be >= 1, got {messages_per_replica}")
    from pairedbus import contract  # light: no SDK import

    return {
        "namespace": secondary_namespace,
        "queueName": re.escape(contract.backlog_queue_prefix(primary_namespace)) + "(0|[1-9][0-9]*)",
        "useRegex": "true",
        "operation": "sum",
        "messageCount": str(messages_per_replica),
        "activationMessageCount": "0",
    }
