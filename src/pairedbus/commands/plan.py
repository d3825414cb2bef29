"""`pairedbus plan STACK`: render the program offline, print it, and gate it on the policy pack.

The use case, render -> plan -> gate, is `plan_and_gate`: `iac.render` renders the stack under Pulumi's mocks,
`plans` judges each resource against the baseline, `policy.gate` runs the pack and the baseline's gate. `run`
reads the flags, checks every input and output before that, and prints what it found.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pairedbus.commands.output import Steps
    from pairedbus.iac.render import PulumiProject
    from pairedbus.plans.model import Plan
    from pairedbus.plans.operations import Operations
    from pairedbus.policy.gate import GateResult


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="render a stack offline (Pulumi mocks: no CLI, no Azure) and gate it on the policy pack",
        description="Evaluate the Pulumi program for stacks/Pulumi.STACK.yaml with Pulumi's mock runtime and run "
        "the policy pack over what it declares. This is an offline render, not a cloud preview. "
        "Exit 1 on a mandatory violation (or a destructive change against --baseline), 2 on bad input.",
    )
    parser.add_argument(
        "stack",
        help="stack name, e.g. dev (reads stacks/Pulumi.STACK.yaml; without one, an empty config, as for the Pulumi CLI)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the resources and violations as JSON to FILE ('-': to stdout instead of the tree)",
    )
    parser.add_argument("--project-dir", type=Path, help="the Pulumi project (default: nearest Pulumi.yaml)")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="what is deployed (`pulumi stack export --file FILE`: Pulumi's deployment format, version 3) or an "
        "earlier plan (`plan --json`), a regular file of at most 64 MiB; fail when a change against it would replace or delete a namespace, queue, "
        "topic, subscription or backlog queue, or lower a resource's protection; resources left in Azure by "
        "retainOnDelete (a lowered backlog count) are reported only. Renames an alias covers are no change",
    )
    parser.add_argument(
        "--baseline-any-stack",
        action="store_true",
        help="compare with a --baseline of another stack or project (refused by default: its resources are unrelated)",
    )
    parser.add_argument("--allow-replace", action="store_true", help="report replacements without failing")
    parser.add_argument("--allow-delete", action="store_true", help="report deletions without failing")
    parser.add_argument(
        "--allow-unprotect",
        action="store_true",
        help="report lowered protection (production true -> false) without failing",
    )
    parser.add_argument(
        "--policy-config", type=Path, metavar="FILE", help="policy config, as for pulumi --policy-pack-config"
    )
    parser.add_argument(
        "--write-policy-config",
        type=Path,
        metavar="FILE",
        help="write the policy settings derived from the stack config (backlog count, max outage, unpaired "
        "entities), merged with --policy-config, for `pulumi preview --policy-pack-config FILE`",
    )
    parser.set_defaults(handler=run)


def plan_progress(*, enabled: bool = True) -> Steps:
    """What the render is doing and how many resources registered so far, on a terminal's stderr (a render
    takes seconds to minutes); off when piped, in CI, or with `--json -`. It clears itself before the plan prints."""
    from pairedbus.commands.output import Steps

    return Steps("plan: starting", unit="resources registered", enabled=enabled)


def _registered(progress: Steps, stack: str) -> Callable[[str, str], None]:
    """The render's `on_register`: each resource but the root stack (no resource of the plan) is a step. Until the
    first one, the program is still loading (importing azure-native alone takes seconds)."""
    from pairedbus.plans.urns import ROOT_STACK_TYPE

    def registered(type_: str, name: str) -> None:
        if type_ == ROOT_STACK_TYPE:
            return
        if progress.done == 0:
            progress.set_description(f"plan: rendering stack '{stack}'")
        progress(f"{type_.rsplit(':', 1)[-1]} {name}")

    return registered


@dataclass(frozen=True)
class PlanReview:
    """What `pairedbus plan` found: the plan (in the engine's URN form when there is a baseline), each resource's
    operation and property changes against the baseline (None without one), the gate, and the policy config it
    ran with (the stack's derived settings under the user's)."""

    plan: Plan
    judged: Operations | None
    gate: GateResult
    policy_config: dict[str, Any]


def plan_and_gate(
    project: PulumiProject,
    stack: str,
    *,
    baseline: Plan | None = None,
    policy_config: dict[str, Any] | None = None,
    allow_replace: bool = False,
    allow_delete: bool = False,
    allow_unprotect: bool = False,
    progress: Steps | None = None,
) -> PlanReview:
    """Render the stack, judge it against the baseline, and gate it: the use case of `pairedbus plan`. Raises
    `EngineRefusal` for registrations the engine would refuse, and `UserError`/`StackConfigError` for bad config."""
    from pairedbus.iac.render import render_stack
    from pairedbus.iac.render.policy_settings import merge_policy_config, stack_policy_settings
    from pairedbus.plans.baseline import ResourceMatch
    from pairedbus.plans.operations import judge
    from pairedbus.plans.urns import engine_plan
    from pairedbus.policy.gate import run_gate

    progress = progress or plan_progress(enabled=False)
    progress.set_description(f"plan: loading the program for stack '{stack}'")
    config, plan = render_stack(project, stack, on_register=_registered(progress, stack))
    derived = stack_policy_settings(config) if config is not None else {}
    merged = merge_policy_config(derived, policy_config)
    judged = match = None
    if baseline is not None:
        progress.set_description("plan: comparing with --baseline")
        # Against a baseline, URNs as the engine makes them: a state export holds those.
        plan = engine_plan(plan)
        match = ResourceMatch.of(baseline, plan)  # once, for the operations and the gate's changes
        judged = judge(baseline, plan, match=match)
    progress.set_description("plan: running the policy pack")
    gate = run_gate(
        plan,
        baseline=baseline,
        allow_replace=allow_replace,
        allow_delete=allow_delete,
        allow_unprotect=allow_unprotect,
        config=merged,
        match=match,
    )
    return PlanReview(plan, judged, gate, merged)


def run(args: argparse.Namespace) -> int:
    from pairedbus.errors import EXIT_USER

    # Read every input and check every output before rendering: a bad flag fails fast, nothing half-runs.
    inputs = _read_inputs(args)
    review = _review(args, inputs)
    if review is None:
        return EXIT_USER
    document = _plan_document(review)
    if inputs.json_to_stdout:
        print(json.dumps(document, indent=2, sort_keys=True, default=str))
        _write_policy_config(args, review)
        return review.gate.exit_code
    show = _print_review(args, review, inputs.baseline)
    _write_files(args, document, review, show)
    return review.gate.exit_code


@dataclass(frozen=True)
class _Inputs:
    """What `plan` read and checked before rendering."""

    json_to_stdout: bool
    project: PulumiProject
    baseline: Plan | None
    policy_config: dict[str, Any] | None


def _read_inputs(args: argparse.Namespace) -> _Inputs:
    """Every flag read and every output checked writable: one-line `UserError`s before any work."""
    from pairedbus.commands.output import check_writable
    from pairedbus.iac.render import PulumiProject
    from pairedbus.plans.state import check_same_stack, read_baseline
    from pairedbus.policy.gate import load_policy_config

    json_to_stdout = args.json is not None and str(args.json) == "-"
    if not json_to_stdout:
        check_writable(args.json, "--json")
    check_writable(args.write_policy_config, "--write-policy-config")
    project = PulumiProject.find(args.project_dir)
    baseline = read_baseline(args.baseline) if args.baseline else None
    if baseline is not None and not args.baseline_any_stack:
        check_same_stack(baseline, project=project.name, stack=args.stack, path=args.baseline)
    user_policy_config = load_policy_config(args.policy_config) if args.policy_config else None
    return _Inputs(json_to_stdout, project, baseline, user_policy_config)


def _review(args: argparse.Namespace, inputs: _Inputs) -> PlanReview | None:
    """The use case under a progress line; None when the engine would refuse (each problem printed)."""
    from pairedbus.commands.output import bounded
    from pairedbus.plans.engine_checks import EngineRefusal

    try:
        with plan_progress(enabled=not inputs.json_to_stdout) as progress:
            return plan_and_gate(
                inputs.project,
                args.stack,
                baseline=inputs.baseline,
                policy_config=inputs.policy_config,
                allow_replace=args.allow_replace,
                allow_delete=args.allow_delete,
                allow_unprotect=args.allow_unprotect,
                progress=progress,
            )
    except EngineRefusal as exc:  # what `pulumi up` would stop on: one line each, as the config's problems
        for problem in bounded(exc.problems):
            print(f"pairedbus: error: {problem}", file=sys.stderr)
        return None


def _plan_document(review: PlanReview) -> dict[str, Any]:
    """The `--json` document: the plan, the gate, and against a baseline each operation and its changes."""
    document: dict[str, Any] = {**review.plan.to_json(), "policy": review.gate.to_json()}
    if review.judged is not None:
        document["operations"] = review.judged.by_urn
        document["changes"] = {urn: [c.to_json() for c in found] for urn, found in review.judged.changes.items()}
    return document


def _print_review(args: argparse.Namespace, review: PlanReview, baseline: Plan | None) -> Callable[..., None]:
    """The tree, the property diffs, the warnings, the gate's lines and the verdict; returns the printer."""
    from pairedbus.commands.output import MAX_PROBLEMS, console
    from pairedbus.plans.tree import diff_lines, plan_tree, summary

    plan, gate = review.plan, review.gate
    ops, deleted, changes = (
        (review.judged.by_urn, review.judged.deleted, review.judged.changes) if review.judged else (None, (), {})
    )
    # Every printed value comes from the stack, the baseline or a path: printed as text, never read as rich
    # markup (a `[/]` in a value crashed `plan`; `[link=...]` and style tags were swallowed).
    out = console()
    show = partial(out.print, markup=False)
    # The lines scripts/ci-gate copies to the job summary by their first word: one line each, never wrapped
    # at the piped width (a wrapped line lost its end there, or all but its first word).
    show_whole = partial(show, soft_wrap=True)
    show(f"Offline render of stack '{plan.stack}' (Pulumi mocks; NOT a cloud preview: nothing was compared with Azure)")
    if baseline is not None:
        held = f"{len(baseline.resources)} resources of {baseline.project}/{baseline.stack}"
        show_whole(f"against --baseline {args.baseline}: {held} (what it held when written; Azure itself was not read)")
    # Deleted resources in the tree are bounded like every problem list; the gate lines count them all.
    out.print(plan_tree(plan, ops, deleted[:MAX_PROBLEMS] if deleted else ()))
    if len(deleted) > MAX_PROBLEMS:
        show(f"... and {len(deleted) - MAX_PROBLEMS} more resources of the baseline to delete")
    if ops is not None:
        for line in diff_lines(plan, ops, changes, MAX_PROBLEMS):  # each update and replacement's property diff
            show_whole(line)
    for warning in plan.warnings:  # what the program logged with pulumi.log.warn (e.g. a region not in the table)
        show_whole(f"warning: {warning}", style="yellow")
    for line in gate.lines():
        show_whole(line, style="red" if line.startswith("mandatory") else None)
    verdict = "FAILED" if gate.exit_code else "passed"
    show(f"{verdict}: {summary(plan, ops)}", style="bold red" if gate.exit_code else "bold")
    return show


def _write_files(
    args: argparse.Namespace, document: dict[str, Any], review: PlanReview, show: Callable[..., None]
) -> None:
    """`--json FILE` and `--write-policy-config FILE`, each announced."""
    if args.json:
        args.json.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
        show(f"Wrote {args.json}")
    if _write_policy_config(args, review):
        show(f"Wrote {args.write_policy_config}")


def _write_policy_config(args: argparse.Namespace, review: PlanReview) -> bool:
    """`--write-policy-config FILE`: the policy config the gate ran with; whether there was one to write."""
    if not args.write_policy_config:
        return False
    args.write_policy_config.write_text(json.dumps(review.policy_config, indent=2, sort_keys=True) + "\n")
    return True
