"""`policies/` as the Pulumi CLI loads it, and the pack behind the engine's own gRPC servicer."""

from __future__ import annotations

import importlib.util
import runpy
import tomllib
from pathlib import Path

import yaml
from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel
from pulumi_policy.policy import _PolicyAnalyzerServicer
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from pairedbus import contract
from pairedbus.policy import pack

from .fixtures import SECONDARY, backlog_inputs, namespace_inputs, queue_inputs, urn

POLICIES_DIR = Path(__file__).resolve().parents[2] / "policies"


def test_pulumi_policy_yaml_declares_a_python_pack_with_its_own_virtualenv():
    manifest = yaml.safe_load((POLICIES_DIR / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["name"] == "python"
    assert manifest["runtime"]["options"]["virtualenv"] == "venv"


def test_requirements_install_the_policy_sdk_and_this_repository():
    lines = [
        line.strip()
        for line in (POLICIES_DIR / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines == ["-e ..[policy]"]
    extras = tomllib.loads((POLICIES_DIR.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("pulumi-policy") for dep in extras["policy"])


def test_pairedbus_policies_exposes_the_packs_policies():
    spec = importlib.util.spec_from_file_location("pairedbus_policies", POLICIES_DIR / "pairedbus_policies.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.POLICIES is pack.POLICIES


def test_main_only_assembles_the_pack(mocker, monkeypatch):
    monkeypatch.syspath_prepend(str(POLICIES_DIR))
    policy_pack = mocker.patch("pulumi_policy.PolicyPack")  # the real one starts a gRPC server
    runpy.run_path(str(POLICIES_DIR / "__main__.py"), run_name="__main__")
    policy_pack.assert_called_once_with("pairedbus", pack.POLICIES)


def _servicer() -> _PolicyAnalyzerServicer:
    return _PolicyAnalyzerServicer("pairedbus", "0.1.0", pack.POLICIES, EnforcementLevel.ADVISORY)


def _struct(props):
    return json_format.ParseDict(props, proto.AnalyzeRequest().properties)


def test_the_engine_servicer_advertises_every_policy_with_its_level():
    info = _servicer().GetAnalyzerInfo(None, None)
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert levels["premium-entities-partitioned"] == proto.MANDATORY
    assert levels["paired-entities-duplicate-detection"] == proto.MANDATORY
    assert len(levels) == len(pack.POLICIES)


def test_the_engine_servicer_reports_backlog_drift_on_the_dynamic_resource():
    inputs = backlog_inputs(0, lockDuration="PT5M")
    request = proto.AnalyzeRequest(
        type=contract.TYPE_BACKLOG_QUEUE,
        properties=_struct(inputs),
        urn=urn(contract.TYPE_BACKLOG_QUEUE, "backlog-0"),
        name="backlog-0",
    )
    response = _servicer().Analyze(request, None)
    [diagnostic] = response.diagnostics
    assert diagnostic.policyName == "backlog-queue-settings"
    assert diagnostic.enforcementLevel == proto.MANDATORY
    assert "lockDuration" in diagnostic.message


def test_the_engine_servicer_places_entities_with_unknown_namespace_names_by_their_dependencies():
    ns_urn = urn(contract.TYPE_NAMESPACE, "primary")
    queue_urn = urn(contract.TYPE_QUEUE, "queue-orders")
    deps = proto.AnalyzerPropertyDependencies(urns=[ns_urn])
    secondary_urn = urn(contract.TYPE_NAMESPACE, "secondary")
    resources = [
        proto.AnalyzerResource(
            type=contract.TYPE_NAMESPACE, properties=_struct(namespace_inputs()), urn=ns_urn, name="primary"
        ),
        proto.AnalyzerResource(
            type=contract.TYPE_NAMESPACE,
            properties=_struct(namespace_inputs(SECONDARY, "northeurope")),
            urn=secondary_urn,
            name="secondary",
        ),
        proto.AnalyzerResource(
            type=contract.TYPE_BACKLOG_QUEUE,
            properties=_struct(backlog_inputs(0, secondary=UNKNOWN_STRING_VALUE)),
            urn=urn(contract.TYPE_BACKLOG_QUEUE, "backlog-0"),
            name="backlog-0",
            dependencies=[secondary_urn],
            propertyDependencies={"namespaceName": proto.AnalyzerPropertyDependencies(urns=[secondary_urn])},
        ),
        proto.AnalyzerResource(
            type=contract.TYPE_QUEUE,
            properties=_struct(queue_inputs(namespaceName=UNKNOWN_STRING_VALUE, enablePartitioning=False)),
            urn=queue_urn,
            name="queue-orders",
            dependencies=[ns_urn],
            propertyDependencies={"namespaceName": deps},
        ),
    ]
    response = _servicer().AnalyzeStack(proto.AnalyzeStackRequest(resources=resources), None)
    by_policy = {d.policyName: d for d in response.diagnostics}
    assert by_policy["premium-entities-partitioned"].urn == queue_urn
    assert by_policy["premium-entities-partitioned"].enforcementLevel == proto.MANDATORY
    # Nothing else failed, and no policy gave up on the unknown value.
    assert set(by_policy) == {"premium-entities-partitioned"}
