"""The component provider: serves PairedNamespace and its parts to Pulumi programs in any language.

`pulumi package add <this repository or path>` reads PulumiPlugin.yaml, runs `provider/__main__.py` (which calls
`main()` below) and asks it for the package schema, which Pulumi infers from the components' typed args
(`pulumi.provider.experimental.analyzer`); it then generates an SDK in the consumer's language.

Each component is served as `pairedbus:index:<class name>` (the analyzer puts every component in `index`), which is
exactly the token it registers (`contract.TYPE_*`); the parts' tokens before 0.2 live on only as aliases.
"""

from __future__ import annotations

from importlib import metadata

import pulumi

from pairedbus import contract
from pairedbus.iac.components.backlog_queues import BacklogQueues
from pairedbus.iac.components.messaging_entities import MessagingEntities
from pairedbus.iac.components.namespace_pair import NamespacePair
from pairedbus.iac.components.paired_namespace import PairedNamespace
from pairedbus.iac.components.syphon_host import SyphonHost

#: What the package offers: the whole pair, and its parts for those who compose their own.
COMPONENTS: list[type[pulumi.ComponentResource]] = [
    PairedNamespace,
    NamespacePair,
    BacklogQueues,
    MessagingEntities,
    SyphonHost,
]


def version() -> str:
    try:
        return metadata.version(contract.PACKAGE)
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "0.0.0"


def main() -> None:
    from pulumi.provider.experimental import component_provider_host

    component_provider_host(COMPONENTS, name=contract.PACKAGE, version=version())


if __name__ == "__main__":
    main()
