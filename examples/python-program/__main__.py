"""A platform team's own Pulumi program: a paired namespace from code, next to its other infrastructure.

No stack config: the pair is described in Python. The arguments are validated exactly as pairedbus's own stack
config would be (one line per mistake) before anything is registered.
"""

import pulumi
from pulumi_azure_native import storage

from pairedbus.iac import PairedNamespace, PairedNamespaceArgs

args: PairedNamespaceArgs = {
    "resource_groups": {"primary": {"name": "rg-orders-weu"}, "secondary": {"name": "rg-orders-neu"}},
    "primary": {"name": "orders-weu", "location": "westeurope"},
    "secondary": {"name": "orders-neu", "location": "northeurope"},
    "backlog_queue_count": 4,
    "queues": [{"name": "orders"}, {"name": "payments", "requires_session": True}],
    "topics": [{"name": "order-events", "subscriptions": [{"name": "billing"}, {"name": "shipping"}]}],
    "syphon": {"image": "ghcr.io/contoso/pairedbus-syphon:0.1.0"},
    "tags": {"team": "orders"},
}
paired = PairedNamespace("orders", args)

# The team's other infrastructure, wired to the pair's outputs: claim-check blobs for large orders, in the
# primary's resource group.
claims = storage.StorageAccount(
    "claims",
    resource_group_name=paired.primary_resource_group_name,
    location="westeurope",
    kind=storage.Kind.STORAGE_V2,
    sku=storage.SkuArgs(name=storage.SkuName.STANDARD_ZRS),
    minimum_tls_version=storage.MinimumTlsVersion.TLS1_2,
    allow_blob_public_access=False,
    tags={"team": "orders"},
)

pulumi.export("primaryEndpoint", paired.primary_endpoint)
pulumi.export("secondaryEndpoint", paired.secondary_endpoint)
pulumi.export("orderQueueId", paired.queue_ids.apply(lambda ids: ids["orders"]))
pulumi.export("syphonPrincipalId", paired.syphon_principal_id)
pulumi.export("claimsAccount", claims.name)
