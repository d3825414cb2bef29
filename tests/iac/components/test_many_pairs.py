"""Components are used many times, in programs we never see: every name derives from the component's name, so
any number of PairedNamespaces, and of each part on its own, live in one program without a duplicate URN. Also
the resource options a program sets on a pair (Pulumi's inheritance rules, README "Resource options"), the grants
for the applications that use a pair, and the backlog count the secondary records."""

from __future__ import annotations

import asyncio
import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_azure_native as azure_native
import pytest
from pulumi.runtime import settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await
from pulumi_azure_native import resources

from pairedbus import contract
from pairedbus.iac import PairedNamespace
from pairedbus.iac.components.backlog_queues import BacklogQueues
from pairedbus.iac.components.messaging_entities import MessagingEntities
from pairedbus.iac.components.namespace_pair import NamespacePair
from pairedbus.iac.components.syphon_host import SyphonHost
from pairedbus.iac.config import StackConfigError
from pairedbus.iac.render.mocks import PlanMocks
from pairedbus.iac.render.program import RecordingMonitor, _without_dead_work
from tests.iac.components.test_paired_namespace import ARGS

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"


class RequestMonitor(RecordingMonitor):
    """Keeps every RegisterResource request as the engine would receive it, duplicates included."""

    def __init__(self) -> None:
        super().__init__(PlanMocks())
        self.requests: list[tuple[str, Any]] = []

    def RegisterResource(self, request: Any) -> Any:
        self.requests.append((self.make_urn(request.parent, request.type, request.name), request))
        return super().RegisterResource(request)


def run(program: Callable[[], None]) -> RequestMonitor:
    monitor = RequestMonitor()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    settings.reset_options(project="platform", stack="dev")
    pulumi.runtime.set_all_config({}, [])
    pulumi.runtime.set_mocks(monitor.recorder, project="platform", stack="dev", preview=False, monitor=monitor)
    try:
        with _without_dead_work():
            _sync_await(run_pulumi_func(program))
    finally:
        settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
    return monitor


def _args(team: str, **changes: Any) -> dict[str, Any]:
    args = copy.deepcopy(ARGS)
    args["resource_groups"] = {"primary": {"name": f"rg-{team}-p"}, "secondary": {"name": f"rg-{team}-s"}}
    args["primary"] = {**args["primary"], "name": f"{team}-primary"}
    args["secondary"] = {**args["secondary"], "name": f"{team}-secondary"}
    args.update(changes)
    return args


def _duplicates(monitor: RequestMonitor) -> list[str]:
    return sorted(urn for urn, n in Counter(urn for urn, _ in monitor.requests).items() if n > 1)


def test_two_pairs_in_one_program_register_no_urn_twice() -> None:
    monitor = run(lambda: [PairedNamespace(team, _args(team)) for team in ("orders", "billing")])
    assert _duplicates(monitor) == []
    names = [
        r.name for _, r in monitor.requests if r.type not in (contract.TYPE_PAIRED_NAMESPACE, "pulumi:pulumi:Stack")
    ]
    assert len(names) > 40 and all(n.startswith(("orders-", "billing-")) for n in names)


def test_each_part_twice_on_its_own_registers_no_urn_twice() -> None:
    def program() -> None:
        for team in ("orders", "billing"):
            pair = NamespacePair(
                f"{team}-pair",
                {
                    "primary": {"name": f"{team}-weu", "location": "westeurope"},
                    "secondary": {"name": f"{team}-neu", "location": "northeurope"},
                    "primary_resource_group": {"name": f"rg-{team}-weu"},
                    "secondary_resource_group": {"name": f"rg-{team}-neu"},
                },
            )
            BacklogQueues(
                f"{team}-backlog",
                {
                    "primary_namespace_name": f"{team}-weu",
                    "backlog_queue_count": 2,
                    "namespace_name": pair.secondary.name,
                    "namespace_id": pair.secondary.id,
                },
            )
            MessagingEntities(
                f"{team}-entities",
                {
                    "namespace_name": pair.primary.name,
                    "resource_group_name": pair.primary_resource_group_name,
                    "queues": [{"name": "orders"}],
                    "topics": [{"name": "events", "subscriptions": [{"name": "audit"}]}],
                },
            )
            SyphonHost(
                f"{team}-syphon",
                {
                    "syphon": {"image": "ghcr.io/contoso/syphon:1.0"},
                    "location": "westeurope",
                    "resource_group_name": pair.primary_resource_group_name,
                    "primary_namespace_id": pair.primary.id,
                    "secondary_namespace_id": pair.secondary.id,
                    "primary_fqdn": f"{team}-weu.servicebus.windows.net",
                    "secondary_fqdn": f"{team}-neu.servicebus.windows.net",
                },
            )

    monitor = run(program)
    assert _duplicates(monitor) == []
    assert len({r.type for _, r in monitor.requests}) >= 12


# --- Resource options ----------------------------------------------------------------------------------


def _custom(monitor: RequestMonitor) -> list[Any]:
    return [r for _, r in monitor.requests if r.custom and not r.type.startswith("pulumi:providers:")]


def test_protect_on_a_standard_pair_reaches_every_resource() -> None:
    """A Standard pair holding data can be protected: `protect=True` on the component, nothing else."""
    monitor = run(lambda: PairedNamespace("orders", _args("orders"), pulumi.ResourceOptions(protect=True)))
    custom = _custom(monitor)
    assert {r.type for r in custom} >= {
        contract.TYPE_NAMESPACE,
        "azure-native:resources:ResourceGroup",
        contract.TYPE_QUEUE,
        contract.TYPE_TOPIC,
        contract.TYPE_SUBSCRIPTION,
        contract.TYPE_BACKLOG_QUEUE,
        ROLE_ASSIGNMENT,
        "azure-native:app:ContainerApp",
    }
    assert [r.name for r in custom if not r.protect] == []
    # Backlog queues: protected as asked, and still retained (README, "Resource options").
    assert all(r.retainOnDelete for r in custom if r.type == contract.TYPE_BACKLOG_QUEUE)


def test_production_only_adds_protection_and_leaves_backlog_queues_unprotected() -> None:
    monitor = run(lambda: PairedNamespace("orders", _args("orders", production=False)))
    assert [r.name for r in _custom(monitor) if r.protect] == []
    # A production pair's (private, Premium) protection is pinned in test_private_network.py; here: with the
    # flag off, nothing is protected, and nothing passes an explicit protect=False that would beat the caller's.


def test_retain_on_delete_deleted_with_and_timeouts_reach_every_resource() -> None:
    def program() -> None:
        anchor = resources.ResourceGroup("anchor", resource_group_name="rg-anchor", location="westeurope")
        PairedNamespace(
            "orders",
            _args("orders"),
            pulumi.ResourceOptions(
                retain_on_delete=True, deleted_with=anchor, custom_timeouts=pulumi.CustomTimeouts(create="45m")
            ),
        )

    monitor = run(program)
    custom = [r for r in _custom(monitor) if r.name != "anchor"]
    (anchor,) = [urn for urn, r in monitor.requests if r.name == "anchor"]
    assert custom and all(r.retainOnDelete for r in custom)
    assert all(r.deletedWith == anchor for r in custom)
    assert all(r.customTimeouts.create == "45m" for r in custom)


def test_a_provider_on_the_pair_is_every_azure_resources_provider() -> None:
    def program() -> None:
        eu = azure_native.Provider("eu", location="westeurope")
        PairedNamespace("orders", _args("orders"), pulumi.ResourceOptions(providers=[eu]))

    monitor = run(program)
    (provider_urn,) = [urn for urn, r in monitor.requests if r.type == "pulumi:providers:azure-native"]
    azure = [r for r in _custom(monitor) if r.type.startswith("azure-native:")]
    assert azure and all(r.provider.startswith(provider_urn + "::") for r in azure)


def test_ignore_changes_is_not_handed_down() -> None:
    """Pulumi does not inherit ignore_changes (its paths mean something for one resource type); neither do the
    components: a transform on the component is the way (README, "Resource options")."""
    monitor = run(lambda: PairedNamespace("orders", _args("orders"), pulumi.ResourceOptions(ignore_changes=["tags"])))
    assert all(list(r.ignoreChanges) == [] for r in _custom(monitor))


# --- Grants and the recorded backlog count -------------------------------------------------------------


def test_grants_for_a_sender_and_a_receiver() -> None:
    def program() -> None:
        paired = PairedNamespace("orders", _args("orders"))
        paired.grant_sender("checkout", "11111111-aaaa-bbbb-cccc-000000000001")
        paired.grant_receiver("fulfilment", "11111111-aaaa-bbbb-cccc-000000000002", principal_type="User")

    monitor = run(program)
    grants = {r.name: r for r in monitor.planned if r.type == ROLE_ASSIGNMENT and "-syphon-" not in r.name}
    sender = contract.ROLE_SERVICE_BUS_DATA_SENDER
    receiver = contract.ROLE_SERVICE_BUS_DATA_RECEIVER
    found = {
        name: (
            g.inputs["roleDefinitionId"].rsplit("/", 1)[-1],
            g.inputs["scope"].rsplit("/", 1)[-1],
            g.inputs["principalType"],
        )
        for name, g in grants.items()
        if name.startswith(("orders-checkout", "orders-fulfilment"))
    }
    assert found == {
        "orders-checkout-send-primary": (sender, "orders-primary", "ServicePrincipal"),
        "orders-checkout-send-secondary": (sender, "orders-secondary", "ServicePrincipal"),
        "orders-fulfilment-receive-primary": (receiver, "orders-primary", "User"),
    }
    assert all(grants[n].parent.endswith("::orders") for n in found)


@pytest.mark.parametrize("count", [1, 7])
def test_the_secondary_records_its_backlog_queue_count(count: int) -> None:
    monitor = run(lambda: PairedNamespace("orders", _args("orders", backlog_queue_count=count)))
    tags = {
        r.inputs["tags"][contract.TAG_ROLE]: r.inputs["tags"]
        for r in monitor.planned
        if r.type == contract.TYPE_NAMESPACE
    }
    assert tags["secondary"]["pairedbus-backlog-queue-count"] == str(count)
    assert "pairedbus-backlog-queue-count" not in tags["primary"]


# --- What a program with several pairs is told -----------------------------------------------------------


def test_every_error_names_its_pair() -> None:
    """Two pairs, each with a mistake of its own: each line says which pair it is about."""

    def program() -> None:
        PairedNamespace("orders", _args("orders"))
        PairedNamespace("billing", _args("billing", primary={"name": "billing-primary", "location": "westeurop"}))

    with pytest.raises(StackConfigError) as caught:
        run(program)
    assert [p.split(":", 2)[:2] for p in caught.value.problems] == [["billing", " primary.location"]]
    assert "got 'westeurop' (did you mean westeurope?)" in caught.value.problems[0]


def test_two_pairs_with_legacy_urns_are_refused_in_one_line() -> None:
    """Both would alias the names every pair had before 0.2: the engine would list each shared alias (hundreds of
    lines); the second pair is refused before it registers anything."""

    def program() -> None:
        PairedNamespace("orders", _args("orders"), legacy_urns=True)
        PairedNamespace("billing", _args("billing"), legacy_urns=True)

    with pytest.raises(StackConfigError) as caught:
        run(program)
    assert caught.value.problems == [
        "billing: legacy_urns: expected on one pair of a program only, 'orders' has it already (the names before "
        "pairedbus 0.2 were the same for every pair: two pairs would claim the same resources)"
    ]


def test_legacy_urns_is_for_one_pair_of_each_program_not_of_the_process() -> None:
    for _ in range(2):  # two programs, one after the other in one process: each has its one legacy pair
        monitor = run(lambda: PairedNamespace("orders", _args("orders"), legacy_urns=True))
        assert any(r.name == "orders-pair" for r in monitor.planned)


@pytest.mark.parametrize(
    ("name", "resource_type"),
    [
        ("Orders", "Microsoft.App/containerApps"),  # upper case: a container app's name is lower case
        ("orders/eu", "Microsoft.App/containerApps"),  # '/' cannot be in any ARM name
        ("orders-prod-12", "Microsoft.App/containerApps"),  # 14 + '-syphon-app' + 8 random digits > 32
        ("orders-", "Microsoft.App/containerApps"),  # 'orders--syphon-app...': no '--'
        ("1orders", "Microsoft.App/containerApps"),  # a container app's name starts with a letter
    ],
)
def test_a_pair_name_azure_would_refuse_is_refused_before_anything_registers(name: str, resource_type: str) -> None:
    monitor = RequestMonitor()
    with pytest.raises(StackConfigError) as caught:
        with _without_dead_work():
            run_program_into(monitor, lambda: PairedNamespace(name, _args("orders")))
    (problem,) = caught.value.problems
    assert problem.startswith(f"{name}: name: expected a pair name Azure accepts in every name made from it: ")
    assert resource_type in problem and "at most 13 characters" in problem
    assert [urn for urn, _ in monitor.requests if not urn.endswith("::platform-dev")] == []  # the stack only


@pytest.mark.parametrize("name", ["orders", "orders-prod-1", "pairedbus", "a1"])
def test_a_pair_name_azure_accepts_everywhere_passes(name: str) -> None:
    monitor = run(lambda: PairedNamespace(name, _args("orders")))
    (app,) = [r for r in monitor.planned if r.type == "azure-native:app:ContainerApp"]
    assert app.name == f"{name}-syphon-app"


def run_program_into(monitor: RequestMonitor, program: Callable[[], None]) -> None:
    """`run` with a monitor of the caller's, to look at it after the program failed."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    settings.reset_options(project="platform", stack="dev")
    pulumi.runtime.set_all_config({}, [])
    pulumi.runtime.set_mocks(monitor.recorder, project="platform", stack="dev", preview=False, monitor=monitor)
    try:
        _sync_await(run_pulumi_func(program))
    finally:
        settings.reset_options()
        asyncio.set_event_loop(None)
        loop.close()
