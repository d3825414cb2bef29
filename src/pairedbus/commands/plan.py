"""`pairedbus plan STACK`: render the program offline, print it, and gate it on the policy pack."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
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
        metavar="PLAN.json",
        help="fail when a change against this earlier plan (`plan --json`) would replace or delete a namespace, "
        "queue, topic, subscription or backlog queue, or lower a resource's protection; resources left in Azure "
        "by retainOnDelete (a lowered backlog count) are reported only",
    )
    parser.add_argument("--allow-replace", action="store_true", help="report replacements without failing")
    parser.add_argument("--allow-delete", action="store_true", help="report deletions without failing")
    parser.add_argument(
        "--allow-unprotect", action="store_true", help="report lowered protection (production true -> false) without failing"
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
    from pairedbus.iac.plan import PulumiProject, render_stack
    from pairedbus.iac.plan.policy_settings import merge_policy_config, stack_policy_settings
    from pairedbus.iac.plan.table import format_plan
    from pairedbus.policy.gate import load_baseline, load_policy_config, run_gate

    # Read every input before rendering, so a bad flag fails fast and nothing half-runs.
    project = PulumiProject.find(args.project_dir)
    baseline = load_baseline(args.baseline) if args.baseline else None
    policy_config = load_policy_config(args.policy_config) if args.policy_config else None
    config, plan = render_stack(project, args.stack)
    policy_config = merge_policy_config(stack_policy_settings(config), policy_config)
    if args.write_policy_config:
        args.write_policy_config.parent.mkdir(parents=True, exist_ok=True)
        args.write_policy_config.write_text(json.dumps(policy_config, indent=2, sort_keys=True) + "\n")
    for line in format_plan(plan):
        print(line)
    gate = run_gate(
        plan,
        baseline=baseline,
        allow_replace=args.allow_replace,
        allow_delete=args.allow_delete,
        allow_unprotect=args.allow_unprotect,
        config=policy_config,
    )
    for line in gate.lines():
        print(line)
    if args.json:
        document = {**plan.to_json(), "policy": gate.to_json()}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
        print(f"Wrote {args.json}")
    return gate.exit_code
