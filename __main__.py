"""The pairedbus Pulumi program: a paired namespace for send availability.

Reads and validates this stack's config, builds one PairedNamespace from it and exports its outputs.
No resource logic here.
"""

import pulumi

from pairedbus.iac import PairedNamespace
from pairedbus.iac.config import load_pulumi_stack_config

config = load_pulumi_stack_config()
# legacy_urns: this program built its pair before pairedbus 0.2; every resource keeps its URN (aliases).
paired = PairedNamespace.from_config("pairedbus", config, legacy_urns=True)

pulumi.export("primaryNamespace", paired.primary_namespace_name)
pulumi.export("secondaryNamespace", paired.secondary_namespace_name)
pulumi.export("primaryEndpoint", paired.primary_endpoint)
pulumi.export("secondaryEndpoint", paired.secondary_endpoint)
pulumi.export("backlogQueues", paired.backlog_queue_names)
pulumi.export("syphonApp", paired.syphon_app_name)
