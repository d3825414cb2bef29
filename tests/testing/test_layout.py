"""The fake's modules import one way (issue 12, item 5): no cycles, TYPE_CHECKING and
function-level imports included, and the client modules never reach back to patching. The graph
spans the model (`pairedbus.servicebus`, keyed `servicebus.<module>`) and its in-process front-end
(`pairedbus.testing`, keyed by bare module name)."""

from __future__ import annotations

import ast
from pathlib import Path

import pairedbus.servicebus
import pairedbus.testing
from tests.parsing import parse_source

PACKAGE = Path(pairedbus.testing.__file__).parent
MODEL = Path(pairedbus.servicebus.__file__).parent
PREFIX = "pairedbus.testing."
MODEL_PREFIX = "pairedbus.servicebus."


def _key(module: str) -> str | None:
    if module.startswith(PREFIX):
        return module.removeprefix(PREFIX)
    if module.startswith(MODEL_PREFIX):
        return "servicebus." + module.removeprefix(MODEL_PREFIX)
    return None


def imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    sources = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    sources |= {f"servicebus.{p.stem}": p for p in MODEL.glob("*.py") if p.stem != "__init__"}
    for name, path in sources.items():
        tree = parse_source(path.read_text())
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if (key := _key(node.module)) is not None:
                    found.add(key)
                elif node.module in ("pairedbus.testing", "pairedbus.servicebus"):
                    prefix = "" if node.module == "pairedbus.testing" else "servicebus."
                    found.update(prefix + a.name for a in node.names if prefix + a.name in sources)
            elif isinstance(node, ast.Import):
                found.update(key for a in node.names if (key := _key(a.name)) is not None)
        graph[name] = (found & set(sources)) - {name}
    return graph


def test_no_import_cycles_in_the_fake() -> None:
    graph = imports()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle.extend([*path, node, nxt])
                return True
            if nxt not in state and visit(nxt, [*path, node]):
                return True
        state[node] = 2
        return False

    for module in sorted(graph):
        if module not in state and visit(module, []):
            break
    assert not cycle, " -> ".join(cycle)


def test_the_layers_point_down() -> None:
    graph = imports()
    # What the world and the message store may not know about: clients, patching, ARM.
    assert not graph["servicebus.store"] & {"servicebus.entities", "servicebus.world"}
    assert not graph["servicebus.entities"] & {"servicebus.world"}
    for client_module in ("handler", "sender", "receiver", "servicebus_session", "client", "admin", "arm"):
        assert "patching" not in graph[client_module], client_module


def test_errors_and_the_session_model_sit_below_everything_else() -> None:
    graph = imports()
    assert graph["servicebus.errors"] == set()
    assert graph["servicebus.answers"] == {"servicebus.errors"}
    # the front-end's errors are made from the model's, with the condition the service answers
    assert graph["errors"] == {"servicebus.errors", "servicebus.answers"}
    assert graph["servicebus.sessions"] <= {"servicebus.content", "servicebus.errors"}
    assert "servicebus.sessions" in graph["servicebus.store"]


def test_the_arm_plane_is_urls_then_responses_then_models() -> None:
    graph = imports()
    assert not graph["arm_responses"] & {"arm", "arm_routes", "admin", "client", "patching"}
    assert not graph["arm_routes"] & {"arm", "admin", "client", "patching"}
    assert "arm_routes" in graph["arm"]


def test_no_module_of_the_fake_imports_another_ones_private_name() -> None:
    found = []
    for path in sorted([*PACKAGE.glob("*.py"), *MODEL.glob("*.py")]):
        for node in ast.walk(parse_source(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pairedbus"):
                found += [f"{path.stem}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []


def test_the_sync_twins_share_a_core_with_the_aio_classes_instead_of_subclassing_them() -> None:
    from pairedbus.testing import aio_client, sync_client

    for name in ("ServiceBusClient", "ServiceBusSender", "ServiceBusReceiver", "ServiceBusSession"):
        aio, sync = getattr(aio_client, name), getattr(sync_client, name)
        assert aio not in sync.__mro__, name
        shared = [k for k in sync.__mro__ if k in aio.__mro__ and k.__module__.startswith(PREFIX)]
        assert shared, f"{name}: no shared core"
    assert not [p.name for p in PACKAGE.glob("*.py") if "type: ignore[override]" in p.read_text()]
