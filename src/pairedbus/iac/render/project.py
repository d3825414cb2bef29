"""Find the Pulumi project and read a stack's config the way the Pulumi CLI hands it over."""

from __future__ import annotations

import runpy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pairedbus.errors import UserError
from pairedbus.iac.config.stack_file import StackSettings, load_yaml_document, read_stack_settings

__all__ = ["PulumiProject"]


@dataclass(frozen=True)
class PulumiProject:
    directory: Path
    name: str
    stack_config_dir: Path

    @classmethod
    def find(cls, start: Path | None = None) -> PulumiProject:
        """The nearest directory at or above `start` (default: cwd) holding Pulumi.yaml."""
        here = (start or Path.cwd()).resolve()
        for directory in (here, *here.parents):
            manifest = directory / "Pulumi.yaml"
            if manifest.is_file():
                data = _read_yaml(manifest)
                return cls(directory, str(data["name"]), directory / str(data.get("stackConfigDir", ".")))
        raise UserError(f"no Pulumi.yaml in {here} or above: run from the project, or pass --project-dir")

    def stacks(self) -> list[str]:
        return sorted(
            p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in self.stack_config_dir.glob("Pulumi.*.yaml")
        )

    def stack_file(self, stack: str) -> Path:
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def missing_stack_file(self, stack: str) -> str | None:
        """`stacks/Pulumi.qa.yaml (stacks with a file: dev, prod)` when the stack has no config file, else None."""
        path = self.stack_file(stack)
        if path.is_file():
            return None
        return f"{path.relative_to(self.directory)} (stacks with a file: {', '.join(self.stacks()) or 'none'})"

    def stack_settings(self, stack: str) -> tuple[dict[str, str], list[str]]:
        """The stack's config as the CLI passes it to the program: full keys (`project:key`),
        values as strings (structured ones as JSON), and the keys of secrets. Problems with single
        keys (Pulumi's key syntax, duplicates) travel with the settings (`StackSettings.problems`)
        so that they are reported with the config's own, in one pass. A stack without a file has no
        config, as for the Pulumi CLI (which reads a missing `Pulumi.<stack>.yaml` as empty)."""
        path = self.stack_file(stack)
        if not path.is_file():
            return StackSettings(), []
        return read_stack_settings(path)

    def run_program(self) -> None:
        """Run the program's __main__.py as the Pulumi language host would."""
        if str(self.directory) not in sys.path:
            sys.path.insert(0, str(self.directory))
        runpy.run_path(str(self.directory / "__main__.py"), run_name="__main__")


def _read_yaml(path: Path) -> dict[str, Any]:
    data, problems = load_yaml_document(path)
    if problems:
        raise UserError(problems[0])
    return data
