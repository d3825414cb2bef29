"""`pairedbus plan STACK`: render the program offline, print it, and gate it on the policy pack."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="render a stack offline (Pulumi mocks: no CLI, no Azure) and gate it on the policy pack",
        description="Evaluate the Pulumi program for stacks/Pulumi.STACK.yaml with Pulumi's mock runtime and run "
        "the policy pack over what it declares. This is an offline render, not a cloud preview. "
        "Exit 1 on a mandatory violation (or a destructive change against --baseline), 2 on bad input.",
    )
    parser.add_argument("stack", help="stack name, e.g. dev (reads stacks/Pulumi.STACK.yaml)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the resources and violations as JSON")
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


def run(args: argparse.Namespace) -> int:
    from pairedbus.commands.output import MAX_PROBLEMS, bounded, check_writable, console
    from pairedbus.errors import EXIT_USER
    from pairedbus.iac.plan import PulumiProject, render_stack
    from pairedbus.iac.plan.engine_checks import EngineRefusal
    from pairedbus.iac.plan.operations import judge
    from pairedbus.iac.plan.policy_settings import merge_policy_config, stack_policy_settings
    from pairedbus.iac.plan.tree import diff_lines, plan_tree, summary
    from pairedbus.policy.gate import load_baseline, load_policy_config, run_gate

    # Read every input and check every output before rendering: a bad flag fails fast, nothing half-runs.
    check_writable(args.json, "--json")
    check_writable(args.write_policy_config, "--write-policy-config")
    project = PulumiProject.find(args.project_dir)
    baseline = load_baseline(args.baseline) if args.baseline else None
    if baseline is not None and not args.baseline_any_stack:
        from pairedbus.plans.state import check_same_stack

        check_same_stack(baseline, project=project.name, stack=args.stack, path=args.baseline)
    policy_config = load_policy_config(args.policy_config) if args.policy_config else None
    try:
        config, plan = render_stack(project, args.stack)
    except EngineRefusal as exc:  # what `pulumi up` would stop on: one line each, as the config's problems
        for problem in bounded(exc.problems):
            print(f"pairedbus: error: {problem}", file=sys.stderr)
        return EXIT_USER
    policy_config = merge_policy_config(stack_policy_settings(config), policy_config)
    if baseline is not None:
        from pairedbus.plans.urns import engine_plan

        # Against a baseline, URNs as the engine makes them: a state export holds those.
        plan = engine_plan(plan)
        judged = judge(baseline, plan)
        ops, deleted, changes = judged.by_urn, judged.deleted, judged.changes
    else:
        ops, deleted, changes = None, (), {}
    gate = run_gate(
        plan,
        baseline=baseline,
        allow_replace=args.allow_replace,
        allow_delete=args.allow_delete,
        allow_unprotect=args.allow_unprotect,
        config=policy_config,
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
    if args.json:
        document = {**plan.to_json(), "policy": gate.to_json()}
        if ops is not None:
            document["operations"] = ops
            document["changes"] = {urn: [c.to_json() for c in found] for urn, found in changes.items()}
        args.json.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
        show(f"Wrote {args.json}")
    if args.write_policy_config:
        args.write_policy_config.write_text(json.dumps(policy_config, indent=2, sort_keys=True) + "\n")
        show(f"Wrote {args.write_policy_config}")
    return gate.exit_code
