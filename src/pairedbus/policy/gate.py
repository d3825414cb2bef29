"""The offline gate: every policy of the pack over a rendered plan, as the engine would run it.

Each planned resource becomes the engine's own argument objects (`ResourceValidationArgs`, and
`PolicyResource` with parent and dependencies resolved for `StackValidationArgs`), so a policy
cannot tell the gate from `pulumi preview --policy-pack policies`. Policy config has the shape of
`--policy-pack-config` (`{"policy-name": "advisory"}` or `{"policy-name": {"enforcementLevel": ...}}`).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from inspect import isawaitable
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from pairedbus.errors import UserError
from pairedbus.plans.baseline import BaselineChange, ResourceMatch
from pairedbus.plans.model import Plan, PlannedResource
from pairedbus.sdk import policy_not_applicable_error

PolicyConfig = Mapping[str, Any]
#: What `args.not_applicable()` raises inside a policy (a private class of pulumi-policy, read in `sdk`).
NOT_APPLICABLE = policy_not_applicable_error()
#: Change lines printed before "... and K more", as every problem list of the CLI (`commands.output.MAX_PROBLEMS`).
MAX_CHANGE_LINES = 20


@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement_level: str  # "mandatory" | "advisory"
    resource_urn: str | None
    resource_name: str | None
    message: str

    @property
    def mandatory(self) -> bool:
        return self.enforcement_level == EnforcementLevel.MANDATORY.value

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def load_policy_config(path: str | Path) -> dict[str, Any]:
    """A `--policy-pack-config` JSON file."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"--policy-config {path}: expected a readable JSON object, {exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"--policy-config {path}: expected a JSON object of policy name -> level or settings")
    check_policy_names(data, f"--policy-config {path}")
    return data


def check_policy_names(config: Mapping[str, Any], where: str, policies: Sequence[Policy] | None = None) -> None:
    """Every key names a policy of the pack (or is `all`, which Pulumi applies to every policy): a
    misspelt name would otherwise leave the policy at its default level without a word."""
    import difflib

    if policies is None:
        from pairedbus.policy.pack import POLICIES

        policies = POLICIES
    names = sorted({p.name for p in policies} | {"all"})
    for key in config:
        if key in names:
            continue
        close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else f"; the pack's policies: {', '.join(names)}"
        raise UserError(f"{where}: {str(key)[:80]!r} is not a policy of the pack{hint}")


def _enforcement_level(policy: Policy, config: PolicyConfig) -> EnforcementLevel:
    entry = config.get(policy.name, config.get("all"))
    level = entry.get("enforcementLevel") if isinstance(entry, Mapping) else entry
    if level is None:
        # Unset levels fall back to the pack's default, which is advisory (PolicyPack's default).
        return policy.enforcement_level or EnforcementLevel.ADVISORY
    try:
        return EnforcementLevel(level.value if isinstance(level, EnforcementLevel) else level)
    except ValueError:
        raise UserError(
            f"policy config {policy.name}: expected one of advisory, mandatory, remediate, disabled, got {level!r}"
        ) from None


def _policy_settings(policy: Policy, config: PolicyConfig) -> dict[str, Any] | None:
    entry = config.get(policy.name)
    if isinstance(entry, Mapping):
        props = {k: v for k, v in entry.items() if k != "enforcementLevel"}
        return props or None
    return None


def _options(resource: PlannedResource) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=resource.protect,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=resource.parent,
    )


def _props(resource: PlannedResource) -> Mapping[str, Any]:
    # The engine wraps properties in its unknown-checking proxy; do the same so policies see
    # Mappings, not dicts, here too.
    return unknown_checking_proxy(copy.deepcopy(resource.inputs))


def _provider(resource: PlannedResource, by_urn: Mapping[str, PlannedResource]) -> PolicyProviderResource | None:
    if not resource.provider:
        return None
    # A provider reference is `<urn>::<id>`.
    urn = resource.provider if resource.provider in by_urn else resource.provider.rsplit("::", 1)[0]
    planned = by_urn.get(urn)
    if planned is None:
        type_ = urn.split("::")[2] if urn.count("::") >= 3 else "pulumi:providers:unknown"
        return PolicyProviderResource(type_, unknown_checking_proxy({}), urn, urn.rsplit("::", 1)[-1])
    return PolicyProviderResource(planned.type, _props(planned), planned.urn, planned.name)


def policy_resources(plan: Plan) -> list[PolicyResource]:
    """The plan as the engine's `PolicyResource`s, parents and dependencies linked as objects."""
    by_urn = plan.by_urn()
    resources = {
        r.urn: PolicyResource(r.type, _props(r), r.urn, r.name, _options(r), _provider(r, by_urn), None, [], {})
        for r in plan.resources
    }
    for planned in plan.resources:
        resource = resources[planned.urn]
        if planned.parent in resources:
            resource.parent = resources[planned.parent]
        resource.dependencies.extend(resources[d] for d in planned.dependencies if d in resources)
        for key, urns in planned.property_dependencies.items():
            resource.property_dependencies[key] = [resources[d] for d in urns if d in resources]
    return list(resources.values())


def _run(result: object) -> None:
    if isawaitable(result):

        async def wait() -> None:
            await result

        asyncio.run(wait())


def evaluate_plan(
    plan: Plan, *, policies: Sequence[Policy] | None = None, config: PolicyConfig | None = None
) -> list[Violation]:
    """Every violation the pack reports on the plan, resource policies first, then stack policies.

    Only custom resources are analysed one by one (the engine analyses resource registrations of
    providers' resources, not components); stack policies see every resource.
    """
    if policies is None:
        from pairedbus.policy.pack import POLICIES

        policies = POLICIES
    config = config or {}
    by_urn = plan.by_urn()
    violations: list[Violation] = []

    def reporter(policy: Policy, level: EnforcementLevel, default_urn: str | None) -> ReportViolation:
        def report(message: str, urn: str | None = None) -> None:
            target = urn or default_urn
            name = by_urn[target].name if target in by_urn else None
            violations.append(Violation(policy.name, level.value, target, name, message))

        return report

    def diagnose_unknown(policy: Policy, urn: str | None, exc: UnknownValueError) -> None:
        name = by_urn[urn].name if urn in by_urn else None
        violations.append(
            Violation(policy.name, EnforcementLevel.ADVISORY.value, urn, name, f"can't run policy: {exc.message}")
        )

    stack_resources = policy_resources(plan)
    for policy in policies:
        level = _enforcement_level(policy, config)
        if level == EnforcementLevel.DISABLED:
            continue
        if level == EnforcementLevel.REMEDIATE:
            level = EnforcementLevel.MANDATORY  # as the engine reports a violation left after remediation
        settings = _policy_settings(policy, config)
        if isinstance(policy, ResourceValidationPolicy):
            for planned in plan.resources:
                if not planned.custom:
                    continue
                args = ResourceValidationArgs(
                    planned.type,
                    _props(planned),
                    planned.urn,
                    planned.name,
                    _options(planned),
                    _provider(planned, by_urn),
                    settings,
                )
                try:
                    # Resource policies always blame the resource under validation.
                    _run(policy.validate(args, reporter(policy, level, planned.urn)))
                except UnknownValueError as exc:
                    diagnose_unknown(policy, planned.urn, exc)
                except NOT_APPLICABLE:
                    continue
        elif isinstance(policy, StackValidationPolicy):
            stack_args = StackValidationArgs(stack_resources, settings)
            try:
                _run(policy.validate(stack_args, reporter(policy, level, None)))
            except UnknownValueError as exc:
                diagnose_unknown(policy, None, exc)
            except NOT_APPLICABLE:
                continue
    return violations


def has_mandatory(violations: Sequence[Violation]) -> bool:
    return any(v.mandatory for v in violations)


def format_violations(violations: Sequence[Violation]) -> list[str]:
    """One table line per violation: level, policy, resource, message; mandatory first."""
    if not violations:
        return []
    ordered = sorted(violations, key=lambda v: (not v.mandatory, v.policy, v.resource_name or ""))
    rows = [("LEVEL", "POLICY", "RESOURCE", "MESSAGE")] + [
        (v.enforcement_level, v.policy, v.resource_name or "(stack)", v.message) for v in ordered
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)), row[3]]).rstrip()
        for row in rows
    ]


# --- The gate as `pairedbus plan` applies it ------------------------------------------------


#: How a change that never fails the gate is introduced: a retained resource stays in Azure, unmanaged; a
#: read one (`external`) is only dropped from the state.
_NOTE_LABELS = {"retain": "retained", "forget": "note"}


@dataclass(frozen=True)
class GateResult:
    """Violations of the pack and changes against a baseline (`plans.baseline`); exit 1 on a
    mandatory violation, or on a replacement, deletion or lowered protection whose kind was not
    allowed. Retained resources, and read ones Pulumi forgets, are reported and never fail."""

    violations: tuple[Violation, ...]
    changes: tuple[BaselineChange, ...] = ()
    allowed: frozenset[str] = frozenset()

    @property
    def replacements(self) -> tuple[str, ...]:
        return tuple(c.message for c in self.changes if c.kind == "replace")

    @property
    def allow_replace(self) -> bool:
        return "replace" in self.allowed

    def blocked(self) -> list[BaselineChange]:
        return [c for c in self.changes if c.blocking and c.kind not in self.allowed]

    @property
    def exit_code(self) -> int:
        return 1 if has_mandatory(self.violations) or self.blocked() else 0

    def _change_line(self, change: BaselineChange) -> str:
        from pairedbus.plans.baseline import FLAGS

        if not change.blocking:
            return f"{_NOTE_LABELS[change.kind]}: {change.message}"
        if change.kind in self.allowed:
            return f"allowed: {change.message}"
        return f"blocked: {change.message} (pass {FLAGS[change.kind]} to accept)"

    def lines(self, limit: int | None = MAX_CHANGE_LINES) -> list[str]:
        """The violations, the changes (blocked first; at most `limit` of them, then "... and K more"),
        and the summary with the count of each kind."""
        blocked = set(self.blocked())
        ordered = sorted(self.changes, key=lambda c: (c not in blocked, not c.blocking))
        shown = ordered if limit is None else ordered[:limit]
        out = format_violations(self.violations) + [self._change_line(c) for c in shown]
        if len(shown) < len(ordered):
            out.append(f"... and {len(ordered) - len(shown)} more")
        mandatory = sum(v.mandatory for v in self.violations)
        summary = f"policy gate: {mandatory} mandatory, {len(self.violations) - mandatory} advisory"
        for kind, label in (("replace", "replacements"), ("delete", "deletions"), ("unprotect", "unprotections")):
            count = sum(c.kind == kind for c in self.changes)
            if count:
                summary += f", {count} {label}" + (" (allowed)" if kind in self.allowed else "")
        for kind, label in (("retain", "retained"), ("forget", "forgotten")):
            count = sum(c.kind == kind for c in self.changes)
            if count:
                summary += f", {count} {label}"
        return [*out, summary + (" - FAILED" if self.exit_code else " - passed")]

    def to_json(self) -> dict[str, Any]:
        blocked = set(self.blocked())
        return {
            "violations": [v.to_json() for v in self.violations],
            "replacements": list(self.replacements),
            "allowReplace": self.allow_replace,
            "baselineChanges": [{**c.to_json(), "blocked": c in blocked} for c in self.changes],
            "allowed": sorted(self.allowed),
            "passed": self.exit_code == 0,
        }


def run_gate(
    plan: Plan,
    *,
    baseline: Plan | None = None,
    allow_replace: bool = False,
    allow_delete: bool = False,
    allow_unprotect: bool = False,
    config: PolicyConfig | None = None,
    match: ResourceMatch | None = None,
) -> GateResult:
    """The pack over `plan`, and its changes against `baseline` (`match`: the two plans' resources matched, when
    the caller has already done so: `plans.baseline.ResourceMatch`, the costly part of a large gate)."""
    from pairedbus.plans.baseline import compare_plans

    changes = compare_plans(baseline, plan, match=match) if baseline is not None else []
    allowed = {
        k for k, on in (("replace", allow_replace), ("delete", allow_delete), ("unprotect", allow_unprotect)) if on
    }
    return GateResult(tuple(evaluate_plan(plan, config=config)), tuple(changes), frozenset(allowed))
