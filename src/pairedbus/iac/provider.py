"""The component provider: serves PairedNamespace and its parts to Pulumi programs in any language.

`pulumi package add <this repository or path>` reads PulumiPlugin.yaml, runs `provider/__main__.py` (which calls
`main()` below) and asks it for the package schema, which Pulumi infers from the components' typed args
(`pulumi.provider.experimental.analyzer`); it then generates an SDK in the consumer's language.

Each component is served as `pairedbus:index:<class name>` (the analyzer puts every component in `index`), which is
exactly the token it registers (`contract.TYPE_*`); the parts' tokens before 0.2 live on only as aliases.
"""

from __future__ import annotations

import inspect
import json
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


#: PairedNamespace's methods other languages call (Pulumi's component methods: a resource's `methods` map names a
#: function `<resource token>/<method>` whose `__self__` input is the component): schema name, Python method, what
#: the ids of the role assignments it made are returned.
METHODS: dict[str, str] = {"grantSender": "grant_sender", "grantReceiver": "grant_receiver"}
_PRINCIPAL_TYPE_DEFAULT = "ServicePrincipal"


def _method_token(method: str) -> str:
    return f"{contract.TYPE_PAIRED_NAMESPACE}/{method}"


def with_methods(schema: dict[str, Any]) -> dict[str, Any]:
    """The analyzed schema plus PairedNamespace's methods (the analyzer infers constructors only, pulumi 3.272):
    each a function taking `__self__` (the pair), `name`, `principalId` and `principalType`, returning the ids of
    the role assignments it made (an output: wire onward or depend on them)."""
    resource = schema["resources"][contract.TYPE_PAIRED_NAMESPACE]
    resource["methods"] = {method: _method_token(method) for method in METHODS}
    principal_type = next(
        ref for ref in (schema["types"] or {}) if ref.rsplit(":", 1)[-1] == "PrincipalType"
    )  # the deployer's principal type's enum: the same three values ARM takes
    functions = schema.setdefault("functions", {})
    for method, python_name in METHODS.items():
        doc = inspect.getdoc(getattr(PairedNamespace, python_name)) or ""
        functions[_method_token(method)] = {
            "description": doc,
            "inputs": {
                "properties": {
                    "__self__": {"$ref": f"#/resources/{contract.TYPE_PAIRED_NAMESPACE}"},
                    "name": {"type": "string", "description": "Names the grant in this pair (`<pair>-<name>-...`)."},
                    "principalId": {"type": "string", "description": "The application identity's object id."},
                    "principalType": {
                        "$ref": f"#/types/{principal_type}",
                        "description": "ServicePrincipal (default), User or Group, as ARM's role assignment.",
                    },
                },
                "required": ["__self__", "name", "principalId"],
            },
            "outputs": {
                "properties": {
                    "roleAssignmentIds": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "ARM ids of the role assignments made.",
                    }
                },
                "required": ["roleAssignmentIds"],
            },
        }
    return schema


def plugin_version() -> str:
    """The version the engine is told the plugin has: the package's, or 0.0.0 from an uninstalled tree (a semver
    the engine accepts, where `pairedbus --version` says "unknown")."""
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
    from pulumi.provider import CallResult
    from pulumi.provider.experimental.component import ComponentProvider

    class WireNumbersProvider(ComponentProvider):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.schema = json.dumps(with_methods(json.loads(self.schema or "{}")))
            #: The pairs this provider built in this deployment, by URN: a method call names its pair by URN (the
            #: engine runs one provider process per deployment, which constructs the pair before any call on it).
            self.pairs: dict[str, PairedNamespace] = {}

        def get_state(self, comp_instance: Any, component_def: Any) -> Any:
            if isinstance(comp_instance, PairedNamespace):
                comp_instance.urn.apply(lambda urn: self.pairs.__setitem__(urn, comp_instance))
            return super().get_state(comp_instance, component_def)

        def call(self, token: str, args: Any) -> CallResult:
            method = METHODS.get(token.removeprefix(f"{contract.TYPE_PAIRED_NAMESPACE}/"))
            if method is None or not token.startswith(f"{contract.TYPE_PAIRED_NAMESPACE}/"):
                return super().call(token, args)
            urn = args["__self__"]
            pair = self.pairs.get(urn if isinstance(urn, str) else "")
            if pair is None:
                raise ValueError(f"{token}: __self__: expected a PairedNamespace built in this deployment, got {urn!r}")
            made = getattr(pair, method)(
                args["name"], args["principalId"], args.get("principalType") or _PRINCIPAL_TYPE_DEFAULT
            )
            grants = made if isinstance(made, list) else [made]
            return CallResult({"roleAssignmentIds": pulumi.Output.all(*(g.id for g in grants))})

        def map_input_properties(
            self, inputs: Any, properties: Any, mapping: Any, component_name: str, property_path: str
        ) -> Any:
            mapped = super().map_input_properties(inputs, properties, mapping, component_name, property_path)
            for schema_name, prop in properties.items():
                name = mapping.get(schema_name)
                if name in mapped:
                    mapped[name] = _integers_from_the_wire(mapped[name], prop)  # type: ignore[index]  # Pulumi types the mapped inputs Mapping; they are a dict it builds for this call
            return mapped

    return WireNumbersProvider(COMPONENTS, contract.PACKAGE, None, version_ or plugin_version())


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
