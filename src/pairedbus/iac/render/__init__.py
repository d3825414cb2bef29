"""The Pulumi render: run a program under Pulumi's own mock runtime (`program`, with the mocks of `mocks` and the
engine's transforms of `transforms`), without the CLI or Azure; find the project and its stack config (`project`);
the policy settings the stack config implies (`policy_settings`). What comes out is a `plans.Plan`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pairedbus.errors import UserError
from pairedbus.iac.config import StackConfig, StackConfigError, config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.config.keys import CONFIG_NAMESPACE
from pairedbus.iac.render.project import PulumiProject
from pairedbus.plans.model import Plan

__all__ = ["PulumiProject", "reads_stack_config", "render_stack"]


def reads_stack_config(project: PulumiProject, settings: Mapping[str, str]) -> bool:
    """Whether the program reads pairedbus's own stack config (`pairedbus:primary`, ...): the repository's program
    (project `pairedbus`), or one whose stack sets keys of that namespace. Any other program (a platform team's
    own, with the pair built in code) reads its own config, and says itself what it misses."""
    return project.name == CONFIG_NAMESPACE or any(key.partition(":")[0] == CONFIG_NAMESPACE for key in settings)


def render_stack(
    project: PulumiProject, stack: str, *, on_register: Callable[[str, str], None] | None = None
) -> tuple[StackConfig | None, Plan]:
    """Validate the stack's config (every problem at once, before anything registers) when the program reads
    pairedbus's, then render the program for it. The config is None for a program that reads none of it.

    A stack without a config file has an empty config, as for the Pulumi CLI; when the program needs some, that
    is one line naming the file and the keys missing (`UserError`)."""
    from pulumi import ConfigMissingError

    from pairedbus.iac.render.program import render_program

    settings, secrets = project.stack_settings(stack)
    missing_file = project.missing_stack_file(stack)
    config = None
    if reads_stack_config(project, settings):
        try:
            config = parse_stack_config(config_from_pulumi_settings(settings))
        except StackConfigError as exc:
            if missing_file is None:
                raise
            needed = ", ".join(problem.split(": ", 1)[0] for problem in exc.problems)
            raise UserError(f"stack {stack!r}: no {missing_file}; the program needs config: {needed}") from None
    try:
        plan = render_program(
            project.run_program,
            project=project.name,
            stack=stack,
            config=settings,
            secret_keys=secrets,
            on_register=on_register,
        )
    except ConfigMissingError as exc:  # `pulumi.Config().require(...)` in the program
        where = f"no {missing_file}" if missing_file is not None else f"not set in {project.stack_file(stack).name}"
        raise UserError(f"stack {stack!r}: the program needs config {exc.key}; {where}") from None
    return config, plan
