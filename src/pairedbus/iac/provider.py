"""The component provider: serves PairedNamespace and its parts to Pulumi programs in any language.

`pulumi package add <this repository or path>` reads PulumiPlugin.yaml, runs `provider/__main__.py` (which calls
`main()` below) and asks it for the package schema, which Pulumi infers from the components' typed args
(`pulumi.provider.experimental.analyzer`); it then generates an SDK in the consumer's language.

Each component is served as `pairedbus:index:<class name>` (the analyzer puts every component in `index`), which is
exactly the token it registers (`contract.TYPE_*`); the parts' tokens before 0.2 live on only as aliases.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

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


def _integers_from_the_wire(value: Any, prop: Any) -> Any:
    """A value of an integer property (or a list or map of them) as the program wrote it: Pulumi's wire has one
    number type, a double, so another language's `3` arrives as 3.0. Only an integral double is decoded; 3.5
    stays 3.5, and the component's strict check refuses it, naming the field."""
    from pulumi.provider.experimental.analyzer import PropertyType

    if prop is None:
        return value
    if prop.type == PropertyType.INTEGER and isinstance(value, float) and value.is_integer():
        return int(value)
    if prop.type == PropertyType.ARRAY and isinstance(value, list):
        return [_integers_from_the_wire(v, prop.items) for v in value]
    if prop.type == PropertyType.OBJECT and prop.additional_properties is not None and isinstance(value, dict):
        return {k: _integers_from_the_wire(v, prop.additional_properties) for k, v in value.items()}
    return value


def served(version_: str | None = None) -> Any:
    """The provider `main` serves: the SDK's ComponentProvider for COMPONENTS, with the wire's numbers decoded at
    this boundary. The SDK means to (pulumi/provider/experimental/component.py: "Integers are sent as floats over
    the wire. Convert to `int` here.") but then stores the double it converted (pulumi 3.x). Decoded here, the
    components' args are checked strictly, as a stack file is: `4.0` written in a Python program or a stack
    file is not an integer (one line naming the field), `4` from any language is."""
    from pulumi.provider.experimental.component import ComponentProvider

    class WireNumbersProvider(ComponentProvider):
        def map_input_properties(
            self, inputs: Any, properties: Any, mapping: Any, component_name: str, property_path: str
        ) -> Any:
            mapped = super().map_input_properties(inputs, properties, mapping, component_name, property_path)
            for schema_name, prop in properties.items():
                name = mapping.get(schema_name)
                if name in mapped:
                    mapped[name] = _integers_from_the_wire(mapped[name], prop)  # type: ignore[index]  # Pulumi types the mapped inputs Mapping; they are a dict it builds for this call
            return mapped

    return WireNumbersProvider(COMPONENTS, contract.PACKAGE, None, version_ or version())


_serving = False


def main() -> None:
    """Serve the components to the engine (what `component_provider_host` does, with `served()`'s provider).
    Once per process, as the host guards itself: loading the entry module again must not start a second server."""
    global _serving
    if _serving:
        return
    _serving = True
    import sys

    from pulumi.provider import main as serve

    serve(served(), sys.argv[1:])


if __name__ == "__main__":
    main()
