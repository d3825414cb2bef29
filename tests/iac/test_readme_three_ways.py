"""README, "Three ways in": the Python example renders, and the TypeScript and YAML examples use only names of
the package schema Pulumi's analyzer infers (and describe a pair the config model accepts)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema

from pairedbus import contract
from pairedbus.iac import provider
from pairedbus.iac.config import parse_stack_config
from pairedbus.iac.render.program import render_program

README = Path(__file__).resolve().parents[2] / "README.md"
TOKEN = "pairedbus:index:PairedNamespace"


def _section() -> str:
    text = README.read_text()
    return text[text.index("## Three ways in") : text.index("## Stack config reference")]


def _block(language: str) -> str:
    (block,) = re.findall(rf"```{language}\n(.*?)```", _section(), flags=re.DOTALL)
    return block


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = Analyzer("pairedbus").analyze(provider.COMPONENTS)
    spec = generate_schema("pairedbus", "0.1.0", None, result["component_definitions"], result["type_definitions"], [])
    return json.loads(json.dumps(spec.to_json()))


def _check_against_schema(schema: dict[str, Any], value: Any, properties: dict[str, Any], path: str) -> None:
    """Every key of `value` is a property of the schema at that place, recursively."""
    for key, item in value.items():
        assert key in properties, f"{path}.{key} is not in the schema"
        prop = properties[key]
        ref = prop.get("$ref") or prop.get("items", {}).get("$ref")
        if ref and ref.startswith("#/types/"):
            nested = schema["types"][ref.removeprefix("#/types/")]["properties"]
            for element in item if isinstance(item, list) else [item]:
                _check_against_schema(schema, element, nested, f"{path}.{key}")


def test_the_python_example_renders_two_pairs_protected_with_an_output_resource_group() -> None:
    plan = render_program(lambda: exec(_block("python"), {}), project="orders-platform", stack="dev")
    assert sorted(p.name for p in plan.of_type(contract.TYPE_PAIRED_NAMESPACE)) == ["billing", "orders"]
    assert plan.outputs == {
        "primaryEndpoints": {
            "orders": "https://orders-weu.servicebus.windows.net:443/",
            "billing": "https://billing-weu.servicebus.windows.net:443/",
        }
    }
    namespaces = plan.of_type(contract.TYPE_NAMESPACE)
    assert len(namespaces) == 4 and all(ns.protect for ns in namespaces)
    primaries = [ns for ns in namespaces if ns.inputs["tags"][contract.TAG_ROLE] == "primary"]
    assert {ns.inputs["resourceGroupName"] for ns in primaries} == {"rg-platform-weu"}
    assert all(ns.inputs["tags"]["platform"] == "rg-platform-weu" for ns in namespaces)
    grants = sorted(r.name for r in plan.of_type("azure-native:authorization:RoleAssignment") if "checkout" in r.name)
    assert grants == ["orders-checkout-send-primary", "orders-checkout-send-secondary"]


def test_the_yaml_example_uses_the_schema(schema: dict[str, Any]) -> None:
    program = yaml.safe_load(_block("yaml"))
    (resource,) = program["resources"].values()
    assert resource["type"] == TOKEN
    inputs = schema["resources"][TOKEN]["inputProperties"]
    _check_against_schema(schema, resource["properties"], inputs, "properties")
    assert set(schema["resources"][TOKEN]["requiredInputs"]) <= set(resource["properties"])
    for expression in program["outputs"].values():
        assert expression.removeprefix("${orders.").removesuffix("}") in schema["resources"][TOKEN]["properties"]
    parse_stack_config(resource["properties"])  # what it describes is a valid pair


def test_the_typescript_example_uses_the_schema(schema: dict[str, Any]) -> None:
    code = _block("typescript")
    call = code[code.index("new pairedbus.PairedNamespace(") : code.index("});") + 2]
    literal = call[call.index("{") : call.rindex("}") + 1]
    as_json = re.sub(r"(\w+): ", r'"\1": ', literal)  # TypeScript's bare keys, quoted
    as_json = re.sub(r",\s*([}\]])", r"\1", as_json)  # trailing commas
    args = json.loads(as_json)
    _check_against_schema(schema, args, schema["resources"][TOKEN]["inputProperties"], "args")
    output = re.search(r"paired\.(\w+);", code)
    assert output is not None and output.group(1) in schema["resources"][TOKEN]["properties"]
    parse_stack_config(args)
