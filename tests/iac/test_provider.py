"""The package schema other languages get, generated offline with Pulumi's own analyzer — the same code that
`pulumi package add` runs inside the component provider (`pulumi.provider.experimental`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pulumi
import pytest
import yaml
from google.protobuf import empty_pb2
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.server import ComponentInitError
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

from pairedbus import contract
from pairedbus.iac import provider
from pairedbus.iac.render.program import render_program
from tests.iac.components.conftest import render_config
from tests.load import guard

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = Analyzer("pairedbus").analyze(provider.COMPONENTS)
    dependencies = sorted(result["dependencies"], key=lambda d: d.name)
    spec = generate_schema(
        "pairedbus", "0.1.0", None, result["component_definitions"], result["type_definitions"], dependencies
    )
    return provider.with_methods(json.loads(json.dumps(spec.to_json())))  # plus the methods, as `served` adds them


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every input and output of every resource, and every property of every type, with a path for messages."""
    found: list[tuple[str, dict[str, Any]]] = []
    for token, resource in schema["resources"].items():
        for kind in ("inputProperties", "properties"):
            found += [(f"{token}.{kind}.{k}", v) for k, v in resource.get(kind, {}).items()]
    for token, type_ in schema["types"].items():
        found += [(f"{token}.{k}", v) for k, v in type_.get("properties", {}).items()]
    return found


def _typed(prop: dict[str, Any]) -> bool:
    if "$ref" in prop:
        return prop["$ref"] != "pulumi.json#/Any"
    if prop.get("type") == "array":
        return _typed(prop["items"])
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return _typed(prop["additionalProperties"])
    return prop.get("type") in {"string", "integer", "number", "boolean"}


def test_the_package_offers_paired_namespace_and_its_parts(schema: dict[str, Any]) -> None:
    assert schema["name"] == "pairedbus"
    assert sorted(schema["resources"]) == [
        "pairedbus:index:BacklogQueues",
        "pairedbus:index:MessagingEntities",
        "pairedbus:index:NamespacePair",
        "pairedbus:index:PairedNamespace",
        "pairedbus:index:SyphonHost",
    ]
    assert all(r["isComponent"] for r in schema["resources"].values())


def test_paired_namespace_inputs_and_outputs(schema: dict[str, Any]) -> None:
    paired = schema["resources"]["pairedbus:index:PairedNamespace"]
    assert paired["description"].startswith("Azure Service Bus paired namespaces")
    assert sorted(paired["requiredInputs"]) == ["primary", "resourceGroups", "secondary", "syphon"]
    assert set(paired["inputProperties"]) == {
        "resourceGroups",
        "primary",
        "secondary",
        "syphon",
        "backlogQueueCount",
        "backlogAuth",
        "queues",
        "topics",
        "tags",
        "production",
        "allowUnknownRegion",
        "deployerPrincipalType",
        "maxOutage",
        "network",
        "diagnostics",
        "namespaceLock",
    }
    assert paired["inputProperties"]["network"]["$ref"] == "#/types/pairedbus:index:NetworkSettings"
    network = schema["types"]["pairedbus:index:NetworkSettings"]
    assert sorted(network["required"]) == [
        "privateDnsZoneId",
        "privateEndpointSubnetId",
        "syphonInfrastructureSubnetId",
    ]
    # Production hardening: the namespace's CMK and firewall, and the pair's diagnostics, typed like the config.
    namespace = schema["types"]["pairedbus:index:NamespaceSettings"]["properties"]
    assert namespace["encryption"]["$ref"] == "#/types/pairedbus:index:EncryptionSettings"
    assert namespace["networkRuleSet"]["$ref"] == "#/types/pairedbus:index:NetworkRuleSetSettings"
    encryption = schema["types"]["pairedbus:index:EncryptionSettings"]
    assert sorted(encryption["required"]) == ["keyName", "keyVaultUri", "userAssignedIdentityId"]
    assert paired["inputProperties"]["diagnostics"]["$ref"] == "#/types/pairedbus:index:DiagnosticsSettings"
    assert {
        "primaryNamespaceId",
        "secondaryNamespaceId",
        "primaryEndpoint",
        "secondaryEndpoint",
        "queueIds",
        "topicIds",
        "subscriptionIds",
        "backlogQueueNames",
        "syphonPrincipalId",
    } <= set(paired["properties"])
    assert paired["properties"]["backlogQueueNames"] == {
        "description": "Names of the backlog queues in the secondary namespace.",
        "type": "array",
        "items": {"description": "Names of the backlog queues in the secondary namespace.", "type": "string"},
    }
    assert paired["inputProperties"]["primary"]["$ref"] == "#/types/pairedbus:index:NamespaceSettings"
    # The image may come from another resource (an Input); what decides the resources is plain.
    syphon = schema["types"]["pairedbus:index:SyphonSettings"]["properties"]
    assert "plain" not in syphon["image"] and syphon["minReplicas"]["plain"] is True


def test_the_config_keys_are_the_schema_names(schema: dict[str, Any]) -> None:
    """What a stack config says under `pairedbus:` is what a TypeScript or YAML program passes."""
    stack = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())["config"]
    inputs = schema["resources"]["pairedbus:index:PairedNamespace"]["inputProperties"]
    for key, value in stack.items():
        if not key.startswith("pairedbus:"):
            continue
        name = key.removeprefix("pairedbus:")
        assert name in inputs, name
        if isinstance(value, dict) and "$ref" in inputs[name]:
            properties = schema["types"][inputs[name]["$ref"].removeprefix("#/types/")]["properties"]
            assert set(value) <= set(properties), name


def test_every_input_and_output_is_typed_and_described(schema: dict[str, Any]) -> None:
    properties = _properties(schema)
    assert len(properties) > 80
    untyped = [path for path, prop in properties if not _typed(prop)]
    undescribed = [path for path, prop in properties if not (prop.get("description") or "").strip()]
    assert untyped == [] and undescribed == []
    assert all((t.get("description") or "").strip() for t in schema["types"].values())
    assert all((r.get("description") or "").strip() for r in schema["resources"].values())


def test_no_any_anywhere(schema: dict[str, Any]) -> None:
    text = json.dumps(schema)
    assert "pulumi.json#/Any" not in text
    assert '"type": "any"' not in text.lower()


def test_external_references_point_at_azure_native(schema: dict[str, Any]) -> None:
    refs = {p["$ref"] for _, p in _properties(schema) if p.get("$ref", "").startswith("/")}
    assert refs and all(r.startswith("/azure-native/v") for r in refs)
    assert {r.rsplit("/", 1)[-1] for r in refs} == {"azure-native:servicebus:Namespace"}
    assert [d["name"] for d in schema.get("dependencies", [])] == ["azure-native"]


def test_the_served_schema_is_the_same() -> None:
    """`provider.served()` is what `main` serves: the SDK's ComponentProvider, the same analyzer."""
    served = json.loads(provider.served("0.1.0").schema or "{}")
    assert isinstance(provider.served(), ComponentProvider)
    assert sorted(served["resources"]) == sorted(f"pairedbus:index:{c.__name__}" for c in provider.COMPONENTS)


def test_a_construct_call_from_another_language_renders_the_pair(config_dict: dict[str, Any]) -> None:
    """What a TypeScript or YAML program sends (camelCase, numbers as doubles) goes through the provider's own
    input mapping into PairedNamespace, and renders what the same stack config renders."""
    served = provider.served("0.1.0")
    wire = json.loads(json.dumps(config_dict), parse_int=float)  # the wire carries every number as a double
    outputs: dict[str, Any] = {}

    def program() -> None:
        result = served.construct("pairedbus", "pairedbus:index:PairedNamespace", wire, None)
        outputs.update(result.state)

    plan = render_program(program, project="pairedbus", stack="test")
    from_config = render_config(config_dict, build_from_stack_config)
    assert sorted((r.type, r.name) for r in plan.resources) == sorted((r.type, r.name) for r in from_config.resources)
    assert {"primaryNamespaceId", "backlogQueueNames", "syphonPrincipalId"} <= set(outputs)
    assert len(plan.of_type(contract.TYPE_BACKLOG_QUEUE)) == config_dict["backlogQueueCount"]


def test_pulumi_plugin_yaml_points_at_the_provider_entry() -> None:
    manifest = yaml.safe_load((REPO / "PulumiPlugin.yaml").read_text())
    assert manifest["runtime"]["name"] == "python"
    entry = REPO / manifest["main"] / "__main__.py"
    assert "pairedbus.iac.provider import main" in entry.read_text()


def build_from_stack_config() -> None:
    from pairedbus.iac import PairedNamespace
    from pairedbus.iac.config import load_pulumi_stack_config
    from pairedbus.iac.config.args_mapping import args_from_stack_config

    PairedNamespace("pairedbus", args_from_stack_config(load_pulumi_stack_config()))


def test_the_plugin_entry_serves_the_schema_over_grpc(schema: dict[str, Any]) -> None:
    """What `pulumi package add` starts (PulumiPlugin.yaml's `main`): a provider process that prints its port
    and answers GetSchema on loopback. The engine address is never dialled for a schema request."""
    manifest = yaml.safe_load((REPO / "PulumiPlugin.yaml").read_text())
    process = subprocess.Popen(
        [sys.executable, str(REPO / manifest["main"]), "127.0.0.1:9"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    try:
        port = int(process.stdout.readline())  # type: ignore[union-attr]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            served = json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=guard(120)).schema)
            info = stub.GetPluginInfo(empty_pb2.Empty(), timeout=guard(30))
    finally:
        process.terminate()
        process.wait(timeout=guard(30))
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]
    assert served["resources"].keys() == schema["resources"].keys()
    assert (
        served["resources"]["pairedbus:index:PairedNamespace"] == schema["resources"]["pairedbus:index:PairedNamespace"]
    )
    assert served["types"] == schema["types"]
    assert served["functions"] == schema["functions"]  # the methods too
    assert info.version == served["version"] == provider.plugin_version()


# --- Inputs, enums and tokens (what another language's SDK is generated from) -------------------------------


def _schema_property(schema: dict[str, Any], loc: tuple[str, ...]) -> dict[str, Any]:
    """The schema property of a config key path under PairedNamespace's inputs (a map's key: its value type)."""
    prop: dict[str, Any] = {"properties": schema["resources"]["pairedbus:index:PairedNamespace"]["inputProperties"]}
    for part in loc:
        if "$ref" in prop:
            prop = schema["types"][prop["$ref"].removeprefix("#/types/")]
        prop = prop["additionalProperties"] if "additionalProperties" in prop else prop["properties"][part]
    return prop


def _leaves(schema: dict[str, Any]) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """Every scalar input under PairedNamespace, with its config key path (lists and maps as `*`)."""
    found: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def walk(prop: dict[str, Any], loc: tuple[str, ...]) -> None:
        ref = prop.get("$ref", "")
        if ref.startswith("#/types/") and "properties" in schema["types"][ref.removeprefix("#/types/")]:
            for key, inner in schema["types"][ref.removeprefix("#/types/")]["properties"].items():
                walk(inner, (*loc, key))
        elif prop.get("type") == "array":
            walk(prop["items"], loc)
        elif prop.get("type") == "object":
            walk(prop["additionalProperties"], (*loc, "*"))
        else:
            found.append((loc, prop))

    for key, prop in schema["resources"]["pairedbus:index:PairedNamespace"]["inputProperties"].items():
        walk(prop, (key,))
    return found


def test_what_may_be_an_output_is_an_input_in_the_schema_and_nothing_else_is(schema: dict[str, Any]) -> None:
    """Another language passes its own resource group's name, a location or a tag value as an Output exactly where
    PairedNamespace accepts one (pairedbus.iac.config.args_mapping.INPUT_PATHS); what decides which resources exist is
    `plain` (it must be known when the component is built)."""
    from pairedbus.iac.config.args_mapping import INPUT_PATHS, may_be_input

    leaves = _leaves(schema)
    assert len(leaves) > 40
    inputs = sorted(loc for loc, prop in leaves if not prop.get("plain"))
    assert inputs == sorted(loc for loc, _ in leaves if may_be_input(loc))
    assert {
        ("resourceGroups", "primary", "name"),
        ("primary", "name"),
        ("primary", "location"),
        ("tags", "*"),
        ("syphon", "image"),
        ("diagnostics", "workspaceId"),
        ("primary", "encryption", "userAssignedIdentityId"),
        ("secondary", "networkRuleSet", "ipRules"),
    } <= set(inputs)
    for path in INPUT_PATHS:  # each place that takes an output is in the schema
        if path[-1] == "*" and path[:-1] in INPUT_PATHS:
            continue  # an item of a list that may be an output as a whole: the schema's array item, same place
        assert any(
            len(loc) == len(path) and all(a in ("*", b) for a, b in zip(path, loc, strict=False)) for loc, _ in leaves
        ), path
    assert _schema_property(schema, ("backlogQueueCount",))["plain"] is True
    assert _schema_property(schema, ("primary", "sku"))["plain"] is True


@pytest.mark.parametrize(
    ("loc", "values"),
    [
        (("primary", "sku"), ["Standard", "Premium"]),
        (("secondary", "publicNetworkAccess"), ["Enabled", "Disabled", "SecuredByPerimeter"]),
        (("backlogAuth",), ["entra", "sas"]),
        (("deployerPrincipalType",), ["User", "ServicePrincipal", "Group"]),
    ],
)
def test_settings_with_a_fixed_set_of_values_are_schema_enums(
    schema: dict[str, Any], loc: tuple[str, ...], values: list[str]
) -> None:
    ref = _schema_property(schema, loc)["$ref"]
    enum = schema["types"][ref.removeprefix("#/types/")]
    assert enum["type"] == "string" and [e["value"] for e in enum["enum"]] == values
    assert all(e["description"] for e in enum["enum"])


def test_the_schema_tokens_are_the_tokens_the_components_register(config_dict: dict[str, Any]) -> None:
    """One token per component: what the provider serves is what each registers (the old part tokens live on
    only as aliases)."""
    plan = render_config(config_dict, build_from_stack_config)
    registered = {r.type for r in plan.resources if not r.custom}
    served = json.loads(ComponentProvider(provider.COMPONENTS, "pairedbus", None, "0.1.0").schema or "{}")
    assert registered == set(served["resources"])
    assert registered == {
        contract.TYPE_PAIRED_NAMESPACE,
        contract.TYPE_NAMESPACE_PAIR,
        contract.TYPE_BACKLOG_QUEUES,
        contract.TYPE_MESSAGING_ENTITIES,
        contract.TYPE_SYPHON_HOST,
    }
    assert sorted(contract.LEGACY_PART_TYPES.values()) == [
        "pairedbus:backlog:BacklogQueues",
        "pairedbus:entities:MessagingEntities",
        "pairedbus:namespaces:NamespacePair",
        "pairedbus:syphon:SyphonHost",
    ]


def test_a_construct_call_may_pass_outputs_and_enum_values(config_dict: dict[str, Any]) -> None:
    """What a TypeScript program sends for its own resource group's name (an output) and an enum value goes
    through the provider's input mapping into the resources, no stand-in anywhere."""
    served = provider.served("0.1.0")
    wire = json.loads(json.dumps(config_dict), parse_int=float)
    wire["primary"]["sku"] = "Standard"

    def program() -> None:
        import pulumi
        from pulumi_azure_native import resources

        group = resources.ResourceGroup("ts-rg", resource_group_name="rg-from-ts", location="westeurope")
        inputs = {
            **wire,
            "resourceGroups": {**wire["resourceGroups"], "primary": {"name": group.name, "create": False}},
        }
        served.construct("pairedbus", "pairedbus:index:PairedNamespace", inputs, None)
        pulumi.export("done", True)

    plan = render_program(program, project="pairedbus", stack="test")
    (primary,) = [n for n in plan.of_type(contract.TYPE_NAMESPACE) if n.inputs["tags"][contract.TAG_ROLE] == "primary"]
    assert primary.inputs["resourceGroupName"] == "rg-from-ts"
    assert "unknown-until-deployment" not in json.dumps([r.inputs for r in plan.resources])


def test_the_provider_decodes_only_integral_doubles_of_integer_properties(config_dict: dict[str, Any]) -> None:
    """Another language's `4` is a double on the wire and reaches the pair as 4; 4.5 stays 4.5 and is refused by
    the same one line a stack file gets."""
    served = provider.served("0.1.0")
    wire = json.loads(json.dumps(config_dict), parse_int=float)
    wire["backlogQueueCount"] = 4.5
    with pytest.raises(ComponentInitError) as caught:  # how the SDK reports a component's own error
        render_program(
            lambda: served.construct("pairedbus", "pairedbus:index:PairedNamespace", wire, None),
            project="pairedbus",
            stack="test",
        )
    assert str(caught.value) == "pairedbus: backlogQueueCount: expected a valid integer, got 4.5"


@pytest.mark.slow  # starts the provider process
def test_the_plugin_entry_serves_the_components_over_grpc() -> None:
    """`provider/__main__.py` as the engine starts it (the engine's address as its argument): it prints its port
    and answers GetSchema with the five components."""
    import subprocess
    import sys

    import grpc
    from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

    process = subprocess.Popen(
        [sys.executable, str(REPO / "provider" / "__main__.py"), "127.0.0.1:1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = process.stdout.readline().strip() if process.stdout else ""
        assert port.isdigit(), process.stderr.read() if process.stderr else ""
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            schema = json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=guard(120)).schema)
        assert sorted(schema["resources"]) == sorted(f"pairedbus:index:{c.__name__}" for c in provider.COMPONENTS)
    finally:
        process.terminate()
        process.wait(timeout=guard(30))


# --- Methods: the grants, callable from every language -----------------------------------------------------------


def test_the_grants_are_methods_of_paired_namespace_in_the_served_schema() -> None:
    """Pulumi's component methods: the resource's `methods` map names a function `<token>/<method>` whose `__self__`
    is the component (pulumi/pulumi#7072); the SDKs generate `pair.grantSender(...)` from it."""
    served = json.loads(provider.served("0.1.0").schema or "{}")
    paired = served["resources"]["pairedbus:index:PairedNamespace"]
    assert paired["methods"] == {
        "grantSender": "pairedbus:index:PairedNamespace/grantSender",
        "grantReceiver": "pairedbus:index:PairedNamespace/grantReceiver",
    }
    for token in paired["methods"].values():
        function = served["functions"][token]
        inputs = function["inputs"]
        assert inputs["properties"]["__self__"] == {"$ref": "#/resources/pairedbus:index:PairedNamespace"}
        assert inputs["required"] == ["__self__", "name", "principalId"]
        assert inputs["properties"]["principalType"]["$ref"] == "#/types/pairedbus:index:PrincipalType"
        assert function["outputs"]["properties"]["roleAssignmentIds"]["items"] == {"type": "string"}
        assert function["description"].startswith("Let an application")


def test_another_language_calls_the_grants_on_the_pair_it_constructed(config_dict: dict[str, Any]) -> None:
    """Construct, then call each method with the pair's URN as `__self__`, as the engine does for another
    language's `pair.grantSender(...)`: the role assignments are the pair's children, as from Python."""
    served = provider.served("0.1.0")
    wire = json.loads(json.dumps(config_dict), parse_int=float)
    ids: dict[str, Any] = {}

    def program() -> None:
        result = served.construct("pairedbus", "pairedbus:index:PairedNamespace", wire, None)

        def grant(urn: str) -> None:
            sender = served.call(
                "pairedbus:index:PairedNamespace/grantSender",
                {"__self__": urn, "name": "checkout", "principalId": "11111111-aaaa-bbbb-cccc-000000000001"},
            )
            receiver = served.call(
                "pairedbus:index:PairedNamespace/grantReceiver",
                {"__self__": urn, "name": "fulfilment", "principalId": "p2", "principalType": "User"},
            )
            ids["sender"] = sender.outputs["roleAssignmentIds"]
            ids["receiver"] = receiver.outputs["roleAssignmentIds"]

        result.urn.apply(grant)

    plan = render_program(program, project="pairedbus", stack="test")
    grants = {r.name: r for r in plan.of_type("azure-native:authorization:RoleAssignment")}
    assert {"pairedbus-checkout-send-primary", "pairedbus-checkout-send-secondary"} <= set(grants)
    assert grants["pairedbus-fulfilment-receive-primary"].inputs["principalType"] == "User"
    assert grants["pairedbus-checkout-send-primary"].inputs["principalType"] == "ServicePrincipal"
    assert grants["pairedbus-checkout-send-primary"].parent.endswith("PairedNamespace::pairedbus")
    assert isinstance(ids["sender"], pulumi.Output) and isinstance(ids["receiver"], pulumi.Output)


def test_a_call_on_a_pair_this_provider_did_not_build_is_one_line() -> None:
    served = provider.served("0.1.0")
    urn = "urn:pulumi:test::pairedbus::pairedbus:index:PairedNamespace::elsewhere"
    with pytest.raises(ValueError, match=r"grantSender: __self__: expected a PairedNamespace built in this deployment"):
        served.call("pairedbus:index:PairedNamespace/grantSender", {"__self__": urn, "name": "n", "principalId": "p"})
