"""Find the Pulumi project and read a stack's config the way the Pulumi CLI hands it over."""

from __future__ import annotations

import json
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pairedbus.errors import UserError

#: Stand-in for a `secure:` value: the offline render cannot decrypt it and must not need to.
SECRET_PLACEHOLDER = "[secret]"


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
        return sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in self.stack_config_dir.glob("Pulumi.*.yaml"))

    def stack_settings(self, stack: str) -> tuple[dict[str, str], list[str]]:
        """The stack's config as the CLI passes it to the program: full keys (`project:key`),
        values as strings (structured ones as JSON), and the keys of secrets."""
        path = self.stack_config_dir / f"Pulumi.{stack}.yaml"
        if not path.is_file():
            raise UserError(f"stack {stack!r}: no {path.relative_to(self.directory)} (expected one of: {', '.join(self.stacks())})")
        config = _read_yaml(path).get("config") or {}
        if not isinstance(config, dict):
            raise UserError(f"{path.name}: 'config' must be a mapping of keys to values")
        settings: dict[str, str] = {}
        secrets: list[str] = []
        for key, value in config.items():
            full_key = key if ":" in key else f"{self.name}:{key}"
            if isinstance(value, dict) and set(value) == {"secure"}:
                secrets.append(full_key)
                value = SECRET_PLACEHOLDER
            settings[full_key] = value if isinstance(value, str) else json.dumps(value)
        return settings, secrets

    def run_program(self) -> None:
        """Run the program's __main__.py as the Pulumi language host would."""
        if str(self.directory) not in sys.path:
            sys.path.insert(0, str(self.directory))
        runpy.run_path(str(self.directory / "__main__.py"), run_name="__main__")


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UserError(f"{path.name}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path.name}: expected a YAML mapping at the top level")
    return data
