"""The pairedbus Pulumi program: a paired namespace for send availability.

Reads and validates this stack's config, then builds the components. No resource logic here.
"""

import pulumi

from pairedbus import contract
from pairedbus.iac.components.backlog_queues import BacklogQueues, BacklogQueuesArgs
from pairedbus.iac.components.messaging_entities import MessagingEntities, MessagingEntitiesArgs
from pairedbus.iac.components.namespace_pair import NamespacePair, NamespacePairArgs
from pairedbus.iac.components.syphon_host import SyphonHost, SyphonHostArgs
from pairedbus.iac.config import load_pulumi_stack_config

config = load_pulumi_stack_config()

pair = NamespacePair("pair", NamespacePairArgs(config))
backlog = BacklogQueues(
    "backlog",
    BacklogQueuesArgs(config, pair.secondary, pair.secondary_resource_group_name),
)
entities = MessagingEntities(
    "entities",
    MessagingEntitiesArgs(config, pair.primary, pair.primary_resource_group_name),
)
syphon = SyphonHost(
    "syphon",
    SyphonHostArgs(
        config=config.syphon,
        location=config.syphon.location or config.primary.location,
        resource_group_name=pair.primary_resource_group_name,
        primary_namespace_id=pair.primary.id,
        secondary_namespace_id=pair.secondary.id,
        primary_fqdn=contract.service_bus_fqdn(config.primary.name),
        secondary_fqdn=contract.service_bus_fqdn(config.secondary.name),
        tags=config.tags,
    ),
)

pulumi.export("primaryNamespace", pair.primary.name)
pulumi.export("secondaryNamespace", pair.secondary.name)
pulumi.export("primaryEndpoint", pair.primary.service_bus_endpoint)
pulumi.export("secondaryEndpoint", pair.secondary.service_bus_endpoint)
pulumi.export("backlogQueues", backlog.queue_names)
pulumi.export("syphonApp", syphon.app_name)
