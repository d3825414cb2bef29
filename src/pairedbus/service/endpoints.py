"""What the syphon image and its host agree on: port, probe paths, environment variables.

Kept free of heavy imports: the Pulumi program reads these too.
"""

from __future__ import annotations

from typing import Final

DEFAULT_PORT: Final = 8080
#: Readiness: 200 while the syphon's clients are open and its loop runs (and it is not failing
#: with errors no retry can fix). Kept at the old path so existing probes keep working.
HEALTH_PATH: Final = "/healthz"
READINESS_PATH: Final = "/readyz"
#: Liveness: 503 after sustained failures no retry can fix (authentication, authorization, a
#: missing namespace) or after no progress for the stall timeout with work pending: restart me.
LIVENESS_PATH: Final = "/livez"
METRICS_PATH: Final = "/metrics"

#: The container app sets these; `pairedbus syphon` reads them when the flags are not given.
ENV_PRIMARY: Final = "PAIREDBUS_PRIMARY"
ENV_SECONDARY: Final = "PAIREDBUS_SECONDARY"
ENV_LOG_LEVEL: Final = "PAIREDBUS_LOG_LEVEL"
#: ARM id of the secondary namespace: the syphon lists backlog queues through ARM (Reader role).
ENV_SECONDARY_RESOURCE_ID: Final = "PAIREDBUS_SECONDARY_RESOURCE_ID"
#: azure-identity's DefaultAzureCredential picks the user-assigned managed identity by this client id.
ENV_AZURE_CLIENT_ID: Final = "AZURE_CLIENT_ID"
