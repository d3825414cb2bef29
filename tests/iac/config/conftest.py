"""Stack files written into a copy of the repository's Pulumi project, read the way `pairedbus
plan` reads them: the file, its keys, then the model."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pairedbus.iac.config import StackConfig, config_from_pulumi_settings, parse_stack_config
from pairedbus.iac.render import PulumiProject

REPO = Path(__file__).resolve().parents[3]


def stack_document(stack: str) -> dict[str, Any]:
    """A repository stack file as a plain document to vary."""
    return yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())


@pytest.fixture(scope="module")
def dev_document() -> dict[str, Any]:
    return stack_document("dev")


WriteStack = Callable[[str | bytes | dict[str, Any]], PulumiProject]


@pytest.fixture
def write_stack(project_copy: Path) -> WriteStack:
    """Write `Pulumi.case.yaml` (a document, YAML text or raw bytes) and return the project."""

    def write(content: str | bytes | dict[str, Any]) -> PulumiProject:
        path = project_copy / "stacks" / "Pulumi.case.yaml"
        if isinstance(content, dict):
            content = yaml.safe_dump(copy.deepcopy(content), sort_keys=False)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return PulumiProject.find(project_copy)

    return write


def read_stack(project: PulumiProject, stack: str = "case") -> StackConfig:
    """The stack's config as `pairedbus plan` validates it."""
    settings, _secrets = project.stack_settings(stack)
    return parse_stack_config(config_from_pulumi_settings(settings))
