"""A plan (engine URNs) as `pulumi stack export` would write the deployed stack: Pulumi's deployment format v3.

Follows pulumi/pulumi at 1b5949891b3cefcb9974752b24a5ecef0acc86c8, `sdk/go/common/apitype/core.go`
(`UntypedDeployment`, `DeploymentV3`, `ManifestV1`, `ResourceV3`: `omitempty` fields left out when empty) and
`pkg/resource/deploy/manifest.go` (`magic` = sha256 of the engine version). What the engine adds that the
program never registers is here too: the root `pulumi:pulumi:Stack` resource holding the stack outputs, the
default providers (`default_<version>` for azure-native, `default` for dynamic resources), a provider
reference `<provider urn>::<provider id>` on every custom resource, and the serialised dynamic provider in a
dynamic resource's `__provider` input. Ids and outputs are what the providers return, as `PlanMocks` answers.

The fixtures (tests/iac/fixtures/state/<stack>.json) were written from the plans of 6fef7c5
(`python -m tests.iac.render.state_export current`, reading tests/iac/fixtures/plans/current-<stack>.json then).
They are what existing stacks hold: keep them when the program changes (renames with aliases must still be
no change against them); `python -m tests.iac.render.state_export PREFIX OUT_DIR` converts other plans.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

ENGINE_VERSION = "v3.272.0"
AZURE_NATIVE_VERSION = "3.29.0"
TIME = "2026-11-23T00:00:00Z"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DYNAMIC_PREFIX = "pulumi-python:dynamic"


def _provider(plan: dict[str, Any], package: str, name: str) -> dict[str, Any]:
    urn = f"urn:pulumi:{plan['stack']}::{plan['project']}::pulumi:providers:{package}::{name}"
    inputs = {"version": AZURE_NATIVE_VERSION} if package == "azure-native" else {}
    return {
        "urn": urn,
        "custom": True,
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, urn)),
        "type": f"pulumi:providers:{package}",
        "inputs": inputs,
        "outputs": inputs,
        "created": TIME,
        "modified": TIME,
    }


def deployment_from_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """`plan` (engine URNs, as tests/iac/fixtures/plans/current-*.json) as a version-3 state export."""
    import pulumi

    from pairedbus.iac.render.mocks import PlanMocks

    stack_urn = f"urn:pulumi:{plan['stack']}::{plan['project']}::pulumi:pulumi:Stack::{plan['project']}-{plan['stack']}"
    azure = _provider(plan, "azure-native", "default_" + AZURE_NATIVE_VERSION.replace(".", "_"))
    dynamic = _provider(plan, "pulumi-python", "default")
    mocks = PlanMocks()
    resources: list[dict[str, Any]] = [
        {"urn": stack_urn, "custom": False, "type": "pulumi:pulumi:Stack", "outputs": plan["outputs"]},
        azure,
        dynamic,
    ]
    for planned in _parents_first(plan["resources"]):
        inputs = dict(planned["inputs"])
        entry: dict[str, Any] = {"urn": planned["urn"], "custom": planned["custom"]}
        if planned["custom"]:
            args = pulumi.runtime.MockResourceArgs(planned["type"], planned["name"], inputs, "", "", True)
            resource_id, outputs = mocks.new_resource(args)
            provider = dynamic if planned["type"].startswith(DYNAMIC_PREFIX) else azure
            if provider is dynamic:
                # The dynamic provider travels pickled with each resource (pulumi/dynamic/dynamic.py).
                inputs["__provider"] = outputs["__provider"] = (
                    "gASVLQAAAAAAAACMGXBhaXJlZGJ1cy5pYWMuYmFja2xvZ19wcm92aWRlcpQu"
                )
            entry["id"] = resource_id
        entry["type"] = planned["type"]
        if inputs:
            entry["inputs"] = inputs
        if planned["custom"] and outputs:
            entry["outputs"] = outputs
        entry["parent"] = planned["parent"] or stack_urn
        if planned["protect"]:
            entry["protect"] = True
        if planned["dependencies"]:
            entry["dependencies"] = planned["dependencies"]
        if planned["custom"]:
            entry["provider"] = f"{provider['urn']}::{provider['id']}"
        if planned["property_dependencies"]:
            entry["propertyDependencies"] = planned["property_dependencies"]
        if planned["retain_on_delete"]:
            entry["retainOnDelete"] = True
        entry["created"] = entry["modified"] = TIME
        resources.append(entry)
    return {
        "version": 3,
        "deployment": {
            "manifest": {
                "time": TIME,
                "magic": hashlib.sha256(ENGINE_VERSION.encode()).hexdigest(),
                "version": ENGINE_VERSION,
            },
            "resources": resources,
        },
    }


def _parents_first(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The engine writes a parent before its children (a snapshot is in dependency order).
    by_urn = {r["urn"]: r for r in resources}

    def depth(resource: dict[str, Any]) -> int:
        return 0 if resource["parent"] not in by_urn else 1 + depth(by_urn[resource["parent"]])

    return sorted(resources, key=lambda r: (depth(r), r["urn"]))


def main(argv: list[str]) -> None:
    prefix, out = argv[0], Path(argv[1])
    for stack in ("dev", "staging", "prod"):
        plan = json.loads((FIXTURES / "plans" / f"{prefix}-{stack}.json").read_text())
        target = out / f"{stack}.json"
        target.write_text(json.dumps(deployment_from_plan(plan), indent=1, sort_keys=False) + "\n")
        print(f"wrote {target}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
