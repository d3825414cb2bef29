"""Render a Pulumi program offline with Pulumi's own mock runtime: no CLI, no cloud.

The program runs exactly as `pulumi up` would run it, but every resource registration is answered
by `PlanMocks` (`mocks.py`) and recorded, with its parent, dependencies and options, as a
`PlannedResource`. What the engine would refuse of those registrations (a duplicate URN, a claimed
alias, a missing parent: `engine_checks.py`) stops the render with `EngineRefusal`, and what the
program logs as a warning (`pulumi.log.warn`) is kept as `Plan.warnings`. This is an offline render
of what the program declares, not a cloud preview: it knows nothing of the resources that already exist.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pulumi
import pulumi.resource as pulumi_resource
from pulumi.output import Unknown
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.settings import get_project, get_stack
from pulumi.runtime.stack import run_pulumi_func

from pairedbus.iac.render.mocks import PlanMocks
from pairedbus.iac.render.transforms import Transforms
from pairedbus.plans.diff import key_path, leaves
from pairedbus.plans.engine_checks import AliasSpec, EngineLedger, EngineRefusal, Registration
from pairedbus.plans.model import SECRET_MASK, Plan, PlannedResource
from pairedbus.plans.urns import alias_spec_json, make_urn
from pairedbus.sdk import is_pulumi_secret, pulumi_sync_await

__all__ = ["RecordingMonitor", "render_program"]


class _RecordingMocks(pulumi.runtime.Mocks):
    """Wraps the mocks to see each registration's deserialized inputs (the monitor already
    decoded them) next to the request that carried them, and what the mocks computed for it."""

    def __init__(self, inner: pulumi.runtime.Mocks) -> None:
        self.inner = inner
        self.request = threading.local()
        self.planned: list[PlannedResource] = []
        self._lock = threading.Lock()
        #: URN -> the strings the mocks made up for it: outputs that are none of its inputs (ids, principal ids,
        #: endpoints). A real provider computes them; offline they are invented from names.
        self.computed: dict[str, frozenset[str]] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        resource_id, state = self.inner.new_resource(args)
        inputs = _plan_value_from_engine(args.inputs)
        urn = getattr(self.request, "urn", None)
        if urn is not None:
            computed = _computed(inputs, _plan_value_from_engine(state), resource_id)
            with self._lock:
                self.computed[urn] = computed
        request = getattr(self.request, "current", None)
        if request is not None:
            dependencies = {
                k: tuple(sorted(v.urns)) for k, v in request.propertyDependencies.items() if k != "__provider"
            }
            self.planned.append(
                PlannedResource(
                    urn=self.request.urn,
                    type=request.type,
                    name=request.name,
                    inputs=inputs,
                    custom=bool(request.custom),
                    parent=request.parent or None,
                    # The SDK gathers dependencies in a set: their order depends on timing, not on the program.
                    dependencies=tuple(sorted(request.dependencies)),
                    property_dependencies=dependencies,
                    protect=bool(request.protect),
                    aliases=len(request.aliases),
                    alias_specs=tuple(alias_spec_json(a) for a in request.aliases),
                    retain_on_delete=bool(request.retainOnDelete),
                    provider=request.provider or None,
                    derived=self._derived(inputs, dependencies),
                    ignore_changes=tuple(request.ignoreChanges),
                )
            )
        return resource_id, state

    def _derived(self, inputs: Mapping[str, Any], dependencies: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
        """Paths of the inputs that hold a value the mocks made up for a resource they depend on."""
        with self._lock:
            made_up = {
                key: frozenset().union(*(self.computed.get(u, frozenset()) for u in urns))
                for key, urns in dependencies.items()
            }
        paths = [
            path
            for key, value in inputs.items()
            if made_up.get(key)
            for path, leaf in leaves(value, key_path("", key))
            if isinstance(leaf, str) and any(text in leaf for text in made_up[key])
        ]
        return tuple(paths)

    def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
        return self.inner.call(args)


#: Made-up values shorter than this are not looked for inside other inputs (too likely to occur by chance).
_MIN_MADE_UP = 4


def _computed(inputs: Mapping[str, Any], state: Mapping[str, Any], resource_id: Any) -> frozenset[str]:
    """The strings of `state` (and the id) that are none of the input strings: what the mocks computed."""
    given = {leaf for _path, leaf in leaves(dict(inputs)) if isinstance(leaf, str)}
    found = {leaf for _path, leaf in leaves(dict(state)) if isinstance(leaf, str)}
    if isinstance(resource_id, str):
        found.add(resource_id)
    return frozenset(text for text in found - given if len(text) >= _MIN_MADE_UP and text != SECRET_MASK)


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A MockMonitor that answers with the engine's URNs (the parent's whole type chain), runs transforms as the
    engine does (`transforms.Transforms`), and keeps what the engine would see of each registration, and the
    registrations themselves for the engine's checks (`refusals`)."""

    def __init__(self, mocks: pulumi.runtime.Mocks, on_register: Callable[[str, str], None] | None = None) -> None:
        self.recorder = _RecordingMocks(mocks)
        #: Told (type, name) of each registration as it arrives, from the SDK's executor threads (progress).
        self.on_register = on_register
        self.ledger: EngineLedger | None = None  # the project and stack are known once the render starts
        self._ledger_lock = threading.Lock()
        self.transforms = Transforms()
        super().__init__(self.recorder)

    @property
    def planned(self) -> list[PlannedResource]:
        return self.recorder.planned

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """`resource.NewURN` as the engine calls it, where Pulumi's mock monitor keeps only the parent's last type."""
        parent_type = parent.split("::")[2] if parent else None
        return make_urn(get_stack(), get_project(), parent_type, type_, name)

    def refusals(self) -> list[str]:
        """What the Pulumi engine would refuse of the registrations so far, in its words."""
        return self.ledger.refusals() if self.ledger is not None else []

    def _record(self, request: Any, urn: str, *, read: bool) -> None:
        with self._ledger_lock:
            if self.ledger is None:
                self.ledger = EngineLedger(get_project(), get_stack())
        aliases = () if read else tuple(AliasSpec.from_request(a) for a in request.aliases)
        self.ledger.record(Registration(urn, request.type, request.name, request.parent, aliases, read=read))

    def RegisterResource(self, request: Any) -> Any:
        # Registrations run on executor threads: the request travels to new_resource per thread.
        urn = self.make_urn(request.parent, request.type, request.name)
        request = self.transforms.apply(request, urn)
        self._record(request, urn, read=False)
        if self.on_register is not None:
            self.on_register(request.type, request.name)
        self.recorder.request.current = request
        self.recorder.request.urn = urn
        try:
            return super().RegisterResource(request)
        finally:
            self.recorder.request.current = None
            self.recorder.request.urn = None

    def RegisterStackTransform(self, request: Any) -> Any:
        self.transforms.register_stack(request)
        return super().RegisterStackTransform(request)

    def ReadResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        self._record(request, urn, read=True)
        self.recorder.request.urn = urn
        try:
            return super().ReadResource(request)
        finally:
            self.recorder.request.urn = None


def _plan_value_from_engine(value: Any) -> Any:
    """Unknowns become None and secrets are masked, so the plan is plain JSON."""
    if isinstance(value, Mapping):
        if is_pulumi_secret(value):
            return SECRET_MASK
        return {k: _plan_value_from_engine(v) for k, v in value.items() if k != "__provider"}
    if isinstance(value, list | tuple):
        return [_plan_value_from_engine(v) for v in value]
    if value is rpc.UNKNOWN or isinstance(value, Unknown) or value == rpc.UNKNOWN:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)  # the wire carries every number as a double
    return value


def render_program(
    program: Callable[[], None],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
    preview: bool = False,
    mocks: pulumi.runtime.Mocks | None = None,
    on_register: Callable[[str, str], None] | None = None,
) -> Plan:
    """Run `program` under Pulumi's mock runtime with the given raw config and return the plan.

    `config` maps full keys (`pairedbus:primary`) to the strings the CLI would pass. `preview=True`
    runs it as `pulumi preview` would (`PlanMocks(preview=True)` unless `mocks` are given). Exceptions
    the program raises propagate after the runtime has shut down cleanly; registrations the engine
    would refuse raise `EngineRefusal`, one line per refusal in the engine's words. `on_register(type, name)` is
    called as each resource registers (from the SDK's threads), for progress.
    """
    monitor = RecordingMonitor(mocks if mocks is not None else PlanMocks(preview=preview), on_register)
    with _without_dead_work():
        return _render(
            program, monitor, project=project, stack=stack, config=config, secret_keys=secret_keys, preview=preview
        )


@contextmanager
def _without_dead_work() -> Iterator[None]:
    """Skip work a render does not need; what is registered stays exactly the same.

    - Pulumi's `Resource.__init__` turns every alias into a URN up front, only so that children
      could inherit them on engines without alias specs. Ours (like the engine) takes alias specs,
      so those URNs are never read — and azure-native gives each resource about 14 versioned
      aliases, which made this ~80 % of the render time. The aliases themselves still reach the
      monitor as specs (see `PlannedResource.aliases`).
    - The cyclic GC rescans the ever larger heap of futures a big program creates, and the huge
      azure-native module graph on every full pass; the render pauses it and leaves the heap it
      started with out of later passes (gc.freeze), so the cost per resource stays flat.
    """
    original = pulumi_resource.collapse_alias_to_urn
    pulumi_resource.collapse_alias_to_urn = lambda alias, _name, _type, _parent: alias
    gc_was_enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        pulumi_resource.collapse_alias_to_urn = original
        gc.unfreeze()
        if gc_was_enabled:
            gc.enable()


def _render(
    program: Callable[[], None],
    monitor: RecordingMonitor,
    *,
    project: str,
    stack: str,
    config: Mapping[str, str] | None,
    secret_keys: list[str] | None,
    preview: bool = False,
) -> Plan:
    # A loop of its own: the runtime must not inherit one that earlier code closed or still runs.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    settings.reset_options(project=project, stack=stack)
    pulumi.runtime.set_all_config(dict(config or {}), secret_keys or [])
    log = _ProgramLog()
    monitor.ledger = EngineLedger(project, stack)
    pulumi.runtime.set_mocks(
        monitor.recorder, project=project, stack=stack, preview=preview, monitor=monitor, logger=log.logger
    )
    try:
        pulumi_sync_await(run_pulumi_func(program))
        root = settings.get_root_resource()
        outputs = _resolve_outputs(getattr(root, "outputs", {}) or {})
    finally:
        settings.reset_options()
        # Leave an open loop behind, as the default policy would: Pulumi's own unit-test style
        # (`pulumi.runtime.set_mocks`, `@pulumi.runtime.test`) in the same process expects one.
        asyncio.set_event_loop(_idle_loop())
        loop.close()
        log.close()
        monitor.transforms.close()
    refusals = monitor.refusals()
    if refusals:
        raise EngineRefusal(refusals)
    # Registrations complete in any order; sort so that plans of the same program compare equal.
    resources = sorted(monitor.planned, key=lambda r: _natural_key(r.urn))
    return Plan(project=project, stack=stack, resources=tuple(resources), outputs=outputs, warnings=log.warnings)


_IDLE = threading.local()


def _idle_loop() -> asyncio.AbstractEventLoop:
    """One open, idle event loop per thread, handed back after each render."""
    loop = getattr(_IDLE, "loop", None)
    if loop is None or loop.is_closed():
        loop = _IDLE.loop = asyncio.new_event_loop()
    return loop


class _ProgramLog:
    """The program's `pulumi.log` messages, as the mock engine passes them to a Python logger: warnings
    (and errors) kept for the plan, nothing printed behind the caller's back."""

    def __init__(self) -> None:
        self.logger = logging.Logger("pairedbus.iac.render.program")  # unregistered: never shared
        self.logger.propagate = False
        self._messages: list[str] = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = lambda record: self._messages.append(record.getMessage())
        self.logger.addHandler(handler)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self._messages))  # once each, in the order logged

    def close(self) -> None:
        self.logger.handlers.clear()


def _natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _resolve_outputs(outputs: Mapping[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = {}
    for key, value in outputs.items():
        output = pulumi.Output.from_input(value)
        known = pulumi_sync_await(output.is_known())
        resolved[key] = _plan_value_from_engine(pulumi_sync_await(output.future())) if known else None
    return resolved
