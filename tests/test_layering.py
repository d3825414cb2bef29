"""The package's layering, read from its source by AST: the syphon library never imports its host
(`service/`), the policy pack never imports the infrastructure (`iac/`), what the sender and the syphon
share (`pairing/`) imports neither of them, the plan as data (`plans/`) imports neither Pulumi nor what
renders, gates or prints it, and private names of Pulumi
or azure-servicebus are read only in `sdk.py`, the one module checked against each SDK release. An import inside a
function (lazy: for start-up time, or to load an optional part on use) points down `LAYERS` too, and never closes
an import cycle the module-level imports would refuse; the few that do not are listed with their reason."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import pairedbus
from tests.parsing import parse_source

PACKAGE = Path(pairedbus.__file__).parent
SDK_MODULE = PACKAGE / "sdk.py"
#: (importer, imported): no module under the first may import one under the second.
FORBIDDEN = (
    ("pairedbus.syphon", "pairedbus.service"),
    ("pairedbus.policy", "pairedbus.iac"),
    ("pairedbus.pairing", "pairedbus.sender"),
    ("pairedbus.pairing", "pairedbus.syphon"),
    # the Service Bus model knows neither front-end, and the two front-ends know only the model
    ("pairedbus.servicebus", "pairedbus.emulator"),
    ("pairedbus.servicebus", "pairedbus.testing"),
    ("pairedbus.testing", "pairedbus.emulator"),
    ("pairedbus.emulator", "pairedbus.testing"),
    ("pairedbus.sender", "pairedbus.emulator"),
    ("pairedbus.syphon", "pairedbus.emulator"),
    ("pairedbus.pairing", "pairedbus.emulator"),
    # the plan as data sits below its render (iac.render), its gate (policy) and the use case (commands.plan)
    ("pairedbus.plans", "pairedbus.iac"),
    ("pairedbus.plans", "pairedbus.policy"),
    ("pairedbus.plans", "pairedbus.commands"),
    ("pairedbus.plans", "pulumi"),
    ("pairedbus.plans", "pulumi_policy"),
    ("pairedbus.iac", "pairedbus.commands"),
    ("pairedbus.policy", "pairedbus.commands"),
)
#: (importer, imported) pairs FORBIDDEN names that stay until their issue is done (none left: the Atom
#: admin plane calls the model's admin operations since issue 33).
KNOWN_VIOLATIONS: frozenset[tuple[str, str]] = frozenset()
#: The package's rooms from the top down (the README's layout, as the project's architecture notes order them): an
#: import points to a room of a lower group, or stays in its own room. Rooms of one group are peers and import none
#: of each other. errors sits above sdk: `errors.is_retryable` asks the SDK's flag through it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("pairedbus.__main__", "pairedbus.cli"),
    ("pairedbus.commands",),
    ("pairedbus.drill",),
    ("pairedbus.pipeline", "pairedbus.exports"),
    ("pairedbus.iac",),
    ("pairedbus.policy",),
    ("pairedbus.plans",),
    ("pairedbus.rules",),
    ("pairedbus.service",),
    ("pairedbus.emulator",),
    ("pairedbus.testing",),
    ("pairedbus.servicebus",),
    ("pairedbus.sender", "pairedbus.syphon"),
    ("pairedbus.pairing",),
    ("pairedbus.errors",),
    ("pairedbus.sdk", "pairedbus.limits"),
    ("pairedbus.contract",),
    ("pairedbus.durations",),
)
#: (importer, imported) lazy imports that point up or sideways, or close a cycle, and why they stay.
KNOWN_LAZY = {
    ("pairedbus.sender.client", "pairedbus.syphon"): "the client hosts the embedded syphon (paired-namespaces.md: "
    '"at least one running process must host the syphon"), imported only when it runs one',
    ("pairedbus.testing.patching", "pairedbus.testing"): "the fake's patch reaches the package's clients through "
    "its `__init__`, which imports the patch (h-model2's room: to split there)",
}
#: The model knows no SDK: what it may not import (pairedbus.sdk reads azure-servicebus).
SDK_ROOTS = ("azure", "pairedbus.sdk")
#: Model modules that still read azure-servicebus's shapes, and why (none left since issue 33: a message
#: is the model's `Content`, a rule its `Rule`; the front-ends convert).
MODEL_SDK_READERS: frozenset[str] = frozenset()

#: Top-level modules whose private names only `sdk.py` reads ("pulumi" covers pulumi_policy and
#: the providers too).
PRIVATE_ROOTS = ("azure.servicebus", "pulumi")


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _sdk_root(name: str) -> str | None:
    for root in PRIVATE_ROOTS:
        if _under(name, root) or (root == "pulumi" and name.partition(".")[0].startswith("pulumi_")):
            return root
    return None


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, *, is_package: bool = False) -> Iterator[tuple[int, str]]:
    """(line, absolute dotted name) of every import in `tree`, relative ones resolved against `module`;
    `from a import b` yields both `a` and `a.b` (b may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def layer_violations(tree: ast.AST, module: str, *, is_package: bool = False) -> list[str]:
    """One line per import statement of `module` that crosses a `FORBIDDEN` boundary."""
    hits: dict[int, str] = {}
    for importer, forbidden in FORBIDDEN:
        if not _under(module, importer):
            continue
        for line, name in imported(tree, module, is_package=is_package):
            if _under(name, forbidden) and not any(module == m and _under(name, t) for m, t in KNOWN_VIOLATIONS):
                hits.setdefault(line, f"{module} line {line}: imports {name}")
    return [hits[line] for line in sorted(hits)]


@dataclass(frozen=True)
class PrivateRead:
    line: int
    kind: str  # "import" or "attribute"
    name: str


def private_reads(tree: ast.AST) -> list[PrivateRead]:
    """Imports of a private module or name of Pulumi or azure-servicebus, and private attributes read
    through a name such an import bound (also `getattr(x, "_name")`)."""
    found: list[PrivateRead] = []
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (root := _sdk_root(alias.name)) is None:
                    continue
                bound.add(alias.asname or alias.name.partition(".")[0])
                if any(_private(p) for p in alias.name.split(".")[len(root.split(".")) :]):
                    found.append(PrivateRead(node.lineno, "import", alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if (root := _sdk_root(node.module)) is None:
                continue
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                bound.add(alias.asname or alias.name)
                if any(_private(p) for p in name.split(".")[len(root.split(".")) :]):
                    found.append(PrivateRead(node.lineno, "import", name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                found.append(PrivateRead(node.lineno, "attribute", ast.unparse(node)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in bound
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            found.append(PrivateRead(node.lineno, "attribute", f"{node.args[0].id}.{node.args[1].value}"))
    return found


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def split_imports(
    tree: ast.AST, module: str, *, is_package: bool = False
) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(module-level imports, imports inside a function) of `tree`, as `imported` names them; an
    `if TYPE_CHECKING:` block is neither (it is never run)."""
    eager: list[tuple[int, str]] = []
    lazy: list[tuple[int, str]] = []

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            here = inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import | ast.ImportFrom):
                found = imported(ast.Module(body=[child], type_ignores=[]), module, is_package=is_package)
                (lazy if here else eager).extend(found)
            visit(child, here)

    visit(tree, False)
    return eager, lazy


def room(name: str) -> str | None:
    """The `LAYERS` room `name` lives in (None: not this package's, or the package itself)."""
    return next((r for group in LAYERS for r in group if _under(name, r)), None)


def _group(name: str) -> int:
    return next(i for i, group in enumerate(LAYERS) for r in group if r == name)


def lazy_layer_violations(tree: ast.AST, module: str, *, is_package: bool = False) -> dict[tuple[str, str], int]:
    """(module, room) -> line of each lazy import of `module` into a room of its own group or a higher one."""
    own = room(module)
    hits: dict[tuple[str, str], int] = {}
    for line, name in split_imports(tree, module, is_package=is_package)[1]:
        target = room(name)
        if own is None or target is None or target == own:
            continue
        if _group(target) <= _group(own):
            hits.setdefault((module, target), line)
    return hits


def hidden_cycles(sources: dict[str, tuple[ast.AST, bool]]) -> dict[tuple[str, str], int]:
    """(module, imported module) -> line of each lazy import whose target reaches back to its importer through
    module-level imports: the cycle the function-level import only hides."""
    eager: dict[str, set[str]] = {}
    lazy: list[tuple[str, str, int]] = []
    for module, (tree, is_package) in sources.items():
        at_top, inside = split_imports(tree, module, is_package=is_package)
        eager[module] = {m for _, name in at_top if (m := _known_module(name, sources)) not in (None, module)}
        lazy += [
            (module, m, line) for line, name in inside if (m := _known_module(name, sources)) not in (None, module)
        ]
    hits: dict[tuple[str, str], int] = {}
    for module, target, line in lazy:
        seen, stack = {target}, [target]
        while stack:
            for nxt in eager.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        if module in seen:
            hits.setdefault((module, target), line)
    return hits


def _known_module(name: str, sources: dict[str, tuple[ast.AST, bool]]) -> str | None:
    parts = name.split(".")
    return next((".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in sources), None)


def _sources() -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, parse_source(path.read_text(), str(path))


def test_the_syphon_never_imports_its_host_and_the_policy_pack_never_imports_the_infrastructure() -> None:
    offenders = [
        hit
        for path, tree in _sources()
        for hit in layer_violations(tree, module_name(path), is_package=path.name == "__init__.py")
    ]
    assert offenders == []


def test_the_service_bus_model_imports_no_sdk_but_the_modules_listed() -> None:
    readers = {
        module_name(path): names
        for path, tree in _sources()
        if _under(module_name(path), "pairedbus.servicebus")
        for names in [sorted({name for _, name in imported(tree, module_name(path)) if _reads_sdk(name)})]
        if names
    }
    assert set(readers) == MODEL_SDK_READERS, readers  # a module freed of the SDK leaves the list


def _reads_sdk(name: str) -> bool:
    return any(_under(name, root) for root in SDK_ROOTS)


def test_only_the_sdk_module_reads_private_names_of_pulumi_or_azure_servicebus() -> None:
    offenders = {
        str(path.relative_to(PACKAGE.parent)): reads
        for path, tree in _sources()
        if path != SDK_MODULE
        for reads in [private_reads(tree)]
        if reads
    }
    assert offenders == {}
    # sdk.py itself is where they are: the walk finds both SDKs' private names there
    names = {read.name for read in private_reads(parse_source(SDK_MODULE.read_text()))}
    assert any(name.startswith("azure.servicebus._") for name in names)
    assert {"pulumi.runtime.sync_await._sync_await", "pulumi_policy.policy._NotApplicableError"} <= names


def test_every_room_of_the_package_has_its_place_in_the_layers() -> None:
    rooms = {module_name(p) for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    assert sorted(rooms - {"pairedbus"}) == sorted(r for group in LAYERS for r in group)


def test_lazy_imports_point_down_the_layers_and_close_no_cycle_but_the_ones_listed() -> None:
    sources = {module_name(path): (tree, path.name == "__init__.py") for path, tree in _sources()}
    found = hidden_cycles(sources)
    for module, (tree, is_package) in sources.items():
        found.update(lazy_layer_violations(tree, module, is_package=is_package))
    assert {pair: line for pair, line in found.items() if pair not in KNOWN_LAZY} == {}
    assert sorted(KNOWN_LAZY.keys() - found.keys()) == [], "fixed: take it off KNOWN_LAZY"


# --- The walkers find what they must (so the tests above can fail) ------------------------------


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("pairedbus.syphon.pump", "from pairedbus.service.metrics import SyphonCollector"),
        ("pairedbus.syphon.pump", "import pairedbus.service.logs as logs"),
        ("pairedbus.syphon.pump", "from pairedbus import service"),
        ("pairedbus.syphon.pump", "def f():\n    from ..service import endpoints"),
        ("pairedbus.policy.gate", "from pairedbus.iac.render.program import render_program"),
        ("pairedbus.policy.gate", "if TYPE_CHECKING:\n    from pairedbus.iac import config"),
        ("pairedbus.policy.gate", "from .. import iac"),
        ("pairedbus.pairing.connections", "from pairedbus.sender.errors import is_retryable"),
        ("pairedbus.pairing.aliasing", "from ..syphon import SyphonFaulted"),
        ("pairedbus.servicebus.store", "from pairedbus.testing.errors import lock_lost"),
        ("pairedbus.servicebus.world", "if TYPE_CHECKING:\n    from ..emulator.server import Broker"),
        ("pairedbus.emulator.links", "from pairedbus.testing.sender import check_sessions"),
        ("pairedbus.emulator.admin_http", "from pairedbus.testing.errors import bad_request"),
        ("pairedbus.plans.operations", "from pairedbus.iac.render.program import render_program"),
        ("pairedbus.plans.tree", "def f():\n    from ..policy.gate import run_gate"),
        ("pairedbus.plans.engine_checks", "from pulumi.runtime.proto import alias_pb2"),
        ("pairedbus.plans.baseline", "import pulumi_policy"),
        ("pairedbus.iac.render", "from pairedbus.commands.plan import plan_and_gate"),
    ],
)
def test_a_forbidden_import_is_found_however_it_is_spelled(module: str, source: str) -> None:
    assert len(layer_violations(ast.parse(source), module)) >= 1


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("pairedbus.service.syphon_process", "from pairedbus.syphon.syphon import Syphon"),
        ("pairedbus.iac.render.program", "from pairedbus.policy.gate import run_gate"),
        ("pairedbus.policy.gate", "from pairedbus.plans.model import Plan\nfrom . import pack"),
        ("pairedbus.commands.plan", "from pairedbus.iac.render import render_stack\nfrom pairedbus.policy import gate"),
        ("pairedbus.plans.tree", "from rich.tree import Tree\nfrom pairedbus.plans.model import Plan"),
        ("pairedbus.syphon.pump", "from pairedbus.services import x"),
        ("pairedbus.syphon.pump", "from pairedbus.pairing.connections import ConnectionPair"),
        ("pairedbus.sender.sender", "from pairedbus.pairing.aliasing import parked_copy"),
    ],
)
def test_imports_the_layering_allows_are_not_reported(module: str, source: str) -> None:
    assert layer_violations(ast.parse(source), module) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from pulumi.runtime.sync_await import _sync_await", "pulumi.runtime.sync_await._sync_await"),
        ("from pulumi.runtime import rpc\nrpc._special_sig_key", "rpc._special_sig_key"),
        ("import pulumi.runtime.rpc as r\nx = r._special_secret_sig", "r._special_secret_sig"),
        ("from pulumi_policy.policy import _NotApplicableError", "pulumi_policy.policy._NotApplicableError"),
        ("def f():\n    from azure.servicebus._pyamqp import _decode", "azure.servicebus._pyamqp._decode"),
        ("import azure.servicebus\nazure.servicebus._common", "azure.servicebus._common"),
        ("from azure.servicebus import ServiceBusMessage as M\nM._from_x()", "M._from_x"),
        ("import pulumi\ngetattr(pulumi, '_secret')", "pulumi._secret"),
    ],
)
def test_a_private_read_is_found_however_it_is_spelled(source: str, expected: str) -> None:
    assert expected in [read.name for read in private_reads(ast.parse(source))]


@pytest.mark.parametrize(
    "source",
    [
        "from azure.servicebus.aio import ServiceBusSession\nfrom . import _x",
        "import pulumi\npulumi.__version__",
        "from pulumi.runtime import rpc\nrpc.UNKNOWN",
        "import json\njson._default_encoder",
        "self._lock = 1\nx._y",
    ],
)
def test_public_names_and_other_modules_private_names_are_not_reported(source: str) -> None:
    assert private_reads(ast.parse(source)) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("pairedbus.sender.client", "def f():\n    from pairedbus.syphon import Syphon", {"pairedbus.syphon"}),
        ("pairedbus.plans.tree", "async def f():\n    from ..commands import output", {"pairedbus.commands"}),
        ("pairedbus.errors", "def f():\n    import pairedbus.pairing.ping", {"pairedbus.pairing"}),
        ("pairedbus.pipeline.read", "def f():\n    from pairedbus.exports import inventory", {"pairedbus.exports"}),
        # down the layers, in its own room, at module level, or only for the type checker: not lazy and upward
        ("pairedbus.commands.plan", "def f():\n    from pairedbus.plans.tree import plan_tree", set()),
        ("pairedbus.syphon.pump", "def f():\n    from .delivery import x", set()),
        ("pairedbus.sender.client", "from pairedbus.syphon import Syphon", set()),
        ("pairedbus.sender.client", "if TYPE_CHECKING:\n    from pairedbus.syphon import Syphon", set()),
    ],
)
def test_a_lazy_import_up_or_sideways_is_found(module: str, source: str, expected: set[str]) -> None:
    assert {target for _, target in lazy_layer_violations(ast.parse(source), module)} == expected


def test_a_lazy_import_that_closes_a_cycle_is_found() -> None:
    sources = {
        "pairedbus.a": (ast.parse("from pairedbus import b"), False),
        "pairedbus.b": (ast.parse("def f():\n    from pairedbus.a import x"), False),
        "pairedbus.c": (ast.parse("def f():\n    from pairedbus.b import y"), False),
    }
    assert hidden_cycles(sources) == {("pairedbus.b", "pairedbus.a"): 2}
