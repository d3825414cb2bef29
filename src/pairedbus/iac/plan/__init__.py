"""The offline plan: render the Pulumi program with mocks, without the CLI or Azure."""

from __future__ import annotations

from pairedbus.iac.config import StackConfig, config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.plan.project import PulumiProject
from pairedbus.plans.model import Plan, PlannedResource

__all__ = ["Plan", "PlannedResource", "PulumiProject", "render_stack"]


def render_stack(project: PulumiProject, stack: str) -> tuple[StackConfig, Plan]:
    """Validate the stack's config (every problem at once, before anything registers), then
    render the program for it."""
    from pairedbus.iac.plan.render import render

    settings, secrets = project.stack_settings(stack)
    config = parse_stack_config(config_from_pulumi_settings(settings))
    plan = render(project.run_program, project=project.name, stack=stack, config=settings, secret_keys=secrets)
    return config, plan
