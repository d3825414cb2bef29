"""`pairedbus plan STACK`: render the program offline, print it, and gate it on the policy pack."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="render a stack offline (Pulumi mocks: no CLI, no Azure) and check it against the policy pack",
        description="Evaluate the Pulumi program for stacks/Pulumi.STACK.yaml with Pulumi's mock runtime. "
        "This is an offline render of what the program declares, not a cloud preview.",
    )
    parser.add_argument("stack", help="stack name, e.g. dev (reads stacks/Pulumi.STACK.yaml)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the resources (and violations) as JSON")
    parser.add_argument("--project-dir", type=Path, help="the Pulumi project (default: nearest Pulumi.yaml)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pairedbus.plan import PulumiProject, render_stack
    from pairedbus.plan.table import format_plan

    project = PulumiProject.find(args.project_dir)
    _config, plan = render_stack(project, args.stack)
    for line in format_plan(plan):
        print(line)
    document = plan.to_json()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2, sort_keys=True, default=str) + "\n")
        print(f"Wrote {args.json}")
    return 0
