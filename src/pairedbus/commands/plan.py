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
        "Exit 1 on a mandatory violation (or a replacement against --baseline), 2 on bad input.",
    )
    parser.add_argument("stack", help="stack name, e.g. dev (reads stacks/Pulumi.STACK.yaml)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the resources and violations as JSON")
    parser.add_argument("--project-dir", type=Path, help="the Pulumi project (default: nearest Pulumi.yaml)")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="PLAN.json",
        help="fail when a change would replace an entity of this earlier plan",
    )
    parser.add_argument("--allow-replace", action="store_true", help="report replacements without failing")
    parser.add_argument(
        "--policy-config", type=Path, metavar="FILE", help="policy config, as for pulumi --policy-pack-config"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pairedbus.plan import PulumiProject, render_stack
    from pairedbus.plan.table import format_plan
    from pairedbus.policy.gate import load_baseline, load_policy_config, run_gate

    # Read every input before rendering, so a bad flag fails fast and nothing half-runs.
    project = PulumiProject.find(args.project_dir)
    baseline = load_baseline(args.baseline) if args.baseline else None
    policy_config = load_policy_config(args.policy_config) if args.policy_config else None
    _config, plan = render_stack(project, args.stack)
    for line in format_plan(plan):
        print(line)
    gate = run_gate(plan, baseline=baseline, allow_replace=args.allow_replace, config=policy_config)
    for line in gate.lines():
        print(line)
    if args.json:
        document = {**plan.to_json(), "policy": gate.to_json()}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
        print(f"Wrote {args.json}")
    return gate.exit_code
