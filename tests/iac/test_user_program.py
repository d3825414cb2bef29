"""A platform team's own program, as a new user runs it: the wheel installed into a fresh venv, a Pulumi program in
a directory of its own (nothing of this checkout on the path), run under Pulumi's mock runtime with a counter on the
URNs the monitor receives. Two pairs, an output resource-group name (the team's own ResourceGroup), an output tag
value, an output namespace name, `protect=True` and a current region: no URN twice, no stand-in in any registered
input, every namespace, resource group, queue and topic protected.

The wheel is built as tests/test_packaging.py builds it (a copy of the sources, the venv's setuptools, no build
isolation, offline) and installed with `--no-deps`; a .pth file in the new venv points at the shared venv's
site-packages so that pulumi and azure-native resolve offline (that directory's own .pth files, among them the
checkout's editable install, are not processed: it is not a site directory of the new venv).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.load import guard

REPO = Path(__file__).resolve().parents[2]
#: A region ARM accepts that the project's first region list (Azure Migrate's enum) refused.
REGION = "westus3"
SECONDARY_REGION = "eastus2"

pytestmark = pytest.mark.slow

PROGRAM = """
import pulumi
from pulumi_azure_native import resources

from pairedbus.iac import PairedNamespace

REGION, SECONDARY_REGION = __REGIONS__

# The team's own resource group: the pairs' primaries live in it, their names and a tag come from its outputs.
team = resources.ResourceGroup(
    "platform", resource_group_name="rg-platform", location=REGION, opts=pulumi.ResourceOptions(protect=True)
)
pairs = {}
for name in ("orders", "billing"):
    pairs[name] = PairedNamespace(
        name,
        {
            "resource_groups": {
                "primary": {"name": team.name, "create": False},
                "secondary": {"name": f"rg-{name}-dr"},
            },
            "primary": {"name": team.name.apply(lambda rg, n=name: f"{n}-{rg.removeprefix('rg-')}"), "location": REGION},
            "secondary": {"name": f"{name}-platform-dr", "location": SECONDARY_REGION},
            "backlog_queue_count": 3,
            "queues": [{"name": "orders"}, {"name": "payments", "requires_session": True}],
            "topics": [{"name": "events", "subscriptions": [{"name": "audit"}]}],
            "syphon": {"image": "ghcr.io/contoso/pairedbus-syphon:1.0.0"},
            "tags": {"team": name, "owner": team.name},
        },
        pulumi.ResourceOptions(protect=True),
    )
    pairs[name].grant_sender("checkout", "00000000-1111-2222-3333-444444444444")
pulumi.export("endpoints", [p.primary_endpoint for p in pairs.values()])
"""

HARNESS = '''
import asyncio, json, sys
from collections import Counter

import pulumi
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

import pairedbus


class Mocks(pulumi.runtime.Mocks):
    """A user's own mocks: echo the inputs; ARM's identity map for a list of identities; ids from names."""

    def new_resource(self, args):
        state = dict(args.inputs)
        name = next((v for k, v in state.items() if k.endswith("Name") and isinstance(v, str)), args.name)
        identity = state.get("identity")
        if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
            ids = identity["userAssignedIdentities"]
            state["identity"] = {**identity, "userAssignedIdentities": {i: {"principalId": "p", "clientId": "c"} for i in ids}}
        state.setdefault("name", name)
        return f"/subscriptions/00000000-0000-0000-0000-000000000000/x/{args.typ}/{name}", state

    def call(self, args):
        return {"subscriptionId": "00000000-0000-0000-0000-000000000000", "objectId": "o", "tenantId": "t", "clientId": "c"}


class CountingMonitor(mocks.MockMonitor):
    """Counts every URN the engine would receive, and keeps what it was registered with."""

    def __init__(self, mocks_):
        super().__init__(mocks_)
        self.urns = Counter()
        self.registered = []

    def RegisterResource(self, request):
        urn = self.make_urn(request.parent, request.type, request.name)
        self.urns[urn] += 1
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        self.registered.append({"urn": urn, "type": request.type, "custom": request.custom,
                                "protect": request.protect, "inputs": inputs})
        return super().RegisterResource(request)


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
monitor = CountingMonitor(Mocks())
pulumi.runtime.set_mocks(monitor.mocks, project="platform", stack="dev", preview=False, monitor=monitor)
_sync_await(run_pulumi_func(lambda: __import__("program")))
print(json.dumps({
    "pairedbus": pairedbus.__file__,
    "duplicates": sorted(u for u, n in monitor.urns.items() if n > 1),
    "resources": monitor.registered,
}, default=repr))
'''


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=guard(600))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout


@pytest.fixture(scope="module")
def user_run(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:

    venv = tmp_path_factory.mktemp("venv")
    _run(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=venv)
    python = venv / "bin" / "python"
    site = Path(_run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=venv).strip())
    (site / "shared-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel), cwd=venv)

    project = tmp_path_factory.mktemp("platform-program")
    (project / "program.py").write_text(PROGRAM.replace("__REGIONS__", repr((REGION, SECONDARY_REGION))))
    (project / "harness.py").write_text(HARNESS)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(project)
    out = _run(str(python), "harness.py", cwd=project, env=env)
    return {**json.loads(out.strip().splitlines()[-1]), "site": str(site)}


def test_the_program_uses_the_installed_wheel(user_run: dict) -> None:
    assert Path(user_run["pairedbus"]).resolve().is_relative_to(Path(user_run["site"]).resolve())
    assert not Path(user_run["pairedbus"]).resolve().is_relative_to(REPO)
    assert not Path(user_run["pairedbus"]).resolve().is_relative_to(Path("/work/main"))


def test_two_pairs_register_no_urn_twice(user_run: dict) -> None:
    assert user_run["duplicates"] == []
    namespaces = [r for r in user_run["resources"] if r["type"] == "azure-native:servicebus:Namespace"]
    assert sorted(r["inputs"]["namespaceName"] for r in namespaces) == [
        "billing-platform",
        "billing-platform-dr",
        "orders-platform",
        "orders-platform-dr",
    ]


def test_no_registered_input_holds_a_stand_in(user_run: dict) -> None:
    text = json.dumps([r["inputs"] for r in user_run["resources"]])
    assert "unknown-until-deployment" not in text and "Output" not in text and "<output" not in text
    groups = {
        r["inputs"]["resourceGroupName"]
        for r in user_run["resources"]
        if r["type"].startswith("azure-native:servicebus:")
    }
    assert groups == {"rg-platform", "rg-orders-dr", "rg-billing-dr"}
    owners = {
        r["inputs"]["tags"]["owner"] for r in user_run["resources"] if r["type"] == "azure-native:servicebus:Namespace"
    }
    assert owners == {"rg-platform"}
    locations = {
        r["inputs"]["location"] for r in user_run["resources"] if r["type"] == "azure-native:servicebus:Namespace"
    }
    assert locations == {REGION, SECONDARY_REGION}


def test_every_namespace_resource_group_queue_and_topic_is_protected(user_run: dict) -> None:
    kinds = {
        "azure-native:servicebus:Namespace": 4,
        "azure-native:resources:ResourceGroup": 3,  # the team's own and each pair's secondary group
        "azure-native:servicebus:Queue": 4,
        "azure-native:servicebus:Topic": 2,
        "pulumi-python:dynamic/pairedbus:BacklogQueue": 6,
    }
    for kind, count in kinds.items():
        found = [r for r in user_run["resources"] if r["type"] == kind]
        assert len(found) == count, kind
        assert all(r["protect"] for r in found), [r["urn"] for r in found if not r["protect"]]
